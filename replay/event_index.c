/* Event replay: each thread's events in order. In an event recording a
 * SYSCALL, RDTSC, SIGNAL or STATE record's pos is its number among its
 * thread's events (docs/trace-format.md); here they are put in that order,
 * and a recording whose numbers skip or repeat is refused rather than
 * replayed wrongly. */
#include "event_replay.h"
#include "gdb_write.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int erp_fail(struct erp *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->why, sizeof e->why, fmt, ap);
	va_end(ap);
	return -1;
}

void erp_failed_at(struct erp *e, const struct erp_thread *t, uint64_t k)
{
	e->failed_at = (struct event_end_failure){t->rec_tid, k, false};
}

void erp_diverged_at(struct erp *e, const struct erp_thread *t)
{
	/* Every divergence is told by a message that begins so (event_*.c,
	 * sys_replay.c): the one place that tells it from a ptrace error. */
	static const char said[] = "replay diverged";
	if (!e->failed_at.tid && strncmp(e->why, said, sizeof said - 1) == 0)
		e->failed_at = (struct event_end_failure){t->rec_tid, t->next, true};
}

int erp_count_stop(struct erp *e)
{
	e->stops++;
	if (e->stop && atomic_load_explicit(e->stop, memory_order_relaxed))
		return erp_fail(e, "stopped: its history is no longer wanted");
	return 0;
}

struct erp_thread *erp_thread_rec(struct erp *e, pid_t rec_tid)
{
	for (size_t i = 0; i < e->nthreads; i++)
		if (e->threads[i].rec_tid == rec_tid)
			return &e->threads[i];
	return NULL;
}

struct erp_thread *erp_thread_live(struct erp *e, pid_t tid)
{
	for (size_t i = 0; i < e->nthreads; i++)
		if (e->threads[i].tid == tid && !e->threads[i].gone)
			return &e->threads[i];
	return NULL;
}

const struct trace_sigframe *erp_sigframe(const struct erp *e, pid_t rec_tid, uint64_t k)
{
	for (size_t i = 0; i < e->td->nsigframes; i++)
		if (e->td->sigframes[i].tid == rec_tid && e->td->sigframes[i].pos == k)
			return &e->td->sigframes[i];
	return NULL;
}

static struct erp_thread *thread_for(struct erp *e, pid_t rec_tid)
{
	struct erp_thread *t = erp_thread_rec(e, rec_tid);
	if (t)
		return t;
	struct erp_thread *grown = realloc(e->threads, (e->nthreads + 1) * sizeof *grown);
	if (!grown)
		return NULL;
	e->threads = grown;
	t = &e->threads[e->nthreads++];
	memset(t, 0, sizeof *t);
	t->rec_tid = rec_tid;
	return t;
}

/* Put event rec of thread rec_tid at its number pos. */
static int place(struct erp *e, pid_t rec_tid, uint64_t pos, enum erp_kind kind, const void *rec)
{
	struct erp_thread *t = thread_for(e, rec_tid);
	if (!t)
		return erp_fail(e, "out of memory");
	if (pos >= t->nev) {
		if (pos > (1u << 28))
			return erp_fail(e, "thread %d: event number %llu out of range", (int)rec_tid,
					(unsigned long long)pos);
		/* Room grows by doubling: the events come in order, one by one,
		 * and a realloc per event copied the whole array each time where
		 * the allocator cannot grow it in place (AddressSanitizer's never
		 * does: 45 s to index 60,000 syscalls in the test build). */
		if (pos >= t->evcap) {
			size_t cap = t->evcap ? t->evcap : 64;
			while (cap <= pos)
				cap *= 2;
			struct erp_event *grown = realloc(t->ev, cap * sizeof *grown);
			if (!grown)
				return erp_fail(e, "out of memory");
			t->ev = grown;
			t->evcap = cap;
		}
		memset(t->ev + t->nev, 0, (pos + 1 - t->nev) * sizeof *t->ev);
		t->nev = pos + 1;
	}
	if (t->ev[pos].rec)
		return erp_fail(e, "thread %d: two events numbered %llu", (int)rec_tid,
				(unsigned long long)pos);
	t->ev[pos] = (struct erp_event){.kind = kind, .rec = rec};
	return 0;
}

static int index_gdb_writes(struct erp *e, const struct trace_data *td)
{
	for (size_t i = 0; i < td->ngdb_writes; i++) {
		const struct trace_gdb_write *g = &td->gdb_writes[i];
		struct erp_thread *t = erp_thread_rec(e, g->tid);
		if (!t || !g->pos)
			return erp_fail(e, "gdb's change to thread %d at its event %llu: no such "
					"place in the recording", (int)g->tid,
					(unsigned long long)g->pos);
		const struct trace_gdb_write **grown = realloc(t->gw, (t->ngw + 1) * sizeof *grown);
		if (!grown)
			return erp_fail(e, "out of memory");
		t->gw = grown;
		t->gw[t->ngw++] = g;
	}
	for (size_t i = 0; i < e->nthreads; i++)
		if (e->threads[i].ngw)
			qsort(e->threads[i].gw, e->threads[i].ngw, sizeof *e->threads[i].gw,
			      gdb_write_by_pos);
	return 0;
}

int erp_index(struct erp *e, const struct trace_data *td)
{
	e->td = td;
	/* Threads in creation order first (THREAD records), then any other
	 * that has events. */
	for (size_t i = 0; i < td->nthreads; i++)
		if (!td->threads[i].exited && !thread_for(e, td->threads[i].tid))
			return erp_fail(e, "out of memory");
	for (size_t i = 0; i < td->nsyscalls; i++)
		if (place(e, td->syscalls[i].tid, td->syscalls[i].pos, ERP_SYSCALL,
			  &td->syscalls[i]) < 0)
			return -1;
	for (size_t i = 0; i < td->nrdtsc; i++)
		if (place(e, td->rdtsc[i].tid, td->rdtsc[i].pos, ERP_RDTSC, &td->rdtsc[i]) < 0)
			return -1;
	for (size_t i = 0; i < td->nsignals; i++)
		if (place(e, td->signals[i].tid, td->signals[i].pos, ERP_SIGNAL,
			  &td->signals[i]) < 0)
			return -1;
	for (size_t i = 0; i < td->nstates; i++)
		if (place(e, td->states[i].tid, td->states[i].pos, ERP_STATE, &td->states[i]) < 0)
			return -1;
	for (size_t i = 0; i < e->nthreads; i++) {
		struct erp_thread *t = &e->threads[i];
		for (size_t k = 0; k < t->nev; k++)
			if (!t->ev[k].rec)
				return erp_fail(e, "thread %d: event %zu is missing from the recording",
						(int)t->rec_tid, k);
	}
	if (e->nthreads == 0)
		return erp_fail(e, "the recording has no thread");
	return index_gdb_writes(e, td);
}

void erp_index_free(struct erp *e)
{
	for (size_t i = 0; i < e->nthreads; i++) {
		free(e->threads[i].ev);
		free(e->threads[i].gw);
		if (e->threads[i].clock_open && e->threads[i].clock >= 0)
			close(e->threads[i].clock);
	}
	free(e->threads);
	e->threads = NULL;
	e->nthreads = 0;
}
