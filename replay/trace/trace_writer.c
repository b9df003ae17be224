/* Writing a .ptrev recording. Each record (header + payload) is built in
 * memory and handed to the kernel with one write(2), so once a
 * trace_write_* call returns, the record survives a SIGKILL of the
 * recorder: nothing is ever held back in a user-space buffer. A failed
 * write cuts the file back to its last whole record, so the file on disk
 * is always a readable prefix. Layout: docs/trace-format.md.
 *
 * A writer may also keep the recording in memory (trace_writer_keep),
 * beside its file or without one (trace_writer_open_memory): each record
 * it encodes is then handed to the reader's own payload parser
 * (trace_parse_record), so the struct trace_data it builds is by
 * construction what reading the file back returns, and the data model has
 * one owner (replay/trace/trace_records.c) however it is filled. */
#include "ptrev/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_codec.h"
#include "trace_reader_internal.h"

struct trace_writer {
	int fd;             /* -1: no file (trace_writer_open_memory) */
	char *path;
	uint64_t good_end;  /* file size after the last whole record */
	uint64_t nrecords;
	bool io_failed;     /* sticky: later writes fail at once */
	bool keep_going;    /* ...or are dropped, reporting success */
	bool has_error;
	char err[320];      /* the first failure's reason */
	struct enc rec;     /* the record being built, header first */
	struct trace_data *keep; /* every record also parsed into it, or NULL */
};

static int fail(struct trace_writer *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct trace_writer *w, const char *fmt, ...)
{
	if (!w->has_error) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(w->err, sizeof w->err, fmt, ap);
		va_end(ap);
		w->has_error = true;
	}
	return -1;
}

/* One write(2) in the normal case; the loop only finishes a short write
 * (disk nearly full) or retries after EINTR. */
static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (k == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void begin(struct trace_writer *w)
{
	w->rec.len = 0;
	enc_reserve(&w->rec, TRACE_RECORD_HEADER_LEN);
	memset(w->rec.buf, 0, TRACE_RECORD_HEADER_LEN);
	w->rec.len = TRACE_RECORD_HEADER_LEN;
}

/* Hands the record built in w->rec to the file: header, checksums, one
 * write(2). Without a file it only counts it, so that record numbers and
 * sizes are those a file would have. */
static int emit(struct trace_writer *w, uint32_t type)
{
	if (w->io_failed)
		return w->keep_going ? 0 : -1;
	size_t plen = w->rec.len - TRACE_RECORD_HEADER_LEN;
	if (plen > TRACE_MAX_PAYLOAD)
		return fail(w, "%s record of %zu bytes exceeds the %u-byte limit",
			    trace_type_name(type) ? trace_type_name(type) : "raw",
			    plen, TRACE_MAX_PAYLOAD);
	if (w->fd >= 0) {
		uint8_t *h = w->rec.buf;
		le_put32(h, type);
		le_put32(h + 4, (uint32_t)plen);
		le_put32(h + 8, trace_crc32c(0, h + TRACE_RECORD_HEADER_LEN, plen));
		le_put32(h + 12, trace_crc32c(0, h, 12));
		if (write_all(w->fd, h, w->rec.len) < 0) {
			int e = errno;
			w->io_failed = true;
			/* Leave only whole records behind for the reader. */
			if (ftruncate(w->fd, (off_t)w->good_end) == 0)
				(void)lseek(w->fd, (off_t)w->good_end, SEEK_SET);
			fail(w, "writing record %llu: %s", (unsigned long long)w->nrecords + 1,
			     strerror(e));
			return w->keep_going ? 0 : -1;
		}
	}
	w->good_end += w->rec.len;
	w->nrecords++;
	return 0;
}

/* The in-memory recording takes the record the file just took, decoded
 * by the reader's parser. One the reader would refuse (only
 * trace_write_raw can make one) is left out of it and reported. */
static int keep(struct trace_writer *w, uint32_t type, const uint8_t *payload, size_t len)
{
	if (!w->keep)
		return 0;
	char why[200];
	int r = trace_parse_record(w->keep, type, payload, len, why, sizeof why);
	if (r < 0)
		return fail(w, "record %llu (%s) would not read back: %s",
			    (unsigned long long)w->nrecords,
			    trace_type_name(type) ? trace_type_name(type) : "raw", why);
	if (r > 0)
		w->keep->nskipped++; /* unknown type: the reader skips it too */
	w->keep->file_size += TRACE_RECORD_HEADER_LEN + len;
	return 0;
}

/* The record in w->rec: to the file, then into the kept recording. */
static int finish(struct trace_writer *w, uint32_t type)
{
	if (emit(w, type) < 0)
		return -1;
	return keep(w, type, w->rec.buf + TRACE_RECORD_HEADER_LEN,
		    w->rec.len - TRACE_RECORD_HEADER_LEN);
}

struct trace_writer *trace_writer_open(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	uint8_t h[TRACE_FILE_HEADER_LEN];
	memcpy(h, TRACE_MAGIC, TRACE_MAGIC_LEN);
	le_put32(h + 8, TRACE_FORMAT_VERSION);
	le_put32(h + 12, trace_crc32c(0, h, 12));
	if (write_all(fd, h, sizeof h) < 0) {
		snprintf(err, errlen, "%s: writing the file header: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	struct trace_writer *w = calloc(1, sizeof *w);
	char *p = strdup(path);
	if (!w || !p) {
		snprintf(err, errlen, "out of memory");
		free(w);
		free(p);
		close(fd);
		return NULL;
	}
	w->fd = fd;
	w->path = p;
	w->good_end = sizeof h;
	return w;
}

struct trace_writer *trace_writer_open_memory(char *err, size_t errlen)
{
	struct trace_writer *w = calloc(1, sizeof *w);
	char *p = strdup("(memory)");
	if (!w || !p) {
		snprintf(err, errlen, "out of memory");
		free(w);
		free(p);
		return NULL;
	}
	w->fd = -1;
	w->path = p;
	w->good_end = TRACE_FILE_HEADER_LEN;
	return w;
}

void trace_writer_keep_going(struct trace_writer *w)
{
	w->keep_going = true;
}

bool trace_writer_io_failed(const struct trace_writer *w, uint64_t *kept)
{
	if (w->io_failed && kept)
		*kept = w->good_end; /* not advanced since: the records kept */
	return w->io_failed;
}

int trace_writer_restart(struct trace_writer *w)
{
	if (w->keep)
		return fail(w, "a recording kept in memory cannot start again");
	if (w->io_failed)
		return -1;
	if (w->fd >= 0 && (ftruncate(w->fd, TRACE_FILE_HEADER_LEN) < 0 ||
			   lseek(w->fd, TRACE_FILE_HEADER_LEN, SEEK_SET) < 0)) {
		w->io_failed = true;
		return fail(w, "cutting back to the header: %s", strerror(errno));
	}
	w->good_end = TRACE_FILE_HEADER_LEN;
	w->nrecords = 0;
	return 0;
}

int trace_writer_keep(struct trace_writer *w, struct trace_data *td)
{
	if (td && !td->priv) {
		/* A new recording: the storage the parser fills, and the
		 * size of a file that holds no record yet. */
		td->priv = calloc(1, sizeof(struct trace_reader_priv));
		if (!td->priv)
			return fail(w, "out of memory");
		td->file_size = TRACE_FILE_HEADER_LEN;
	}
	w->keep = td;
	return 0;
}

const char *trace_writer_error(const struct trace_writer *w)
{
	return w->has_error ? w->err : NULL;
}

int trace_writer_close(struct trace_writer *w, char *err, size_t errlen)
{
	if (!w)
		return 0;
	int rc = w->has_error ? -1 : 0;
	if (w->fd >= 0 && close(w->fd) < 0 && rc == 0)
		rc = fail(w, "%s: %s", w->path, strerror(errno));
	if (rc < 0 && err && errlen)
		snprintf(err, errlen, "%s", w->err);
	free(w->rec.buf);
	free(w->path);
	free(w);
	return rc;
}

int trace_write_raw(struct trace_writer *w, uint32_t type, const void *payload, size_t len)
{
	if (len > TRACE_MAX_PAYLOAD)
		return fail(w, "raw record of %zu bytes exceeds the %u-byte limit",
			    len, TRACE_MAX_PAYLOAD);
	begin(w);
	enc_bytes(&w->rec, payload, len);
	return finish(w, type);
}

static bool meta_key_ok(const char *key)
{
	size_t n = strlen(key);
	if (n == 0 || n > TRACE_META_KEY_MAX)
		return false;
	for (const char *c = key; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	return true;
}

int trace_write_meta(struct trace_writer *w, const char *key, const char *value)
{
	if (!meta_key_ok(key))
		return fail(w, "META key '%s' is not 1-%d characters of [a-z0-9_]",
			    key, TRACE_META_KEY_MAX);
	size_t kl = strlen(key), vl = strlen(value);
	if (vl > TRACE_MAX_PAYLOAD - 8 - kl)
		return fail(w, "META value for '%s' is too long (%zu bytes)", key, vl);
	begin(w);
	enc_u32(&w->rec, (uint32_t)kl);
	enc_bytes(&w->rec, key, kl);
	enc_u32(&w->rec, (uint32_t)vl);
	enc_bytes(&w->rec, value, vl);
	return finish(w, TRACE_REC_META);
}

int trace_write_pt(struct trace_writer *w, pid_t tid, const void *data, size_t len)
{
	const uint8_t *p = data;
	/* Chunks concatenate per thread, so a huge one is just split. */
	while (len) {
		size_t n = len < TRACE_MAX_PAYLOAD - 4 ? len : TRACE_MAX_PAYLOAD - 4;
		/* PT is the bulk of a recording: the in-memory copy takes the
		 * chunk from the caller, never from a record built only to be
		 * parsed again, so memory alone copies it once. */
		if (w->fd >= 0) {
			begin(w);
			enc_u32(&w->rec, (uint32_t)tid);
			enc_bytes(&w->rec, p, n);
			if (emit(w, TRACE_REC_PT) < 0)
				return -1;
		} else { /* no file: counted as emit counts, not built */
			w->good_end += TRACE_RECORD_HEADER_LEN + 4 + n;
			w->nrecords++;
		}
		if (w->keep) {
			char why[200];
			if (trace_parse_pt(w->keep, tid, p, n, why, sizeof why) < 0)
				return fail(w, "record %llu (PT) would not read back: %s",
					    (unsigned long long)w->nrecords, why);
			w->keep->file_size += TRACE_RECORD_HEADER_LEN + 4 + n;
		}
		p += n;
		len -= n;
	}
	return w->io_failed && !w->keep_going ? -1 : 0;
}

int trace_write_mmap(struct trace_writer *w, const struct trace_mmap *m)
{
	size_t pl = strnlen(m->path, sizeof m->path);
	if (pl == sizeof m->path)
		return fail(w, "MMAP path is not NUL-terminated within %zu bytes", sizeof m->path);
	if (m->build_id_len > sizeof m->build_id)
		return fail(w, "MMAP build-id length %u exceeds %zu", m->build_id_len,
			    sizeof m->build_id);
	if (m->end < m->start)
		return fail(w, "MMAP range 0x%llx-0x%llx ends before it starts",
			    (unsigned long long)m->start, (unsigned long long)m->end);
	begin(w);
	enc_u32(&w->rec, (uint32_t)m->tid);
	enc_u64(&w->rec, m->pos);
	enc_u64(&w->rec, m->start);
	enc_u64(&w->rec, m->end);
	enc_u64(&w->rec, m->offset);
	enc_u32(&w->rec, m->prot);
	enc_u32(&w->rec, m->flags);
	enc_u32(&w->rec, m->build_id_len);
	uint8_t bid[20] = {0}; /* always 20 bytes, zero after build_id_len */
	memcpy(bid, m->build_id, m->build_id_len);
	enc_bytes(&w->rec, bid, sizeof bid);
	enc_u32(&w->rec, (uint32_t)pl);
	enc_bytes(&w->rec, m->path, pl);
	return finish(w, TRACE_REC_MMAP);
}

int trace_write_munmap(struct trace_writer *w, const struct trace_munmap *m)
{
	if (m->end < m->start)
		return fail(w, "MUNMAP range 0x%llx-0x%llx ends before it starts",
			    (unsigned long long)m->start, (unsigned long long)m->end);
	begin(w);
	enc_u32(&w->rec, (uint32_t)m->tid);
	enc_u64(&w->rec, m->pos);
	enc_u64(&w->rec, m->start);
	enc_u64(&w->rec, m->end);
	return finish(w, TRACE_REC_MUNMAP);
}

int trace_write_code(struct trace_writer *w, const struct trace_code *c)
{
	if (c->len && c->addr + (c->len - 1) < c->addr)
		return fail(w, "CODE at 0x%llx with %zu bytes wraps around the address space",
			    (unsigned long long)c->addr, c->len);
	uint64_t addr = c->addr;
	const uint8_t *p = c->bytes;
	size_t len = c->len;
	do { /* an empty CODE record is legal and written once */
		size_t n = len < TRACE_MAX_PAYLOAD - 8 ? len : TRACE_MAX_PAYLOAD - 8;
		begin(w);
		enc_u64(&w->rec, addr);
		enc_bytes(&w->rec, p, n);
		if (finish(w, TRACE_REC_CODE) < 0)
			return -1;
		addr += n;
		p += n;
		len -= n;
	} while (len);
	return 0;
}

int trace_write_syscall(struct trace_writer *w, const struct trace_syscall *s)
{
	uint64_t total = TRACE_SYSCALL_FIXED_LEN;
	for (size_t i = 0; i < s->nwrites; i++)
		total += TRACE_MEM_WRITE_HEADER_LEN + (uint64_t)s->writes[i].len;
	if (s->nwrites > UINT32_MAX || total > TRACE_MAX_PAYLOAD)
		return fail(w, "SYSCALL %llu record would be %llu bytes, over the %u-byte limit",
			    (unsigned long long)s->nr, (unsigned long long)total,
			    TRACE_MAX_PAYLOAD);
	begin(w);
	enc_reserve(&w->rec, (size_t)total);
	enc_u32(&w->rec, (uint32_t)s->tid);
	enc_u64(&w->rec, s->pos);
	enc_u64(&w->rec, s->nr);
	for (int i = 0; i < 6; i++)
		enc_u64(&w->rec, s->args[i]);
	enc_u64(&w->rec, (uint64_t)s->result);
	enc_u32(&w->rec, (s->unknown ? TRACE_SYSCALL_UNKNOWN : 0) |
			     (s->kept_cpu ? TRACE_SYSCALL_KEPT_CPU : 0));
	enc_u32(&w->rec, (uint32_t)s->nwrites);
	for (size_t i = 0; i < s->nwrites; i++) {
		enc_u64(&w->rec, s->writes[i].addr);
		enc_u32(&w->rec, (uint32_t)s->writes[i].len);
		enc_bytes(&w->rec, s->writes[i].bytes, s->writes[i].len);
	}
	return finish(w, TRACE_REC_SYSCALL);
}

int trace_write_signal(struct trace_writer *w, const struct trace_signal *s)
{
	if (s->signo < 1 || s->signo > TRACE_MAX_SIGNO)
		return fail(w, "SIGNAL number %d out of range 1-%d", s->signo, TRACE_MAX_SIGNO);
	begin(w);
	enc_u32(&w->rec, (uint32_t)s->tid);
	enc_u64(&w->rec, s->pos);
	enc_u32(&w->rec, (uint32_t)s->signo);
	enc_bytes(&w->rec, s->siginfo, sizeof s->siginfo);
	enc_u64(&w->rec, s->handler_ip);
	/* Only event recordings say where: a record without it is what every
	 * earlier reader knows. */
	if (s->where != TRACE_SIG_AT_POS)
		enc_u32(&w->rec, (uint32_t)s->where);
	return finish(w, TRACE_REC_SIGNAL);
}

/* A record of memory bytes of one thread's event (SIGFRAME, STATE_STACK,
 * STATE_MEM):
 * tid:i32 pos:u64 addr:u64, then the bytes. */
static int write_bytes_at(struct trace_writer *w, uint32_t type, pid_t tid, uint64_t pos,
			  uint64_t addr, const uint8_t *bytes, size_t len)
{
	begin(w);
	enc_reserve(&w->rec, TRACE_SIGFRAME_FIXED_LEN + len);
	enc_u32(&w->rec, (uint32_t)tid);
	enc_u64(&w->rec, pos);
	enc_u64(&w->rec, addr);
	enc_bytes(&w->rec, bytes, len);
	return finish(w, type);
}

int trace_write_state(struct trace_writer *w, const struct trace_state *st)
{
	if (st->tid <= 0)
		return fail(w, "STATE thread id %d out of range", (int)st->tid);
	if (st->stack_hi < st->stack_lo)
		return fail(w, "STATE stack range ends before it starts");
	begin(w);
	enc_u32(&w->rec, (uint32_t)st->tid);
	enc_u64(&w->rec, st->pos);
	for (int i = 0; i < 27; i++)
		enc_u64(&w->rec, st->regs[i]);
	enc_u64(&w->rec, st->vec_hash);
	enc_u64(&w->rec, st->stack_lo);
	enc_u64(&w->rec, st->stack_hi);
	enc_u64(&w->rec, st->stack_hash);
	enc_u64(&w->rec, st->mem_bytes);
	enc_u64(&w->rec, st->mem_hash);
	enc_u64(&w->rec, st->flags);
	enc_u64(&w->rec, st->ran_ns);
	/* Only where there are any, so that a reader from before the ranges
	 * existed reads the other points. */
	if (st->nskip) {
		if (st->nskip > TRACE_STATE_MAX_SKIP)
			return fail(w, "STATE with %zu ranges left out", st->nskip);
		enc_u32(&w->rec, (uint32_t)st->nskip);
		for (size_t i = 0; i < 2 * st->nskip; i++)
			enc_u64(&w->rec, st->skip[i]);
	}
	if (st->sp_len > TRACE_STATE_SP_MAX)
		return fail(w, "STATE with %zu bytes of stack", st->sp_len);
	if (st->sp_len && st->sp_addr + (st->sp_len - 1) < st->sp_addr)
		return fail(w, "STATE stack bytes wrap around the address space");
	if (st->nmem > TRACE_STATE_MEM_RANGES)
		return fail(w, "STATE with %zu ranges of memory", st->nmem);
	for (size_t i = 0; i < st->nmem; i++)
		if (!st->mem[i].len || st->mem[i].len > TRACE_STATE_MEM_MAX ||
		    st->mem[i].addr + (st->mem[i].len - 1) < st->mem[i].addr)
			return fail(w, "STATE memory of %zu bytes at %#llx", st->mem[i].len,
				    (unsigned long long)st->mem[i].addr);
	if (finish(w, TRACE_REC_STATE) < 0)
		return -1;
	/* Their own records, after the STATE: readers from before them skip
	 * them. */
	if (st->sp_len && write_bytes_at(w, TRACE_REC_STATE_STACK, st->tid, st->pos, st->sp_addr,
					 st->sp_bytes, st->sp_len) < 0)
		return -1;
	for (size_t i = 0; i < st->nmem; i++)
		if (write_bytes_at(w, TRACE_REC_STATE_MEM, st->tid, st->pos, st->mem[i].addr,
				   st->mem[i].bytes, st->mem[i].len) < 0)
			return -1;
	return 0;
}

int trace_write_sigframe(struct trace_writer *w, const struct trace_sigframe *f)
{
	/* Refuse what the reader would refuse, so a recording never holds a
	 * record that makes the whole file unreadable. */
	if (f->tid <= 0)
		return fail(w, "SIGFRAME of thread %d: not a valid thread id", (int)f->tid);
	if (f->len == 0 || f->len > TRACE_SIGFRAME_MAX)
		return fail(w, "SIGFRAME of %zu bytes is not 1-%d bytes", f->len,
			    TRACE_SIGFRAME_MAX);
	if (f->addr + (f->len - 1) < f->addr)
		return fail(w, "SIGFRAME of %zu bytes at 0x%llx wraps around the address space",
			    f->len, (unsigned long long)f->addr);
	return write_bytes_at(w, TRACE_REC_SIGFRAME, f->tid, f->pos, f->addr, f->bytes, f->len);
}

int trace_write_gdb_write(struct trace_writer *w, const struct trace_gdb_write *g)
{
	if (g->tid <= 0)
		return fail(w, "gdb's change to thread %d: not a valid thread id", (int)g->tid);
	if (g->regs ? g->len < TRACE_GDB_REGS_MIN || g->len > TRACE_GDB_REGS_MAX || g->addr
		    : g->len == 0 || g->len > TRACE_GDB_MEM_MAX)
		return fail(w, "gdb's change of %zu bytes (%s) is not a valid one", g->len,
			    g->regs ? "registers" : "memory");
	if (!g->regs && g->addr + (g->len - 1) < g->addr)
		return fail(w, "gdb's change of %zu bytes at 0x%llx wraps around the address "
			    "space", g->len, (unsigned long long)g->addr);
	return write_bytes_at(w, g->regs ? TRACE_REC_GDB_REGS : TRACE_REC_GDB_MEM, g->tid,
			      g->pos, g->addr, g->bytes, g->len);
}

int trace_write_rdtsc(struct trace_writer *w, const struct trace_rdtsc *r)
{
	begin(w);
	enc_u32(&w->rec, (uint32_t)r->tid);
	enc_u64(&w->rec, r->pos);
	enc_u64(&w->rec, r->value);
	enc_u32(&w->rec, r->aux);
	enc_u32(&w->rec, r->is_rdtscp ? TRACE_RDTSC_IS_RDTSCP : 0);
	return finish(w, TRACE_REC_RDTSC);
}

int trace_write_thread(struct trace_writer *w, const struct trace_thread *t)
{
	begin(w);
	enc_u32(&w->rec, (uint32_t)t->tid);
	enc_u32(&w->rec, (uint32_t)t->parent);
	enc_u64(&w->rec, t->pos);
	enc_u32(&w->rec, t->exited ? TRACE_THREAD_EXITED : 0);
	enc_u32(&w->rec, (uint32_t)t->exit_code);
	return finish(w, TRACE_REC_THREAD);
}

int trace_write_sched(struct trace_writer *w, const struct trace_sched_run *runs, size_t n)
{
	/* Bounded so a record (and the buffer that builds it) stays small
	 * however long the schedule; longer ones take several records. */
	if (n == 0 || n > TRACE_SCHED_MAX_RUNS)
		return fail(w, "SCHED record of %zu runs is not 1-%d runs", n,
			    TRACE_SCHED_MAX_RUNS);
	for (size_t i = 0; i < n; i++)
		if (runs[i].pos + runs[i].count < runs[i].pos)
			return fail(w, "SCHED run of thread %d (%llu instructions from %llu) wraps around",
				    (int)runs[i].tid, (unsigned long long)runs[i].count,
				    (unsigned long long)runs[i].pos);
	begin(w);
	enc_reserve(&w->rec, 4 + n * TRACE_SCHED_RUN_LEN);
	enc_u32(&w->rec, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		enc_u32(&w->rec, (uint32_t)runs[i].tid);
		enc_u64(&w->rec, runs[i].pos);
		enc_u64(&w->rec, runs[i].count);
	}
	return finish(w, TRACE_REC_SCHED);
}

int trace_write_schedule(struct trace_writer *w, const struct trace_sched_run *runs, size_t n)
{
	/* Readers merge runs across records, so where a record ends is
	 * invisible to them. */
	for (size_t i = 0; i < n; i += TRACE_SCHED_MAX_RUNS) {
		size_t k = n - i < TRACE_SCHED_MAX_RUNS ? n - i : TRACE_SCHED_MAX_RUNS;
		if (trace_write_sched(w, runs + i, k) < 0)
			return -1;
	}
	return 0;
}

int trace_write_file(struct trace_writer *w, const struct trace_file_copy *f)
{
	size_t pl = strlen(f->path);
	if (pl == 0 || pl > 4095)
		return fail(w, "FILE path length %zu is not 1-4095", pl);
	if (f->build_id_len > sizeof f->build_id)
		return fail(w, "FILE build-id length %u exceeds %zu", f->build_id_len,
			    sizeof f->build_id);
	uint8_t bid[20] = {0};
	memcpy(bid, f->build_id, f->build_id_len);
	uint64_t off = 0;
	do { /* an empty file is one record without bytes */
		uint64_t left = f->size - off;
		size_t n = left < TRACE_FILE_CHUNK ? (size_t)left : TRACE_FILE_CHUNK;
		begin(w);
		enc_reserve(&w->rec, TRACE_FILE_FIXED_LEN + pl + n);
		enc_u32(&w->rec, f->build_id_len);
		enc_bytes(&w->rec, bid, sizeof bid);
		enc_u64(&w->rec, f->size);
		enc_u64(&w->rec, off);
		enc_u32(&w->rec, (uint32_t)pl);
		enc_bytes(&w->rec, f->path, pl);
		if (n)
			enc_bytes(&w->rec, f->bytes + off, n);
		if (finish(w, TRACE_REC_FILE) < 0)
			return -1;
		off += n;
	} while (off < f->size);
	return 0;
}

int trace_write_end(struct trace_writer *w, const struct trace_end *e)
{
	if (e->status_kind < 0 || e->status_kind > 2)
		return fail(w, "END status kind %d is not 0, 1 or 2", e->status_kind);
	begin(w);
	enc_u32(&w->rec, (uint32_t)e->status_kind);
	enc_u32(&w->rec, (uint32_t)e->status);
	enc_u64(&w->rec, e->instructions);
	enc_u64(&w->rec, e->psb_count);
	enc_u64(&w->rec, e->duration_ns);
	enc_u64(&w->rec, e->syscalls);
	enc_u64(&w->rec, e->signals);
	return finish(w, TRACE_REC_END);
}
