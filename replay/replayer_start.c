/* The replayer's start: the recorded program launched again as it was
 * (replay/relaunch.h), stopped at its first instruction, which must be
 * where the history starts. */
#include "replayer_internal.h"

#include "event_replay.h"
#include "ptrev/materialise.h"
#include "relaunch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

int rp_start_state(struct replayer *r)
{
	return relaunch_read(&r->start, r->td, r->why, sizeof r->why);
}

/* The tail's parked copy of where it begins as the base (made by the
 * replay that stepped the tail, in another thread: ptrace_handover.h).
 * 0, or -1 after saying why on stderr (the caller replays to there). */
static int adopt(struct replayer *r, pid_t copy)
{
	char err[256];
	if (relaunch_adopt(&r->start, copy, &r->base.memfd, err, sizeof err) < 0) {
		fprintf(stderr, "ptrev: replaying up to where the tail begins again (%s)\n", err);
		return -1;
	}
	r->base.pid = copy;
	return 0;
}

/* The checkpoints given (replayer_give_checkpoints), adopted: each must
 * stand at its position's instruction in the history. */
static void adopt_given(struct replayer *r)
{
	for (size_t i = 0; i < r->ngiven; i++) {
		char err[256];
		struct rp_proc p = {.pid = r->given_pid[i], .memfd = -1, .pos = r->given_pos[i]};
		struct user_regs_struct regs;
		uint64_t ip;
		if (relaunch_adopt(&r->start, p.pid, &p.memfd, err, sizeof err) < 0)
			continue; /* killed: the replayer runs from further back */
		if (ptrace(PTRACE_GETREGS, p.pid, NULL, &regs) < 0 ||
		    history_ip_at(r->h, p.pos, &ip) < 0 || ip != regs.rip) {
			rp_kill(&p);
			continue;
		}
		rp_checkpoint_add(r, &p);
		r->stats.given++;
	}
	r->ngiven = 0;
}

int rp_launch_base(struct replayer *r)
{
	if (!r->start.path && rp_start_state(r) < 0)
		return -1;
	pid_t copy = r->start_copy;
	r->start_copy = 0;
	if (copy && r->tail_from && adopt(r, copy) == 0) {
		r->stats.adopted++;
		r->base_how = "copied where the tail's history was made";
	} else if (r->tail_from || r->tail_run) {
		/* A tail's start: the event recording replayed natively to
		 * where its history begins (after an event, or at the point
		 * the history holds inside the stretch after it), held
		 * there. */
		struct erp e;
		if (!r->events)
			return rp_fail(r, "this history begins after the program's start and its "
				       "event recording is not at hand");
		int rc = r->tail_run ? erp_replay_until_run(&e, r->events, r->tail_run)
				     : erp_replay_until(&e, r->events, r->tail_from,
							materialise_tail_point(r->td));
		if (rc == 0) {
			erp_release(&e, &r->base.pid, &r->base.memfd);
			r->base_how = "the recording replayed natively to where this history "
				      "begins";
		} else {
			rp_fail(r, "replaying up to where this history begins: %s", e.why);
		}
		erp_free(&e);
		if (rc < 0)
			return -1;
	} else if (relaunch_start(&r->start, r->vdso_hidden, &r->base.pid, &r->base.memfd, r->why,
				  sizeof r->why) < 0) {
		return -1;
	} else {
		r->base_how = "the program launched again";
	}
	r->base.pos = 0;
	r->stats.launches++;
	struct user_regs_struct regs;
	uint64_t ip0;
	if (ptrace(PTRACE_GETREGS, r->base.pid, NULL, &regs) < 0)
		return rp_fail(r, "replay process: %s", strerror(errno));
	if (history_insn_count(r->h) && history_ip_at(r->h, 0, &ip0) == 0 &&
	    ip0 != regs.rip)
		return rp_fail(r, "the program starts at %#llx, the recording at %#llx "
			       "(a different binary?)", (unsigned long long)regs.rip,
			       (unsigned long long)ip0);
	if (!r->tail_from && !r->tail_run)
		adopt_given(r);
	return rp_gdb_writes_at(r, &r->base, 0);
}
