/* Moving through the history: a step either way, or continuing to the
 * nearest breakpoint hit (its condition evaluated on the state there),
 * watched access or recorded signal, else to an end. With a global order
 * every thread moves with the one that is moved, and continuing either way
 * stops at any thread's events, in that thread; without one, only the
 * thread named moves. */
#include "timeline_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "event_watch.h"
#include "ptrev/history_schedule.h"
#include "ptrev/replayer.h"

/* Addresses of the execution breakpoints. */
static size_t exec_addrs(const struct stop_set *pts, uint64_t **out)
{
	*out = malloc((pts->n ? pts->n : 1) * sizeof **out);
	size_t n = 0;
	for (size_t i = 0; *out && i < pts->n; i++)
		if (pts->v[i].type == 0 || pts->v[i].type == 1)
			(*out)[n++] = pts->v[i].addr;
	return n;
}

/* Does the hit of x where it stands count (the caller's condition)? Where
 * the PC is unknown the stop is reported, as when a condition cannot be
 * evaluated. */
static bool hit_counts(struct tl_thread *x, const struct stop_set *pts)
{
	uint64_t pc;
	if (!pts->holds || !tl_thread_pc(x, &pc))
		return true;
	return pts->holds(pts->ctx, x->tid, pc);
}

/* Where the program stands, to come back to after looking around. */
static uint64_t here(const struct timeline *tl, const struct tl_thread *t)
{
	return tl->global ? tl->gpos : t->pos;
}

static void back_to(struct timeline *tl, struct tl_thread *t, uint64_t where)
{
	if (tl->global)
		tl_set_global(tl, where);
	else
		t->pos = where;
}

/* The threads a continue moves: every thread with a global order when all
 * move (also those that do not exist here: they ended before, or begin
 * later), else only t. */
static bool moves(const struct timeline *tl, const struct tl_thread *t, const struct tl_thread *x,
		  bool all)
{
	return x == t || (tl->global && all);
}

/* The nearest breakpoint hit that counts, of any thread that moves: the
 * latest before the current position (back), or the first after it;
 * going forwards t (which resumes off its stop) does not hit the one it
 * stands at. *who stops there at its position *pos. */
static bool nearest_hit(struct timeline *tl, struct tl_thread *t, bool all, bool back,
			const struct stop_set *pts, struct tl_thread **who, uint64_t *pos)
{
	uint64_t *addrs, best = 0, start = here(tl, t);
	size_t n = exec_addrs(pts, &addrs);
	bool any = false;
	for (size_t i = 0; addrs && n && i < tl->nthreads; i++) {
		struct tl_thread *x = &tl->threads[i];
		if (!moves(tl, t, x, all))
			continue;
		uint64_t from = back || x != t ? x->pos : x->pos + 1, found;
		while ((back ? history_prev_exec(x->h, from, addrs, n, &found)
			     : history_next_exec(x->h, from, addrs, n, &found)) == 1) {
			uint64_t g = tl_global_of(tl, x, found);
			if (any && (back ? g <= best : g >= best))
				break; /* another thread's hit is nearer */
			tl_move(tl, x, found);
			bool counts = hit_counts(x, pts);
			back_to(tl, t, start);
			if (counts) {
				any = true;
				best = g;
				*who = x;
				*pos = found;
				break;
			}
			from = back ? found : found + 1;
		}
	}
	free(addrs);
	return any;
}

/* The nearest recorded signal delivery to a thread that moves: forwards
 * the first after the current position and no later than global index
 * limit (t's own at its position is the stop it resumes from); backwards
 * the latest at or before it (t's own at its position counts unless t is
 * shown before it already, before_signal), not one that ended a history. */
static bool nearest_signal(const struct timeline *tl, struct tl_thread *t, bool all, bool back,
			   bool before_signal, uint64_t limit, struct tl_thread **who,
			   uint64_t *pos, int *sig)
{
	const struct trace_data *td = tl->td;
	uint64_t best = 0;
	bool any = false;
	for (size_t i = 0; i < td->nsignals; i++) {
		const struct trace_signal *g = &td->signals[i];
		struct tl_thread *x = tl_thread(tl, g->tid);
		if (!x || !moves(tl, t, x, all) || (back ? g->pos > x->pos : g->pos < x->pos))
			continue;
		if (x == t && g->pos == t->pos && (!back || before_signal))
			continue;
		/* One where x's history ends is how the recording ended (a
		 * crash): that stop is where a reverse starts, not a delivery
		 * to meet on the way back. */
		if (back && g->pos >= tl_count(x))
			continue;
		if (!back && g->pos > tl_count(x))
			continue;
		uint64_t at = tl_global_of(tl, x, g->pos);
		if ((!back && at > limit) || (any && (back ? at <= best : at >= best)))
			continue;
		any = true;
		best = at;
		*who = x;
		*pos = g->pos;
		*sig = g->signo;
	}
	return any;
}

static bool next_signal(const struct timeline *tl, struct tl_thread *t, bool all, uint64_t limit,
			struct tl_thread **who, uint64_t *pos, int *sig)
{
	return nearest_signal(tl, t, all, false, false, limit, who, pos, sig);
}

/* Where a watched change in a multi-threaded event recording's history
 * (event_watch.h) stops gdb's move: going back, before the instruction
 * that made it (the value still the old one, as record full stops);
 * forwards, right after it. *g the global position, *who the thread of
 * that instruction. 1, 0 (none), -1 with why. */
static int watch_held(struct timeline *tl, bool back, const struct stop_point *p,
		      struct tl_thread **who, uint64_t *g, char *why, size_t whylen)
{
	uint64_t after, insns, pos;
	pid_t tid;
	struct event_give_up give_up = {tl->alive, tl->alive_ctx};
	int r = event_watch_find(tl->events, tl->td, tl->gpos, back, p->type, p->addr, p->len,
				 &after, &insns, &give_up, why, whylen);
	if (r != 1)
		return r;
	uint64_t insn = insns ? after - 1 : after;
	if (!sched_map_at(tl->sched, insn, &tid, &pos) || !tl_thread(tl, tid)) {
		snprintf(why, whylen, "the change at global instruction %llu is in no thread's "
			 "history", (unsigned long long)insn);
		return -1;
	}
	*who = tl_thread(tl, tid);
	*g = back ? insn : after;
	return 1;
}

/* Watchpoints in the history (full state only): the nearest access to any
 * watched range before (back) or after the position: *who and *found its
 * position there, *g its global one. 1 with those and the point's index,
 * 0 for none, -1 if the search cannot be done (watchpoints are then
 * ignored, as at PC level), -2 where gdb's Ctrl-C stopped it. */
static int watch_search(struct timeline *tl, struct tl_thread *t, bool back,
			const struct stop_set *pts, struct tl_thread **who, uint64_t *found,
			uint64_t *g, size_t *which)
{
	int result = 0;
	bool held = tl_state_by_hold(tl);
	/* The access t stands right after, at a piece's end, counts too. */
	uint64_t before = t->pos + (back && tl->end_after_access ? 1 : 0);
	for (size_t i = 0; i < pts->n; i++) {
		const struct stop_point *p = &pts->v[i];
		if (p->type < 2)
			continue;
		if (!held && !tl_ensure_replayer(tl))
			return -1;
		char why[256];
		uint64_t pos, at;
		struct tl_thread *x = t;
		int r = held ? watch_held(tl, back, p, &x, &at, why, sizeof why)
			: back ? replayer_find_prev_access(tl->replayer, t->tid, before, p->addr, p->len,
							   p->type, &pos, why, sizeof why)
			       : replayer_find_next_access(tl->replayer, t->tid, t->pos, p->addr, p->len,
							   p->type, &pos, why, sizeof why);
		if (r == -2) {
			fprintf(stderr, "ptrev: stopped by gdb (Ctrl-C) while looking for a watched "
				"access; the move ends here\n");
			return -2;
		}
		if (r < 0) {
			fprintf(stderr, "ptrev: watchpoint in the history: %s\n", why);
			snprintf(tl->move_note, sizeof tl->move_note, "watchpoints were not checked in "
				 "this move: %s", why);
			return -1;
		}
		if (r != 1)
			continue;
		/* The replayer gives the position right after the access. Going
		 * backwards the access is un-executed: stop before it, where the
		 * value is still the earlier one, as record full does (gdb only
		 * reports a write watchpoint whose value changed). */
		if (!held) {
			if (back && pos > 0)
				pos--;
			at = tl_global_of(tl, t, pos);
		} else {
			pos = 0; /* watch_move stands at the global position */
		}
		if (result == 0 || (back ? at > *g : at < *g)) {
			*who = x;
			*found = pos;
			*g = at;
			*which = i;
			result = 1;
		}
	}
	return result;
}

bool timeline_take_move_note(struct timeline *tl, char *buf, size_t len)
{
	if (!tl->move_note[0])
		return false;
	snprintf(buf, len, "%s", tl->move_note);
	tl->move_note[0] = 0;
	return true;
}

/* Stand where watch_search found a watched access. */
static void watch_move(struct timeline *tl, struct tl_thread *who, uint64_t pos, uint64_t g)
{
	if (tl_state_by_hold(tl))
		tl_set_global(tl, g);
	else
		tl_move(tl, who, pos);
}

static int stop_at(struct timeline_stop *stop, enum timeline_stop_kind kind,
		   const struct tl_thread *t)
{
	stop->kind = kind;
	stop->tid = t->tid;
	stop->sig = 0;
	stop->point = 0;
	return 0;
}

void timeline_end_after_access(struct timeline *tl)
{
	tl->end_after_access = true;
}

int timeline_reverse(struct timeline *tl, pid_t tid, bool all, bool step, bool before_signal,
		     const struct stop_set *pts, struct timeline_stop *stop)
{
	if (timeline_sync(tl) != 0)
		return -1;
	struct tl_thread *t = tl_thread_or_first(tl, tid);
	bool after_access = tl->end_after_access;
	tl->end_after_access = false;
	if (t->pos == 0 && (step || !tl->global || !all || tl->gpos == 0))
		return stop_at(stop, TIMELINE_BEGIN, t);
	if (step) {
		tl_move(tl, t, t->pos - 1);
		return stop_at(stop, TIMELINE_STEP, t);
	}
	struct tl_thread *who = t, *swho = t, *wwho = t;
	uint64_t found = 0, wpos, wg = 0, spos;
	int sig;
	bool hit = nearest_hit(tl, t, all, true, pts, &who, &found);
	size_t which;
	tl->end_after_access = after_access && !tl->global;
	int wr = watch_search(tl, t, true, pts, &wwho, &wpos, &wg, &which);
	tl->end_after_access = false;
	if (wr == -2)
		return stop_at(stop, TIMELINE_INTERRUPTED, t);
	bool watch = wr == 1 && (!hit || wg > tl_global_of(tl, who, found));
	/* The nearest going backwards is the latest; a breakpoint or watched
	 * access at the handler's first instruction comes before the
	 * delivery (which is between that instruction and the one before). */
	uint64_t nearest = watch ? wg : hit ? tl_global_of(tl, who, found) : 0;
	if (nearest_signal(tl, t, all, true, before_signal, 0, &swho, &spos, &sig) &&
	    (!(watch || hit) || tl_global_of(tl, swho, spos) > nearest)) {
		tl_move(tl, swho, spos);
		stop_at(stop, TIMELINE_SIGNAL, swho);
		stop->sig = sig;
		return 0;
	}
	if (watch) {
		watch_move(tl, wwho, wpos, wg);
		stop_at(stop, TIMELINE_WATCH, wwho);
		stop->point = which;
		return 0;
	}
	if (hit) {
		tl_move(tl, who, found);
		return stop_at(stop, TIMELINE_BREAKPOINT, who);
	}
	/* The start of the history: reported in the thread that was there. */
	if (tl->global && all) {
		pid_t first;
		uint64_t pos;
		tl_set_global(tl, 0);
		if (sched_map_at(tl->sched, 0, &first, &pos) && tl_thread(tl, first))
			t = tl_thread(tl, first);
	} else {
		tl_move(tl, t, 0);
	}
	return stop_at(stop, TIMELINE_BEGIN, t);
}

/* The end of the history reached going forwards: of a saved recording
 * (reported in the thread that ended it, with a global order), or the
 * live present, where gdb's record full stops too. */
static int reach_end(struct timeline *tl, struct tl_thread *t, struct timeline_stop *stop)
{
	if (tl->saved && tl->global)
		t = tl_to_end(tl);
	else if (tl->saved)
		tl_thread_to_end(t); /* where the replay starts too */
	else if (tl->global)
		tl_set_global(tl, sched_map_total(tl->sched));
	else
		t->pos = tl_count(t);
	return stop_at(stop, TIMELINE_END, t);
}

/* A recorded signal delivered to t right before its instruction pos? */
static bool signal_at(const struct timeline *tl, const struct tl_thread *t, uint64_t pos, int *sig)
{
	const struct trace_data *td = tl->td;
	for (size_t i = 0; i < td->nsignals; i++) {
		if (td->signals[i].tid == t->tid && td->signals[i].pos == pos) {
			*sig = td->signals[i].signo;
			return true;
		}
	}
	return false;
}

/* Stepping t while the others run: they execute what they did before t's
 * next instruction, and a breakpoint or recorded signal of theirs there
 * stops the step in that thread, as it would live. */
static bool others_stop_first(struct timeline *tl, struct tl_thread *t,
			      const struct stop_set *pts, struct timeline_stop *stop)
{
	uint64_t mine = tl_global_of(tl, t, t->pos), found, spos;
	struct tl_thread *who = t, *swho = t;
	int sig;
	if (mine <= tl->gpos)
		return false; /* t's instruction is next: nobody runs before it */
	bool hit = nearest_hit(tl, t, true, false, pts, &who, &found) && who != t &&
		   tl_global_of(tl, who, found) < mine;
	uint64_t limit = hit ? tl_global_of(tl, who, found) : mine - 1;
	if (next_signal(tl, t, true, limit, &swho, &spos, &sig) && swho != t &&
	    !(hit && swho == who && spos == found)) {
		tl_move(tl, swho, spos);
		stop_at(stop, TIMELINE_SIGNAL, swho);
		stop->sig = sig;
		return true;
	}
	if (!hit)
		return false;
	tl_move(tl, who, found);
	stop_at(stop, TIMELINE_BREAKPOINT, who);
	return true;
}

static int step_forward(struct timeline *tl, struct tl_thread *t, bool all,
			const struct stop_set *pts, struct timeline_stop *stop)
{
	uint64_t count = tl_count(t);
	int sig;
	if (all && tl->global && others_stop_first(tl, t, pts, stop))
		return 0;
	tl_step(tl, t);
	if (signal_at(tl, t, t->pos, &sig)) {
		stop_at(stop, TIMELINE_SIGNAL, t);
		stop->sig = sig;
		return 0;
	}
	if (t->pos == count && tl->saved && !tl->global)
		return reach_end(tl, t, stop);
	return stop_at(stop, TIMELINE_STEP, t);
}

int timeline_forward(struct timeline *tl, pid_t tid, bool all, bool step,
		     const struct stop_set *pts, struct timeline_stop *stop)
{
	tl->end_after_access = false;
	if (timeline_sync(tl) != 0)
		return -1;
	struct tl_thread *t = tl_thread_or_first(tl, tid);
	if (tl_at_end(tl, t) && !tl->saved)
		return 1; /* at the live end: the program runs for real */
	if (tl_at_end(tl, t) || (t->pos >= tl_count(t) && step))
		return reach_end(tl, t, stop); /* nothing more of t in the history */
	if (step)
		return step_forward(tl, t, all, pts, stop);
	struct tl_thread *who = t, *swho = t, *wwho = t;
	uint64_t found = 0, wpos, wg = 0, spos;
	int sig;
	bool hit = nearest_hit(tl, t, all, false, pts, &who, &found);
	uint64_t limit = hit ? tl_global_of(tl, who, found) : UINT64_MAX;
	size_t which;
	int wr = watch_search(tl, t, false, pts, &wwho, &wpos, &wg, &which);
	if (wr == -2)
		return stop_at(stop, TIMELINE_INTERRUPTED, t);
	bool watch = wr == 1 && wg <= limit;
	if (watch)
		limit = wg;
	/* A breakpoint at a handler's first instruction is reported rather
	 * than the delivery that leads there: gdb resumes off a stop at the
	 * breakpoint's address without hitting it (natively the delivery
	 * stops before the handler is entered), and with a signal it does
	 * not stop for (SIGALRM, SIGCHLD) the breakpoint would be lost. */
	if (next_signal(tl, t, all, limit, &swho, &spos, &sig) &&
	    !(hit && !watch && swho == who && spos == found)) {
		tl_move(tl, swho, spos);
		stop_at(stop, TIMELINE_SIGNAL, swho);
		stop->sig = sig;
	} else if (watch) {
		watch_move(tl, wwho, wpos, wg);
		stop_at(stop, TIMELINE_WATCH, wwho);
		stop->point = which;
	} else if (hit) {
		tl_move(tl, who, found);
		stop_at(stop, TIMELINE_BREAKPOINT, who);
	} else {
		reach_end(tl, t, stop);
	}
	return 0;
}
