/* One position for the whole program: with the recording's schedule
 * (SCHED runs) the threads' histories interleave into one global order, so
 * moving one thread back or forth moves the others with it, exactly as
 * they ran (gdb_history.h). Without a schedule covering every thread, each
 * thread moves alone, as before. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "ptrev/gdb_history.h"
#include "ptrev/history_schedule.h"

static uint64_t count_of(const struct gdb_hist_thread *t)
{
	return history_insn_count(t->h);
}

/* Does the schedule place every instruction of every thread we have, and
 * only those? Then the order is known everywhere; else not at all. *nsched:
 * how many threads it orders. */
static bool schedule_covers(const struct gdb_history *gh, size_t *nsched)
{
	pid_t *tids;
	size_t n = sched_map_threads(gh->sched, &tids);
	bool ok = true;
	for (size_t i = 0; ok && i < n; i++)
		ok = gdb_history_thread((struct gdb_history *)gh, tids[i]) != NULL;
	free(tids);
	*nsched = n;
	for (size_t i = 0; ok && i < gh->nthreads; i++) {
		const struct gdb_hist_thread *t = &gh->threads[i];
		uint64_t start = 0;
		if (count_of(t) == 0)
			continue;
		ok = sched_map_thread_start(gh->sched, t->tid, &start) && start == 0 &&
		     sched_map_thread_end(gh->sched, t->tid) == count_of(t);
	}
	return ok;
}

void gdb_history_sched_sync(struct gdb_history *gh, bool was_at_end)
{
	const struct trace_data *td = gh->td;
	if (!gh->sched && td->nsched && !gh->sched_broken && !(gh->sched = sched_map_new()))
		gh->sched_broken = true;
	while (!gh->sched_broken && gh->sched_fed < td->nsched) {
		const struct trace_sched_run *r = &td->sched[gh->sched_fed];
		if (sched_map_add(gh->sched, r) != 0) {
			fprintf(stderr, "ptrev: the recording's schedule is inconsistent at thread %d "
				"instruction %llu; thread switches unknown: each thread moves alone\n",
				(int)r->tid, (unsigned long long)r->pos);
			gh->sched_broken = true;
		}
		gh->sched_fed++;
	}
	size_t nsched = 0;
	bool covers = !gh->sched_broken && gh->sched && schedule_covers(gh, &nsched);
	if (!covers && gh->sched && !gh->sched_warned && gh->nthreads > 1) {
		/* A recorder killed before it wrote the last runs, say. */
		fprintf(stderr, "ptrev: the recording's schedule does not cover every thread's "
			"history (%llu instructions scheduled); thread switches unknown: each "
			"thread moves alone\n", (unsigned long long)sched_map_total(gh->sched));
		gh->sched_warned = true;
	}
	covers = covers && nsched >= 2; /* one thread needs no order */
	bool newly = covers && !gh->global;
	gh->global = covers;
	if (covers)
		gdb_history_set_global(gh, newly || was_at_end ? sched_map_total(gh->sched) : gh->gpos);
}

bool gdb_history_sched_at_end(const struct gdb_history *gh)
{
	return gh->global && gh->gpos >= sched_map_total(gh->sched);
}

void gdb_history_set_global(struct gdb_history *gh, uint64_t g)
{
	if (!gh->global)
		return;
	uint64_t total = sched_map_total(gh->sched);
	gh->gpos = g < total ? g : total;
	for (size_t i = 0; i < gh->nthreads; i++)
		gh->threads[i].pos = sched_map_thread_pos(gh->sched, gh->threads[i].tid, gh->gpos);
}

uint64_t gdb_history_global_of(const struct gdb_history *gh, const struct gdb_hist_thread *t,
			       uint64_t pos)
{
	if (!gh->global)
		return pos;
	uint64_t g = 0, n = count_of(t);
	if (pos < n && sched_map_global(gh->sched, t->tid, pos, &g))
		return g;
	if (n > 0 && sched_map_global(gh->sched, t->tid, n - 1, &g))
		return g + 1;
	return 0;
}

void gdb_history_move(struct gdb_history *gh, struct gdb_hist_thread *t, uint64_t pos)
{
	if (gh->global)
		gdb_history_set_global(gh, gdb_history_global_of(gh, t, pos));
	else
		t->pos = pos;
}

void gdb_history_step(struct gdb_history *gh, struct gdb_hist_thread *t)
{
	if (gh->global)
		gdb_history_set_global(gh, gdb_history_global_of(gh, t, t->pos) + 1);
	else
		t->pos++;
}

bool gdb_history_at_end(const struct gdb_history *gh, const struct gdb_hist_thread *t)
{
	return gh->global ? gdb_history_sched_at_end(gh) : t->pos >= count_of(t);
}

/* The thread a fatal signal killed, if the recording ended that way. */
static struct gdb_hist_thread *killed_thread(struct gdb_history *gh)
{
	const struct trace_data *td = gh->td;
	if (!td->complete || td->end.status_kind != 1)
		return NULL;
	for (size_t i = td->nsignals; i-- > 0;)
		if (td->signals[i].handler_ip == 0 && td->signals[i].signo == td->end.status)
			return gdb_history_thread(gh, td->signals[i].tid);
	return NULL;
}

struct gdb_hist_thread *gdb_history_to_end(struct gdb_history *gh)
{
	struct gdb_hist_thread *report = killed_thread(gh);
	if (gh->global) {
		uint64_t total = sched_map_total(gh->sched);
		pid_t last = 0;
		uint64_t pos;
		gdb_history_set_global(gh, total);
		if (!report && total && sched_map_at(gh->sched, total - 1, &last, &pos))
			report = gdb_history_thread(gh, last);
		return report ? report : &gh->threads[0];
	}
	for (size_t i = 0; i < gh->nthreads; i++)
		gdb_history_thread_to_end(&gh->threads[i]);
	return report ? report : &gh->threads[0];
}

void gdb_history_thread_to_end(struct gdb_hist_thread *t)
{
	/* At the instruction it was about to run (a crash), or on its last
	 * one when it ended in a syscall (exit), so that gdb has a PC. */
	uint64_t n = count_of(t);
	t->pos = n;
	if (!t->end_ip_known && n > 0)
		t->pos = n - 1;
}

/* The syscall t's history ends in (it never returned), or NULL. */
static const struct trace_syscall *final_syscall(const struct gdb_history *gh,
						 const struct gdb_hist_thread *t)
{
	uint64_t n = count_of(t);
	const struct trace_data *td = gh->td;
	for (size_t i = td->nsyscalls; n && i-- > 0;)
		if (td->syscalls[i].tid == t->tid && td->syscalls[i].pos == n - 1)
			return &td->syscalls[i];
	return NULL;
}

bool gdb_history_thread_exists(const struct gdb_history *gh, const struct gdb_hist_thread *t)
{
	if (!gh->global)
		return true;
	const struct trace_data *td = gh->td;
	/* Not yet created: its creator has not completed the clone. */
	for (size_t i = 0; t->pos == 0 && i < td->nthreads; i++) {
		const struct trace_thread *th = &td->threads[i];
		if (th->tid != t->tid || th->exited || th->parent == 0)
			continue;
		const struct gdb_hist_thread *p = gdb_history_thread((struct gdb_history *)gh, th->parent);
		if (p && p->pos <= th->pos)
			return false;
	}
	/* Gone: it has executed its own exit. */
	if (t->pos < count_of(t) || t->end_ip_known)
		return true;
	const struct trace_syscall *sc = final_syscall(gh, t);
	return !(sc && sc->nr == SYS_exit);
}

bool gdb_history_end_pc(const struct gdb_history *gh, struct gdb_hist_thread *t, uint64_t *pc)
{
	/* A thread whose history ends inside a syscall (blocked in it when
	 * the program ended, or exit_group) shows the PC the kernel would:
	 * after the 2-byte syscall instruction. */
	uint64_t n = count_of(t), ip;
	if (!gh->global || t->end_ip_known || t->pos != n || !final_syscall(gh, t) ||
	    history_ip_at(t->h, n - 1, &ip) != 0)
		return false;
	*pc = ip + 2;
	return true;
}
