/* Event recorder: STATE points. A thread that runs its own code without a
 * syscall past a bound, while a signal waits for it (signal_us) or another
 * thread waits for the CPU (slice_us), is stopped where it is (a SIGSTOP
 * of ours); its state there goes into the log (event_point.c) and then the
 * waiting signal is delivered, or the CPU passes on. A replay finds the
 * point again by that state (state_digest.h). A thread that enters a
 * syscall meanwhile needs no such point: the syscall serves, and our
 * SIGSTOP, when it comes, is only discarded. */
#include "event_rec.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* When the running thread reaches its bound: the earlier of the two that
 * apply (0 when nothing applies). */
static uint64_t deadline(const struct ev_rec *r)
{
	const struct ev_thread *t = r->cpu;
	uint64_t d = 0;
	/* In a call the table cannot describe, keeping the CPU (it may
	 * block): as long as a time slice. */
	if (t && t->state == EV_T_SYSCALL && t->watch && !t->exiting)
		return ev_any_ready(r) ? t->run_since + r->slice_ns : 0;
	if (!t || t->state != EV_T_RUNNING || t->stop_expected)
		return 0;
	if (t->nheld)
		d = t->held_since + r->signal_ns;
	if (ev_any_ready(r) && (!d || t->run_since + r->slice_ns < d))
		d = t->run_since + r->slice_ns;
	return d;
}

int64_t ev_state_next_ns(const struct ev_rec *r)
{
	/* A leader exiting before its threads: look again soon. */
	if (r->cpu && r->cpu->exiting)
		return 1000000;
	uint64_t d = deadline(r), now = ev_now_ns();
	if (!d)
		return -1;
	return d > now ? (int64_t)(d - now) : 0;
}

int ev_state_check(struct ev_rec *r)
{
	uint64_t d = deadline(r);
	struct ev_thread *t = r->cpu;
	if (!d || ev_now_ns() < d)
		return 0;
	if (t->state == EV_T_SYSCALL) {
		/* The unknown call blocks: the others run, and what it wrote
		 * cannot be told from what they write; it stays unknown. */
		mem_diff_free(t->watch);
		t->watch = NULL;
		t->sys_unseen = true;
		r->cpu = NULL;
		return ev_dispatch(r);
	}
	t->wants_state = true;
	t->stop_expected++;
	if (syscall(SYS_tgkill, r->pid, t->tid, SIGSTOP) < 0 && errno != ESRCH)
		return ev_fail(r, "cannot stop thread %d: %s", (int)t->tid, strerror(errno));
	return 0;
}

int ev_state_stop(struct ev_thread *t, struct user_regs_struct *now)
{
	struct ev_rec *r = t->rec;
	bool wanted = t->wants_state && r->cpu == t && t->state == EV_T_RUNNING;
	t->wants_state = false;
	if (!wanted)
		return ev_resume(t, 0); /* a syscall came first: nothing to mark */
	if (ev_point_write(t, now) < 0)
		return -1;
	if (t->nheld) {
		/* The signal that waited: delivered right here, after the
		 * point. Its stop (ours) comes as the thread goes on. */
		if (ev_send_held(t, TRACE_SIG_AFTER_EVENT) < 0)
			return -1;
		return ev_resume(t, 0);
	}
	if (ev_any_ready(r)) {
		/* Its turn is over: the point ends its run. */
		if (ev_run_end(t, t->events - 1) < 0)
			return -1;
		t->state = EV_T_READY;
		t->check_pending = true;
		return ev_dispatch(r);
	}
	return ev_resume(t, 0);
}
