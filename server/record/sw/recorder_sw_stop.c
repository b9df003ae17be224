/* sw backend: what one waitpid status of a thread means. Every thread is
 * single-stepped on its own: the engine (sw_engine.c) waits for whichever
 * thread reports next and hands the status here. A step's trap completes
 * the instruction and steps again (recorder_sw_step.c); a signal goes to
 * recorder_sw_signal.c; a clone event makes a new thread, traced from its
 * first instruction; an exit ends a thread's stream, the leader's the
 * process. A thread blocked in a syscall simply has not reported yet, so
 * no thread ever waits for another. Per step: one waitpid, one
 * PTRACE_GETREGS, one PTRACE_SINGLESTEP (classification is cached). The
 * stop that ends a native run of a block goes to recorder_sw_block.c. */
#include "recorder_sw.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "ptrev/inferior_raw.h"

/* A thread is gone (st from waitpid). A thread that was in a syscall ran
 * it (exit, exit_group, or blocked when another thread ended the process);
 * anything else was cut off before its next instruction. One killed in a
 * native run (SIGKILL, another thread's exit_group) ends where its block
 * began: how far it got died with it. */
static int thread_gone(struct sw_thread *t, int st)
{
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);

	if (t->in_block) {
		struct user_regs_struct none = {0};
		bstep_stopped(t->rec->bstep, t->tid, st, &none);
		t->in_block = false;
	}
	if (t->rec->bstep)
		bstep_forget(t->rec->bstep, t->tid);
	t->inflight = false;
	t->ready = false;
	sw_sched_release(t);
	if (!t->started)
		return sw_thread_finish(t, 0, code);
	if (t->delivering && WIFSIGNALED(st)) {
		if (sw_signal_fatal(t) < 0)
			return -1;
		return sw_thread_finish(t, t->regs.rip, code);
	}
	if (t->info.kind == INSN_SYSCALL) {
		if (ptenc_step(t->enc, t->regs.rip, &t->info, 0) == 1) {
			if (sw_is_exit_syscall(t) && sw_log_syscall(t, 0) < 0)
				return -1;
			t->insns++;
			if (sw_sched_note(t, t->insns - 1) < 0)
				return -1;
		}
		return sw_thread_finish(t, 0, code);
	}
	return sw_thread_finish(t, t->regs.rip, code);
}

static void early_add(struct sw_rec *r, pid_t tid)
{
	if (r->nearly == r->capearly) {
		size_t cap = r->capearly ? r->capearly * 2 : 8;
		pid_t *n = realloc(r->early, cap * sizeof *n);
		if (!n)
			return;
		r->early = n;
		r->capearly = cap;
	}
	r->early[r->nearly++] = tid;
}

static bool early_take(struct sw_rec *r, pid_t tid)
{
	for (size_t i = 0; i < r->nearly; i++) {
		if (r->early[i] == tid) {
			r->early[i] = r->early[--r->nearly];
			return true;
		}
	}
	return false;
}

/* A new thread's first stop: its trace starts at its first instruction. */
static int start_new_thread(struct sw_thread *t)
{
	t->inflight = false;
	if (sw_thread_start(t) < 0)
		return -1;
	if (t->rec->inf->dr7) /* the kernel does not copy debug registers */
		inf_dr_apply_thread(t->rec->inf, t->tid);
	return sw_advance(t);
}

/* PTRACE_EVENT_CLONE: the parent's clone made thread ntid, which starts
 * after the clone instruction; its first stop (SIGSTOP) may have come
 * already. It runs when its creator was running. The parent goes on with
 * its step (it is inside the syscall, not at an instruction boundary). */
static int on_clone(struct sw_thread *t)
{
	struct sw_rec *r = t->rec;
	unsigned long msg = 0;
	struct trace_thread th = {0};
	struct sw_thread *nt;

	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg);
	nt = sw_thread_add(r, (pid_t)msg);
	if (!nt || !inf_add_thread(r->inf, (pid_t)msg)) {
		snprintf(r->err, r->errlen, "out of memory");
		return -1;
	}
	nt->resumed = t->resumed;
	nt->inflight = true; /* until its first stop */
	th.tid = nt->tid;
	th.parent = t->tid;
	th.pos = t->insns;
	if (trace_write_thread(r->w, &th) < 0)
		return -1;
	if (early_take(r, nt->tid) && start_new_thread(nt) < 0)
		return -1;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) < 0 && errno != ESRCH)
		return -1;
	t->inflight = true;
	return 0;
}

/* A step ended with SIGTRAP: the instruction ran, unless a hardware
 * execution breakpoint faulted before it. */
static int on_step_trap(struct sw_thread *t, struct user_regs_struct *now)
{
	struct inferior *inf = t->rec->inf;
	uint64_t dr6 = 0;

	if (inf->dr7) {
		dr6 = inf_dr_read_dr6(t->tid);
		if (dr6)
			inf_dr_clear_dr6(t->tid);
		dr6 &= 0xf;
	}
	for (int i = 0; i < 4 && dr6; i++) {
		if (!(dr6 & (1u << i)) || !inf->hw[i].used)
			continue;
		if (inf->hw[i].type == 1 && now->rip == t->regs.rip)
			/* Faulted before executing (the kernel set RF for
			 * the retry): nothing ran. */
			return sw_resume(t, now, false);
	}
	if (sw_complete_step(t, now) < 0)
		return -1;
	for (int i = 0; i < 4 && dr6; i++) {
		if (!(dr6 & (1u << i)) || !inf->hw[i].used || inf->hw[i].type == 1)
			continue;
		sw_set_pending(t, STOP_WATCH, SIGTRAP);
		t->pending.watch_addr = inf->hw[i].req_addr;
		t->pending.watch_type = inf->hw[i].type;
		break;
	}
	return sw_resume(t, now, true);
}

/* A vfork's event, reported where it stops the parent: inside the step
 * over its syscall, which goes on when gdb resumes the thread
 * (sw_engine_resume). */
static int mid_step_stop(struct sw_thread *t, enum stop_kind kind, pid_t child)
{
	sw_set_pending(t, kind, SIGTRAP);
	t->pending.child = child;
	t->mid_step = true;
	return 0;
}

static int on_stop(struct sw_rec *r, pid_t tid, int st)
{
	struct sw_thread *t = sw_thread_find(r, tid);
	struct user_regs_struct now;
	int sig = WSTOPSIG(st);

	if (!t) {
		/* A new thread reporting before its creator's clone event. */
		early_add(r, tid);
		return 0;
	}
	t->inflight = false;
	if (t->in_block)
		return sw_block_stop(t, st);
	if (st >> 16 == PTRACE_EVENT_CLONE)
		return on_clone(t);
	if (st >> 16 == PTRACE_EVENT_FORK || st >> 16 == PTRACE_EVENT_VFORK) {
		/* A child process: not recorded; it gets gdb's breakpoints
		 * out of its memory and goes (its first stop may have been
		 * taken for a new thread's), or, where gdb asked for forks,
		 * waits for gdb to let it go: the fork is reported once the
		 * parent's step over it is done (at_boundary). The parent goes
		 * on with its step. */
		unsigned long child = 0;
		bool vfork = st >> 16 == PTRACE_EVENT_VFORK;
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &child) == 0 && child > 0) {
			bool seen = early_take(r, (pid_t)child);
			if (vfork && r->inf->report_vforks) {
				/* The parent's vfork returns only once the child
				 * execs or exits: reported here, inside its step,
				 * as the live target reports it. */
				inf_fork_child_hold(r->inf, (pid_t)child, true, seen, true);
				if (r->inf->fork_child == (pid_t)child)
					return mid_step_stop(t, STOP_VFORK, (pid_t)child);
			} else if (!vfork && r->inf->report_forks) {
				inf_fork_child_hold(r->inf, (pid_t)child, false, seen, true);
				if (r->inf->fork_child == (pid_t)child)
					t->fork_child = (pid_t)child;
			} else {
				inf_fork_child_release(r->inf, (pid_t)child, vfork, seen, true);
			}
		}
	}
	if (st >> 16 == PTRACE_EVENT_VFORK_DONE) {
		inf_vfork_done(r->inf);
		if (r->inf->report_vforks)
			return mid_step_stop(t, STOP_VFORK_DONE, 0);
	}
	if (st >> 16) { /* other events are not enabled; just go on */
		t->inflight = true;
		return ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0 &&
		       errno != ESRCH ? -1 : 0;
	}
	if (!t->started)
		return start_new_thread(t); /* its initial SIGSTOP */
	if (ptrace(PTRACE_GETREGS, tid, NULL, &now) < 0)
		return errno == ESRCH ? 0 : -1;
	sw_restore_int3(t);
	if (t->delivering) {
		if (sig == SIGTRAP)
			return sw_delivered_stop(t, &now);
		if (sw_signal_fatal(t) < 0) /* no handler ran */
			return -1;
		t->delivering = false;
	}
	if (sig == SIGTRAP && t->info.kind != INSN_INT)
		return on_step_trap(t, &now);
	return sw_signal_stop(t, sig, &now);
}

int sw_on_status(struct sw_rec *r, pid_t tid, int st)
{
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		struct sw_thread *t = sw_thread_find(r, tid);
		if (t && thread_gone(t, st) < 0)
			return -1;
		if (tid != r->pid) {
			inf_remove_thread(r->inf, tid);
			return 0;
		}
		/* The leader reports last: the whole process is gone. */
		for (size_t i = 0; i < r->nthreads; i++) {
			struct sw_thread *o = r->threads[i];
			if (!o->gone)
				sw_thread_finish(o, o->started ? o->regs.rip : 0, 0);
			o->inflight = false;
		}
		r->proc_gone = true;
		memset(&r->exit_ev, 0, sizeof r->exit_ev);
		r->exit_ev.tid = r->pid;
		if (WIFEXITED(st)) {
			r->exit_ev.kind = STOP_EXITED;
			r->exit_ev.exit_code = WEXITSTATUS(st);
			r->end.status_kind = 0;
			r->end.status = WEXITSTATUS(st);
		} else {
			r->exit_ev.kind = STOP_KILLED;
			r->exit_ev.sig = WTERMSIG(st);
			r->end.status_kind = 1;
			r->end.status = WTERMSIG(st);
		}
		return 0;
	}
	if (WIFSTOPPED(st) && on_stop(r, tid, st) < 0) {
		if (!r->err[0])
			snprintf(r->err, r->errlen, "recording failed: %s",
				 strerror(errno));
		return -1;
	}
	return 0;
}
