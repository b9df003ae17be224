/* Event replay: the recorded order. SCHED runs count events: a run (tid,
 * pos, count) is the thread going on from where it stood through its
 * events pos .. pos+count-1, the last of which gave up the CPU: a syscall,
 * whose entry ends the run (it completes when the thread runs next), or a
 * STATE point. Runs are replayed one after the other, every other thread
 * stopped, exactly as the recorder let them run. */
#include "event_replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptrev/event_cut.h"
#include "ptrev/ptrace_handover.h"
#include "ptrev/process_copy.h"
#include "ptrev/syscall_table.h"
#include "relaunch.h"

static int start_thread(struct erp *e, struct erp_thread *t)
{
	struct user_regs_struct regs;
	if (t->started || !e->obs)
		return 0;
	t->started = true;
	if (erp_get_regs(e, t, &regs) < 0)
		return -1;
	/* At the entry of the syscall its last run ended at (a tail's start
	 * in a multi-threaded program): its history places it before the
	 * syscall instruction, which it completes when it runs next; or in
	 * one the log does not hold (blocked in it to the end), whose
	 * instruction it stands on. */
	return e->obs->start(e, t, regs.rip - (t->at_entry || t->in_unrecorded ? 2 : 0));
}

/* A multi-threaded tail begins (run tail_run of the recorded order):
 * every thread that lives here starts its history where it stands, also
 * one that does not run again (blocked to the end). */
static int start_all(struct erp *e)
{
	for (size_t i = 0; i < e->nthreads; i++) {
		struct erp_thread *t = &e->threads[i];
		if (t->tid && !t->gone && start_thread(e, t) < 0)
			return -1;
	}
	return 0;
}

/* An event that a run ending at it completes at once: a syscall that does
 * not return (exit, exit_group), a fatal signal (no run comes after
 * either), a clone, whose new thread may run before its creator does
 * again (it existed from the moment the kernel ran the clone), and a
 * syscall the recorder let keep the CPU to its return (an mmap, munmap:
 * syscall_keeps_cpu; one the table cannot describe: kept_cpu), which the
 * next thread saw done: its STATE points digest the mappings and memory,
 * so they would not be found. */
static bool completes_at_once(const struct erp_thread *t, uint64_t k)
{
	if (k + 1 == t->nev && t->ev[k].kind == ERP_SIGNAL)
		return ((const struct trace_signal *)t->ev[k].rec)->handler_ip == 0;
	return k < t->nev && t->ev[k].kind == ERP_SYSCALL &&
	       event_cut_completes_in_run(t->ev[k].rec);
}

/* The event that ends the program (exit_group, the last thread's exit, a
 * fatal signal), when it is t's last. */
static bool ends_program(const struct erp *e, const struct erp_thread *t, uint64_t k)
{
	if (k + 1 != t->nev)
		return false;
	if (t->ev[k].kind == ERP_SIGNAL)
		return ((const struct trace_signal *)t->ev[k].rec)->handler_ip == 0;
	if (t->ev[k].kind != ERP_SYSCALL)
		return false;
	const struct trace_syscall *s = t->ev[k].rec;
	if (s->nr == SYS_exit_group)
		return true;
	if (s->nr != SYS_exit)
		return false;
	for (size_t i = 0; i < e->nthreads; i++)
		if (&e->threads[i] != t && !e->threads[i].gone)
			return false;
	return true;
}

/* A copy of the replay process where the tail begins, as
 * erp_replay_until would hold it, parked for the tail's replayer (which
 * then need not replay the program natively up to here once more).
 * Optional: where it cannot be made, the replayer replays up to here. */
static void park_start_copy(struct erp *e, struct erp_thread *t)
{
	char err[256];
	pid_t copy = 0;
	if (process_copy_sibling(t->tid, &copy, err, sizeof err) < 0) {
		fprintf(stderr, "ptrev: no copy of where the tail begins (%s)\n", err);
		return;
	}
	if (ptrace_park(copy) < 0) {
		fprintf(stderr, "ptrev: no copy of where the tail begins (parking it: %s)\n",
			strerror(errno));
		return;
	}
	e->start_copy = copy;
}

/* Is a copy wanted before event k of the one thread (make_copies)?
 * Before the 16th event from the end, the 32nd, the 64th...: the first
 * tails begin within the last few (about 30 us of the program's run), the
 * longer ones further back. Not nearer the end: after a fork, the replay
 * pays a page fault for each page it writes first (copy-on-write), which
 * the native times it measures for choosing the first tail would count
 * (a tail of one event instead of four, for dd). */
static bool copy_wanted(const struct erp *e, const struct erp_thread *t, size_t k)
{
	if (!e->make_copies || e->obs || e->nthreads != 1 || k == 0 || k >= t->nev)
		return false;
	size_t d = t->nev - k;
	return d >= 16 && (d & (d - 1)) == 0;
}

/* The copy is kept stopped and traced by this thread (the session's: the
 * end's replay runs there), not parked: each tail takes a fork of it
 * (erp_take_copy), which is parked once and adopted once. (A copy parked,
 * adopted, parked again and adopted again reported a SIGSTOP of its own
 * at its next resume.) */
static void make_copy(struct erp *e, struct erp_thread *t, size_t k)
{
	char err[256];
	pid_t copy = 0;
	if (e->ncopies == ERP_COPIES_MAX) {
		/* The oldest goes: the furthest back, the least likely used. */
		ptrace_park_kill(e->copies[0].pid);
		memmove(e->copies, e->copies + 1, --e->ncopies * sizeof *e->copies);
	}
	if (!erp_copy_room(e) || process_copy_sibling(t->tid, &copy, err, sizeof err) < 0)
		return; /* optional: a later replay starts further back */
	e->copies[e->ncopies++] = (struct erp_copy){.pid = copy, .next = k};
}

struct erp_copy erp_take_copy(struct erp *e, size_t from)
{
	size_t best = e->ncopies;
	for (size_t i = 0; i < e->ncopies; i++)
		if (e->copies[i].next <= from &&
		    (best == e->ncopies || e->copies[i].next > e->copies[best].next))
			best = i;
	if (best == e->ncopies)
		return (struct erp_copy){0};
	char err[256];
	pid_t dup = 0;
	if (process_copy_sibling(e->copies[best].pid, &dup, err, sizeof err) < 0 ||
	    ptrace_park(dup) < 0)
		return (struct erp_copy){0};
	return (struct erp_copy){.pid = dup, .next = e->copies[best].next};
}

pid_t erp_take_start_copy(struct erp *e)
{
	pid_t copy = e->start_copy;
	e->start_copy = 0;
	return copy;
}

/* One run: t completes what it stood at, then its events up to pos +
 * count - 1, stopping at the entry of the last one when that is a
 * syscall (which completes when t runs next). A run that names an event
 * the log does not hold ends in the syscall t was in when the recording
 * ended. */
static int one_run(struct erp *e, struct erp_thread *t, uint64_t pos, uint64_t count)
{
	if (!t->tid)
		return erp_fail(e, "thread %d runs before it was created", (int)t->rec_tid);
	if (start_thread(e, t) < 0)
		return -1;
	uint64_t first = t->insns;
	e->running = t;
	/* The syscall its previous run ended at completes now. */
	if (t->at_entry && t->next + 1 == pos && erp_advance(e, t, false) < 0)
		return -1;
	if (e->tail_due) {
		/* A multi-threaded tail begins: t stands after that syscall
		 * (as a single thread's tail begins after an event), the
		 * others where their runs ended. */
		e->tail_due = false;
		if (e->hold_at_tail) {
			e->held_at_tail = true;
			return 1;
		}
		e->obs = e->tail_then;
		if (start_all(e) < 0)
			return -1;
		first = t->insns;
	}
	if (t->next != pos)
		return erp_fail(e, "thread %d's run starts at event %llu, it stands at event %zu",
				(int)t->rec_tid, (unsigned long long)pos, t->next);
	for (uint64_t k = pos; k < pos + count && !t->gone; k++) {
		bool last = k + 1 == pos + count;
		if (copy_wanted(e, t, k))
			make_copy(e, t, k);
		if (e->tail_from && k == e->tail_from && t == &e->threads[0]) {
			/* The tail begins: t stands after event k - 1, or at
			 * its point inside the stretch that follows. */
			if (e->tail_point && erp_run_to_point(e, t, e->tail_point) < 0)
				return -1;
			if (e->hold_at_tail) {
				e->held_at_tail = true;
				return 1;
			}
			if (e->keep_start)
				park_start_copy(e, t);
			e->obs = e->tail_obs;
			e->native_runs = 0;
			if (start_thread(e, t) < 0)
				return -1;
		}
		if (e->exited)
			return erp_fail(e, "the program ended before thread %d's event %llu",
					(int)t->rec_tid, (unsigned long long)k);
		bool to_point = (last && !completes_at_once(t, k)) ||
				(e->hold_at_end && ends_program(e, t, k));
		int rc = k == t->nev && last ? erp_advance_to_unrecorded(e, t)
					     : erp_advance(e, t, to_point);
		if (rc < 0)
			return -1;
	}
	e->running = NULL;
	if (e->obs && e->obs->run(e, t, first, t->insns - first) < 0)
		return -1;
	return 0;
}

/* Without SCHED records (a recorder killed before it wrote any) a single
 * thread's events are its one run (from where a copy resumed). */
static int all_of_one_thread(struct erp *e)
{
	if (e->nthreads != 1)
		return erp_fail(e, "the recording has %zu threads but no thread order (SCHED)",
				e->nthreads);
	struct erp_thread *t = &e->threads[0];
	return t->nev > t->next ? one_run(e, t, t->next, t->nev - t->next) : 0;
}

/* The replay process: the program launched, or the copy e->resume
 * adopted, its one thread standing where it had done its events before
 * resume.next (as it stood there in the replay that parked it: the
 * stretches are deterministic). A copy that cannot serve (more threads, a
 * tail from a run, a copy past the tail's start or the recording's end)
 * or cannot be adopted is gone: the program is launched instead. */
static int launch_or_resume(struct erp *e)
{
	struct erp_copy c = e->resume;
	e->resume = (struct erp_copy){0};
	if (!c.pid)
		return erp_launch(e);
	if (e->nthreads != 1 || e->tail_run || c.next > e->threads[0].nev ||
	    (e->tail_from && c.next > e->tail_from)) {
		ptrace_park_kill(c.pid);
		return erp_launch(e);
	}
	if (relaunch_read(&e->start, e->td, e->why, sizeof e->why) < 0) {
		ptrace_park_kill(c.pid);
		return -1;
	}
	char err[256];
	if (relaunch_adopt(&e->start, c.pid, &e->memfd, err, sizeof err) < 0) {
		fprintf(stderr, "ptrev: replaying from the program's start (%s)\n", err);
		relaunch_free(&e->start); /* erp_launch reads it again */
		return erp_launch(e);
	}
	e->pid = c.pid;
	e->threads[0].tid = c.pid;
	e->threads[0].next = c.next;
	e->resumed_at = c.next;
	return e->nsearch ? erp_arm_search(e, &e->threads[0]) : 0;
}

static int replay(struct erp *e, const struct trace_data *td, const struct erp_observer *obs)
{
	if (erp_index(e, td) < 0)
		return -1;
	if (e->tail_from && e->nthreads != 1)
		return erp_fail(e, "a tail from an event of a multi-threaded recording");
	if (e->tail_run && e->tail_run >= td->nsched)
		return erp_fail(e, "the recording's thread order has no run %zu", e->tail_run);
	if (launch_or_resume(e) < 0)
		return -1;
	int rc = 0;
	if (td->nsched == 0)
		rc = all_of_one_thread(e);
	for (size_t i = 0; rc == 0 && i < td->nsched; i++) {
		const struct trace_sched_run *run = &td->sched[i];
		uint64_t pos = run->pos, count = run->count;
		if (e->resumed_at && pos < e->resumed_at) {
			/* Done before the copy was parked (one thread: its
			 * runs are its events in order). */
			if (pos + count <= e->resumed_at)
				continue;
			count -= e->resumed_at - pos;
			pos = e->resumed_at;
		}
		/* Stepping begins with the first run past the native ones;
		 * each thread is started (the observer told where it stands)
		 * when it first runs stepped. */
		e->obs = i < e->native_runs || (e->tail_from && !e->threads[0].started) ||
					 (e->tail_run && i <= e->tail_run) ? NULL : obs;
		if (e->tail_run && i == e->tail_run) {
			e->tail_due = true;
			e->tail_then = i < e->native_runs ? NULL : obs;
		}
		e->cur_run = i;
		struct erp_thread *t = erp_thread_rec(e, run->tid);
		if (!t)
			rc = erp_fail(e, "the thread order names thread %d, which has no events",
				      (int)run->tid);
		else
			rc = one_run(e, t, pos, count);
	}
	if (rc == 1)
		return 0; /* held where its tail begins */
	if (rc == 0 && e->hold_at_tail)
		return erp_fail(e, "the recording has no event %zu", e->tail_from);
	/* Threads still standing when the recording ended: their histories
	 * end where they are. */
	for (size_t i = 0; rc == 0 && i < e->nthreads; i++)
		rc = erp_end_here(e, &e->threads[i]);
	return rc;
}

/* Start a replay set up as `how` says (its fields of struct erp that
 * say how a replay goes; the rest is zero). */
static int replay_as(struct erp *e, const struct trace_data *td, const struct erp_observer *obs,
		     const struct erp *how)
{
	*e = *how;
	e->memfd = -1;
	/* PTREV_STATE_SKIP: 0 counts every pass; N > 0 lets passes go from
	 * N ahead (tests make a nested loop's misses so). */
	const char *skip = getenv("PTREV_STATE_SKIP");
	if (skip && strcmp(skip, "0") == 0)
		e->skip_level = SKIP_NONE;
	else if (skip)
		e->skip_from = strtoull(skip, NULL, 10);
	if ((e->tail_obs || e->hold_at_tail) && e->tail_from == 0 && e->tail_run == 0)
		return erp_fail(e, "a tail begins after an event");
	int rc;
	struct erp again = *how;
	again.resume = (struct erp_copy){0}; /* a copy is used once */
	while ((rc = replay(e, td, obs)) < 0 && e->skip_missed && e->skip_level != SKIP_NONE) {
		/* Passes of a loop were let go where the point was
		 * (event_skip.c): again from the start, more carefully. Only
		 * native runs let passes go, and they come before any the
		 * observer hears of. */
		int level = e->skip_level + 1;
		fprintf(stderr, "ptrev: replay: %s; replaying again, %s\n", e->why,
			level == SKIP_NONE ? "counting every pass" : "letting fewer passes go");
		uint64_t from = e->skip_from;
		erp_free(e);
		*e = again;
		e->memfd = -1;
		e->skip_level = level;
		e->skip_from = from;
	}
	return rc;
}

int erp_obs_ignore_ip(struct erp *e, struct erp_thread *t, uint64_t ip)
{
	(void)e;
	(void)t;
	(void)ip;
	return 0;
}

int erp_obs_ignore_event(struct erp *e, struct erp_thread *t, size_t k)
{
	(void)e;
	(void)t;
	(void)k;
	return 0;
}

int erp_obs_ignore_run(struct erp *e, struct erp_thread *t, uint64_t first, uint64_t count)
{
	(void)e;
	(void)t;
	(void)first;
	(void)count;
	return 0;
}

int erp_replay_all(struct erp *e, const struct trace_data *td, const struct erp_observer *obs,
		   bool hold_at_end, const atomic_bool *stop)
{
	return replay_as(e, td, obs,
			 &(struct erp){.obs = obs, .hold_at_end = hold_at_end, .stop = stop});
}

int erp_replay_from(struct erp *e, const struct trace_data *td, const struct erp_observer *obs,
		    size_t native_runs, size_t tail_run)
{
	return erp_replay_from_searching(e, td, obs, native_runs, tail_run, NULL, 0);
}

int erp_replay_from_searching(struct erp *e, const struct trace_data *td,
			      const struct erp_observer *obs, size_t native_runs, size_t tail_run,
			      const struct event_search_point *points, size_t n)
{
	struct erp how = {.obs = obs, .native_runs = native_runs, .tail_run = tail_run,
			  .nsearch = n};
	if (n > EVENT_SEARCH_MAX) {
		*e = how;
		e->memfd = -1;
		return erp_fail(e, "a search for 0 to %d points", EVENT_SEARCH_MAX);
	}
	if (n)
		memcpy(how.search, points, n * sizeof *points);
	return replay_as(e, td, obs, &how);
}

/* A tail of the program's one thread from an event (replay() refuses
 * more threads: an event of one would cut their global order), or of
 * any program from a run of its recorded order. */
int erp_replay_tail(struct erp *e, const struct trace_data *td, const struct erp_observer *obs,
		    size_t from, const struct trace_state *point, size_t run,
		    const atomic_bool *stop, bool keep_start, struct erp_copy resume)
{
	if (run)
		return replay_as(e, td, obs, &(struct erp){.tail_run = run, .stop = stop,
							   .resume = resume});
	return replay_as(e, td, obs,
			 &(struct erp){.tail_obs = obs, .tail_from = from, .tail_point = point,
				       .stop = stop, .keep_start = keep_start, .resume = resume});
}

int erp_replay_to_end(struct erp *e, const struct trace_data *td)
{
	return replay_as(e, td, NULL, &(struct erp){.hold_at_end = true, .make_copies = true});
}

int erp_replay_until(struct erp *e, const struct trace_data *td, size_t from,
		     const struct trace_state *point)
{
	return erp_replay_until_from(e, td, from, point, (struct erp_copy){0});
}

int erp_replay_until_from(struct erp *e, const struct trace_data *td, size_t from,
			  const struct trace_state *point, struct erp_copy resume)
{
	return replay_as(e, td, NULL,
			 &(struct erp){.hold_at_tail = true, .tail_from = from,
				       .tail_point = point, .resume = resume});
}

int erp_replay_until_run(struct erp *e, const struct trace_data *td, size_t run)
{
	return replay_as(e, td, NULL, &(struct erp){.hold_at_tail = true, .tail_run = run});
}

int erp_replay_until_searching(struct erp *e, const struct trace_data *td, size_t from,
			       const struct trace_state *point, size_t run,
			       const struct event_search_point *points, size_t n,
			       const struct event_give_up *give_up, struct erp_copy resume)
{
	struct erp how = {.hold_at_tail = true, .nsearch = n, .give_up = give_up,
			  .resume = resume};
	if (run) {
		how.tail_run = run;
	} else {
		how.tail_from = from;
		how.tail_point = point;
	}
	if (n == 0 || n > EVENT_SEARCH_MAX) {
		*e = how;
		e->memfd = -1;
		return erp_fail(e, "a search for 1 to %d points", EVENT_SEARCH_MAX);
	}
	memcpy(how.search, points, n * sizeof *points);
	return replay_as(e, td, NULL, &how);
}

int erp_replay_searching_from(struct erp *e, const struct trace_data *td, size_t run,
			      size_t from, bool runs, const struct event_search_point *points, size_t n,
			      const struct event_give_up *give_up, struct erp_copy resume)
{
	struct erp how = {.nsearch = n, .give_up = give_up, .resume = resume,
			  .search_from = from, .search_runs = runs, .search_run = run};
	if (n == 0 || n > EVENT_SEARCH_MAX || from == 0) {
		*e = how;
		e->memfd = -1;
		return erp_fail(e, "a search for 1 to %d points after an event", EVENT_SEARCH_MAX);
	}
	memcpy(how.search, points, n * sizeof *points);
	return replay_as(e, td, NULL, &how);
}

int erp_replay_to_hit(struct erp *e, const struct trace_data *td, size_t k, uint64_t nth,
		      const struct event_search_point *points, size_t n,
		      const struct event_give_up *give_up, struct erp_copy resume,
		      struct trace_state *prev, uint8_t prev_sp[STATE_RECORD_SP_LEN])
{
	struct erp how = {.nsearch = n, .give_up = give_up, .resume = resume,
			  .search_stop_at = k, .search_stop_nth = nth,
			  .search_prev = nth > 1 ? prev : NULL, .search_prev_sp = prev_sp,
			  .search_t0 = erp_now_ns()};
	if (n == 0 || n > EVENT_SEARCH_MAX || k == 0 || nth == 0) {
		*e = how;
		e->memfd = -1;
		return erp_fail(e, "a replay to a hit of 1 to %d points after an event",
				EVENT_SEARCH_MAX);
	}
	memcpy(how.search, points, n * sizeof *points);
	return replay_as(e, td, NULL, &how);
}

void erp_release(struct erp *e, pid_t *pid, int *memfd)
{
	*pid = e->pid;
	*memfd = e->memfd;
	e->pid = 0;
	e->memfd = -1;
	e->exited = true;
}

void erp_free(struct erp *e)
{
	ptrace_park_kill(erp_take_start_copy(e));
	for (size_t i = 0; i < e->ncopies; i++)
		ptrace_park_kill(e->copies[i].pid);
	e->ncopies = 0;
	for (size_t i = 0; i < e->nmid; i++)
		ptrace_park_kill(e->mid[i].pid);
	e->nmid = 0;
	ptrace_park_kill(e->resume.pid);
	e->resume = (struct erp_copy){0};
	erp_kill(e);
	erp_index_free(e);
	relaunch_free(&e->start);
	free(e->icache);
	e->icache = NULL;
	block_cache_free(e->bcache);
	e->bcache = NULL;
	bstep_free(e->bstep);
	e->bstep = NULL;
}
