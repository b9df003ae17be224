/* Event replay: a stopped thread's place described as a STATE record, as
 * the recorder describes a thread it stopped (state_digest.h), so that
 * every replay finds it again (event_replay.h, erp_describe). Used where a
 * point is taken inside a stretch (event_split.c) and where a search
 * passes the hit before the one it stops at (event_proc.c). */
#include "event_replay.h"

#include "ptrev/state_digest.h"
#include "ptrev/state_record.h"

int erp_describe(struct erp *e, struct erp_thread *t, const struct user_regs_struct *regs,
		 uint64_t pos, uint64_t ran_ns, struct trace_state *out,
		 uint8_t sp[STATE_RECORD_SP_LEN])
{
	struct state_digest d;
	char why[256];
	if (state_digest_take(e->pid, t->tid, e->memfd, regs, NULL, &d, why, sizeof why) < 0)
		return erp_fail(e, "thread %d: cannot describe where it stands: %s",
				(int)t->rec_tid, why);
	state_record_fill(out, t->rec_tid, pos, regs, &d, ran_ns);
	state_record_stack(out, e->memfd, sp);
	return 1;
}
