/* The sw recorder's scheduler: one thread executes user-space instructions
 * at a time. Threads single-stepped side by side on several cores would
 * have no true order (which of two simultaneous steps came first is not
 * knowable, and the order their traps are collected in can contradict what
 * they saw in memory); run one at a time, the order they ran in is the
 * order their instructions took effect, and it is logged as SCHED runs so
 * that the history can be walked across threads in both directions.
 *
 * A syscall instruction is stepped at once, beside the thread holding the
 * CPU: it may block in the kernel until another thread acts. Its
 * completion takes its place in the order when it is collected, as rr
 * places a desched'd syscall. The CPU passes round robin after SW_QUANTUM
 * instructions, or when its holder stops or enters a syscall. This is the
 * one place that decides a thread may run; how it runs (a native run of
 * its block, never past the end of its quantum, or a single step) is
 * recorder_sw_run.c's. */
#include "recorder_sw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool other_ready(const struct sw_rec *r, const struct sw_thread *t)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i] != t && r->threads[i]->ready)
			return true;
	return false;
}

void sw_sched_release(struct sw_thread *t)
{
	if (t->rec->cpu == t)
		t->rec->cpu = NULL;
}

/* How many instructions t may execute before its quantum is over, when
 * another thread could then want the CPU. */
static uint32_t quantum_left(const struct sw_rec *r)
{
	if (r->live < 2 || r->slice >= SW_QUANTUM)
		return UINT32_MAX;
	return SW_QUANTUM - r->slice;
}

int sw_sched_run(struct sw_thread *t, struct user_regs_struct *emu)
{
	struct sw_rec *r = t->rec;

	if (t->info.kind == INSN_SYSCALL) {
		sw_sched_release(t);
		return sw_run_step(t);
	}
	if (r->cpu == t && r->slice >= SW_QUANTUM && other_ready(r, t))
		r->cpu = NULL; /* its turn is over: to the back of the queue */
	if (r->cpu && r->cpu != t) {
		t->ready = true;
		return 0;
	}
	if (!r->cpu) {
		if (other_ready(r, t)) {
			/* Others waited longer. */
			t->ready = true;
			return 0;
		}
		r->cpu = t;
		r->slice = 0;
		for (size_t i = 0; i < r->nthreads; i++)
			if (r->threads[i] == t)
				r->rr_next = i + 1;
	}
	t->ready = false;
	return sw_run(t, quantum_left(r), emu);
}

struct sw_thread *sw_sched_dispatch(struct sw_rec *r)
{
	/* A holder that is not stepping has stopped (gone, or an event). */
	if (r->cpu && !r->cpu->inflight)
		r->cpu = NULL;
	if (r->cpu || r->stopping || !r->nthreads)
		return NULL;
	for (size_t k = 0; k < r->nthreads; k++) {
		size_t i = (r->rr_next + k) % r->nthreads;
		struct sw_thread *t = r->threads[i];
		if (!t->ready)
			continue;
		t->ready = false;
		if (t->gone || t->has_pending || !t->resumed)
			continue;
		r->cpu = t;
		r->slice = 0;
		r->rr_next = i + 1;
		return t;
	}
	return NULL;
}

void sw_sched_reset(struct sw_rec *r)
{
	r->cpu = NULL;
	for (size_t i = 0; i < r->nthreads; i++)
		r->threads[i]->ready = false;
}

static int write_runs(struct sw_rec *r)
{
	int rc = trace_write_schedule(r->w, r->runs, r->nruns);

	r->nruns = 0;
	if (rc < 0)
		snprintf(r->err, r->errlen, "cannot write the schedule");
	return rc;
}

/* Close the current run: onto the list, written in batches. */
static int close_run(struct sw_rec *r)
{
	if (!r->run.count)
		return 0;
	if (r->nruns == r->runs_cap) {
		size_t cap = r->runs_cap ? 2 * r->runs_cap : 64;
		struct trace_sched_run *n = realloc(r->runs, cap * sizeof *n);
		if (!n) {
			snprintf(r->err, r->errlen, "out of memory");
			return -1;
		}
		r->runs = n;
		r->runs_cap = cap;
	}
	r->runs[r->nruns++] = r->run;
	r->run.count = 0;
	return r->nruns >= SW_SCHED_BATCH ? write_runs(r) : 0;
}

int sw_sched_note(struct sw_thread *t, uint64_t pos)
{
	struct sw_rec *r = t->rec;
	struct trace_sched_run *c = &r->run;

	if (r->cpu == t)
		r->slice++;
	if (c->count && c->tid == t->tid && c->pos + c->count == pos) {
		c->count++;
		return 0;
	}
	if (close_run(r) < 0)
		return -1;
	*c = (struct trace_sched_run){ .tid = t->tid, .pos = pos, .count = 1 };
	return 0;
}

int sw_sched_flush(struct sw_rec *r)
{
	/* A run that goes on after a stop becomes a new one, which readers
	 * merge back into it. */
	if (close_run(r) < 0)
		return -1;
	return r->nruns ? write_runs(r) : 0;
}
