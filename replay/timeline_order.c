/* One position for the whole program: with the recording's schedule
 * (SCHED runs) the threads' histories interleave into one global order, so
 * moving one thread back or forth moves the others with it, exactly as
 * they ran. Without a schedule covering every thread, each thread moves
 * alone. Also where threads stand at the end, and which exist where. */
#include "timeline_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "ptrev/history_schedule.h"
#include "ptrev/materialise.h"

/* Does the schedule place every instruction of every thread we have, and
 * only those? Then the order is known everywhere; else not at all. *nsched:
 * how many threads it orders. */
static bool schedule_covers(const struct timeline *tl, size_t *nsched)
{
	pid_t *tids;
	size_t n = sched_map_threads(tl->sched, &tids);
	bool ok = true;
	for (size_t i = 0; ok && i < n; i++)
		ok = tl_thread(tl, tids[i]) != NULL;
	free(tids);
	*nsched = n;
	for (size_t i = 0; ok && i < tl->nthreads; i++) {
		const struct tl_thread *t = &tl->threads[i];
		uint64_t start = 0;
		if (tl_count(t) == 0)
			continue;
		ok = sched_map_thread_start(tl->sched, t->tid, &start) && start == 0 &&
		     sched_map_thread_end(tl->sched, t->tid) == tl_count(t);
	}
	return ok;
}

static const struct trace_syscall *final_syscall(const struct timeline *tl,
						 const struct tl_thread *t);

/* Where a saved recording's global order ends. A program that ended in
 * exit_group stands on that syscall instruction, as a one-thread history
 * does (tl_thread_to_end) and as gdb's record full stops before it: past
 * it, the thread would stand inside the syscall, which shows the same PC
 * (the state there is the syscall's entry), and reverse-stepi's first
 * step from the end would not move. Elsewhere (a live recording's
 * present, a killed program): past the last instruction. */
static uint64_t global_end(const struct timeline *tl)
{
	uint64_t total = sched_map_total(tl->sched), pos;
	pid_t last;
	if (!tl->saved || total == 0 || !sched_map_at(tl->sched, total - 1, &last, &pos))
		return total;
	const struct tl_thread *t = tl_thread(tl, last);
	if (!t || t->end_ip_known || pos + 1 != tl_count(t))
		return total;
	const struct trace_syscall *sc = final_syscall(tl, t);
	return sc && sc->nr == SYS_exit_group ? total - 1 : total;
}

static void feed(struct timeline *tl, const struct trace_sched_run *r)
{
	if (sched_map_add(tl->sched, r) != 0) {
		fprintf(stderr, "ptrev: the recording's schedule is inconsistent at thread %d "
			"instruction %llu; thread switches unknown: each thread moves alone\n",
			(int)r->tid, (unsigned long long)r->pos);
		tl->sched_broken = true;
	}
}

void tl_order_sync(struct timeline *tl, bool was_at_end)
{
	const struct trace_data *td = tl->td;
	if (!tl->sched && td->nsched && !tl->sched_broken && !(tl->sched = sched_map_new()))
		tl->sched_broken = true;
	/* A recording being made merges a run that continues its last one
	 * into it (trace_append_sched): what it grew by since is fed as a
	 * run of its own, which the map merges the same way. */
	if (!tl->sched_broken && tl->sched_fed && tl->sched_fed <= td->nsched) {
		const struct trace_sched_run *last = &td->sched[tl->sched_fed - 1];
		if (last->count > tl->sched_fed_last) {
			struct trace_sched_run more = {.tid = last->tid,
						       .pos = last->pos + tl->sched_fed_last,
						       .count = last->count - tl->sched_fed_last};
			feed(tl, &more);
			tl->sched_fed_last = last->count;
		}
	}
	while (!tl->sched_broken && tl->sched_fed < td->nsched) {
		const struct trace_sched_run *r = &td->sched[tl->sched_fed];
		feed(tl, r);
		tl->sched_fed++;
		tl->sched_fed_last = r->count;
	}
	size_t nsched = 0;
	bool covers = !tl->sched_broken && tl->sched && schedule_covers(tl, &nsched);
	if (!covers && tl->sched && !tl->sched_warned && tl->nthreads > 1) {
		/* A recorder killed before it wrote the last runs, say. */
		fprintf(stderr, "ptrev: the recording's schedule does not cover every thread's "
			"history (%llu instructions scheduled); thread switches unknown: each "
			"thread moves alone\n", (unsigned long long)sched_map_total(tl->sched));
		tl->sched_warned = true;
	}
	/* One thread needs no order; but the tail of a multi-threaded
	 * program's history with one thread left in it keeps the order's
	 * ways (where a thread that ended in a syscall stands at the end),
	 * so that it shows what the whole history shows there. */
	covers = covers && (nsched >= 2 || materialise_tail_run(td));
	bool newly = covers && !tl->global;
	tl->global = covers;
	if (covers)
		tl_set_global(tl, newly || was_at_end ? global_end(tl) : tl->gpos);
}

bool tl_order_at_end(const struct timeline *tl)
{
	return tl->global && tl->gpos >= global_end(tl);
}

void tl_set_global(struct timeline *tl, uint64_t g)
{
	if (!tl->global)
		return;
	uint64_t total = sched_map_total(tl->sched);
	tl->gpos = g < total ? g : total;
	for (size_t i = 0; i < tl->nthreads; i++)
		tl->threads[i].pos = sched_map_thread_pos(tl->sched, tl->threads[i].tid, tl->gpos);
}

uint64_t tl_global_of(const struct timeline *tl, const struct tl_thread *t, uint64_t pos)
{
	if (!tl->global)
		return pos;
	uint64_t g = 0, n = tl_count(t);
	if (pos < n && sched_map_global(tl->sched, t->tid, pos, &g))
		return g;
	if (n > 0 && sched_map_global(tl->sched, t->tid, n - 1, &g))
		return g + 1;
	return 0;
}

void tl_move(struct timeline *tl, struct tl_thread *t, uint64_t pos)
{
	if (tl->global)
		tl_set_global(tl, tl_global_of(tl, t, pos));
	else
		t->pos = pos;
}

void tl_step(struct timeline *tl, struct tl_thread *t)
{
	if (tl->global)
		tl_set_global(tl, tl_global_of(tl, t, t->pos) + 1);
	else
		t->pos++;
}

bool tl_at_end(const struct timeline *tl, const struct tl_thread *t)
{
	return tl->global ? tl_order_at_end(tl) : t->pos >= tl_count(t);
}

/* The thread a fatal signal killed, if the recording ended that way. */
static struct tl_thread *killed_thread(const struct timeline *tl)
{
	const struct trace_data *td = tl->td;
	if (!td->complete || td->end.status_kind != 1)
		return NULL;
	for (size_t i = td->nsignals; i-- > 0;)
		if (td->signals[i].handler_ip == 0 && td->signals[i].signo == td->end.status)
			return tl_thread(tl, td->signals[i].tid);
	return NULL;
}

struct tl_thread *tl_to_end(struct timeline *tl)
{
	struct tl_thread *report = killed_thread(tl);
	if (tl->global) {
		uint64_t total = sched_map_total(tl->sched);
		pid_t last = 0;
		uint64_t pos;
		tl_set_global(tl, global_end(tl));
		if (!report && total && sched_map_at(tl->sched, total - 1, &last, &pos))
			report = tl_thread(tl, last);
		return report ? report : &tl->threads[0];
	}
	for (size_t i = 0; i < tl->nthreads; i++)
		tl_thread_to_end(&tl->threads[i]);
	return report ? report : &tl->threads[0];
}

void tl_thread_to_end(struct tl_thread *t)
{
	/* At the instruction it was about to run (a crash), or on its last
	 * one when it ended in a syscall (exit), so that gdb has a PC. */
	uint64_t n = tl_count(t);
	t->pos = n;
	if (!t->end_ip_known && n > 0)
		t->pos = n - 1;
}

/* The syscall t's history ends in (it never returned), or NULL. */
static const struct trace_syscall *final_syscall(const struct timeline *tl,
						 const struct tl_thread *t)
{
	uint64_t n = tl_count(t);
	const struct trace_data *td = tl->td;
	for (size_t i = td->nsyscalls; n && i-- > 0;)
		if (td->syscalls[i].tid == t->tid && td->syscalls[i].pos == n - 1)
			return &td->syscalls[i];
	return NULL;
}

bool tl_thread_exists(const struct timeline *tl, const struct tl_thread *t)
{
	if (!tl->global)
		return true;
	const struct trace_data *td = tl->td;
	/* Not yet created: its creator has not completed the clone. */
	for (size_t i = 0; t->pos == 0 && i < td->nthreads; i++) {
		const struct trace_thread *th = &td->threads[i];
		if (th->tid != t->tid || th->exited || th->parent == 0)
			continue;
		const struct tl_thread *p = tl_thread(tl, th->parent);
		if (p && p->pos <= th->pos)
			return false;
	}
	/* Gone: it has executed its own exit. */
	if (t->pos < tl_count(t) || t->end_ip_known)
		return true;
	const struct trace_syscall *sc = final_syscall(tl, t);
	return !(sc && sc->nr == SYS_exit);
}

bool tl_pc(const struct timeline *tl, const struct tl_thread *t, uint64_t *pc)
{
	if (tl_thread_pc(t, pc))
		return true;
	/* A thread whose history ends inside a syscall (blocked in it when
	 * the program ended, or exit_group) shows the PC the kernel would:
	 * after the 2-byte syscall instruction. */
	uint64_t n = tl_count(t), ip;
	if (!tl->global || t->end_ip_known || t->pos != n || !final_syscall(tl, t) ||
	    history_ip_at(t->h, n - 1, &ip) != 0)
		return false;
	*pc = ip + 2;
	return true;
}
