/* Event recorder: a STATE record of where a thread stands right now, by
 * its registers and the digests of state_digest.h: the place a replay
 * finds again as the first time after the thread's previous event that it
 * stands there in that state. */
#include "event_rec.h"

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>

#include "ptrev/state_record.h"

int ev_point_write(struct ev_thread *t, const struct user_regs_struct *now)
{
	struct ev_rec *r = t->rec;
	struct state_digest d;
	char why[256];
	if (state_digest_take(r->pid, t->tid, r->memfd, now, &d, why, sizeof why) < 0)
		return ev_fail(r, "thread %d: cannot describe where it stands: %s", (int)t->tid, why);
	struct trace_state st;
	/* Since its previous event: the replay's bound on looking for it. */
	state_record_fill(&st, t->tid, t->events, now, &d, ev_now_ns() - t->event_ns + 1);
	if (trace_write_state(r->w, &st) < 0)
		return ev_fail(r, "writing a STATE record: %s", trace_writer_error(r->w));
	ev_event_done(t);
	return 0;
}
