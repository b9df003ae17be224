/* The state at the timeline's current position: every register and all
 * memory from the replayer (re-execution, created on first use) where it
 * can show them; otherwise what the history knows, the PC, and read-only
 * memory from the recording. Never the live values: they belong to the
 * present, not to this position. */
#include "timeline_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_hold.h"
#include "ptrev/ptrace_handover.h"
#include "ptrev/replayer.h"

bool tl_ensure_replayer(struct timeline *tl)
{
	char why[512];
	if (!tl->replayer && !tl->replayer_failed) {
		tl->replayer = replayer_new(tl->td, why, sizeof why);
		if (!tl->replayer) {
			tl->replayer_failed = true;
			snprintf(tl->state_why, sizeof tl->state_why, "%s", why);
			fprintf(stderr, "ptrev: no full state in the past (%s); "
				"showing the PC and read-only memory only\n", why);
			return false;
		}
		if (tl->saved && replayer_seal(tl->replayer) != 0) {
			replayer_free(tl->replayer);
			tl->replayer = NULL;
			tl->replayer_failed = true;
			snprintf(tl->state_why, sizeof tl->state_why, "out of memory");
			return false;
		}
		if (tl->events)
			replayer_set_events(tl->replayer, tl->events);
		if (tl->start_copy)
			replayer_give_start(tl->replayer, tl->start_copy);
		tl->start_copy = 0;
		replayer_give_checkpoints(tl->replayer, tl->given.cp_pos, tl->given.cp_pid,
					  tl->given.ncps);
		tl->given.ncps = 0;
		if (replayer_warning(tl->replayer))
			fprintf(stderr, "ptrev: %s\n", replayer_warning(tl->replayer));
	}
	if (tl->replayer && !tl->saved && replayer_sync(tl->replayer) != 0) {
		snprintf(tl->state_why, sizeof tl->state_why,
			 "the re-execution cannot follow the recording made so far");
		return false;
	}
	return tl->replayer != NULL;
}

void timeline_set_alive(struct timeline *tl, bool (*alive)(void *ctx), void *ctx)
{
	tl->alive = alive;
	tl->alive_ctx = ctx;
}

void timeline_set_events(struct timeline *tl, const struct trace_data *events)
{
	tl->events = events;
}

void timeline_give_start(struct timeline *tl, pid_t copy)
{
	ptrace_park_kill(tl->start_copy);
	tl->start_copy = copy;
}

void timeline_give_checkpoints(struct timeline *tl, struct materialise_copies *copies)
{
	materialise_copies_kill(&tl->given);
	tl->given.ncps = copies->ncps;
	memcpy(tl->given.cp_pos, copies->cp_pos, sizeof copies->cp_pos);
	memcpy(tl->given.cp_pid, copies->cp_pid, sizeof copies->cp_pid);
	copies->ncps = 0;
}

void tl_state_free(struct timeline *tl)
{
	event_hold_free(tl->hold);
	tl->hold = NULL;
	tl->hold_state = 0;
	replayer_free(tl->replayer);
	tl->replayer = NULL;
	tl->replayer_failed = false;
	tl->replay_state = 0;
}

/* Several threads of an event recording's history in one order: the state
 * where the program stands is the event replay held at the global
 * position (event_hold.h). */
bool tl_state_by_hold(const struct timeline *tl)
{
	return tl->events && tl->global && tl->nthreads > 1;
}

/* Is the held replay where the history says? Every thread the history
 * places at a known PC must stand there: a replay that went elsewhere
 * shows nothing rather than another position's state. */
static bool hold_agrees(struct timeline *tl, char *why, size_t len)
{
	for (size_t i = 0; i < tl->nthreads; i++) {
		struct tl_thread *t = &tl->threads[i];
		struct amd64_regfile rf;
		uint64_t pc;
		if (!tl_thread_exists(tl, t) || !tl_thread_in_past(t) || !tl_pc(tl, t, &pc))
			continue;
		if (event_hold_registers(tl->hold, t->tid, &rf) < 0 || rf.gpr.rip != pc) {
			snprintf(why, len, "the re-execution did not reach this position (thread %d "
				 "stands at %#llx, the history says %#llx)", (int)t->tid,
				 (unsigned long long)rf.gpr.rip, (unsigned long long)pc);
			return false;
		}
	}
	return true;
}

static bool full_state_held(struct timeline *tl)
{
	char why[512];
	if (tl->hold_state != 0 && tl->hold_gpos == tl->gpos)
		return tl->hold_state == 1;
	event_hold_free(tl->hold);
	tl->hold_gpos = tl->gpos;
	struct event_hold_anchor anchor;
	bool anchored = tl_hold_anchor(tl, tl->gpos, &anchor);
	tl->hold = event_hold_at(tl->events, tl->td, tl->gpos, anchored ? &anchor : NULL, why,
				 sizeof why);
	if (anchored && !(tl->hold && hold_agrees(tl, why, sizeof why))) {
		/* Through the anchor the replay met something on the way, or
		 * stands elsewhere than the history says: stepped there
		 * instead, as without one. */
		fprintf(stderr, "ptrev: global instruction %llu not reached natively (%s): "
			"stepping there\n", (unsigned long long)tl->gpos, why);
		event_hold_free(tl->hold);
		tl->hold = event_hold_at(tl->events, tl->td, tl->gpos, NULL, why, sizeof why);
	}
	if (tl->hold && hold_agrees(tl, why, sizeof why)) {
		tl->hold_state = 1;
		return true;
	}
	event_hold_free(tl->hold);
	tl->hold = NULL;
	tl->hold_state = -1;
	snprintf(tl->state_why, sizeof tl->state_why, "%s", why);
	fprintf(stderr, "ptrev: state at global instruction %llu unavailable: %s\n",
		(unsigned long long)tl->gpos, why);
	return false;
}

/* Bring the replayer to t's position. True when the full state there is
 * known; otherwise the reason was printed once and only the PC level is. */
static bool full_state(struct timeline *tl, struct tl_thread *t)
{
	char why[512];
	if (tl_state_by_hold(tl))
		return full_state_held(tl);
	if (tl->replay_state != 0 && tl->replay_tid == t->tid && tl->replay_pos == t->pos)
		return tl->replay_state == 1;
	if (!tl_ensure_replayer(tl)) {
		tl->replay_state = 0;
		return false;
	}
	tl->replay_tid = t->tid;
	tl->replay_pos = t->pos;
	if (replayer_seek(tl->replayer, t->tid, t->pos, why, sizeof why) == 0) {
		tl->replay_state = 1;
		return true;
	}
	tl->replay_state = -1;
	snprintf(tl->state_why, sizeof tl->state_why, "%s", why);
	fprintf(stderr, "ptrev: state at instruction %llu unavailable: %s\n",
		(unsigned long long)t->pos, why);
	return false;
}

const char *timeline_state_why(struct timeline *tl, pid_t tid)
{
	if (full_state(tl, tl_thread_or_first(tl, tid)))
		return NULL;
	return tl->state_why[0] ? tl->state_why : "not known";
}

enum timeline_state timeline_registers(struct timeline *tl, pid_t tid, struct amd64_regfile *rf)
{
	struct tl_thread *t = tl_thread_or_first(tl, tid);
	memset(rf, 0, sizeof *rf);
	bool full = full_state(tl, t);
	if (full && tl->hold) {
		int got = event_hold_registers(tl->hold, t->tid, rf);
		if (got >= 0)
			return got ? TIMELINE_STATE_BEFORE_SYSCALL : TIMELINE_STATE_FULL;
		memset(rf, 0, sizeof *rf);
	} else if (full) {
		size_t n = sizeof rf->xsave;
		if (replayer_get_regs(tl->replayer, &rf->gpr) == 0 &&
		    replayer_get_xstate(tl->replayer, rf->xsave, &n) == 0) {
			rf->xsave_len = n;
			rf->xcr0 = amd64_xcr0_from_xsave(rf->xsave, n);
			return TIMELINE_STATE_FULL;
		}
		memset(rf, 0, sizeof *rf);
	}
	uint64_t pc;
	if (!tl_pc(tl, t, &pc))
		return TIMELINE_STATE_NONE;
	rf->gpr.rip = pc;
	return TIMELINE_STATE_PC;
}

bool timeline_pc(struct timeline *tl, pid_t tid, uint64_t *pc)
{
	return tl_pc(tl, tl_thread_or_first(tl, tid), pc);
}

ssize_t timeline_read_memory(struct timeline *tl, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct tl_thread *t = tl_thread_or_first(tl, tid);
	if (full_state(tl, t))
		return tl->hold ? event_hold_read(tl->hold, addr, buf, len)
				: replayer_read_mem(tl->replayer, addr, buf, len);
	size_t got = code_memory_read(tl->mem, addr, buf, len);
	return got ? (ssize_t)got : -1;
}

int timeline_siginfo(struct timeline *tl, pid_t tid, struct strbuf *out)
{
	struct tl_thread *t = tl_thread_or_first(tl, tid);
	const struct trace_data *td = tl->td;
	/* At the end: past the last instruction, or on it when the thread
	 * ended inside that syscall (no PC after it: the replay stands there). */
	bool at_end = !tl_thread_in_past(t) || (!t->end_ip_known && t->pos + 1 == tl_count(t));
	for (size_t i = td->nsignals; i-- > 0;) {
		const struct trace_signal *g = &td->signals[i];
		if (g->tid != t->tid)
			continue;
		if (g->pos == t->pos || (at_end && g->handler_ip == 0)) {
			strbuf_append(out, g->siginfo, sizeof g->siginfo);
			return 0;
		}
	}
	return -EINVAL;
}

int timeline_end_signal(const struct timeline *tl)
{
	const struct trace_data *td = tl->td;
	if (td->complete && td->end.status_kind == 1)
		return td->end.status;
	return SIGTRAP;
}

void timeline_checkpoints(struct timeline *tl, struct strbuf *out)
{
	if (!tl->replayer) {
		strbuf_puts(out, "No checkpoints: no full-state replay has run yet.\n");
		return;
	}
	strbuf_puts(out, "Checkpoints (instruction position, process):\n");
	replayer_checkpoints(tl->replayer, out);
}
