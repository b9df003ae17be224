/* Decoding the payload of each .ptrev record type into trace_data, field
 * by field, with every count and length checked against the bytes that
 * are actually there before anything is allocated (docs/trace-format.md).
 * The checksums are already verified; these checks catch a writer bug or
 * a corruption that happens to keep the CRC. The one place a trace_data is
 * filled: the reader hands it each record of a file, a writer that keeps
 * its recording in memory each record it writes (trace_writer_keep). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_codec.h"
#include "trace_reader_internal.h"

static void oom(void)
{
	fputs("ptrev: out of memory\n", stderr);
	abort();
}

/* Make room for one more element in a trace_data array. */
static void *grow(void *arr, size_t n, size_t *cap, size_t elem)
{
	if (n < *cap)
		return arr;
	size_t c = *cap ? *cap * 2 : 16;
	void *p = realloc(arr, c * elem);
	if (!p)
		oom();
	*cap = c;
	return p;
}

#define PUSH(td, pv, field, count, capf)                                     \
	(td->field = grow(td->field, td->count, &pv->capf, sizeof *td->field), \
	 &td->field[td->count++])

/* A heap block that trace_data points into, freed with it. */
static void *keep_alloc(struct trace_reader_priv *pv, size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	pv->blocks = grow(pv->blocks, pv->nblocks, &pv->blocks_cap, sizeof *pv->blocks);
	pv->blocks[pv->nblocks++] = p;
	return p;
}

static void *keep(struct trace_reader_priv *pv, const void *src, size_t n)
{
	void *p = keep_alloc(pv, n);
	if (n)
		memcpy(p, src, n);
	return p;
}

static char *text(struct dec *d, const char *what, size_t max)
{
	uint32_t n = dec_u32(d);
	if (d->bad)
		return NULL;
	if (n > max) {
		dec_fail(d, "%s length %u exceeds %zu", what, n, max);
		return NULL;
	}
	const uint8_t *p = dec_bytes(d, n);
	if (!p)
		return NULL;
	if (memchr(p, '\0', n)) {
		dec_fail(d, "%s contains a NUL byte", what);
		return NULL;
	}
	char *s = malloc((size_t)n + 1);
	if (!s)
		oom();
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

static int32_t tid_field(struct dec *d, bool zero_ok)
{
	int32_t tid = (int32_t)dec_u32(d);
	if (!d->bad && (tid < 0 || (tid == 0 && !zero_ok)))
		dec_fail(d, "thread id %d is not valid", tid);
	return tid;
}

static void flags_field(struct dec *d, uint32_t known, uint32_t *out)
{
	*out = dec_u32(d);
	if (!d->bad && (*out & ~known))
		dec_fail(d, "unknown flag bits 0x%x", *out & ~known);
}

static void parse_meta(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	char *key = text(d, "key", TRACE_META_KEY_MAX);
	if (key && !*key)
		dec_fail(d, "empty key");
	char *value = d->bad ? NULL : text(d, "value", TRACE_MAX_PAYLOAD);
	if (d->bad) {
		free(key);
		free(value);
		return;
	}
	size_t i = td->nmeta, cap = pv->meta_cap;
	td->meta_keys = grow(td->meta_keys, i, &pv->meta_cap, sizeof *td->meta_keys);
	if (cap != pv->meta_cap) { /* values grow in step with keys */
		td->meta_values = realloc(td->meta_values,
					  pv->meta_cap * sizeof *td->meta_values);
		if (!td->meta_values)
			oom();
	}
	td->meta_keys[i] = key;
	td->meta_values[i] = value;
	td->nmeta++;
}

static void parse_pt(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	pid_t tid = tid_field(d, false);
	if (d->bad)
		return;
	size_t n = dec_left(d);
	const uint8_t *data = dec_bytes(d, n);
	trace_append_pt(td, &pv->pt, tid, data, n);
}

static void range_check(struct dec *d, uint64_t start, uint64_t end)
{
	if (!d->bad && end < start)
		dec_fail(d, "range 0x%llx-0x%llx ends before it starts",
			 (unsigned long long)start, (unsigned long long)end);
}

static void parse_mmap(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	struct trace_mmap m;
	memset(&m, 0, sizeof m);
	m.tid = tid_field(d, true);
	m.pos = dec_u64(d);
	m.start = dec_u64(d);
	m.end = dec_u64(d);
	m.offset = dec_u64(d);
	m.prot = dec_u32(d);
	m.flags = dec_u32(d);
	m.build_id_len = dec_u32(d);
	const uint8_t *bid = dec_bytes(d, sizeof m.build_id);
	range_check(d, m.start, m.end);
	if (!d->bad && m.build_id_len > sizeof m.build_id)
		dec_fail(d, "build-id length %u exceeds %zu", m.build_id_len, sizeof m.build_id);
	char *path = d->bad ? NULL : text(d, "path", sizeof m.path - 1);
	if (d->bad) {
		free(path);
		return;
	}
	memcpy(m.build_id, bid, m.build_id_len);
	strcpy(m.path, path);
	free(path);
	*PUSH(td, pv, mmaps, nmmaps, mmaps_cap) = m;
}

static void parse_munmap(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	struct trace_munmap m;
	m.tid = tid_field(d, true);
	m.pos = dec_u64(d);
	m.start = dec_u64(d);
	m.end = dec_u64(d);
	range_check(d, m.start, m.end);
	if (!d->bad)
		*PUSH(td, pv, munmaps, nmunmaps, munmaps_cap) = m;
}

/* n bytes at addr must not run past the end of the address space. */
static void check_range(struct dec *d, uint64_t addr, size_t n)
{
	if (!d->bad && n && addr + (n - 1) < addr)
		dec_fail(d, "%zu bytes at 0x%llx wrap around the address space", n,
			 (unsigned long long)addr);
}

static void parse_code(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	uint64_t addr = dec_u64(d);
	size_t n = dec_left(d);
	const uint8_t *p = dec_bytes(d, n);
	check_range(d, addr, n);
	if (d->bad)
		return;
	struct trace_code *c = PUSH(td, pv, code, ncode, code_cap);
	c->addr = addr;
	c->len = n;
	c->bytes = keep(pv, p, n);
}

static void parse_syscall(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	struct trace_syscall s;
	memset(&s, 0, sizeof s);
	s.tid = tid_field(d, false);
	s.pos = dec_u64(d);
	s.nr = dec_u64(d);
	for (int i = 0; i < 6; i++)
		s.args[i] = dec_u64(d);
	s.result = (int64_t)dec_u64(d);
	uint32_t flags;
	flags_field(d, TRACE_SYSCALL_UNKNOWN | TRACE_SYSCALL_KEPT_CPU, &flags);
	s.unknown = flags & TRACE_SYSCALL_UNKNOWN;
	s.kept_cpu = flags & TRACE_SYSCALL_KEPT_CPU;
	uint32_t nw = dec_u32(d);
	if (d->bad)
		return;
	/* Bound the count by the bytes present before allocating for it. */
	if (nw > dec_left(d) / TRACE_MEM_WRITE_HEADER_LEN) {
		dec_fail(d, "claims %u memory writes but only %zu bytes follow", nw, dec_left(d));
		return;
	}
	/* First pass validates; the second builds the table over a kept copy. */
	size_t first = d->off;
	for (uint32_t i = 0; i < nw && !d->bad; i++) {
		uint64_t addr = dec_u64(d);
		uint32_t len = dec_u32(d);
		dec_bytes(d, len);
		if (!d->bad && len && addr + (len - 1) < addr)
			dec_fail(d, "memory write %u (%u bytes at 0x%llx) wraps around the address space",
				 i, len, (unsigned long long)addr);
	}
	if (d->bad)
		return;
	if (dec_left(d))
		return; /* trailing bytes: reported by the caller */
	if (nw) {
		struct trace_mem_write *ws = keep_alloc(pv, nw * sizeof *ws);
		const uint8_t *copy = keep(pv, d->p + first, d->len - first);
		struct dec w;
		dec_init(&w, copy, d->len - first);
		for (uint32_t i = 0; i < nw; i++) {
			ws[i].addr = dec_u64(&w);
			ws[i].len = dec_u32(&w);
			ws[i].bytes = dec_bytes(&w, ws[i].len);
		}
		s.writes = ws;
		s.nwrites = nw;
	}
	*PUSH(td, pv, syscalls, nsyscalls, syscalls_cap) = s;
}

static void parse_signal(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	struct trace_signal s;
	s.tid = tid_field(d, false);
	s.pos = dec_u64(d);
	s.signo = (int32_t)dec_u32(d);
	const uint8_t *si = dec_bytes(d, sizeof s.siginfo);
	s.handler_ip = dec_u64(d);
	uint32_t where = dec_left(d) ? dec_u32(d) : TRACE_SIG_AT_POS;
	if (!d->bad && (s.signo < 1 || s.signo > TRACE_MAX_SIGNO))
		dec_fail(d, "signal number %d out of range 1-%d", s.signo, TRACE_MAX_SIGNO);
	if (!d->bad && where > TRACE_SIG_BEFORE_SYSCALL)
		dec_fail(d, "signal delivery point %u unknown", where);
	s.where = (enum trace_signal_where)where;
	if (d->bad)
		return;
	memcpy(s.siginfo, si, sizeof s.siginfo);
	*PUSH(td, pv, signals, nsignals, signals_cap) = s;
}

static void parse_rdtsc(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	struct trace_rdtsc r;
	r.tid = tid_field(d, false);
	r.pos = dec_u64(d);
	r.value = dec_u64(d);
	r.aux = dec_u32(d);
	uint32_t flags;
	flags_field(d, TRACE_RDTSC_IS_RDTSCP, &flags);
	r.is_rdtscp = flags & TRACE_RDTSC_IS_RDTSCP;
	if (!d->bad)
		*PUSH(td, pv, rdtsc, nrdtsc, rdtsc_cap) = r;
}

static void parse_thread(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	struct trace_thread t;
	t.tid = tid_field(d, false);
	t.parent = tid_field(d, true);
	t.pos = dec_u64(d);
	uint32_t flags;
	flags_field(d, TRACE_THREAD_EXITED, &flags);
	t.exited = flags & TRACE_THREAD_EXITED;
	t.exit_code = (int32_t)dec_u32(d);
	if (!d->bad)
		*PUSH(td, pv, threads, nthreads, threads_cap) = t;
}

static void parse_end(struct trace_data *td, struct dec *d)
{
	struct trace_end e;
	uint32_t kind = dec_u32(d);
	e.status = (int32_t)dec_u32(d);
	e.instructions = dec_u64(d);
	e.psb_count = dec_u64(d);
	e.duration_ns = dec_u64(d);
	e.syscalls = dec_u64(d);
	e.signals = dec_u64(d);
	if (!d->bad && kind > 2)
		dec_fail(d, "status kind %u is not 0 (exited), 1 (signal) or 2 (stopped)", kind);
	e.status_kind = (int)(kind & 3);
	if (!d->bad && kind == 1 && (e.status < 1 || e.status > TRACE_MAX_SIGNO))
		dec_fail(d, "killed by signal %d, out of range 1-%d", e.status, TRACE_MAX_SIGNO);
	if (d->bad)
		return;
	td->end = e;
	td->complete = true;
}

/* A chunk of a file's copy. Chunks of one copy follow each other in order,
 * so a chunk either starts a copy (offset 0) or continues the last one. */
static void parse_file(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	uint32_t bid_len = dec_u32(d);
	const uint8_t *bid = dec_bytes(d, 20);
	uint64_t size = dec_u64(d), off = dec_u64(d);
	if (!d->bad && bid_len > 20)
		dec_fail(d, "build-id length %u exceeds 20", bid_len);
	char *path = d->bad ? NULL : text(d, "path", 4095);
	if (path && !*path)
		dec_fail(d, "empty path");
	size_t n = dec_left(d);
	const uint8_t *bytes = d->bad ? NULL : dec_bytes(d, n);
	if (!d->bad && (off > size || n > size - off))
		dec_fail(d, "%zu bytes at offset %llu of a %llu-byte file", n,
			 (unsigned long long)off, (unsigned long long)size);
	struct trace_file_copy *last = td->nfiles ? &td->files[td->nfiles - 1] : NULL;
	bool open_copy = last && last->len < last->size;
	if (!d->bad && off == 0 && open_copy)
		dec_fail(d, "a copy of %s starts while the copy of %s stopped at %llu of %llu bytes",
			 path, last->path, (unsigned long long)last->len,
			 (unsigned long long)last->size);
	if (!d->bad && off != 0 &&
	    (!open_copy || strcmp(last->path, path) || last->size != size ||
	     last->build_id_len != bid_len || memcmp(last->build_id, bid, bid_len) ||
	     last->len != off))
		dec_fail(d, "chunk at offset %llu of %s does not continue the previous FILE record",
			 (unsigned long long)off, path);
	if (d->bad) {
		free(path);
		return;
	}
	if (off == 0) {
		struct trace_file_copy *f = PUSH(td, pv, files, nfiles, files_cap);
		memset(f, 0, sizeof *f);
		f->path = keep(pv, path, strlen(path) + 1);
		memcpy(f->build_id, bid, bid_len);
		f->build_id_len = bid_len;
		f->size = size;
		f->bytes = keep_alloc(pv, n);
		pv->file_block = pv->nblocks - 1;
		pv->file_cap = n;
		last = f;
	}
	/* Room grows with the bytes actually read, never with the size a
	 * record claims (a killed recorder leaves a copy shorter than that). */
	if (off + n > pv->file_cap) {
		uint64_t cap = pv->file_cap * 2 < size ? pv->file_cap * 2 : size;
		if (cap < off + n)
			cap = off + n;
		void *p = realloc(pv->blocks[pv->file_block], (size_t)cap);
		if (!p)
			oom();
		pv->blocks[pv->file_block] = p;
		pv->file_cap = cap;
		last->bytes = p;
	}
	if (n)
		memcpy((uint8_t *)last->bytes + off, bytes, n);
	last->len = off + n;
	free(path);
}

/* Runs of the thread schedule. The count is checked against the length
 * exactly, so nothing after it needs a bounds check; all runs are
 * validated before any is added. */
static void parse_sched(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	uint32_t n = dec_u32(d);
	if (d->bad)
		return;
	if (n == 0 || dec_left(d) != (uint64_t)n * TRACE_SCHED_RUN_LEN) {
		dec_fail(d, "claims %u runs but %zu bytes follow (%d per run, at least one run)",
			 n, dec_left(d), TRACE_SCHED_RUN_LEN);
		return;
	}
	size_t first = d->off;
	for (uint32_t i = 0; i < n && !d->bad; i++) {
		tid_field(d, false);
		uint64_t pos = dec_u64(d), count = dec_u64(d);
		if (!d->bad && pos + count < pos)
			dec_fail(d, "run %u (%llu instructions from %llu) wraps around", i,
				 (unsigned long long)count, (unsigned long long)pos);
	}
	if (d->bad)
		return;
	struct dec r;
	dec_init(&r, d->p + first, d->len - first);
	for (uint32_t i = 0; i < n; i++) {
		struct trace_sched_run run;
		run.tid = (pid_t)dec_u32(&r);
		run.pos = dec_u64(&r);
		run.count = dec_u64(&r);
		trace_append_sched(td, &pv->sched_cap, &run);
	}
}

/* Memory bytes of one thread's event: tid:i32 pos:u64 addr:u64, then 1
 * to max bytes (what: how the error names them), kept in a reader-owned
 * block (as CODE bytes are) so they live as long as td. NULL when the
 * record is malformed. */
struct bytes_at {
	pid_t tid;
	uint64_t pos, addr;
	size_t len;
	const uint8_t *bytes;
};

static bool parse_bytes_at(struct trace_reader_priv *pv, struct dec *d, size_t max,
			   const char *what, struct bytes_at *out)
{
	out->tid = tid_field(d, false);
	out->pos = dec_u64(d);
	out->addr = dec_u64(d);
	out->len = dec_left(d);
	const uint8_t *p = dec_bytes(d, out->len);
	if (!d->bad && (out->len == 0 || out->len > max))
		dec_fail(d, "%s of %zu bytes is not 1-%zu bytes", what, out->len, max);
	check_range(d, out->addr, out->len);
	out->bytes = d->bad ? NULL : keep(pv, p, out->len);
	return !d->bad;
}

static void parse_sigframe(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	struct bytes_at b;
	if (!parse_bytes_at(pv, d, TRACE_SIGFRAME_MAX, "frame", &b))
		return;
	struct trace_sigframe *f = PUSH(td, pv, sigframes, nsigframes, sigframes_cap);
	f->tid = b.tid;
	f->pos = b.pos;
	f->addr = b.addr;
	f->len = b.len;
	f->bytes = b.bytes;
}

/* A change gdb made: memory (addr, bytes), or registers (addr 0: the
 * general registers and the XSAVE area). */
static void parse_gdb_write(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d,
			    bool regs)
{
	struct bytes_at b;
	if (!parse_bytes_at(pv, d, regs ? TRACE_GDB_REGS_MAX : TRACE_GDB_MEM_MAX,
			    regs ? "gdb's register change" : "gdb's memory change", &b))
		return;
	if (regs && (b.addr || b.len < TRACE_GDB_REGS_MIN)) {
		dec_fail(d, "gdb's register change of %zu bytes at 0x%llx: not registers", b.len,
			 (unsigned long long)b.addr);
		return;
	}
	struct trace_gdb_write *g = PUSH(td, pv, gdb_writes, ngdb_writes, gdb_writes_cap);
	g->tid = b.tid;
	g->pos = b.pos;
	g->regs = regs;
	g->addr = b.addr;
	g->len = b.len;
	g->bytes = b.bytes;
}

/* A STATE point's stack bytes: they belong to the STATE record just
 * before, of the same thread and position (the writer writes them so); a
 * record that follows no such STATE is malformed. */
static void parse_state_stack(struct trace_data *td, struct trace_reader_priv *pv,
			      struct dec *d)
{
	struct bytes_at b;
	if (!parse_bytes_at(pv, d, TRACE_STATE_SP_MAX, "stack", &b))
		return;
	struct trace_state *st = td->nstates ? &td->states[td->nstates - 1] : NULL;
	if (!st || st->tid != b.tid || st->pos != b.pos || st->sp_len) {
		dec_fail(d, "stack bytes of thread %d's point %llu, which the STATE record before "
			 "is not", (int)b.tid, (unsigned long long)b.pos);
		return;
	}
	st->sp_addr = b.addr;
	st->sp_len = b.len;
	st->sp_bytes = b.bytes;
}

/* Memory of the STATE point before it (trace_file.h): one range more. */
static void parse_state_mem(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	struct bytes_at b;
	if (!parse_bytes_at(pv, d, TRACE_STATE_MEM_MAX, "point's memory", &b))
		return;
	struct trace_state *st = td->nstates ? &td->states[td->nstates - 1] : NULL;
	if (!st || st->tid != b.tid || st->pos != b.pos || st->nmem >= TRACE_STATE_MEM_RANGES) {
		dec_fail(d, "memory of thread %d's point %llu, which the STATE record before is "
			 "not (or holds %d ranges already)", (int)b.tid, (unsigned long long)b.pos,
			 TRACE_STATE_MEM_RANGES);
		return;
	}
	/* A new array with one more: the old one stays among the blocks
	 * freed with the data (a point has a few). */
	struct trace_mem_write *m = keep_alloc(pv, (st->nmem + 1) * sizeof *m);
	if (st->nmem)
		memcpy(m, st->mem, st->nmem * sizeof *m);
	m[st->nmem] = (struct trace_mem_write){.addr = b.addr, .bytes = b.bytes, .len = b.len};
	st->mem = m;
	st->nmem++;
}

int trace_parse_pt(struct trace_data *td, pid_t tid, const uint8_t *data, size_t len,
		   char *why, size_t whylen)
{
	/* The thread id checked as parse_pt checks the payload's first
	 * field, so both ways in accept and refuse the same chunks. */
	uint8_t field[4];
	struct dec d;
	le_put32(field, (uint32_t)tid);
	dec_init(&d, field, sizeof field);
	tid_field(&d, false);
	if (d.bad) {
		snprintf(why, whylen, "%s", d.why);
		return -1;
	}
	struct trace_reader_priv *pv = td->priv;
	trace_append_pt(td, &pv->pt, tid, data, len);
	return 0;
}

static void parse_state(struct trace_data *td, struct trace_reader_priv *pv, struct dec *d)
{
	struct trace_state st;
	st.tid = tid_field(d, false);
	st.pos = dec_u64(d);
	for (int i = 0; i < 27; i++)
		st.regs[i] = dec_u64(d);
	st.vec_hash = dec_u64(d);
	st.stack_lo = dec_u64(d);
	st.stack_hi = dec_u64(d);
	st.stack_hash = dec_u64(d);
	st.mem_bytes = dec_u64(d);
	st.mem_hash = dec_u64(d);
	/* Recordings made before these two fields existed end here. */
	st.flags = st.ran_ns = 0;
	st.nskip = 0;
	st.skip = NULL;
	st.sp_addr = 0;
	st.sp_len = 0;
	st.sp_bytes = NULL;
	st.nmem = 0;
	st.mem = NULL;
	if (!d->bad && dec_left(d)) {
		st.flags = dec_u64(d);
		st.ran_ns = dec_u64(d);
	}
	/* The ranges left out, where there are any. */
	if (!d->bad && dec_left(d)) {
		uint32_t n = dec_u32(d);
		if (!d->bad && (n == 0 || n > TRACE_STATE_MAX_SKIP || dec_left(d) != 16ull * n)) {
			dec_fail(d, "%u ranges left out, %zu bytes for them", n, dec_left(d));
			return;
		}
		uint64_t *r = d->bad ? NULL : keep_alloc(pv, 16ull * n);
		for (uint32_t i = 0; r && i < 2 * n; i++)
			r[i] = dec_u64(d);
		st.skip = r;
		st.nskip = r ? n : 0;
	}
	if (!d->bad && st.stack_hi < st.stack_lo)
		dec_fail(d, "stack range ends before it starts");
	if (!d->bad)
		*PUSH(td, pv, states, nstates, states_cap) = st;
}

int trace_parse_record(struct trace_data *td, uint32_t type,
		       const uint8_t *payload, size_t len, char *why, size_t whylen)
{
	struct trace_reader_priv *pv = td->priv;
	struct dec d;
	dec_init(&d, payload, len);
	switch (type) {
	case TRACE_REC_META: parse_meta(td, pv, &d); break;
	case TRACE_REC_PT: parse_pt(td, pv, &d); break;
	case TRACE_REC_MMAP: parse_mmap(td, pv, &d); break;
	case TRACE_REC_MUNMAP: parse_munmap(td, pv, &d); break;
	case TRACE_REC_CODE: parse_code(td, pv, &d); break;
	case TRACE_REC_SYSCALL: parse_syscall(td, pv, &d); break;
	case TRACE_REC_SIGNAL: parse_signal(td, pv, &d); break;
	case TRACE_REC_RDTSC: parse_rdtsc(td, pv, &d); break;
	case TRACE_REC_THREAD: parse_thread(td, pv, &d); break;
	case TRACE_REC_END: parse_end(td, &d); break;
	case TRACE_REC_FILE: parse_file(td, pv, &d); break;
	case TRACE_REC_SCHED: parse_sched(td, pv, &d); break;
	case TRACE_REC_SIGFRAME: parse_sigframe(td, pv, &d); break;
	case TRACE_REC_STATE: parse_state(td, pv, &d); break;
	case TRACE_REC_STATE_STACK: parse_state_stack(td, pv, &d); break;
	case TRACE_REC_STATE_MEM: parse_state_mem(td, pv, &d); break;
	case TRACE_REC_GDB_MEM: parse_gdb_write(td, pv, &d, false); break;
	case TRACE_REC_GDB_REGS: parse_gdb_write(td, pv, &d, true); break;
	default: return 1;
	}
	if (!d.bad && dec_left(&d))
		dec_fail(&d, "%zu unexpected bytes after the last field", dec_left(&d));
	if (d.bad) {
		snprintf(why, whylen, "%s", d.why);
		return -1;
	}
	return 0;
}
