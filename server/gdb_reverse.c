/* Moving through the recorded history: bs and bc backwards, and s, c and
 * vCont forwards while a thread stands in the past (or always, for a saved
 * recording). PC-level: only the PC is known at a past position. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_history.h"
#include "ptrev/gdb_server.h"
#include "ptrev/gdb_signals.h"
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
	if (gdb_history_pc(t, &pc))
		gdb_put_expedited(out, AMD64_RIP_REGNUM, pc);
	strbuf_puts(out, "thread:");
	gdb_format_thread_id(s, out, t->tid);
	strbuf_putc(out, ';');
	s->g_tid = t->tid;
	s->last.kind = STOP_SIGNAL;
	s->last.sig = hostsig;
	s->last.tid = t->tid;
}

/* The first recorded signal delivery to t in (from, to]: its position. */
static bool signal_between(struct gdb_server *s, struct gdb_hist_thread *t, uint64_t from,
			   uint64_t to, uint64_t *pos, int *sig)
{
	bool found = false;
	const struct trace_data *td = s->hist->td;
	for (size_t i = 0; i < td->nsignals; i++) {
		const struct trace_signal *g = &td->signals[i];
		if (g->tid != t->tid || g->pos <= from || g->pos > to)
			continue;
		if (!found || g->pos < *pos) {
			*pos = g->pos;
			*sig = g->signo;
			found = true;
		}
	}
	return found;
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
	bool holds = !rf || !gdb_replay_regfile(s, rf) || gdb_conditions_hold(s, pc, rf, past_mem);
	free(rf);
	return holds;
}

void gdb_reverse_packet(struct gdb_server *s, const char *pkt)
{
	/* bs/bc carry no thread: gdb names the one to move with Hc. */
	struct gdb_hist_thread *t = s->hist && s->c_tid > 0 ? gdb_history_thread(s->hist, s->c_tid) : NULL;
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
	if (t->pos == 0) {
		gdb_history_stop_reply(s, t, SIGTRAP, "replaylog:begin");
		return;
	}
	if (pkt[1] == 's') {
		t->pos--;
		gdb_history_stop_reply(s, t, SIGTRAP, NULL);
		return;
	}
	uint64_t *addrs;
	size_t n = breakpoint_addrs(s, &addrs);
	uint64_t found, from = t->pos, here = t->pos;
	int r;
	/* The latest earlier hit whose condition holds. */
	for (;;) {
		r = addrs && n ? history_prev_exec(t->h, from, addrs, n, &found) : 0;
		if (r != 1)
			break;
		t->pos = found;
		if (condition_holds(s, t))
			break;
		from = found;
	}
	t->pos = here;
	free(addrs);
	uint64_t wpos;
	size_t which;
	if (watch_search(s, t, true, &wpos, &which) == 1 && (r != 1 || wpos > found)) {
		t->pos = wpos;
		watch_stop_reply(s, t, which);
		return;
	}
	if (r == 1) {
		t->pos = found;
		gdb_history_stop_reply(s, t, SIGTRAP, "swbreak");
	} else {
		t->pos = 0;
		gdb_history_stop_reply(s, t, SIGTRAP, "replaylog:begin");
	}
}

/* The end of a saved recording, reached going forwards. */
static void end_of_history(struct gdb_server *s, struct gdb_hist_thread *t)
{
	t->pos = history_insn_count(t->h);
	/* A thread that ended in a syscall (exit) has no PC after it: stand on
	 * that last instruction, as the replay does at the start. */
	if (!t->end_ip_known && t->pos > 0)
		t->pos--;
	gdb_history_stop_reply(s, t, SIGTRAP, "replaylog:end");
}

bool gdb_replay_resume(struct gdb_server *s, bool step, pid_t tid)
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
	if (t->pos >= count && !s->hist->saved)
		return false; /* at the live end: run the program for real */
	if (t->pos >= count) {
		end_of_history(s, t);
		return true;
	}
	if (step) {
		uint64_t spos;
		int sig;
		t->pos++;
		if (signal_between(s, t, t->pos - 1, t->pos, &spos, &sig))
			gdb_history_stop_reply(s, t, sig, NULL);
		else if (t->pos == count && s->hist->saved)
			end_of_history(s, t);
		else
			gdb_history_stop_reply(s, t, SIGTRAP, NULL);
		return true;
	}
	uint64_t *addrs;
	size_t n = breakpoint_addrs(s, &addrs);
	uint64_t found = count, from = t->pos + 1, here = t->pos;
	int r;
	/* The next hit whose condition holds. */
	for (;;) {
		r = addrs && n ? history_next_exec(t->h, from, addrs, n, &found) : 0;
		if (r != 1)
			break;
		t->pos = found;
		if (condition_holds(s, t))
			break;
		from = found + 1;
	}
	t->pos = here;
	free(addrs);
	if (r != 1)
		found = count;
	uint64_t wpos;
	size_t which;
	bool watch = watch_search(s, t, false, &wpos, &which) == 1 && wpos <= found;
	uint64_t spos;
	int sig;
	if (signal_between(s, t, t->pos, watch ? wpos : found, &spos, &sig)) {
		t->pos = spos;
		gdb_history_stop_reply(s, t, sig, NULL);
	} else if (watch) {
		t->pos = wpos;
		watch_stop_reply(s, t, which);
	} else if (r == 1) {
		t->pos = found;
		gdb_history_stop_reply(s, t, SIGTRAP, "swbreak");
	} else if (s->hist->saved) {
		end_of_history(s, t);
	} else {
		/* Replayed up to the present: stop there, as gdb's record full
		 * does at the end of its log; the next command runs for real. */
		t->pos = count;
		gdb_history_stop_reply(s, t, SIGTRAP, "replaylog:end");
	}
	return true;
}

bool gdb_replay_in_past(struct gdb_server *s)
{
	struct gdb_hist_thread *t = gdb_replay_thread(s);
	return t && (s->hist->saved || gdb_history_in_past(t));
}
