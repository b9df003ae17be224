/* The history target: the program at a position in a recording, moved by
 * the timeline (replay/timeline.h) and shown as the timeline shows it:
 * full state where re-execution gives it, else the PC and read-only
 * memory. A saved recording is served by one alone; a recording target
 * uses one for the past of the recording it is making. */
#include "target_internal.h"

#include "ptrev/binary_copies.h"
#include "ptrev/materialise.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct history_target {
	struct target base;
	struct timeline *tl;         /* NULL until an event recording's
	                                history is made */
	struct history_event *ev;    /* an event recording, else NULL */
	const struct trace_data *td;
	pid_t pid;              /* the recorded process */
	pid_t initial;          /* the thread reported where the recording ended */
	bool has_stop;          /* a stop found by the last resume, for wait */
	/* further_back made a piece that ends at the hit a reverse-continue
	 * looked for: the move stops at its end. */
	bool hit_at_end;
	pid_t pre_signal;       /* this thread stopped going forwards at a
	                           recorded signal: shown as before its
	                           delivery (history_sigframe.c); 0: none */
	struct target_stop stop;
	bool (*alive)(void *ctx); /* target_set_alive's, for the timeline's */
	void *alive_ctx;          /*   long searches */
	char exec_path[4096];   /* the program for gdb (cached) */
	bool exec_path_is_temp; /* ...a temporary copy, removed at the end */
};

static struct history_target *hist(struct target *t)
{
	return (struct history_target *)t;
}

static pid_t history_pid(struct target *t)
{
	return hist(t)->pid;
}

static bool history_alive(struct target *t)
{
	(void)t;
	return false;
}

/* An event recording's history, made the first time it is needed. */
static bool have_history(struct history_target *h)
{
	char err[512];
	if (h->tl)
		return true;
	if (!h->ev)
		return false;
	h->tl = history_event_make(h->ev, false, err, sizeof err);
	if (!h->tl) {
		if (!h->ev->interrupted)
			fprintf(stderr, "ptrev: cannot make the history of this recording: %s\n",
				err);
		return false;
	}
	h->td = history_event_data(h->ev);
	return true;
}

/* Stand where w says tid stood in a history counting positions alike:
 * with threads in one order, the whole program's place (a thread's own
 * position stands still while others run). */
static void place_at(struct timeline *tl, pid_t tid, const struct timeline_where *w)
{
	if (w->global)
		timeline_move_global(tl, w->gpos);
	else
		timeline_move_to(tl, tid, w->pos);
}

/* A piece of the history (one that ends before the recording does)
 * becomes the tail from its start to the end, tid at the same position
 * (both count from there): going on forwards past its end, or where only
 * the whole history will do. */
static bool piece_to_tail(struct history_target *h, pid_t tid)
{
	char err[512];
	struct timeline_where w;
	tid = timeline_thread_or_first(h->tl, tid);
	timeline_where(h->tl, tid, &w);
	/* A piece from the program's start: its tail to the end is the
	 * whole history (the background's, where it is making it). */
	bool whole = history_event_at_start(h->ev);
	struct timeline *tl = whole ? history_event_make(h->ev, true, err, sizeof err)
				    : history_event_piece_to_end(h->ev, "going on past the history "
								 "made", h->tl, err, sizeof err);
	if (!tl) {
		fprintf(stderr, "ptrev: cannot make the history on to the recording's end: %s\n", err);
		return false;
	}
	if (whole)
		timeline_close(h->tl);
	h->tl = tl;
	h->td = history_event_data(h->ev);
	/* The whole history, or a tail from the piece's start: both count
	 * alike from there, the program's place (with threads in one order)
	 * or tid's own position. */
	place_at(tl, tid, &w);
	return true;
}

/* Where tid stands in a tail's history, counted from the end (histories
 * that end where the recording does count alike from there): with
 * threads in one order (a multi-threaded tail) the whole program's place,
 * since a thread's own position stands still while others run. */
struct from_end {
	bool global;
	uint64_t back;
};

static struct from_end where_from_end(struct timeline *tl, pid_t tid)
{
	struct timeline_where w;
	timeline_where(tl, tid, &w);
	if (w.global)
		return (struct from_end){true, w.gtotal - w.gpos};
	return (struct from_end){false, w.count - w.pos};
}

/* Stand as far from tl's end as fe says (at its start when it is
 * shorter). */
static void place_from_end(struct timeline *tl, pid_t tid, const struct from_end *fe)
{
	struct timeline_where w;
	timeline_where(tl, tid, &w);
	if (fe->global && w.global)
		timeline_move_global(tl, w.gtotal >= fe->back ? w.gtotal - fe->back : 0);
	else
		timeline_move_to(tl, tid, w.count >= fe->back ? w.count - fe->back : 0);
}

/* The whole history where only a tail's is made (going back past the
 * tail, instruction numbers for the user, saving): the same position,
 * counted from the end, in the whole one; at_start: its start. */
static bool whole_history_at(struct history_target *h, pid_t tid, bool at_start)
{
	char err[512];
	if (!have_history(h))
		return false;
	if (!h->ev || !history_event_tail_only(h->ev))
		return true;
	if (!at_start && history_event_cut(h->ev) && !piece_to_tail(h, tid))
		return false;
	if (!history_event_tail_only(h->ev))
		return true; /* the piece began at the program's start */
	tid = timeline_thread_or_first(h->tl, tid);
	struct from_end fe = where_from_end(h->tl, tid);
	struct timeline *tl = history_event_make(h->ev, true, err, sizeof err);
	if (!tl) {
		fprintf(stderr, "ptrev: cannot make the whole history of this recording: %s\n", err);
		return false;
	}
	if (at_start)
		timeline_move_to(tl, tid, 0);
	else
		place_from_end(tl, tid, &fe);
	timeline_close(h->tl);
	h->tl = tl;
	h->td = history_event_data(h->ev);
	return true;
}

static bool whole_history(struct history_target *h, pid_t tid)
{
	return whole_history_at(h, tid, false);
}

/* Are all of stops breakpoints? A watched byte may be written by a
 * syscall, which the native search does not see. */
static bool breakpoints_only(const struct stop_set *stops)
{
	for (size_t i = 0; i < stops->n; i++)
		if (stops->v[i].type > 1)
			return false;
	return true;
}

/* Replace the history by tl (made from the one before), tid as far from
 * its end as fe says, or (NULL) where tl stands (its end). */
static void take_history(struct history_target *h, pid_t tid, struct timeline *tl,
			 const struct from_end *fe)
{
	h->tl = tl;
	h->td = history_event_data(h->ev);
	if (fe)
		place_from_end(tl, tid, fe);
}

/* Take tl, a piece of the history from the program's start
 * (history_event_head, _head_to_run), tid at its end: 1; 0 where there
 * is none (said on stderr where err says why), -1 for gdb's Ctrl-C. */
static int take_start(struct history_target *h, pid_t tid, struct timeline *tl,
		      const char *err)
{
	if (tl) {
		take_history(h, tid, tl, NULL);
		return 1;
	}
	if (h->ev->interrupted)
		return -1;
	if (err[0]) /* none: the whole history is about as short */
		fprintf(stderr, "ptrev: cannot make the history of the program's start alone (%s)\n",
			err);
	return 0;
}

/* The same for a multi-threaded recording's tail (from a run of its
 * order): for a reverse-continue with breakpoints only (stops given), the
 * history of the run of the last hit before alone, found natively (a
 * piece: history_event_runs_piece; no hit comes between its end and
 * here), tid at its end; else a history that begins about four times as
 * far back, at least a run more, or with the hit's run where that is
 * further back, and ends where this one does (a piece's end, or the
 * recording's), the whole program where it stood counted from the end;
 * the whole history where that is ready or no tail would be shorter. */
static bool further_back_run(struct history_target *h, pid_t tid, const struct stop_set *stops)
{
	char err[512];
	size_t run = history_event_wider_run(h->ev), hit = 0;
	bool piece = history_event_runs_cut(h->ev);
	const char *why = "going back past the history made";
	int found = -1;
	tid = timeline_thread_or_first(h->tl, tid);
	if (stops && run && !history_event_whole_ready(h->ev))
		found = history_event_search_back(h->ev, stops, &hit);
	if (found > 0 && hit < run) {
		run = hit;
		why = "going back to the last breakpoint or watchpoint hit or signal (found natively)";
	}
	if (h->ev->interrupted)
		return false; /* gdb's Ctrl-C during the search */
	if (found >= 0 && breakpoints_only(stops)) {
		/* No hit (nor recorded signal) before: on to the program's
		 * start, in the history of its first runs only; one near the
		 * start: in the history from there to its run's end (none
		 * comes between there and here). */
		struct timeline *tl =
			found == 0 ? history_event_head(h->ev, h->tl, err, sizeof err)
				   : history_event_head_to_run(h->ev, hit, h->tl, err, sizeof err);
		int took = take_start(h, tid, tl, err);
		if (took != 0)
			return took > 0;
	}
	if (found > 0 && hit > 0 && h->ev->hit_event != SIZE_MAX && breakpoints_only(stops) &&
	    !history_event_whole_ready(h->ev)) {
		/* It ends before this history begins: a hit after that is
		 * after where the move began. */
		struct timeline *tl = history_event_runs_piece(h->ev, hit, hit,
							       history_event_tail_run(h->ev), why,
							       h->tl, err, sizeof err);
		if (tl) {
			take_history(h, tid, tl, NULL);
			return true;
		}
		if (h->ev->interrupted)
			return false;
		if (err[0])
			fprintf(stderr, "ptrev: cannot make the history of the hit's run alone (%s)\n",
				err);
	}
	if (run == 0 || history_event_whole_ready(h->ev))
		return whole_history(h, tid);
	struct from_end fe = where_from_end(h->tl, tid);
	struct timeline *tl =
		piece ? history_event_runs_piece(h->ev, run, h->ev->runs_last, SIZE_MAX, why, h->tl,
						 err, sizeof err)
		      : history_event_widen_run(h->ev, run, why, h->tl, err, sizeof err);
	if (!tl) {
		if (h->ev->interrupted)
			return false;
		fprintf(stderr, "ptrev: cannot make a longer tail's history (%s): making the whole "
			"history\n", err);
		return whole_history(h, tid);
	}
	take_history(h, tid, tl, &fe);
	return true;
}

/* tid stands at the start of a tail's history, going back: a history
 * that begins further back. For a reverse-continue (stops given), a
 * native search first finds the stretch of the last breakpoint or
 * watchpoint hit before. With breakpoints and watchpoints (one
 * thread), the history of that stretch alone (a piece: only it is
 * stepped; a write the registers do not see, a syscall's: its event and
 * the stretch after), tid at its end: no hit comes between there and
 * here; none at all: the whole history at its start. Else (steps,
 * watchpoints with threads, more points than the debug registers hold) a tail
 * that ends where this one does, at the same position
 * counted from its end: one about four times as long, or the one that
 * begins with the hit's stretch where that goes further back; the whole
 * history when it is ready, or when no tail would be shorter. False
 * when none could be made (said on stderr). */
static bool further_back(struct history_target *h, pid_t tid, const struct stop_set *stops)
{
	char err[512];
	struct history_event *he = h->ev;
	if (history_event_at_start(he))
		return false; /* this history's start is the program's */
	if (history_event_tail_run(he))
		return further_back_run(h, tid, stops);
	size_t from = 0, cur = history_event_tail_from(he);
	bool bps = stops && breakpoints_only(stops);
	/* Watchpoints too: the search's registers see the program's own
	 * accesses, and the recording says which events may write behind
	 * its back. */
	bool pieces = bps || (stops && history_event_watch_pieces(he));
	int found = stops ? history_event_search_back(he, stops, &from) : -1;
	if (he->interrupted)
		return false; /* gdb's Ctrl-C during the search */
	tid = timeline_thread_or_first(h->tl, tid);
	/* The hit may lie in the stretch the tail begins inside, before
	 * its point: a piece that ends at the hit ends before the tail's
	 * start too. */
	bool before = from < cur || (from == cur && history_event_tail_in_stretch(he));
	const char *why = bps ? "going back to the last breakpoint hit (found natively)"
			      : "going back to the last breakpoint or watchpoint hit (found natively)";
	if (found > 0 && pieces && !he->hit_write && before && !history_event_whole_ready(he)) {
		/* Ending at the hit, where its stretch runs long; else the
		 * piece ends with the stretch. */
		struct timeline *tl = history_event_piece_to_hit(he, history_event_piece_from(he, from),
								 from, stops, why, h->tl, err,
								 sizeof err);
		if (tl) {
			take_history(h, tid, tl, NULL);
			h->hit_at_end = true;
			return true;
		}
		if (he->interrupted)
			return false;
		if (err[0])
			fprintf(stderr, "ptrev: cannot end the history at the hit (%s): it ends with "
				"the hit's stretch\n", err);
	}
	if (found > 0 && pieces && from < cur && !history_event_whole_ready(he)) {
		/* A write the registers do not see is event from's own: the
		 * piece holds it and the stretch after it. */
		size_t start = history_event_piece_from(he, from);
		struct timeline *tl =
			he->hit_write
				? history_event_write_piece(he, start, from, "going back to the last "
							    "write to the watched memory (found "
							    "natively)", h->tl, err, sizeof err)
				: history_event_widen(he, start, from, why, h->tl, err, sizeof err);
		if (tl) {
			take_history(h, tid, tl, NULL);
			return true;
		}
		if (he->interrupted)
			return false; /* gdb's Ctrl-C: no other way back either */
		fprintf(stderr, "ptrev: cannot make the history of the hit's stretch (%s)\n", err);
	}
	if (found == 0 && pieces && !history_event_whole_ready(he)) {
		/* No hit before: on to the program's start, where only the
		 * first stretches need stepping (its history's positions count
		 * from there, as the whole one's do). */
		int took = take_start(h, tid, history_event_head(he, h->tl, err, sizeof err), err);
		if (took != 0)
			return took > 0;
	}
	if (found == 0 && pieces)
		return whole_history_at(h, tid, true); /* no hit before: the program's start */
	if (found < 0) {
		from = history_event_wider(he);
	} else if (found > 0) {
		/* No shorter than four times the last either: a search that
		 * goes back hit by hit (each just before the last tail) would
		 * step the rest to the end again for every hit. */
		size_t wider = history_event_wider(he);
		if (wider && wider < from)
			from = wider;
	}
	/* A piece goes on only back: a tail that ends where it does (a
	 * step), else the tail to the recording's end. */
	if (history_event_cut(he) && (stops || from == 0) && !piece_to_tail(h, tid))
		return false;
	if (from == 0 || history_event_whole_ready(he))
		return whole_history(h, tid);
	struct from_end fe = where_from_end(h->tl, tid);
	struct timeline *tl = history_event_widen_back(he, from, "going back past the history made",
						       h->tl, err, sizeof err);
	if (!tl) {
		/* gdb's Ctrl-C was read while the tail was made: the whole
		 * history would wait for another that never comes. */
		if (he->interrupted)
			return false;
		fprintf(stderr, "ptrev: cannot make a longer tail's history (%s): making the whole "
			"history\n", err);
		return whole_history(h, tid);
	}
	take_history(h, tid, tl, &fe);
	return true;
}

/* tid stands at the end of a piece of the history, going on forwards
 * with breakpoints only (a continue): the piece (or last stretches) that
 * holds the next hit, found natively, tid at its start; false when that
 * cannot be (said on stderr; the tail from the piece's start will do). */
static bool further_on(struct history_target *h, pid_t tid, const struct stop_set *stops)
{
	char err[512];
	size_t at;
	int found = history_event_search_on(h->ev, stops, &at);
	if (found < 0)
		return false;
	struct timeline *tl = history_event_on(h->ev, found ? at : 0, h->tl, err, sizeof err);
	if (!tl) {
		if (!h->ev->interrupted)
			fprintf(stderr, "ptrev: cannot make the history of the next hit's stretch "
				"(%s)\n", err);
		return false;
	}
	take_history(h, tid, tl, NULL);
	/* At its start: for a tail from a run of the threads' order, the
	 * whole program's. */
	if (history_event_tail_run(h->ev))
		timeline_move_global(tl, 0);
	else
		timeline_move_to(tl, timeline_thread_or_first(tl, tid), 0);
	return true;
}

/* Past a piece's end but for a continue the debug registers search for:
 * the same piece about four times as long (history_event_longer), tid
 * where it stood (both count from the piece's start; with threads in one
 * order, the whole program's place); false where that is not for a piece
 * to do (the whole history ready, the recording's last stretch reached, a
 * failure: said on stderr). */
static bool piece_on(struct history_target *h, pid_t tid, bool inside)
{
	char err[512];
	struct history_event *he = h->ev;
	struct timeline_where w;
	tid = timeline_thread_or_first(h->tl, tid);
	timeline_where(h->tl, tid, &w);
	struct timeline *tl = history_event_longer(he, inside, h->tl, err, sizeof err);
	if (!tl) {
		if (err[0] && !he->interrupted)
			fprintf(stderr, "ptrev: cannot make a longer piece of the history (%s)\n", err);
		return false;
	}
	take_history(h, tid, tl, NULL);
	if (he->grew_from_end) /* where tid stood, the end, begins it */
		timeline_move_to(tl, tid, 0);
	else
		place_at(tl, tid, &w);
	return true;
}

/* Does tid stand on one of stops' breakpoints? */
static bool at_breakpoint(struct history_target *h, pid_t tid, const struct stop_set *stops)
{
	uint64_t pc;
	if (!timeline_pc(h->tl, tid, &pc))
		return false;
	for (size_t i = 0; i < stops->n; i++)
		if (stops->v[i].type <= 1 && stops->v[i].addr == pc)
			return true;
	return false;
}

/* Has tid moved from where it was (was)? */
static bool moved(struct history_target *h, pid_t tid, const struct timeline_where *was)
{
	struct timeline_where now;
	timeline_where(h->tl, tid, &now);
	return was->global ? now.gpos != was->gpos : now.pos != was->pos;
}

/* Is tid's state the end state of an event recording (before its history
 * is made, or at the end of it)? Then every thread has full state. */
static bool at_event_end(struct history_target *h, pid_t tid)
{
	return h->ev && h->ev->end && (!h->tl || (timeline_at_end(h->tl, tid) &&
						 !history_event_cut(h->ev)));
}

static size_t history_threads(struct target *t, pid_t **ids)
{
	struct history_target *h = hist(t);
	if (!h->tl)
		return event_end_threads(h->ev->end, ids);
	return timeline_threads_here(h->tl, ids);
}

static bool history_can_reverse(struct target *t)
{
	(void)t;
	return true;
}

static bool history_can_record(struct target *t)
{
	(void)t;
	return false;
}

static ssize_t read_at(void *ctx, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	return timeline_read_memory(ctx, tid, addr, buf, len);
}

/* The registers of tid where it stands; for the thread stopped at a
 * recorded signal, those before the delivery. */
static enum timeline_state registers(struct history_target *h, pid_t tid,
				     struct amd64_regfile *rf)
{
	enum timeline_state s = timeline_registers(h->tl, tid, rf);
	if (tid != h->pre_signal || s != TIMELINE_STATE_FULL)
		return s; /* PC level: the handler's PC, the next one known */
	struct amd64_regfile *before = malloc(sizeof *before);
	if (!before)
		return s;
	*before = *rf;
	if (history_sigframe_interrupted(read_at, h->tl, tid, before) == 0)
		*rf = *before;
	free(before);
	return s;
}

static void stop_from_timeline(struct history_target *h, const struct timeline_stop *ts,
			       const struct stop_set *stops)
{
	struct target_stop *stop = &h->stop;
	memset(stop, 0, sizeof *stop);
	stop->tid = ts->tid;
	stop->sig = SIGTRAP;
	stop->core = -1;
	switch (ts->kind) {
	case TIMELINE_STEP:
		stop->kind = TARGET_STOP_STEP;
		break;
	case TIMELINE_BREAKPOINT:
		stop->kind = TARGET_STOP_SWBREAK;
		break;
	case TIMELINE_WATCH:
		stop->kind = TARGET_STOP_WATCH;
		stop->watch_addr = stops->v[ts->point].addr;
		stop->watch_type = stops->v[ts->point].type;
		break;
	case TIMELINE_SIGNAL:
		stop->kind = TARGET_STOP_SIGNAL;
		stop->sig = ts->sig;
		break;
	case TIMELINE_BEGIN:
		stop->kind = TARGET_STOP_HISTORY_BEGIN;
		break;
	case TIMELINE_END:
		stop->kind = TARGET_STOP_HISTORY_END;
		break;
	case TIMELINE_INTERRUPTED: /* the stop gdb expects for its interrupt */
		stop->kind = TARGET_STOP_SIGNAL;
		stop->sig = SIGINT;
		break;
	}
	stop->have_pc = timeline_pc(h->tl, ts->tid, &stop->rip);
	/* Before a recorded signal's delivery, and at the end of an event
	 * recording's history, the registers shown are not the history's
	 * last instruction's: the stop's PC is theirs. At the end they are
	 * the end state's, with gdb's changes made there (the registers it
	 * restored after a function it called: the history ends at that
	 * function's return, to gdb's own breakpoint). */
	if (ts->kind == TIMELINE_END && at_event_end(h, ts->tid)) {
		struct amd64_regfile *rf = malloc(sizeof *rf);
		if (rf && target_regs_pc_known(history_event_registers(h->ev, ts->tid, rf)))
			stop->rip = rf->gpr.rip;
		free(rf);
	} else if (ts->tid == h->pre_signal) {
		struct amd64_regfile *rf = malloc(sizeof *rf);
		if (rf && registers(h, ts->tid, rf) == TIMELINE_STATE_FULL)
			stop->rip = rf->gpr.rip;
		free(rf);
	}
	h->has_stop = true;
}

/* Off a stop before a recorded signal's delivery, forwards: a step ends
 * at the handler's first instruction (where the thread's position is
 * already), as a step with a signal does live; so does a continue when a
 * breakpoint is there. 1 when the stop is in ts. */
static int off_pre_signal(struct history_target *h, pid_t tid, bool step,
			  const struct stop_set *stops, struct timeline_stop *ts)
{
	uint64_t pc;
	memset(ts, 0, sizeof *ts);
	ts->tid = tid;
	if (step) {
		ts->kind = TIMELINE_STEP;
		return 1;
	}
	if (!timeline_pc(h->tl, tid, &pc))
		return 0;
	for (size_t i = 0; i < stops->n; i++)
		if ((stops->v[i].type == 0 || stops->v[i].type == 1) && stops->v[i].addr == pc &&
		    (!stops->holds || stops->holds(stops->ctx, tid, pc))) {
			ts->kind = TIMELINE_BREAKPOINT;
			return 1;
		}
	return 0;
}

/* The thread a forward resume moves: the one the first action names, or
 * the one gdb steps, else the current one. */
static pid_t forward_thread(const struct target_resume *r)
{
	pid_t tid = r->nactions && r->actions[0].tid > 0 ? r->actions[0].tid : 0;
	for (size_t j = 0; j < r->nactions && tid == 0; j++)
		if (r->actions[j].kind == 's' && r->actions[j].tid > 0)
			tid = r->actions[j].tid;
	return tid;
}

static int history_current_stop(struct target *t, pid_t current, const struct target_stop *last,
				struct target_stop *stop);

/* gdb's Ctrl-C stopped the history being made for a move (alive): the
 * move ends where the thread stood, or where it had got to, with the
 * stop gdb expects for its interrupt. */
static bool interrupted_here(struct history_target *h, pid_t tid)
{
	if (!h->ev || !history_event_interrupted(h->ev))
		return false;
	fprintf(stderr, "ptrev: stopped by gdb (Ctrl-C) while making the history; the move ends "
		"here%s\n", history_event_whole_ready(h->ev) || !h->ev->job ? ""
			: " (the whole history is still made in the background)");
	history_current_stop(&h->base, tid, NULL, &h->stop);
	h->stop.sig = SIGINT;
	h->has_stop = true;
	return true;
}

/* The timeline to move in, asking gdb's Ctrl-C through it (a move may
 * have made another since the last). */
static struct timeline *alive(struct history_target *h)
{
	timeline_set_alive(h->tl, h->alive, h->alive_ctx);
	return h->tl;
}

/* timeline_forward, but for a piece of an event recording's history that
 * ends inside a stretch (at a breakpoint's hit, or a point after it):
 * its end is where the thread stands with the next instruction still to
 * run, as in the whole history, so a move that got there is over (a
 * step's end, or the hit) where it would be in the whole history, not a
 * move to make again past the end (as at an event, whose instruction the
 * piece ran without knowing what it did). */
static int forward(struct history_target *h, pid_t tid, bool all, bool step,
		   const struct stop_set *stops, struct timeline_stop *ts)
{
	struct timeline_where was;
	timeline_where(h->tl, tid, &was);
	int rc = timeline_forward(alive(h), tid, all, step, stops, ts);
	if (rc == 0 && ts->kind == TIMELINE_END && h->ev && history_event_ends_inside(h->ev) &&
	    history_event_cut(h->ev) && moved(h, tid, &was)) {
		if (step)
			ts->kind = TIMELINE_STEP;
		else if (at_breakpoint(h, ts->tid, stops))
			ts->kind = TIMELINE_BREAKPOINT;
	}
	return rc;
}

static int move(struct target *t, const struct target_resume *r)
{
	struct history_target *h = hist(t);
	static const struct stop_set none;
	const struct stop_set *stops = r->stops ? r->stops : &none;
	struct timeline_stop ts;
	int rc;
	pid_t pre = h->pre_signal;
	h->has_stop = false;
	h->pre_signal = 0;
	if (h->ev)
		history_event_interrupted(h->ev); /* one of a monitor command is no move's */
	if (r->nactions == 0)
		return TARGET_REFUSED;
	if (!h->tl && h->ev && !r->reverse) {
		/* At the end of an event recording with no history made yet,
		 * a move forwards ends at once, where it stands: its history
		 * (minutes, for a long one) would show nothing after it. */
		history_current_stop(&h->base, r->current, NULL, &h->stop);
		h->stop.kind = TARGET_STOP_HISTORY_END;
		h->stop.sig = SIGTRAP;
		h->has_stop = true;
		return 0;
	}
	if (!have_history(h))
		return interrupted_here(h, r->current) ? 0 : TARGET_REFUSED;
	if (r->reverse) {
		/* bs/bc carry no thread: gdb names the one to move with Hc, or
		 * Hc0/-1 for "the current one, the others as they please". */
		pid_t tid = r->reverse_tid > 0 && timeline_has_thread(h->tl, r->reverse_tid)
				    ? r->reverse_tid : r->current;
		tid = timeline_thread_or_first(h->tl, tid);
		bool step = r->actions[0].kind == 's';
		rc = timeline_reverse(alive(h), tid, r->reverse_tid <= 0, step, tid == pre, stops,
				      &ts);
		/* The start of a tail's history is not the program's: go on
		 * from there in a history that begins further back. */
		while (rc == 0 && ts.kind == TIMELINE_BEGIN && h->ev &&
		       history_event_tail_only(h->ev) && further_back(h, tid, step ? NULL : stops)) {
			/* A piece that ends at the hit: the move stops there,
			 * its instruction still to run (going back from a
			 * place never reports that place). */
			bool hit = h->hit_at_end;
			h->hit_at_end = false;
			if (hit && at_breakpoint(h, tid, stops)) {
				ts = (struct timeline_stop){.kind = TIMELINE_BREAKPOINT, .tid = tid};
				break;
			}
			/* Else a write watchpoint's hit, after its instruction. */
			if (hit)
				timeline_end_after_access(h->tl);
			rc = timeline_reverse(alive(h), tid, r->reverse_tid <= 0, step, tid == pre, stops,
					      &ts);
		}
	} else {
		pid_t tid = forward_thread(r);
		if (!timeline_has_thread(h->tl, tid))
			tid = r->current;
		bool step = false, all = false;
		for (size_t j = 0; j < r->nactions; j++) {
			step |= r->actions[j].kind == 's';
			all |= r->actions[j].tid == -1;
		}
		tid = timeline_thread_or_first(h->tl, tid);
		if (tid == pre && off_pre_signal(h, tid, step, stops, &ts))
			rc = 0;
		else
			rc = forward(h, tid, all, step, stops, &ts);
		/* The end of a piece of the history is not the recording's:
		 * a continue goes on in the piece of the next hit, found
		 * natively; anything else in the piece made about four times
		 * as long, again as long as it ends there; where no piece will
		 * do, in the tail from its start to the end. A move that ends
		 * there, after the piece's last instruction, goes on too: the
		 * piece does not know what that instruction, a syscall, did. */
		for (;;) {
			bool again = rc == 1 || (rc == 0 && ts.kind == TIMELINE_END);
			/* A piece that ends at a hit (or a point after it) holds
			 * its end's state: a move over there needs no more. */
			if (!h->ev || !history_event_cut(h->ev) || h->ev->interrupted ||
			    !(again || timeline_at_end(h->tl, tid)) || (!again && history_event_ends_inside(h->ev)))
				break;
			bool searched = stops && (breakpoints_only(stops) ||
						  history_event_watch_pieces(h->ev));
			if (again && !step && searched && !history_event_whole_ready(h->ev) &&
			    further_on(h, tid, stops)) {
				/* A piece that ends where the hit is (where gdb
				 * stopped while it was recorded) ends with the
				 * breakpoint's instruction still to run; at the
				 * recording's end (a live one's present), the end of
				 * the history, as in the whole one. */
				rc = forward(h, tid, all, step, stops, &ts);
				if (rc == 0 && ts.kind == TIMELINE_END && history_event_cut(h->ev) &&
				    h->ev->tail_last + 1 < materialise_event_count(h->ev->ev) &&
				    at_breakpoint(h, ts.tid, stops)) {
					ts.kind = TIMELINE_BREAKPOINT;
					break;
				}
				continue;
			}
			if (h->ev->interrupted)
				break; /* gdb's Ctrl-C during the search: the move ends */
			/* A continue the debug registers search for, where
			 * further_on made no piece to the next hit, grows a
			 * piece that ends inside a stretch to the stretch's
			 * event, from where the next hit is searched for
			 * natively; anything else grows it inside the stretch
			 * first. */
			if (piece_on(h, tid, step || !searched)) {
				if (!again)
					break;
				rc = forward(h, tid, all, step, stops, &ts);
				continue;
			}
			if (piece_to_tail(h, tid) && again)
				rc = timeline_forward(alive(h), tid, all, step, stops, &ts);
			break;
		}
	}
	/* A move that had to make more history, stopped by gdb. */
	if ((rc == 0 && (ts.kind == TIMELINE_BEGIN || ts.kind == TIMELINE_END)) || rc == 1) {
		pid_t at = r->reverse_tid > 0 ? r->reverse_tid : r->current;
		if (interrupted_here(h, at))
			return 0;
	}
	/* Either way a recorded signal stops before its delivery. */
	if (rc == 0 && ts.kind == TIMELINE_SIGNAL)
		h->pre_signal = ts.tid;
	if (rc != 0)
		return rc == 1 ? HISTORY_AT_PRESENT : TARGET_REFUSED;
	stop_from_timeline(h, &ts, stops);
	return 0;
}

static int history_resume(struct target *t, const struct target_resume *r)
{
	int rc = move(t, r);
	if (hist(t)->ev)
		history_event_moved(hist(t)->ev);
	return rc;
}

static int history_wait(struct target *t, struct target_stop *stop, bool block)
{
	struct history_target *h = hist(t);
	(void)block;
	if (!h->has_stop)
		return -1;
	*stop = h->stop;
	h->has_stop = false;
	return 1;
}

static int history_interrupt(struct target *t)
{
	(void)t;
	return 0; /* nothing runs: every move is over when resume returns */
}

/* The stop that ended the recording: its signal for a crash, else a plain
 * stop where the history ends, in gdb's current thread. */
static int history_current_stop(struct target *t, pid_t current, const struct target_stop *last,
				struct target_stop *stop)
{
	struct history_target *h = hist(t);
	(void)last;
	memset(stop, 0, sizeof *stop);
	stop->kind = TARGET_STOP_SIGNAL;
	stop->core = -1;
	if (!h->tl) {
		struct amd64_regfile *rf = malloc(sizeof *rf);
		stop->sig = history_event_end_signal(h->ev);
		stop->tid = history_event_thread(h->ev, current ? current : h->initial);
		stop->have_pc = rf && target_regs_pc_known(history_event_registers(h->ev, stop->tid, rf));
		stop->rip = stop->have_pc ? rf->gpr.rip : 0;
		free(rf);
		return 0;
	}
	stop->sig = timeline_end_signal(h->tl);
	stop->tid = timeline_thread_or_first(h->tl, current ? current : h->initial);
	stop->have_pc = timeline_pc(h->tl, stop->tid, &stop->rip);
	return 0;
}

static int history_fetch_registers(struct target *t, pid_t tid, struct amd64_regfile *rf)
{
	struct history_target *h = hist(t);
	if (at_event_end(h, tid))
		return history_event_registers(h->ev, tid, rf);
	switch (registers(h, tid, rf)) {
	case TIMELINE_STATE_FULL:
		return TARGET_REGS_FULL;
	case TIMELINE_STATE_BEFORE_SYSCALL:
		return TARGET_REGS_BEFORE_SYSCALL;
	case TIMELINE_STATE_PC:
		return TARGET_REGS_PC;
	default:
		return TARGET_REGS_NONE;
	}
}

/* The past cannot be changed. */
static int history_store_registers(struct target *t, pid_t tid, const struct amd64_regfile *rf)
{
	(void)t;
	(void)tid;
	(void)rf;
	return -1;
}

static ssize_t history_read_memory(struct target *t, pid_t tid, uint64_t addr, void *buf,
				   size_t len)
{
	struct history_target *h = hist(t);
	if (at_event_end(h, tid))
		return event_end_read(h->ev->end, addr, buf, len);
	return timeline_read_memory(h->tl, tid, addr, buf, len);
}

static ssize_t history_write_memory(struct target *t, pid_t tid, uint64_t addr, const void *buf,
				    size_t len)
{
	(void)t;
	(void)tid;
	(void)addr;
	(void)buf;
	(void)len;
	return -1;
}

/* XCR0 of this machine: a saved recording has no process to ask, and is
 * replayed on the machine's own register layout. */
static uint64_t history_xcr0(struct target *t)
{
	uint32_t lo, hi;
	(void)t;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

/* Nothing to insert into: breakpoints and watchpoints are what the
 * searches look for (they come with each resume). */
static int history_point(struct target *t, int type, uint64_t addr, int len)
{
	(void)t;
	(void)type;
	(void)addr;
	(void)len;
	return 0;
}

static int history_target_auxv(struct target *t, struct strbuf *out)
{
	return history_auxv(hist(t)->td, out);
}

static int history_target_exec_file(struct target *t, struct strbuf *out)
{
	struct history_target *h = hist(t);
	return history_exec_file(h->td, h->exec_path, sizeof h->exec_path, &h->exec_path_is_temp, out);
}

static int history_target_libraries(struct target *t, pid_t tid, const char *annex,
				    struct strbuf *out)
{
	return history_libraries_svr4(t, tid, hist(t)->td, annex, out);
}

static int history_siginfo(struct target *t, pid_t tid, struct strbuf *out)
{
	struct history_target *h = hist(t);
	if (!h->tl)
		return history_event_siginfo(h->ev, tid, out);
	return timeline_siginfo(h->tl, tid, out);
}

/* The recorded /proc/PID/maps, and the recording's copy of a program or
 * library that was rebuilt or deleted since (binary_copies.h): gdb reads
 * the symbols of the build that ran. */
static int history_proc_file(struct target *t, const char *path, struct strbuf *out)
{
	int rc = history_maps(hist(t)->td, hist(t)->pid, path, out);
	if (rc != -ENOENT)
		return rc;
	const struct trace_file_copy *c = binary_copy_changed(hist(t)->td, path);
	if (!c)
		return -ENOENT;
	strbuf_append(out, c->bytes, c->len);
	return 0;
}

static pid_t history_fs_pid(struct target *t)
{
	(void)t;
	return 0; /* the process is gone: the files are ours */
}

void history_save(const struct trace_data *td, const struct trace_end *end, const char *path,
		  struct strbuf *out)
{
	char err[512];
	if (!*path)
		strbuf_puts(out, "usage: monitor save FILE\n");
	else if (trace_save(td, path, end, err, sizeof err) != 0)
		strbuf_printf(out, "Could not save the recording: %s\n", err);
	else
		strbuf_printf(out, "Recording saved to %s.\n", path);
}

static void monitor_when(struct timeline *tl, pid_t current, struct strbuf *out)
{
	pid_t tid = timeline_thread_or_first(tl, current);
	struct timeline_where w;
	timeline_sync(tl);
	timeline_where(tl, tid, &w);
	strbuf_printf(out, "Current instruction: %llu of %llu (thread %d)%s\n",
		      (unsigned long long)w.pos, (unsigned long long)w.count, (int)tid,
		      !w.at_end ? "" : timeline_saved(tl) ? ", at the end of the recording"
							 : ", the present");
	if (w.global)
		strbuf_printf(out, "All threads: instruction %llu of %llu\n",
			      (unsigned long long)w.gpos, (unsigned long long)w.gtotal);
}

static bool history_monitor(struct target *t, pid_t current, const char *cmd, const char *arg,
			    struct strbuf *out)
{
	struct history_target *h = hist(t);
	if (!h->tl && (strcmp(cmd, "when") == 0 || strcmp(cmd, "checkpoints") == 0)) {
		strbuf_puts(out, "At the end of the recording. ");
		history_event_progress(h->ev, out);
		return true;
	}
	/* Instruction numbers and saved files are the whole history's. */
	if (h->tl && h->ev && history_event_tail_only(h->ev) &&
	    (strcmp(cmd, "when") == 0 || strcmp(cmd, "checkpoints") == 0 ||
	     strcmp(cmd, "save") == 0) && !whole_history(h, current)) {
		strbuf_puts(out, "The whole history of this recording could not be made (ptrev's "
			    "stderr says why).\n");
		return true;
	}
	if (strcmp(cmd, "history") == 0 && !*arg) {
		if (h->ev)
			history_event_progress(h->ev, out);
		else
			strbuf_puts(out, "This recording holds its history (it was recorded, not "
				    "made from events).\n");
	} else if (strcmp(cmd, "when") == 0)
		monitor_when(h->tl, current, out);
	else if (strcmp(cmd, "save") == 0)
		/* A saved recording keeps how it ended. */
		history_save(h->td, h->td->complete ? &h->td->end : NULL, arg, out);
	else if (strcmp(cmd, "checkpoints") == 0)
		timeline_checkpoints(h->tl, out);
	else
		return false;
	return true;
}

static void history_set_alive(struct target *t, bool (*alive)(void *ctx), void *ctx)
{
	struct history_target *h = hist(t);
	h->alive = alive;
	h->alive_ctx = ctx;
	if (h->ev) {
		h->ev->alive = alive;
		h->ev->alive_ctx = ctx;
	}
}

static bool history_move_note(struct target *t, struct strbuf *out)
{
	struct history_target *h = hist(t);
	char note[1024];
	if (h->ev && history_event_take_note(h->ev, note, sizeof note)) {
		strbuf_puts(out, note);
		return true;
	}
	if (!h->tl || !timeline_take_move_note(h->tl, note, sizeof note))
		return false;
	strbuf_puts(out, note);
	return true;
}

static bool history_state_unavailable(struct target *t, pid_t tid, struct strbuf *out)
{
	struct history_target *h = hist(t);
	/* An event recording whose history is not made stands at its end,
	 * with full state; so does one moved to the end of its history (the
	 * end's replay answers there, not the timeline's: a held replay of
	 * several threads cannot stop after the program's last
	 * instruction). */
	if (at_event_end(h, tid))
		return false;
	const char *why = h->tl ? timeline_state_why(h->tl, tid) : NULL;
	if (why)
		strbuf_puts(out, why);
	return why != NULL;
}

static int history_detach(struct target *t)
{
	(void)t;
	return -1; /* no process to let go */
}

static void history_kill(struct target *t)
{
	(void)t;
}

static void history_destroy(struct target *t)
{
	struct history_target *h = hist(t);
	timeline_close(h->tl);
	if (h->ev) {
		history_event_close(h->ev);
		free(h->ev);
	}
	if (h->exec_path_is_temp)
		unlink(h->exec_path);
	free(h);
}

static const struct target_ops history_ops = {
	.name = "history",
	.pid = history_pid,
	.alive = history_alive,
	.threads = history_threads,
	.can_reverse = history_can_reverse,
	.can_record = history_can_record,
	.resume = history_resume,
	.wait = history_wait,
	.interrupt = history_interrupt,
	.state_unavailable = history_state_unavailable,
	.move_note = history_move_note,
	.set_alive = history_set_alive,
	.current_stop = history_current_stop,
	.fetch_registers = history_fetch_registers,
	.store_registers = history_store_registers,
	.read_memory = history_read_memory,
	.write_memory = history_write_memory,
	.xcr0 = history_xcr0,
	.insert_point = history_point,
	.remove_point = history_point,
	.auxv = history_target_auxv,
	.exec_file = history_target_exec_file,
	.libraries_svr4 = history_target_libraries,
	.siginfo = history_siginfo,
	.proc_file = history_proc_file,
	.fs_pid = history_fs_pid,
	.monitor = history_monitor,
	.detach = history_detach,
	.kill = history_kill,
	.destroy = history_destroy,
};

static struct history_target *history_new(struct timeline *tl, const struct trace_data *td,
					  pid_t pid)
{
	struct history_target *h = calloc(1, sizeof *h);
	if (!h) {
		timeline_close(tl);
		return NULL;
	}
	h->base.ops = &history_ops;
	h->tl = tl;
	h->td = td;
	h->pid = pid;
	h->initial = timeline_thread_tid(tl, 0);
	return h;
}

struct target *target_history_new(struct timeline *tl, const struct trace_data *td,
				  char *err, size_t errlen)
{
	const char *pid = trace_meta(td, "pid");
	struct history_target *h = history_new(tl, td, pid ? (pid_t)atoi(pid)
							     : timeline_thread_tid(tl, 0));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* Where the recording ended; the thread that ended it is current. */
	h->initial = timeline_to_end(tl);
	return &h->base;
}

struct target *target_history_new_event(const struct trace_data *ev, bool saved, char *err,
					size_t errlen)
{
	const char *pid = trace_meta(ev, "pid");
	struct history_target *h = calloc(1, sizeof *h);
	struct history_event *he = calloc(1, sizeof *he);
	if (!h || !he) {
		free(h);
		free(he);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (history_event_open(he, ev, saved, err, errlen) < 0) {
		history_event_close(he);
		free(he);
		free(h);
		return NULL;
	}
	h->base.ops = &history_ops;
	h->ev = he;
	h->td = he->ev; /* the recording, or its cut */
	h->pid = pid ? (pid_t)atoi(pid) : he->last;
	h->initial = he->last;
	return &h->base;
}

struct target *history_target_live(struct timeline *tl, const struct trace_data *td, pid_t pid)
{
	struct history_target *h = history_new(tl, td, pid);
	return h ? &h->base : NULL;
}

struct timeline *history_target_timeline(struct target *t)
{
	return hist(t)->tl;
}

bool history_target_in_past(struct target *t, pid_t tid)
{
	struct history_target *h = hist(t);
	if (!h->tl)
		return false;
	/* A piece that ends before the recording does (at a hit, or at an
	 * event before its end) ends in the past: at its end the thread is
	 * not where the live program stands. */
	return timeline_in_past(h->tl, tid) || (h->ev && history_event_cut(h->ev));
}
