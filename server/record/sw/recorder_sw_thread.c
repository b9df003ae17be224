/* sw backend: per-thread state (one PT stream and encoder per thread, the
 * event a thread holds for the caller), the program's memory as the
 * recorder reads it (/proc/PID/mem), and the instruction classification
 * cache that keeps a step cheap: the bytes at an IP are read and decoded
 * once, not at every execution (the block cache, block_cache.h, does the
 * same for whole blocks and is invalidated with it). The bottom of the
 * backend's files: it calls none of the others. */
#include "recorder_sw.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>
#include <x86intrin.h>

struct sw_thread *sw_thread_find(struct sw_rec *r, pid_t tid)
{
	/* A handful of threads, and the same one reports again and again:
	 * remember the last hit. */
	static __thread size_t last;
	if (last < r->nthreads && r->threads[last]->tid == tid)
		return r->threads[last];
	for (size_t i = r->nthreads; i-- > 0;) {
		if (r->threads[i]->tid == tid && !r->threads[i]->gone) {
			last = i;
			return r->threads[i];
		}
	}
	return NULL;
}

struct sw_thread *sw_thread_add(struct sw_rec *r, pid_t tid)
{
	struct sw_thread *t;

	if (r->nthreads == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 8;
		struct sw_thread **nt = realloc(r->threads, cap * sizeof *nt);
		if (!nt)
			return NULL;
		r->threads = nt;
		r->cap = cap;
	}
	t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->tid = tid;
	t->rec = r;
	r->threads[r->nthreads++] = t;
	r->live++;
	return t;
}

static int pt_sink(void *arg, const uint8_t *data, size_t len)
{
	struct sw_thread *t = arg;
	return trace_write_pt(t->rec->w, t->tid, data, len);
}

int sw_thread_start(struct sw_thread *t)
{
	struct sw_rec *r = t->rec;
	struct ptenc_config cfg = {0};

	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &t->regs) < 0) {
		snprintf(r->err, r->errlen, "registers of thread %d: %s",
			 (int)t->tid, strerror(errno));
		return -1;
	}
	if (sw_classify(r, t->regs.rip, &t->info) < 0)
		return -1;
	cfg.psb_period = r->psb_period;
	cfg.tnt64 = false; /* TNT-8 only: what most cores emit */
	cfg.sink = pt_sink;
	cfg.sink_arg = t;
	t->enc = ptenc_new(&cfg);
	if (!t->enc) {
		snprintf(r->err, r->errlen, "out of memory");
		return -1;
	}
	if (ptenc_begin(t->enc, t->regs.rip, __rdtsc()) < 0) {
		snprintf(r->err, r->errlen, "encoder: %s", ptenc_error(t->enc));
		return -1;
	}
	t->started = true;
	return 0;
}

int sw_thread_finish(struct sw_thread *t, uint64_t ip, int exit_code)
{
	struct sw_rec *r = t->rec;
	struct trace_thread th = {0};
	int rc = 0;

	if (t->gone)
		return 0;
	t->gone = true;
	r->live--;
	if (t->resumed)
		r->inf->resumed_gone = true; /* see sw_engine_wait */
	if (t->enc) {
		if (ptenc_end(t->enc, ip) < 0) {
			snprintf(r->err, r->errlen, "encoder (thread %d): %s",
				 (int)t->tid, ptenc_error(t->enc));
			rc = -1;
		}
		r->end.instructions += t->insns;
		r->end.psb_count += ptenc_stats(t->enc)->psbs;
	}
	th.tid = t->tid;
	th.pos = t->insns;
	th.exited = true;
	th.exit_code = exit_code;
	if (trace_write_thread(r->w, &th) < 0)
		rc = -1;
	return rc;
}

void sw_set_pending(struct sw_thread *t, enum stop_kind kind, int sig)
{
	memset(&t->pending, 0, sizeof t->pending);
	t->pending.kind = kind;
	t->pending.tid = t->tid;
	t->pending.sig = sig;
	t->has_pending = true;
}

void sw_threads_free(struct sw_rec *r)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		ptenc_free(r->threads[i]->enc);
		mem_diff_free(r->threads[i]->watch);
		free(r->threads[i]);
	}
	free(r->threads);
	r->threads = NULL;
	r->nthreads = r->cap = 0;
}

/* /proc/PID/mem reads the address space it was opened on: reopen it when
 * the program has a new one (execve). */
int sw_open_memfd(struct sw_rec *r)
{
	char path[64];
	int fd;

	snprintf(path, sizeof path, "/proc/%d/mem", (int)r->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(r->err, r->errlen, "cannot open %s: %s", path,
			 strerror(errno));
		return -1;
	}
	if (r->memfd >= 0)
		close(r->memfd);
	r->memfd = fd;
	if (r->sb)
		sideband_set_memfd(r->sb, fd);
	if (r->bstep && bstep_exec(r->bstep) < 0) {
		snprintf(r->err, r->errlen, "cannot open %s for writing: %s",
			 path, strerror(errno));
		return -1;
	}
	return 0;
}

long sw_read_mem(void *rec, uint64_t addr, void *buf, size_t len)
{
	struct sw_rec *r = rec;
	return (long)pread(r->memfd, buf, len, (off_t)addr);
}

void sw_icache_invalidate(struct sw_rec *r)
{
	/* Generation 0 marks never-filled entries; skip it on wrap-around. */
	if (++r->gen == 0) {
		memset(r->icache, 0, sizeof(*r->icache) << ICACHE_BITS);
		r->gen = 1;
	}
	if (r->bcache)
		block_cache_invalidate(r->bcache);
}

long sw_read_code(void *rec, uint64_t addr, void *buf, size_t len)
{
	struct sw_rec *r = rec;
	ssize_t n = pread(r->memfd, buf, len, (off_t)addr);
	uint8_t *code = buf;

	/* The server's int3 bytes are not the program's code. */
	for (size_t i = 0; n > 0 && r->inf && i < r->inf->nbps; i++) {
		uint64_t a = r->inf->bps[i].addr;
		if (a >= addr && a < addr + (uint64_t)n)
			code[a - addr] = r->inf->bps[i].saved;
	}
	return (long)n;
}

int sw_classify(struct sw_rec *r, uint64_t ip, struct insn_info *out)
{
	uint64_t h = (ip * 0x9e3779b97f4a7c15ull) >> (64 - ICACHE_BITS);
	struct icache_entry *e = &r->icache[h];
	uint8_t code[16];
	long n;

	if (e->gen == r->gen && e->ip == ip) {
		*out = e->info;
		return 0;
	}
	n = sw_read_code(r, ip, code, sizeof code);
	if (n <= 0) {
		snprintf(r->err, r->errlen, "cannot read the code at %#llx",
			 (unsigned long long)ip);
		return -1;
	}
	if (insn_classify(code, (size_t)n, ip, out) < 0) {
		snprintf(r->err, r->errlen, "no valid instruction at %#llx",
			 (unsigned long long)ip);
		return -1;
	}
	e->ip = ip;
	e->gen = r->gen;
	e->info = *out;
	return 0;
}
