/* Event replay: a native search's hits counted (include/ptrev/event_end.h,
 * event_search.c), wherever they are seen: by the debug registers
 * (erp_search_hit, event_proc.c) or by int3s where those do not trap
 * (event_soft.c). Which event of its thread each came before, how many in
 * that stretch, the one a replay to a hit stops at (and the one before
 * it, described on the way), the first after an event for a search
 * forwards. */
#include "event_replay.h"

#include "ptrev/cpu_timer.h"

/* t's CPU clock now (0: none open). */
static uint64_t clock_now(const struct erp_thread *t)
{
	return t->clock_open && t->clock >= 0 ? cpu_clock_read(t->clock) : 0;
}

int erp_search_count(struct erp *e, struct erp_thread *t, uint64_t dr6)
{
	e->search_was_hits = e->search_hits;
	e->search_was_last = e->search_last;
	e->search_was_last_run = e->search_last_run;
	e->search_was_nth = e->search_nth;
	e->search_hit_stop = e->stops;
	e->search_nth = e->search_hits && e->search_last == t->next ? e->search_nth + 1 : 1;
	e->search_hits++;
	e->search_last = t->next;
	e->search_last_run = e->cur_run;
	bool in_stretch = e->search_stop_nth && t == &e->threads[0] && t->next == e->search_stop_at;
	if (in_stretch && e->search_prev && e->search_nth + 1 == e->search_stop_nth) {
		struct user_regs_struct regs;
		e->search_prev_ok = erp_get_regs(e, t, &regs) == 0 &&
				    erp_describe(e, t, &regs, t->next,
						 2 * (erp_now_ns() - e->search_t0) + 1, e->search_prev,
						 e->search_prev_sp) > 0;
		e->search_prev_clock = clock_now(t);
	}
	if (in_stretch && e->search_nth == e->search_stop_nth) {
		e->search_stopped = true;
		e->search_stop_clock = clock_now(t);
		return erp_fail(e, "the hit searched for came");
	}
	bool after = e->search_runs && e->cur_run != e->search_run
			     ? e->cur_run > e->search_run : t->next >= e->search_from;
	if (e->search_from && !e->search_found && after) {
		e->search_found = true;
		e->search_first = t->next;
		return erp_fail(e, "the first hit searched for came before event %zu",
				e->search_first);
	}
	return dr6 & 0x4001 ? 0 : 1; /* BS (a single step's end) or B0: the caller's */
}
