/* Event recorder: what one waitpid status of a thread means. A syscall
 * stop (entry or return), a ptrace event (a new thread, execve), a signal
 * (ours: a SIGSTOP for a STATE point, or one we sent again to deliver it
 * where the log says; the step into a handler; rdtsc's SIGSEGV; the
 * program's own), or the thread's end. */
#include "event_rec.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "ptrev/inferior_raw.h"
#include "ptrev/ptrace_wait.h"

static bool ours(const struct ev_rec *r, const siginfo_t *si)
{
	return si->si_code == SI_TKILL && si->si_pid == r->self;
}

/* A thread is gone. A thread that was in a syscall ran it (exit, or
 * blocked when another thread ended the process); its history ends at its
 * last event either way. */
static int gone(struct ev_rec *r, pid_t tid, int st)
{
	struct ev_thread *t = ev_thread_find(r, tid);
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (t) {
		struct trace_thread th = {.tid = tid, .pos = t->events, .exited = true,
					  .exit_code = code};
		/* Its last run ends with its last event: a fatal signal, or
		 * whatever it did before the program ended around it. */
		if (r->cpu == t && t->events > t->run_first && ev_run_end(t, t->events - 1) < 0)
			return -1;
		if (r->cpu == t)
			r->cpu = NULL;
		t->state = EV_T_GONE;
		if (trace_write_thread(r->w, &th) < 0)
			return ev_fail(r, "writing a THREAD record: %s", trace_writer_error(r->w));
	}
	if (tid == r->pid) {
		/* The leader reports last: the whole process is gone. */
		r->proc_gone = true;
		r->end.status_kind = WIFEXITED(st) ? 0 : 1;
		r->end.status = WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st);
		if (r->live.on) {
			struct stop_event ev = {.kind = WIFEXITED(st) ? STOP_EXITED : STOP_KILLED,
						.tid = tid, .sig = WIFEXITED(st) ? 0 : WTERMSIG(st),
						.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 0};
			r->live.report = ev;
			r->live.have_report = true;
			inf_mark_gone(r->inf);
		}
		return 0;
	}
	if (r->live.on)
		inf_remove_thread(r->inf, tid);
	return ev_dispatch(r);
}

/* PTRACE_EVENT_CLONE: the parent's clone made a thread, which starts
 * after the clone instruction; its first stop may have come already. It
 * waits for the CPU like any other. The parent goes on in its syscall. */
static int cloned(struct ev_thread *t)
{
	struct ev_rec *r = t->rec;
	unsigned long msg = 0;
	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg);
	struct ev_thread *nt = ev_thread_add(r, (pid_t)msg);
	if (!nt || (r->live.on && !inf_add_thread(r->inf, nt->tid)))
		return ev_fail(r, "out of memory");
	/* gdb resumed the whole program: the new thread is part of it. */
	nt->gdb_go = r->live.on && t->gdb_go;
	struct trace_thread th = {.tid = nt->tid, .parent = t->tid, .pos = t->events};
	if (trace_write_thread(r->w, &th) < 0)
		return ev_fail(r, "writing a THREAD record: %s", trace_writer_error(r->w));
	if (ev_early_take(r, nt->tid)) {
		nt->started = true;
		nt->state = EV_T_READY;
		nt->check_pending = true;
	}
	if (ev_resume(t, 0) < 0)
		return -1;
	return ev_dispatch(r);
}

/* A new thread's first stop (the SIGSTOP of PTRACE_O_TRACECLONE). */
static int first_stop(struct ev_thread *t)
{
	/* The kernel does not copy the debug registers gdb armed. */
	if (t->rec->live.on)
		inf_dr_apply_thread(t->rec->inf, t->tid);
	t->started = true;
	t->state = EV_T_READY;
	t->check_pending = true;
	return ev_dispatch(t->rec);
}

static int stopped(struct ev_rec *r, pid_t tid, int st)
{
	struct ev_thread *t = ev_thread_find(r, tid);
	int sig = WSTOPSIG(st);
	if (!t)
		/* A new thread reporting before its creator's clone event. */
		return ev_early_add(r, tid);
	if (st >> 16 == PTRACE_EVENT_CLONE)
		return cloned(t);
	if (st >> 16 == PTRACE_EVENT_FORK || st >> 16 == PTRACE_EVENT_VFORK) {
		/* A child process: not recorded, but traced from its start so
		 * that it gets rdtsc back before it runs (it inherited the
		 * trap); its first stop may have been taken for a thread's. */
		unsigned long child = 0;
		bool vfork = st >> 16 == PTRACE_EVENT_VFORK;
		int held = 0;
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &child) == 0 && child > 0)
			held = ev_live_fork(t, (pid_t)child, vfork, ev_early_take(r, (pid_t)child));
		if (held)
			return held < 0 ? -1 : 0;
	}
	if (st >> 16 == PTRACE_EVENT_VFORK_DONE) {
		int held = ev_live_vfork_done(t);
		if (held)
			return held < 0 ? -1 : 0;
	}
	if (st >> 16 == PTRACE_EVENT_EXEC)
		return ev_exec_event(r, tid);
	if (st >> 16)
		return ev_resume(t, 0); /* fork: the syscall's return comes next */
	if (!t->started)
		return first_stop(t);
	struct user_regs_struct now;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &now) < 0)
		return errno == ESRCH ? 0 : ev_fail(r, "thread %d: registers: %s", (int)tid,
						    strerror(errno));
	if (sig == (SIGTRAP | 0x80))
		return ev_syscall_stop(t, &now);
	if (t->delivering)
		return ev_delivered_stop(t, &now);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) < 0)
		return ev_resume(t, 0); /* a group-stop: go on */
	int live = ev_entry_stop(t, sig, &si, &now);
	if (live)
		return live < 0 ? -1 : 0;
	live = ev_live_stop(t, sig, &si, &now);
	if (live)
		return live < 0 ? -1 : 0;
	if (sig == SIGSTOP && t->stop_expected > 0 && ours(r, &si)) {
		t->stop_expected--;
		return ev_state_stop(t, &now);
	}
	if (t->own_sig && sig == t->own_sig && ours(r, &si))
		return ev_own_signal_stop(t);
	if (sig == SIGSEGV && si.si_code == SI_KERNEL) {
		int rc = ev_rdtsc(t, &now);
		if (rc != 0)
			return rc < 0 ? -1 : 0;
	}
	live = ev_live_signal(t, sig, &si);
	if (live)
		return live < 0 ? -1 : 0;
	return ev_signal_stop(t, sig, &si, &now);
}

int ev_on_status(struct ev_rec *r, pid_t tid, int st)
{
	struct ev_thread *t = ev_thread_find(r, tid);
	if (t)
		t->running = false;
	if (WIFEXITED(st) || WIFSIGNALED(st))
		return gone(r, tid, st);
	if (WIFSTOPPED(st))
		return stopped(r, tid, st);
	return 0;
}

int ev_exited_leader(struct ev_rec *r)
{
	struct ev_thread *t = r->cpu;
	if (!t || !t->exiting || t->tid != r->pid || !ptrace_task_dead(r->pid, t->tid))
		return 0;
	r->cpu = NULL;
	t->exiting = false;
	return ev_dispatch(r);
}
