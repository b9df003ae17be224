/* Event recorder: syscalls. At an entry the thread gives up the CPU (the
 * syscall may block; its run ends there) unless a signal waits for it:
 * then the entry is undone (the PC back on the syscall instruction, rax its
 * number) and the signal delivered before it; the syscall runs again when
 * the handler returns. At the return the result and the memory it wrote
 * are logged (one SYSCALL record: entry and return are one event), the
 * mappings refreshed after a syscall that changes them, and the thread
 * waits for the CPU again. A syscall that changes the address space keeps
 * the CPU to its return (syscall_keeps_cpu: a replay completes it as soon
 * as the run ends at it, so the order of such calls is the recorded one;
 * pigz's threads making their malloc arenas diverged before). */
#include "event_rec.h"

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "ptrev/inferior_raw.h"
#include "ptrev/record_events.h"
#include "ptrev/sideband.h"
#include "ptrev/syscall_table.h"

static int log_syscall(struct ev_thread *t, int64_t result)
{
	struct ev_rec *r = t->rec;
	int rc = record_syscall(r->w, t->tid, t->events, t->entry_nr, &t->entry, result,
				ev_read_mem, r, t->watch, r->cpu == t && !t->exiting);
	mem_diff_free(t->watch);
	t->watch = NULL;
	if (rc < 0)
		return ev_fail(r, "writing a SYSCALL record: %s", trace_writer_error(r->w));
	r->end.syscalls++;
	ev_event_done(t);
	return 0;
}

static size_t live_threads(const struct ev_rec *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nthreads; i++)
		n += r->threads[i]->state != EV_T_GONE;
	return n;
}

static int entry(struct ev_thread *t, struct user_regs_struct *now)
{
	struct ev_rec *r = t->rec;
	t->wants_state = false; /* a syscall marks the place well enough */
	if (t->nheld) {
		/* Undone: the signal is delivered before the syscall. */
		if (ev_undo_entry(t, now) < 0)
			return -1;
		if (ev_send_held(t, TRACE_SIG_BEFORE_SYSCALL) < 0)
			return -1;
		return ev_resume(t, 0);
	}
	int held = ev_live_exit_entry(t, now);
	if (held)
		return held < 0 ? -1 : 0;
	t->entry = *now;
	t->entry_nr = now->orig_rax;
	mem_diff_free(t->watch);
	t->watch = record_syscall_watch(r->pid, t->entry_nr, now, true, ev_read_mem, r);
	if (t->entry_nr == SYS_execve || t->entry_nr == SYS_execveat)
		ev_exec_entry(t, now);
	if (t->entry_nr == SYS_rseq) {
		/* Refused, as rr does: the kernel would write the CPU number
		 * into the program's memory whenever the thread runs. */
		now->orig_rax = (unsigned long long)-1;
		now->rax = (unsigned long long)-ENOSYS;
		if (ptrace(PTRACE_SETREGS, t->tid, NULL, now) < 0)
			return ev_fail(r, "thread %d: cannot refuse rseq: %s", (int)t->tid,
				       strerror(errno));
	}
	if (ev_run_end(t, t->events) < 0)
		return -1;
	t->state = EV_T_SYSCALL;
	if (t->entry_nr == SYS_exit || t->entry_nr == SYS_exit_group) {
		/* No return comes: the record is made now. */
		if (log_syscall(t, 0) < 0)
			return -1;
	}
	if (t->entry_nr == SYS_exit) {
		/* The thread keeps the CPU until it is gone: its exit clears
		 * its tid word (CLONE_CHILD_CLEARTID) and wakes a joining
		 * thread, which must not look at that word mid-way (a replay
		 * does the whole exit at once). */
		r->cpu = t;
		t->exiting = true;
		t->run_first = t->events; /* its run ended at the exit */
		return ev_resume(t, 0);
	}
	/* A call the table cannot describe keeps the CPU too, where other
	 * threads live, so that what changed in memory by its return is its
	 * own doing (record_syscall_watch); for at most a time slice while
	 * another thread waits (it may block: ev_state_check gives the CPU
	 * away then, and the call stays unknown). */
	if (syscall_keeps_cpu(t->entry_nr) || (t->watch && live_threads(r) > 1)) {
		r->cpu = t;
		t->run_first = t->events + 1; /* its run ended at the entry */
		t->run_since = ev_now_ns();
		return ev_resume(t, 0);
	}
	t->sys_unseen = true;
	if (ev_resume(t, 0) < 0)
		return -1;
	return ev_dispatch(r);
}

/* A result the kernel turns into a restart of the call when no handler
 * runs (ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND,
 * ERESTART_RESTARTBLOCK). */
static bool restartable(int64_t result)
{
	return result == -512 || result == -513 || result == -514 || result == -516;
}

static int ret(struct ev_thread *t, struct user_regs_struct *now)
{
	struct ev_rec *r = t->rec;
	if (t->undone_entry) {
		/* The skipped entry's return: not a syscall of the program's.
		 * Our signal stops the thread next, before the instruction (or
		 * it stops for gdb before its exit). */
		t->undone_entry = false;
		if (t->exit_hold)
			return ev_live_exit_stop(t);
		return ev_resume(t, 0);
	}
	int64_t result = (int64_t)now->rax;
	uint64_t nr = t->entry_nr;
	if (r->live.on && r->inf->vfork_lifted)
		inf_vfork_done(r->inf); /* the vfork child has exec'd or exited */
	if (restartable(result) && ev_only_our_stop_pending(t)) {
		/* Our SIGSTOP (a STATE point's, or gdb's program held)
		 * interrupted a blocking call: once the stop is discarded the
		 * kernel starts it again (its entry comes again, the same
		 * call, or restart_syscall). One call for the log, logged
		 * where it returns for real: a replay that returned this
		 * value would hand it to the program, since no signal is
		 * delivered there to restart it. */
		t->restarting = true;
		return ev_resume(t, 0);
	}
	if (t->entry_nr == SYS_rseq)
		result = -ENOSYS;
	if ((nr == SYS_execve || nr == SYS_execveat) && result == 0)
		return ev_exec_restart(t);
	if (log_syscall(t, result) < 0)
		return -1;
	if (syscall_changes_maps(nr) && sideband_update(r->sb, t->tid, t->events) < 0)
		return ev_fail(r, "cannot read the mappings of %d after syscall %llu", (int)r->pid,
			       (unsigned long long)nr);
	/* A signal that interrupted the syscall, that the thread sent
	 * itself, or that the syscall unblocked, is taken at this return. */
	t->at_return = ev_signal_pending(t);
	t->state = EV_T_READY;
	if (r->cpu == t)
		r->cpu = NULL; /* it kept the CPU through the syscall */
	if (ev_live_forked(t) < 0)
		return -1;
	return ev_dispatch(r);
}

int ev_syscall_stop(struct ev_thread *t, struct user_regs_struct *now)
{
	if (t->restarting) {
		/* The interrupted call's entry again: it goes on as one. */
		t->restarting = false;
		return ev_resume(t, 0);
	}
	/* A thread in a syscall (or one whose entry was undone) stops next at
	 * the return; any other at an entry. */
	if (t->state == EV_T_SYSCALL || t->undone_entry)
		return ret(t, now);
	return entry(t, now);
}
