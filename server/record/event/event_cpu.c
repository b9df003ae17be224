/* Event recorder: the CPU. One thread runs its own code at a time: a
 * thread is resumed to its next stop (held instead while gdb holds the
 * program: event_live.c decides), and a free CPU goes to the next ready
 * thread, round robin. */
#include "event_rec.h"

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>

int ev_resume(struct ev_thread *t, int sig)
{
	int req, held = ev_live_resume(t, sig, &req);
	if (held)
		return held < 0 ? -1 : 0;
	if (ptrace(req, t->tid, NULL, (void *)(long)sig) < 0 && errno != ESRCH)
		return ev_fail(t->rec, "cannot resume thread %d: %s", (int)t->tid, strerror(errno));
	t->running = true;
	return 0;
}

int ev_dispatch(struct ev_rec *r)
{
	/* Held for gdb: the CPU is given when gdb resumes the program, to a
	 * thread it resumed. */
	if (r->cpu || !r->nthreads || r->live.halted)
		return 0;
	for (size_t k = 0; k < r->nthreads; k++) {
		size_t i = (r->rr + k) % r->nthreads;
		struct ev_thread *t = r->threads[i];
		if (t->state != EV_T_READY || (r->live.on && !t->gdb_go))
			continue;
		r->rr = i + 1;
		r->cpu = t;
		t->state = EV_T_RUNNING;
		t->sys_unseen = false;
		t->run_first = t->events;
		t->run_since = ev_now_ns();
		/* A thread that starts, or goes on from a STATE point: a signal
		 * that waits for it now is taken before it runs a single
		 * instruction, at its previous event. (After a syscall's
		 * return that was decided there.) */
		if (t->check_pending) {
			t->at_return = ev_signal_pending(t);
			t->check_pending = false;
		}
		return ev_resume(t, 0);
	}
	return 0;
}
