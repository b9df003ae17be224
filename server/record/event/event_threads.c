/* Event recorder: the threads and the CPU. One thread runs its own code at
 * a time, so that every thread's instructions have one order that a replay
 * can follow; the others wait stopped at their last event, or run a
 * syscall in the kernel (it may block). A thread keeps the CPU until it
 * enters a syscall or is stopped at a STATE point; then the next ready
 * thread gets it, round robin. The order is logged as SCHED runs counted
 * in events (docs/trace-format.md). */
#include "event_rec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <time.h>
#include <unistd.h>

#include "ptrev/sideband.h"

/* Finished runs kept before they are written as SCHED records. */
#define EV_SCHED_BATCH 512

uint64_t ev_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ev_fail(struct ev_rec *r, const char *fmt, ...)
{
	va_list ap;
	if (r->err[0])
		return -1; /* the first reason is the one that matters */
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof r->err, fmt, ap);
	va_end(ap);
	return -1;
}

struct ev_thread *ev_thread_find(struct ev_rec *r, pid_t tid)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i]->tid == tid && r->threads[i]->state != EV_T_GONE)
			return r->threads[i];
	return NULL;
}

struct ev_thread *ev_thread_add(struct ev_rec *r, pid_t tid)
{
	if (r->nthreads == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 8;
		struct ev_thread **grown = realloc(r->threads, cap * sizeof *grown);
		if (!grown)
			return NULL;
		r->threads = grown;
		r->cap = cap;
	}
	struct ev_thread *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->tid = tid;
	t->rec = r;
	t->state = EV_T_NEW;
	t->event_ns = ev_now_ns();
	r->threads[r->nthreads++] = t;
	return t;
}

void ev_event_done(struct ev_thread *t)
{
	t->moved = false;
	t->events++;
	t->event_ns = ev_now_ns();
}

int ev_early_add(struct ev_rec *r, pid_t tid)
{
	if (r->nearly == r->capearly) {
		size_t cap = r->capearly ? r->capearly * 2 : 8;
		pid_t *grown = realloc(r->early, cap * sizeof *grown);
		if (!grown)
			return ev_fail(r, "out of memory");
		r->early = grown;
		r->capearly = cap;
	}
	r->early[r->nearly++] = tid;
	return 0;
}

bool ev_early_take(struct ev_rec *r, pid_t tid)
{
	for (size_t i = 0; i < r->nearly; i++) {
		if (r->early[i] == tid) {
			r->early[i] = r->early[--r->nearly];
			return true;
		}
	}
	return false;
}

int ev_undo_entry(struct ev_thread *t, const struct user_regs_struct *now)
{
	struct user_regs_struct back = *now;
	back.rax = now->orig_rax;
	back.orig_rax = (unsigned long long)-1;
	back.rip -= 2;
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &back) < 0)
		return ev_fail(t->rec, "thread %d: cannot undo a syscall entry: %s", (int)t->tid,
			       strerror(errno));
	t->undone_entry = true;
	return 0;
}

int ev_sched_flush(struct ev_rec *r)
{
	if (r->nruns && trace_write_schedule(r->w, r->runs, r->nruns) < 0)
		return ev_fail(r, "writing the schedule: %s",
			       trace_writer_error(r->w) ? trace_writer_error(r->w) : "failed");
	r->nruns = 0;
	return 0;
}

int ev_run_end(struct ev_thread *t, uint64_t last)
{
	struct ev_rec *r = t->rec;
	if (r->cpu == t)
		r->cpu = NULL;
	if (last < t->run_first)
		return 0; /* nothing ran (it never got the CPU) */
	if (r->nruns == r->runs_cap) {
		size_t cap = r->runs_cap ? r->runs_cap * 2 : 64;
		struct trace_sched_run *grown = realloc(r->runs, cap * sizeof *grown);
		if (!grown)
			return ev_fail(r, "out of memory");
		r->runs = grown;
		r->runs_cap = cap;
	}
	r->runs[r->nruns++] = (struct trace_sched_run){
		.tid = t->tid, .pos = t->run_first, .count = last - t->run_first + 1};
	return r->nruns >= EV_SCHED_BATCH ? ev_sched_flush(r) : 0;
}

bool ev_any_ready(const struct ev_rec *r)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i]->state == EV_T_READY)
			return true;
	return false;
}

/* Is any of n queued signals one the thread does not block? */
static bool any_unblocked(const siginfo_t *q, long n, uint64_t blocked)
{
	for (long i = 0; i < n; i++)
		if (q[i].si_signo > 0 && !(blocked & (1ull << (q[i].si_signo - 1))))
			return true;
	return false;
}

/* Each signal queued for t that it does not block (SIGSTOP included), its
 * own queue's and then the process's, as ptrace shows them (cheap calls,
 * unlike /proc), until stop says so: what stop last said (false: none
 * queued, or the mask unreadable). */
static bool each_unblocked(struct ev_thread *t, bool (*stop)(const siginfo_t *, void *),
			   void *ctx)
{
	uint64_t blocked = 0;
	if (ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof blocked, &blocked) < 0)
		return false;
	blocked &= ~(1ull << (SIGSTOP - 1));
	for (int shared = 0; shared < 2; shared++) {
		siginfo_t q[16];
		struct __ptrace_peeksiginfo_args a = {
			.off = 0, .flags = shared ? PTRACE_PEEKSIGINFO_SHARED : 0, .nr = 16};
		long n;
		while ((n = ptrace(PTRACE_PEEKSIGINFO, t->tid, &a, q)) > 0) {
			for (long i = 0; i < n; i++)
				if (any_unblocked(q + i, 1, blocked) && stop(q + i, ctx))
					return true;
			a.off += (uint64_t)n;
		}
	}
	return false;
}

static bool any(const siginfo_t *si, void *ctx)
{
	(void)si;
	(void)ctx;
	return true;
}

bool ev_signal_pending(struct ev_thread *t)
{
	return each_unblocked(t, any, NULL);
}

/* A signal that is not our SIGSTOP (ctx: ptrev's pid); *ours counts those
 * that are. */
struct ours_ctx {
	pid_t self;
	bool ours;
};

static bool not_ours(const siginfo_t *si, void *ctx)
{
	struct ours_ctx *c = ctx;
	if (si->si_signo == SIGSTOP && si->si_code == SI_TKILL && si->si_pid == c->self) {
		c->ours = true;
		return false;
	}
	return true;
}

bool ev_other_signal_pending(struct ev_thread *t)
{
	struct ours_ctx c = {.self = t->rec->self};
	return each_unblocked(t, not_ours, &c);
}

bool ev_only_our_stop_pending(struct ev_thread *t)
{
	struct ours_ctx c = {.self = t->rec->self};
	return t->stop_expected > 0 && !each_unblocked(t, not_ours, &c) && c.ours;
}

int ev_sideband_start(struct ev_rec *r)
{
	if (r->sb)
		sideband_free(r->sb);
	r->sb = sideband_new(r->pid, r->memfd, r->w);
	if (!r->sb)
		return ev_fail(r, "out of memory");
	sideband_set_copy_files(r->sb, !r->opts.no_copy);
	if (sideband_update(r->sb, 0, 0) < 0)
		return ev_fail(r, "cannot read the mappings of %d", (int)r->pid);
	return 0;
}

int ev_open_memfd(struct ev_rec *r)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)r->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ev_fail(r, "cannot open %s: %s", path, strerror(errno));
	if (r->memfd >= 0)
		close(r->memfd);
	r->memfd = fd;
	if (r->sb)
		sideband_set_memfd(r->sb, fd);
	return 0;
}

long ev_read_mem(void *rec, uint64_t addr, void *buf, size_t len)
{
	struct ev_rec *r = rec;
	return (long)pread(r->memfd, buf, len, (off_t)addr);
}
