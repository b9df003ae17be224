/* Moving through the recorded history: bs and bc backwards, and s, c and
 * vCont forwards while the program stands in the past (or always, for a
 * saved recording). With the recording's schedule every thread moves with
 * the one gdb steps, and continuing in either direction stops at the
 * nearest breakpoint or signal of any thread, reported in that thread
 * (gdb_history.h); without one, only the thread gdb names moves. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_history.h"
#include "ptrev/gdb_server.h"
#include "ptrev/gdb_signals.h"
#include "ptrev/history_schedule.h"
#include "ptrev/replayer.h"

/* Addresses where gdb's breakpoints (software and hardware execution) are. */
static size_t breakpoint_addrs(struct gdb_server *s, uint64_t **out)
{
	*out = malloc((s->npoints ? s->npoints : 1) * sizeof **out);
	size_t n = 0;
	for (size_t i = 0; *out && i < s->npoints; i++)
		if (gdb_point_is_exec(s, i))
			(*out)[n++] = gdb_point_addr(s, i);
	return n;
}

struct gdb_hist_thread *gdb_replay_thread(struct gdb_server *s)
{
	if (!s->hist)
		return NULL;
	struct gdb_hist_thread *t = gdb_history_thread(s->hist, s->g_tid);
	if (!t && s->hist->nthreads)
		t = &s->hist->threads[0];
	return t;
}

/* Stop reply for a thread standing in the history. reason: "swbreak",
 * "replaylog:begin", "replaylog:end", or NULL. */
void gdb_history_stop_reply(struct gdb_server *s, struct gdb_hist_thread *t,
			    int hostsig, const char *reason)
{
	struct strbuf *out = &s->reply;
	strbuf_printf(out, "T%02x", gdb_signal_from_host(hostsig) & 0xff);
	if (reason && strcmp(reason, "swbreak") == 0) {
		if (s->gdb_swbreak)
			strbuf_puts(out, "swbreak:;");
	} else if (reason) {
		strbuf_printf(out, "%s;", reason);
	}
	uint64_t pc;
	if (gdb_history_pc_of(s->hist, t, &pc))
		gdb_put_expedited(out, AMD64_RIP_REGNUM, pc);
	strbuf_puts(out, "thread:");
	gdb_format_thread_id(s, out, t->tid);
	strbuf_putc(out, ';');
	s->g_tid = t->tid;
	s->last.kind = STOP_SIGNAL;
	s->last.sig = hostsig;
	s->last.tid = t->tid;
}

/* Watchpoints in the history (full state only): the nearest access to any
 * watched range before (backwards) or after (forwards) the position.
 * Returns 1 with *found and the point's index, 0 for none, -1 if the
 * search cannot be done (then watchpoints are ignored, as at PC level). */
static int watch_search(struct gdb_server *s, struct gdb_hist_thread *t, bool back,
			uint64_t *found, size_t *which)
{
	int result = 0;
	for (size_t i = 0; i < s->npoints; i++) {
		int type = gdb_point_type(s, i);
		if (type < 2)
			continue;
		if (!s->replayer && !gdb_replay_ensure_replayer(s))
			return -1;
		char why[256];
		uint64_t pos;
		int r = back ? replayer_find_prev_access(s->replayer, t->tid, t->pos, gdb_point_addr(s, i),
							 gdb_point_len(s, i), type, &pos, why, sizeof why)
			     : replayer_find_next_access(s->replayer, t->tid, t->pos, gdb_point_addr(s, i),
							 gdb_point_len(s, i), type, &pos, why, sizeof why);
		if (r < 0) {
			fprintf(stderr, "ptrev: watchpoint in the history: %s\n", why);
			return -1;
		}
		/* The replayer gives the position right after the access. Going
		 * backwards the access is un-executed: stop before it, where the
		 * value is still the earlier one, as record full does (gdb only
		 * reports a write watchpoint whose value changed). */
		if (r == 1 && back && pos > 0)
			pos--;
		if (r == 1 && (result == 0 || (back ? pos > *found : pos < *found))) {
			*found = pos;
			*which = i;
			result = 1;
		}
	}
	return result;
}

static void watch_stop_reply(struct gdb_server *s, struct gdb_hist_thread *t, size_t which)
{
	int type = gdb_point_type(s, which);
	char reason[64];
	snprintf(reason, sizeof reason, "%s:%llx", type == 4 ? "awatch" : type == 3 ? "rwatch" : "watch",
		 (unsigned long long)gdb_point_addr(s, which));
	gdb_history_stop_reply(s, t, SIGTRAP, reason);
}

static long past_mem(struct gdb_server *s, uint64_t addr, void *buf, size_t len)
{
	return (long)gdb_replay_read_mem(s, addr, buf, len);
}

/* gdb's condition for the breakpoint hit at t's position (gdb leaves
 * conditions to us: ConditionalBreakpoints). Evaluated on the full state
 * there; where only the PC is known the stop is reported, as gdbserver
 * does when a condition cannot be evaluated. */
static bool condition_holds(struct gdb_server *s, struct gdb_hist_thread *t)
{
	uint64_t pc;
	if (!gdb_history_pc(t, &pc) || !gdb_breakpoint_has_condition(s, pc))
		return true;
	struct amd64_regfile *rf = malloc(sizeof *rf);
	pid_t current = s->g_tid;
	s->g_tid = t->tid; /* the state read is the current thread's */
	bool holds = !rf || !gdb_replay_regfile(s, rf) || gdb_conditions_hold(s, pc, rf, past_mem);
	s->g_tid = current;
	free(rf);
	return holds;
}

/* Where the program stands, to come back to after looking around. */
static uint64_t here(struct gdb_server *s, struct gdb_hist_thread *t)
{
	return s->hist->global ? s->hist->gpos : t->pos;
}

static void back_to(struct gdb_server *s, struct gdb_hist_thread *t, uint64_t where)
{
	if (s->hist->global)
		gdb_history_set_global(s->hist, where);
	else
		t->pos = where;
}

/* The threads a continue moves: every thread with a global order when gdb
 * resumes them all (also those that do not exist here: they ended before,
 * or begin later), else only t. */
static bool moves(struct gdb_server *s, struct gdb_hist_thread *t, struct gdb_hist_thread *x,
		  bool all)
{
	return x == t || (s->hist->global && all);
}

/* The nearest breakpoint hit whose condition holds, of any thread that
 * moves: the latest before the current position (back), or the first
 * after it; going forwards t (which gdb resumes off its stop) does not hit
 * the one it stands at. *who stops there at its position *pos. */
static bool nearest_hit(struct gdb_server *s, struct gdb_hist_thread *t, bool all, bool back,
			struct gdb_hist_thread **who, uint64_t *pos)
{
	uint64_t *addrs, best = 0, start = here(s, t);
	size_t n = breakpoint_addrs(s, &addrs);
	bool any = false;
	for (size_t i = 0; addrs && n && i < s->hist->nthreads; i++) {
		struct gdb_hist_thread *x = &s->hist->threads[i];
		if (!moves(s, t, x, all))
			continue;
		uint64_t from = back || x != t ? x->pos : x->pos + 1, found;
		while ((back ? history_prev_exec(x->h, from, addrs, n, &found)
			     : history_next_exec(x->h, from, addrs, n, &found)) == 1) {
			uint64_t g = gdb_history_global_of(s->hist, x, found);
			if (any && (back ? g <= best : g >= best))
				break; /* another thread's hit is nearer */
			gdb_history_move(s->hist, x, found);
			bool holds = condition_holds(s, x);
			back_to(s, t, start);
			if (holds) {
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

/* The first recorded signal delivery, to a thread that moves, after the
 * current position and no later than global index limit: t's own at its
 * position is the stop gdb resumes from. */
static bool next_signal(struct gdb_server *s, struct gdb_hist_thread *t, bool all, uint64_t limit,
			struct gdb_hist_thread **who, uint64_t *pos, int *sig)
{
	const struct trace_data *td = s->hist->td;
	uint64_t best = 0;
	bool any = false;
	for (size_t i = 0; i < td->nsignals; i++) {
		const struct trace_signal *g = &td->signals[i];
		struct gdb_hist_thread *x = gdb_history_thread(s->hist, g->tid);
		if (!x || !moves(s, t, x, all) || g->pos < x->pos || (x == t && g->pos == t->pos) ||
		    g->pos > history_insn_count(x->h))
			continue;
		uint64_t at = gdb_history_global_of(s->hist, x, g->pos);
		if (at > limit || (any && at >= best))
			continue;
		any = true;
		best = at;
		*who = x;
		*pos = g->pos;
		*sig = g->signo;
	}
	return any;
}

void gdb_reverse_packet(struct gdb_server *s, const char *pkt)
{
	/* bs/bc carry no thread: gdb names the one to move with Hc, or
	 * Hc0/-1 for "the current one, the others as they please". */
	struct gdb_hist_thread *t = s->hist && s->c_tid > 0 ? gdb_history_thread(s->hist, s->c_tid) : NULL;
	bool all = s->c_tid <= 0;
	if (!t)
		t = gdb_replay_thread(s);
	if (!t || (strcmp(pkt, "bs") != 0 && strcmp(pkt, "bc") != 0)) {
		if (!t)
			return; /* no history: empty reply, gdb says unsupported */
		strbuf_puts(&s->reply, "E01");
		return;
	}
	if (gdb_history_sync(s->hist) != 0) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	if (t->pos == 0 && (pkt[1] == 's' || !s->hist->global || !all || s->hist->gpos == 0)) {
		gdb_history_stop_reply(s, t, SIGTRAP, "replaylog:begin");
		return;
	}
	if (pkt[1] == 's') {
		gdb_history_move(s->hist, t, t->pos - 1);
		gdb_history_stop_reply(s, t, SIGTRAP, NULL);
		return;
	}
	struct gdb_hist_thread *who = t;
	uint64_t found = 0, wpos;
	bool hit = nearest_hit(s, t, all, true, &who, &found);
	size_t which;
	if (watch_search(s, t, true, &wpos, &which) == 1 &&
	    (!hit || gdb_history_global_of(s->hist, t, wpos) > gdb_history_global_of(s->hist, who, found))) {
		gdb_history_move(s->hist, t, wpos);
		watch_stop_reply(s, t, which);
		return;
	}
	if (hit) {
		gdb_history_move(s->hist, who, found);
		gdb_history_stop_reply(s, who, SIGTRAP, "swbreak");
		return;
	}
	/* The start of the history: reported in the thread that was there. */
	if (s->hist->global && all) {
		pid_t first;
		uint64_t pos;
		gdb_history_set_global(s->hist, 0);
		if (sched_map_at(s->hist->sched, 0, &first, &pos) && gdb_history_thread(s->hist, first))
			t = gdb_history_thread(s->hist, first);
	} else {
		gdb_history_move(s->hist, t, 0);
	}
	gdb_history_stop_reply(s, t, SIGTRAP, "replaylog:begin");
}

/* The end of a saved recording, reached going forwards. */
static void end_of_history(struct gdb_server *s, struct gdb_hist_thread *t)
{
	if (s->hist->global) {
		/* Everything ran: reported in the thread that ended it. */
		t = gdb_history_to_end(s->hist);
	} else {
		gdb_history_thread_to_end(t); /* where the replay starts too */
	}
	gdb_history_stop_reply(s, t, SIGTRAP, "replaylog:end");
}

/* The live present, reached going forwards: stop there, as gdb's record
 * full does at the end of its log; the next command runs for real. */
static void present(struct gdb_server *s, struct gdb_hist_thread *t)
{
	if (s->hist->global)
		gdb_history_set_global(s->hist, sched_map_total(s->hist->sched));
	else
		t->pos = history_insn_count(t->h);
	/* A thread that has ended by now cannot be the one stopped there. */
	for (size_t i = 0; !gdb_thread_exists(s, t->tid) && i < s->inf.nthreads; i++) {
		struct gdb_hist_thread *live = gdb_history_thread(s->hist, s->inf.threads[i].tid);
		if (live)
			t = live;
	}
	gdb_history_stop_reply(s, t, SIGTRAP, "replaylog:end");
}

/* A recorded signal delivered to t right before its instruction pos? */
static bool signal_at(struct gdb_server *s, struct gdb_hist_thread *t, uint64_t pos, int *sig)
{
	const struct trace_data *td = s->hist->td;
	for (size_t i = 0; i < td->nsignals; i++) {
		if (td->signals[i].tid == t->tid && td->signals[i].pos == pos) {
			*sig = td->signals[i].signo;
			return true;
		}
	}
	return false;
}

static void reach_end(struct gdb_server *s, struct gdb_hist_thread *t)
{
	if (s->hist->saved)
		end_of_history(s, t);
	else
		present(s, t);
}

/* Stepping t while the others run (vCont;s:T;c): they execute what they
 * did before t's next instruction, and a breakpoint or recorded signal of
 * theirs there stops the step in that thread, as it would live. */
static bool others_stop_first(struct gdb_server *s, struct gdb_hist_thread *t)
{
	uint64_t mine = gdb_history_global_of(s->hist, t, t->pos), found, spos;
	struct gdb_hist_thread *who = t, *swho = t;
	int sig;
	if (mine <= s->hist->gpos)
		return false; /* t's instruction is next: nobody runs before it */
	bool hit = nearest_hit(s, t, true, false, &who, &found) && who != t &&
		   gdb_history_global_of(s->hist, who, found) < mine;
	uint64_t limit = hit ? gdb_history_global_of(s->hist, who, found) : mine - 1;
	if (next_signal(s, t, true, limit, &swho, &spos, &sig) && swho != t) {
		gdb_history_move(s->hist, swho, spos);
		gdb_history_stop_reply(s, swho, sig, NULL);
		return true;
	}
	if (!hit)
		return false;
	gdb_history_move(s->hist, who, found);
	gdb_history_stop_reply(s, who, SIGTRAP, "swbreak");
	return true;
}

bool gdb_replay_resume(struct gdb_server *s, bool step, pid_t tid, bool all)
{
	if (!s->hist)
		return false;
	struct gdb_hist_thread *t = tid > 0 ? gdb_history_thread(s->hist, tid) : gdb_replay_thread(s);
	if (!t)
		t = gdb_replay_thread(s);
	if (!t)
		return false;
	if (gdb_history_sync(s->hist) != 0) {
		strbuf_puts(&s->reply, "E01");
		return true;
	}
	uint64_t count = history_insn_count(t->h);
	if (gdb_history_at_end(s->hist, t) && !s->hist->saved)
		return false; /* at the live end: run the program for real */
	if (gdb_history_at_end(s->hist, t) || (t->pos >= count && step)) {
		/* Nothing more of t in the history: the rest runs up to the end. */
		reach_end(s, t);
		return true;
	}
	if (step) {
		int sig;
		if (all && s->hist->global && others_stop_first(s, t))
			return true;
		gdb_history_step(s->hist, t);
		if (signal_at(s, t, t->pos, &sig))
			gdb_history_stop_reply(s, t, sig, NULL);
		else if (t->pos == count && s->hist->saved && !s->hist->global)
			end_of_history(s, t);
		else
			gdb_history_stop_reply(s, t, SIGTRAP, NULL);
		return true;
	}
	struct gdb_hist_thread *who = t, *swho = t;
	uint64_t found = 0, wpos, spos;
	int sig;
	bool hit = nearest_hit(s, t, all, false, &who, &found);
	uint64_t limit = hit ? gdb_history_global_of(s->hist, who, found) : UINT64_MAX;
	size_t which;
	bool watch = watch_search(s, t, false, &wpos, &which) == 1 &&
		     gdb_history_global_of(s->hist, t, wpos) <= limit;
	if (watch)
		limit = gdb_history_global_of(s->hist, t, wpos);
	if (next_signal(s, t, all, limit, &swho, &spos, &sig)) {
		gdb_history_move(s->hist, swho, spos);
		gdb_history_stop_reply(s, swho, sig, NULL);
	} else if (watch) {
		gdb_history_move(s->hist, t, wpos);
		watch_stop_reply(s, t, which);
	} else if (hit) {
		gdb_history_move(s->hist, who, found);
		gdb_history_stop_reply(s, who, SIGTRAP, "swbreak");
	} else {
		reach_end(s, t);
	}
	return true;
}

bool gdb_replay_in_past(struct gdb_server *s)
{
	struct gdb_hist_thread *t = gdb_replay_thread(s);
	return t && (s->hist->saved || gdb_history_in_past(t));
}
