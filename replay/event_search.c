/* A native search for breakpoint and watchpoint hits before a tail's start
 * (include/ptrev/event_end.h, event_end_tail_search): a reverse-continue
 * that goes back past the history made so far needs the last hit before
 * it, and only the stretch that holds that hit (and what follows) needs
 * stepping. The stretches are deterministic, so a native replay with
 * hardware breakpoints meets the same hits as the recorded run did, in
 * the same stretches (so do the hits after a piece's end, for a
 * continue past it: event_end_search_on); counting needs no instruction
 * counter, only which event the thread is to meet next when a hit comes.
 * A hit is passed at once (the kernel sets RF on an instruction
 * breakpoint's trap, so the instruction runs when the thread is resumed;
 * a data breakpoint traps after its instruction): one ptrace stop a
 * hit. A multi-threaded
 * recording's replay runs its threads one at a time in the recorded
 * order, so a hit comes in the run being replayed; each new thread gets
 * the registers at its clone. */
#include "ptrev/event_end.h"

#include <stdio.h>
#include <string.h>

#include "event_replay.h"

/* The search to where the tail from event from (point) begins, or to
 * the start of run `run`: 1 with *last the event or run of the last hit
 * (and *event, where not NULL, its thread's event it came before), 0,
 * -1. */
static int search(const struct trace_data *td, size_t from, const struct trace_state *point,
		  size_t run, const struct event_search_point *points, size_t n, size_t *last,
		  size_t *event, uint64_t *nth, const struct event_give_up *give_up,
		  struct erp_copy resume, char *err, size_t errlen)
{
	struct erp e;
	int rc = erp_replay_until_searching(&e, td, from, point, run, points, n, give_up, resume);
	if (rc < 0)
		snprintf(err, errlen, "%s", e.why);
	else if (e.search_hits)
		*last = run ? e.search_last_run : e.search_last;
	if (rc >= 0 && e.search_hits && event)
		*event = e.search_last;
	if (rc >= 0 && e.search_hits && nth)
		*nth = e.search_nth;
	rc = rc < 0 ? (e.gave_up ? -2 : -1) : e.search_hits ? 1 : 0;
	erp_free(&e);
	return rc;
}

int event_end_tail_search(const struct trace_data *td, size_t from,
			  const struct trace_state *point,
			  const struct event_search_point *points, size_t n, size_t *stretch,
			  const struct event_give_up *give_up, char *err, size_t errlen)
{
	return search(td, from, point, 0, points, n, stretch, NULL, NULL, give_up, (struct erp_copy){0},
		      err, errlen);
}

int event_end_tail_search_near(struct event_end *ee, const struct trace_data *td, size_t from,
			       const struct trace_state *point,
			       const struct event_search_point *points, size_t n, size_t *stretch,
			       uint64_t *nth, const struct event_give_up *give_up, char *err,
			       size_t errlen)
{
	/* The last hit is the last one after the nearest copy, if any came
	 * there; else the last in the segment before, from the copy before
	 * to where that one stood, and so on: each segment replayed once. */
	size_t upto = from;
	const struct trace_state *pt = point;
	while (upto) {
		size_t next = 0;
		pid_t c = event_end_take_copy(ee, pt ? upto : upto - 1, &next);
		if (!c)
			break;
		int rc = search(td, upto, pt, 0, points, n, stretch, NULL, nth, give_up,
				(struct erp_copy){.pid = c, .next = next}, err, errlen);
		if (rc != 0)
			return rc;
		upto = next;
		pt = NULL;
	}
	if (upto == 0)
		return 0;
	return search(td, upto, pt, 0, points, n, stretch, NULL, nth, give_up, (struct erp_copy){0},
		      err, errlen);
}

int event_end_hit_point(struct event_end *ee, const struct trace_data *td, size_t k,
			uint64_t nth, const struct event_search_point *points, size_t n,
			const struct event_give_up *give_up, struct trace_state *out,
			uint8_t sp[STATE_RECORD_SP_LEN], uint64_t *cpu_ns, char *err,
			size_t errlen)
{
	return event_end_hit_and_before(ee, td, k, nth, points, n, give_up, out, sp, cpu_ns, NULL,
					NULL, NULL, NULL, err, errlen);
}

int event_end_hit_and_before(struct event_end *ee, const struct trace_data *td, size_t k,
			     uint64_t nth, const struct event_search_point *points, size_t n,
			     const struct event_give_up *give_up, struct trace_state *out,
			     uint8_t sp[STATE_RECORD_SP_LEN], uint64_t *cpu_ns,
			     struct trace_state *prev, uint8_t prev_sp[STATE_RECORD_SP_LEN],
			     uint64_t *prev_cpu_ns, bool *prev_ok, char *err, size_t errlen)
{
	if (prev_ok)
		*prev_ok = false;
	/* From the copy with the most events done before the hit's stretch
	 * begins: the stretch's hits are counted from its start. */
	size_t next = 0;
	pid_t c = ee ? event_end_take_copy(ee, k, &next) : 0;
	struct erp e;
	uint64_t t0 = erp_now_ns();
	int rc = erp_replay_to_hit(&e, td, k, nth, points, n, give_up,
				   (struct erp_copy){.pid = c, .next = next}, prev, prev_sp);
	struct user_regs_struct regs;
	if (rc < 0 && e.search_stopped) {
		/* How long the thread ran since its event before, at most:
		 * twice this whole replay's wall time, what a replay looking
		 * for the point may run before it gives up (event_step.c). */
		rc = erp_get_regs(&e, &e.threads[0], &regs) < 0
			     ? -1 : erp_describe(&e, &e.threads[0], &regs, k,
						 2 * (erp_now_ns() - t0) + 1, out, sp);
		/* The thread's own run in the stretch (to_stop counts it for
		 * the event it runs to, up to this stop). */
		if (cpu_ns && k < e.threads[0].nev)
			*cpu_ns = e.threads[0].ev[k].native_cpu_ns;
		/* The hit before: its own run there is the hit's less what
		 * the thread's clock counted between the two (0: unknown). */
		if (prev_ok)
			*prev_ok = rc > 0 && e.search_prev_ok;
		if (prev_cpu_ns && cpu_ns) {
			uint64_t between = e.search_stop_clock - e.search_prev_clock;
			*prev_cpu_ns = e.search_prev_ok && e.search_prev_clock &&
						       e.search_stop_clock >= e.search_prev_clock &&
						       *cpu_ns > between
					       ? *cpu_ns - between
					       : 0;
		}
	} else if (rc >= 0 || e.search_passed) {
		/* The replay went past the stretch: it has fewer hits. */
		snprintf(err, errlen, "the stretch before event %zu has no hit %llu", k,
			 (unsigned long long)nth);
		erp_free(&e);
		return 0;
	}
	if (rc < 0)
		snprintf(err, errlen, "%s", e.why);
	rc = rc < 0 ? (e.gave_up ? -2 : -1) : 1;
	erp_free(&e);
	return rc;
}

int event_end_tail_search_run(const struct trace_data *td, size_t run,
			      const struct event_search_point *points, size_t n, size_t *hit_run,
			      size_t *hit_event, const struct event_give_up *give_up, char *err,
			      size_t errlen)
{
	if (run == 0) {
		snprintf(err, errlen, "no run before the program's first");
		return -1;
	}
	return search(td, 0, NULL, run, points, n, hit_run, hit_event, NULL, give_up,
		      (struct erp_copy){0}, err, errlen);
}

/* The search forwards from event from (runs: erp search_runs), from
 * copy resume: 1 with *stretch the event the hit came before and *run its
 * run of the order, 0 when none came before the end, -1, -2. */
static int search_on(const struct trace_data *td, size_t in_run, size_t from, bool runs,
		     const struct event_search_point *points, size_t n, size_t *stretch,
		     size_t *run, const struct event_give_up *give_up, struct erp_copy resume,
		     char *err, size_t errlen)
{
	struct erp e;
	int rc = erp_replay_searching_from(&e, td, in_run, from, runs, points, n, give_up, resume);
	if (rc < 0 && e.search_found) {
		*stretch = e.search_first;
		*run = e.search_last_run;
		rc = 1;
	} else if (rc < 0) {
		snprintf(err, errlen, "%s", e.why);
		rc = e.gave_up ? -2 : -1;
	}
	erp_free(&e);
	return rc;
}

int event_end_search_on(struct event_end *ee, const struct trace_data *td, size_t from,
			const struct event_search_point *points, size_t n, size_t *stretch,
			const struct event_give_up *give_up, char *err, size_t errlen)
{
	/* From the copy nearest before, which the end's replay made on its
	 * way; the replay ends at the first hit after event from - 1. */
	size_t next = 0, run;
	pid_t c = from ? event_end_take_copy(ee, from, &next) : 0;
	return search_on(td, 0, from, false, points, n, stretch, &run, give_up,
			 (struct erp_copy){.pid = c, .next = next}, err, errlen);
}

int event_end_search_on_run(const struct trace_data *td, size_t run, size_t from,
			    const struct event_search_point *points, size_t n, size_t *hit_run,
			    const struct event_give_up *give_up, char *err, size_t errlen)
{
	/* From the program's start: the end's replay keeps copies of a
	 * one-thread recording only. Nothing is stepped, so this costs about
	 * a native run to the hit. */
	size_t stretch;
	return search_on(td, run, from, true, points, n, &stretch, hit_run, give_up,
			 (struct erp_copy){0}, err, errlen);
}
