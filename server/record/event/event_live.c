/* Event recorder driven by gdb (event_engine.c): the stops gdb must see.
 * The recorder handles every stop as it does for `ptrev record`; where gdb
 * asked for a stop (a breakpoint, a watchpoint, a step, Ctrl-C) or must see
 * one (a signal it does not pass, the program about to end), the program
 * is held instead: the thread that stopped stays where it is, every other
 * one that runs is stopped with a SIGSTOP of ours (absorbed as for a STATE
 * point: a syscall it was blocked in returns and is restarted later, both
 * logged as usual), and no thread is resumed until gdb resumes it. A
 * resume the recorder meant to make meanwhile is kept (parked) and made
 * then.
 *
 * Such a stop needs no event in the log: what runs between two events is
 * deterministic whether gdb looked at it or not. Only where gdb goes back
 * from does a STATE point mark the present (event_engine_present). */
#include "event_rec.h"

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptrev/inferior_raw.h"

static void park(struct ev_thread *t, int sig)
{
	t->parked = true;
	t->parked_sig = sig;
}

int ev_live_report(struct ev_rec *r, const struct stop_event *ev)
{
	r->live.report = *ev;
	r->live.have_report = true;
	r->live.halted = true;
	for (size_t i = 0; i < r->nthreads; i++) {
		struct ev_thread *o = r->threads[i];
		/* A thread stepped into its handler stops by itself. */
		if (o->state == EV_T_GONE || !o->running || o->delivering)
			continue;
		o->stop_expected++;
		if (syscall(SYS_tgkill, r->pid, o->tid, SIGSTOP) < 0 && errno != ESRCH)
			return ev_fail(r, "cannot stop thread %d: %s", (int)o->tid, strerror(errno));
	}
	return 0;
}

/* Report kind for t, which stays stopped where it is. */
static int report(struct ev_thread *t, enum stop_kind kind, int sig)
{
	struct stop_event ev = {.kind = kind, .tid = t->tid, .sig = sig};
	park(t, 0);
	return ev_live_report(t->rec, &ev) < 0 ? -1 : 1;
}

/* A SIGTRAP of gdb's: an int3 of its breakpoints, a debug register it
 * armed, or the end of its step. */
static int trap(struct ev_thread *t, const siginfo_t *si, struct user_regs_struct *now)
{
	struct ev_rec *r = t->rec;
	struct inferior *inf = r->inf;
	if (si->si_code == SI_KERNEL && inferior_has_swbreak(inf, now->rip - 1)) {
		now->rip--;
		if (ptrace(PTRACE_SETREGS, t->tid, NULL, now) < 0)
			return ev_fail(r, "thread %d: registers: %s", (int)t->tid, strerror(errno));
		return report(t, STOP_SWBREAK, SIGTRAP);
	}
	struct stop_event ev = {.kind = STOP_SIGNAL, .tid = t->tid, .sig = SIGTRAP};
	if (inf_dr_hit(inf, t->tid, &ev)) {
		park(t, 0);
		return ev_live_report(r, &ev) < 0 ? -1 : 1;
	}
	if (t->gdb_step && si->si_code > 0)
		return report(t, STOP_STEP, SIGTRAP);
	return 0;
}

int ev_live_stop(struct ev_thread *t, int sig, const siginfo_t *si,
		 struct user_regs_struct *now)
{
	struct ev_rec *r = t->rec;
	if (!r->live.on)
		return 0;
	bool ours = si->si_code == SI_TKILL && si->si_pid == r->self;
	if (sig == SIGSTOP && ours && t->gdb_interrupt && t->stop_expected > 0) {
		t->gdb_interrupt = false;
		t->stop_expected--;
		if (r->live.halted) {
			park(t, 0); /* something else is reported already */
			return 1;
		}
		return report(t, STOP_SIGNAL, SIGINT);
	}
	if (ours)
		return 0;
	if (sig == SIGTRAP)
		return trap(t, si, now);
	return 0;
}

int ev_live_signal(struct ev_thread *t, int sig, const siginfo_t *si)
{
	struct ev_rec *r = t->rec;
	/* A signal gdb passes is reported all the same to a step (as
	 * gdbserver does: inferior_wait). */
	if (!r->live.on || (sig > 0 && sig < 65 && r->inf->pass_signals[sig] && !t->gdb_step))
		return 0;
	/* Undelivered: gdb's next resume of t says whether it is. */
	t->gdb_sig = sig;
	t->gdb_si = *si;
	/* gdb's $_siginfo, read through the live target until t goes on. */
	struct inf_thread *it = inferior_thread(r->inf, t->tid);
	if (it) {
		it->has_siginfo = true;
		it->siginfo = *si;
	}
	return report(t, STOP_SIGNAL, sig);
}

/* Is the instruction at ip a syscall (0f 05)? Its step is a syscall's
 * entry and return, which the recorder must see. */
static bool at_syscall(struct ev_rec *r, uint64_t ip)
{
	uint8_t b[2];
	return ev_read_mem(r, ip, b, 2) == 2 && b[0] == 0x0f && b[1] == 0x05;
}

int ev_live_resume(struct ev_thread *t, int sig, int *req)
{
	struct ev_rec *r = t->rec;
	*req = PTRACE_SYSCALL;
	if (!r->live.on)
		return 0;
	if (r->live.halted || !t->gdb_go) {
		park(t, sig);
		return 1;
	}
	t->exit_hold_point = false;
	if (t->state != EV_T_RUNNING || t->exiting || r->cpu != t)
		return 0;
	t->moved = true;
	if (!t->gdb_step)
		return 0;
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &regs) < 0)
		return 0;
	/* Its instruction ran (through a syscall, an emulated rdtsc, into a
	 * signal handler): the step is over. */
	if (t->step_started && regs.rip != t->step_rip && !sig)
		return report(t, STOP_STEP, SIGTRAP);
	if (!t->step_started) {
		t->step_started = true;
		t->step_rip = regs.rip;
	}
	*req = at_syscall(r, regs.rip) ? PTRACE_SYSCALL : PTRACE_SINGLESTEP;
	return 0;
}

int ev_live_fork(struct ev_thread *t, pid_t child, bool vfork, bool stop_seen)
{
	struct ev_rec *r = t->rec;
	struct inferior *inf = r->inf;
	if (!r->live.on) {
		ptrace_fork_child_let_go(child, stop_seen);
		return 0;
	}
	/* With gdb's breakpoints out of the child's memory (a vfork's shared
	 * memory: back in when it is done). */
	if (!(vfork ? inf->report_vforks : inf->report_forks)) {
		inf_fork_child_release(inf, child, vfork, stop_seen, true);
		return 0;
	}
	inf_fork_child_hold(inf, child, vfork, stop_seen, true);
	if (inf->fork_child != child)
		return 0; /* gone already */
	if (!vfork) {
		t->fork_report = child;
		return 0;
	}
	/* The parent waits inside its vfork until gdb lets the child go. */
	struct stop_event ev = {.kind = STOP_VFORK, .tid = t->tid, .sig = SIGTRAP,
				.child = child};
	park(t, 0);
	return ev_live_report(r, &ev) < 0 ? -1 : 1;
}

int ev_live_forked(struct ev_thread *t)
{
	pid_t child = t->fork_report;
	t->fork_report = 0;
	if (!child || !t->rec->live.on)
		return 0;
	/* Stopped at the return, ready for the CPU: not parked, so that it
	 * runs again only when the CPU is its. */
	struct stop_event ev = {.kind = STOP_FORK, .tid = t->tid, .sig = SIGTRAP, .child = child};
	return ev_live_report(t->rec, &ev);
}

int ev_live_vfork_done(struct ev_thread *t)
{
	struct ev_rec *r = t->rec;
	if (!r->live.on)
		return 0;
	inf_vfork_done(r->inf);
	if (!r->inf->report_vforks)
		return 0;
	struct stop_event ev = {.kind = STOP_VFORK_DONE, .tid = t->tid, .sig = SIGTRAP};
	park(t, 0);
	return ev_live_report(r, &ev) < 0 ? -1 : 1;
}

int ev_live_exit_entry(struct ev_thread *t, struct user_regs_struct *now)
{
	struct ev_rec *r = t->rec;
	if (!r->live.on || !r->live.stop_before_exit || t->exit_held)
		return 0;
	size_t alive = 0;
	for (size_t i = 0; i < r->nthreads; i++)
		alive += r->threads[i]->state != EV_T_GONE;
	if (now->orig_rax != SYS_exit_group && !(now->orig_rax == SYS_exit && alive == 1))
		return 0;
	/* Undone as for a signal before a syscall: it stands on its
	 * instruction. */
	if (ev_undo_entry(t, now) < 0)
		return -1;
	t->exit_hold = true;
	if (ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL) < 0 && errno != ESRCH)
		return ev_fail(r, "cannot resume thread %d: %s", (int)t->tid, strerror(errno));
	t->running = true;
	return 1;
}

int ev_live_exit_stop(struct ev_thread *t)
{
	t->exit_hold = false;
	t->exit_held = true;
	t->exit_hold_point = true;
	t->gdb_step = false;
	return report(t, STOP_SIGNAL, 0) < 0 ? -1 : 0;
}

int ev_live_unkeep(struct ev_rec *r)
{
	trace_writer_keep(r->w, NULL);
	trace_data_free(r->live.kept);
	memset(r->live.kept, 0, sizeof *r->live.kept);
	return 0;
}

int ev_live_keep(struct ev_rec *r)
{
	return trace_writer_keep(r->w, r->live.kept);
}
