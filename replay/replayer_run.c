/* Running a replay process forward to an exact position: native speed with
 * a breakpoint whose every hit is placed by the history, single steps for
 * short stretches, every syscall stopped at (PTRACE_SYSCALL) and handed to
 * replayer_syscall.c, recorded signals delivered where they happened.
 * Every stop is checked against the history; the first disagreement ends
 * the run with the reason. */
#include "replayer_internal.h"

#include "ptrev/debugregs.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Below this distance single steps are cheaper than breakpoint rounds. */
#define RP_SHORT 48

static uint64_t sys_pos_or_max(const struct trace_syscall *s)
{
	return s ? s->pos : UINT64_MAX;
}

/* ---- one instruction ---- */

/* Execute exactly the instruction at p->pos; check the next IP against
 * the history unless a signal is due there (the history then has the
 * handler's first instruction, the process the interrupted one). */
static int step_one(struct replayer *r, struct rp_proc *p, bool check)
{
	const struct trace_syscall *s = rp_next_sys(r, p->pos);
	struct user_regs_struct before, regs;
	int st;

	if (s && s->pos == p->pos) {
		if (rp_resume_wait(r, p, PTRACE_SYSCALL, 0, &st) < 0)
			return -1;
		if (!WIFSTOPPED(st) || WSTOPSIG(st) != (SIGTRAP | 0x80))
			return rp_fail(r, "replay diverged at position %llu: the "
				       "recorded syscall did not happen",
				       (unsigned long long)p->pos);
		return rp_syscall_entry(r, p, s);
	}
	if (rp_get_regs(r, p, &before) < 0)
		return -1;
	uint8_t b[2] = {0};
	if (pread(p->memfd, b, 2, (off_t)before.rip) == 2 && b[0] == 0x0f && b[1] == 0x05)
		/* Never let a syscall the log does not have run for real. */
		return rp_fail(r, "replay diverged at position %llu: a syscall "
			       "the recording did not make", (unsigned long long)p->pos);
	for (;;) {
		rp_watch_step_begin(r, p);
		if (rp_resume_wait(r, p, PTRACE_SINGLESTEP, 0, &st) < 0)
			return -1;
		if (WSTOPSIG(st) == SIGSEGV)
			return rp_rdtsc(r, p, p->pos + 1);
		if (WSTOPSIG(st) != SIGTRAP)
			return rp_fail(r, "replay diverged at position %llu: signal "
				       "%d the recording did not have",
				       (unsigned long long)p->pos, WSTOPSIG(st));
		/* A data watch's trap comes with the step's (one #DB, DR6
		 * says both): this instruction (or REP iteration) accessed.
		 * Where DR6 lost it, a change of the range says so. */
		if (!rp_watch_trap(r, p))
			rp_watch_step_end(r, p);
		if (rp_get_regs(r, p, &regs) < 0)
			return -1;
		if (regs.rip != before.rip)
			break;
		/* One iteration of a REP instruction: not complete yet. */
	}
	rp_advance(r, p, p->pos + 1);
	return check ? rp_check_ip(r, p->pos, regs.rip, "stepped") : 0;
}

/* ---- breakpoint runs ---- */

static int poke_byte(struct replayer *r, struct rp_proc *p, uint64_t addr, uint8_t v)
{
	if (pwrite(p->memfd, &v, 1, (off_t)addr) != 1)
		return rp_fail(r, "cannot write a breakpoint at %#llx",
			       (unsigned long long)addr);
	return 0;
}

/* The breakpoint at the target's address: a hardware execution breakpoint
 * (DR0) where the kernel lets us, else an int3. Either costs a stop per
 * hit and a step off it (the hardware one disarmed for that step: see
 * run_far_bp); the hardware one changes no code byte (nothing to hide
 * from forks). */
struct rp_bp {
	uint64_t addr;
	bool hw;
	bool armed;
	bool hit_last;  /* the last stop was a hardware hit (RF set by it) */
	uint8_t orig;
};

/* 0 armed; 1 not (an int3 where nothing is mapped yet); -1. */
static int bp_arm(struct replayer *r, struct rp_proc *p, struct rp_bp *bp)
{
	if (bp->armed)
		return 0;
	if (bp->hw) {
		if (inf_dr_write(p->pid, 0, bp->addr) < 0 ||
		    inf_dr_write(p->pid, 7, inf_dr7_slot(0, DR_EXEC, 1)) < 0)
			bp->hw = false; /* no debug registers here: int3 */
		else {
			bp->armed = true;
			return 0;
		}
	}
	if (pread(p->memfd, &bp->orig, 1, (off_t)bp->addr) != 1)
		return 1; /* not mapped yet: a syscall maps it before it runs */
	if (poke_byte(r, p, bp->addr, 0xcc) < 0)
		return -1;
	bp->armed = true;
	return 0;
}

static int bp_disarm(struct replayer *r, struct rp_proc *p, struct rp_bp *bp)
{
	if (!bp->armed || !p->pid)
		return 0;
	bp->armed = false;
	if (bp->hw)
		return inf_dr_write(p->pid, 7, 0) < 0 ? rp_fail(r, "cannot clear DR7: %s",
							 strerror(errno)) : 0;
	return poke_byte(r, p, bp->addr, bp->orig);
}

/* Run from p->pos to target > p->pos, no recorded signal in between. */
static int run_far_bp(struct replayer *r, struct rp_proc *p, uint64_t target,
		      struct rp_bp *bp)
{
	uint64_t a = bp->addr, here;
	bool check_rf = bp->hw;

	while (p->pos < target && !rp_watch_stopped(r)) {
		const struct trace_syscall *s = rp_next_sys(r, p->pos);
		bool by_hand = target - p->pos <= RP_SHORT || (s && s->pos == p->pos);
		int st;
		if (!by_hand) {
			if (history_ip_at(r->h, p->pos, &here) < 0)
				return rp_fail(r, "position %llu is not in the history",
					       (unsigned long long)p->pos);
			/* Standing on the breakpoint (after a hardware hit too:
			 * the kernel resumes the thread with RF set so that it
			 * does not fire again there, but in some VMs, seen on an
			 * Intel Xeon guest in 32 of 300,000 hits, it fires twice,
			 * and the second would count as the next execution). */
			by_hand = here == a;
		}
		if (!by_hand && check_rf) {
			/* RF already set (the program's own, restored by
			 * rt_sigreturn from a fault's frame) would let the next
			 * instruction pass a hardware breakpoint unseen: that
			 * instruction goes by hand. */
			struct user_regs_struct regs;
			if (rp_get_regs(r, p, &regs) < 0)
				return -1;
			by_hand = (regs.eflags & 0x10000) != 0;
		}
		check_rf = false;
		bp->hit_last = false;
		if (by_hand) {
			if (bp_disarm(r, p, bp) < 0 || step_one(r, p, true) < 0)
				return -1;
			continue;
		}
		int armed = bp_arm(r, p, bp);
		if (armed < 0)
			return -1;
		if (armed == 1 && !s)
			return rp_fail(r, "cannot read the code at %#llx, and no syscall "
				       "comes before it runs", (unsigned long long)a);
		/* Unarmed (armed == 1), the run goes on to the next syscall,
		 * which must come first. */
		/* The next execution of a from here. */
		uint64_t hit;
		int found = history_next_exec(r->h, p->pos, &a, 1, &hit);
		if (found < 0)
			return rp_fail(r, "history search failed (out of memory)");
		if (found == 0)
			hit = UINT64_MAX;
		int rc = rp_resume_wait(r, p, PTRACE_SYSCALL, 0, &st);
		if (!bp->hw && bp_disarm(r, p, bp) < 0)
			return -1;
		if (rc < 0)
			return -1;
		int sig = WSTOPSIG(st);
		if (sig == (SIGTRAP | 0x80)) {
			if (!s || s->pos >= hit)
				return rp_fail(r, "replay diverged after position "
					       "%llu: a syscall the recording did "
					       "not make here", (unsigned long long)p->pos);
			if (rp_syscall_entry(r, p, s) < 0)
				return -1;
			check_rf = bp->hw;
			continue;
		}
		if (sig == SIGSEGV) {
			uint64_t lim = hit < sys_pos_or_max(s) ? hit : sys_pos_or_max(s);
			if (rp_rdtsc(r, p, lim) < 0)
				return -1;
			continue;
		}
		/* A data watch's trap (scans only): somewhere after p->pos; the
		 * next known position closes its interval. Checked first: it
		 * may come at the breakpoint's address itself, before the int3
		 * there runs (a write just before the target's instruction). */
		if (sig == SIGTRAP && rp_watch_trap(r, p))
			continue;
		struct user_regs_struct regs;
		if (sig != SIGTRAP || rp_get_regs(r, p, &regs) < 0)
			return rp_fail(r, "replay diverged after position %llu: stop "
				       "with signal %d the recording did not have",
				       (unsigned long long)p->pos, sig);
		if (regs.rip - (bp->hw ? 0 : 1) != a) {
			/* Away from the breakpoint, a #DB is a watch's whose
			 * DR6 the VM lost. */
			if (rp_watch_lost_trap(r, p, &regs))
				continue;
			return rp_fail(r, "replay diverged after position %llu: stop "
				       "with signal %d the recording did not have",
				       (unsigned long long)p->pos, sig);
		}
		if (hit > target || hit > sys_pos_or_max(s))
			return rp_fail(r, "replay diverged after position %llu: "
				       "reached %#llx earlier than the recording",
				       (unsigned long long)p->pos, (unsigned long long)a);
		if (bp->hw) {
			bp->hit_last = true;
		} else {
			regs.rip = a;
			if (rp_set_regs(r, p, &regs) < 0)
				return -1;
		}
		rp_advance(r, p, hit);
	}
	return 0;
}

static int run_far(struct replayer *r, struct rp_proc *p, uint64_t target)
{
	struct rp_bp bp = { .hw = !r->no_hw_bp };

	if (history_ip_at(r->h, target, &bp.addr) < 0)
		return rp_fail(r, "position %llu is not in the history",
			       (unsigned long long)target);
	int rc = run_far_bp(r, p, target, &bp);
	if (bp_disarm(r, p, &bp) < 0)
		rc = -1;
	if (rc == 0 && bp.hw && bp.hit_last) {
		/* Arrived by a hardware hit: the kernel's RF (resume flag) is
		 * in EFLAGS; the program did not have it (had it had RF, the
		 * breakpoint could not have fired: we step such instructions
		 * by hand). */
		struct user_regs_struct regs;
		if (rp_get_regs(r, p, &regs) < 0)
			return -1;
		if (regs.eflags & 0x10000) {
			regs.eflags &= ~0x10000ull;
			if (rp_set_regs(r, p, &regs) < 0)
				return -1;
		}
	}
	return rc;
}

/* ---- signals ---- */

static bool is_fault(const struct trace_signal *g)
{
	int code;

	memcpy(&code, g->siginfo + offsetof(siginfo_t, si_code), sizeof code);
	return code > 0 && code != SI_KERNEL &&
	       (g->signo == SIGSEGV || g->signo == SIGBUS || g->signo == SIGILL ||
		g->signo == SIGFPE);
}

/* The kernel's frame for the handler of g, as recorded: put it in place of
 * the replay's own. Its XSAVE area is partly left unwritten (components in
 * their initial state) or written depending on the CPU's state tracking,
 * which a replay does not reproduce; the program may read any of it. */
static int restore_sigframe(struct replayer *r, struct rp_proc *p, const struct trace_signal *g,
			    uint64_t rsp)
{
	const struct trace_data *td = r->td;
	for (size_t i = 0; i < td->nsigframes; i++) {
		const struct trace_sigframe *f = &td->sigframes[i];
		if (f->tid != g->tid || f->pos != g->pos)
			continue;
		if (f->addr != rsp)
			return rp_fail(r, "replay diverged at position %llu: the frame of signal "
				       "%d is at %#llx, at %#llx in the recording",
				       (unsigned long long)g->pos, g->signo,
				       (unsigned long long)rsp, (unsigned long long)f->addr);
		if (pwrite(p->memfd, f->bytes, f->len, (off_t)f->addr) != (ssize_t)f->len)
			return rp_fail(r, "cannot write the recorded signal frame at %#llx in "
				       "the replay process", (unsigned long long)f->addr);
		return 0;
	}
	return 0; /* an older recording: the replay's own frame */
}

/* p stands at g->pos with the signal not yet delivered: deliver it as the
 * recording saw it, stopping at the handler's first instruction. */
static int deliver(struct replayer *r, struct rp_proc *p, const struct trace_signal *g)
{
	struct user_regs_struct regs;
	int st;

	if (is_fault(g)) {
		/* A fault: let it happen, so that the signal frame holds what
		 * the CPU reported (trap number, error code, address). */
		if (rp_resume_wait(r, p, PTRACE_SINGLESTEP, 0, &st) < 0)
			return -1;
		if (WSTOPSIG(st) != g->signo)
			return rp_fail(r, "replay diverged at position %llu: signal %d "
				       "expected, got %d", (unsigned long long)g->pos,
				       g->signo, WSTOPSIG(st));
	} else {
		/* Stop where signals are taken (also after a syscall-exit stop,
		 * where none can be injected) without running an instruction,
		 * then hand the recorded siginfo over. */
		if (syscall(SYS_tgkill, p->pid, p->pid, SIGSTOP) < 0 ||
		    rp_resume_wait(r, p, PTRACE_CONT, 0, &st) < 0)
			return -1;
		if (WSTOPSIG(st) != SIGSTOP)
			return rp_fail(r, "replay process: cannot stop it for signal "
				       "%d at position %llu", g->signo,
				       (unsigned long long)g->pos);
		siginfo_t si;
		memcpy(&si, g->siginfo, sizeof si < sizeof g->siginfo ? sizeof si
		       : sizeof g->siginfo);
		si.si_signo = g->signo;
		if (ptrace(PTRACE_SETSIGINFO, p->pid, NULL, &si) < 0)
			return rp_fail(r, "cannot set the siginfo of signal %d: %s",
				       g->signo, strerror(errno));
	}
	if (rp_resume_wait(r, p, PTRACE_SINGLESTEP, g->signo, &st) < 0)
		return -1;
	if (WSTOPSIG(st) != SIGTRAP || rp_get_regs(r, p, &regs) < 0)
		return rp_fail(r, "signal %d at position %llu: no stop in the handler",
			       g->signo, (unsigned long long)g->pos);
	if (regs.rip != g->handler_ip)
		return rp_fail(r, "replay diverged at position %llu: signal %d went "
			       "to %#llx, to %#llx in the recording",
			       (unsigned long long)g->pos, g->signo,
			       (unsigned long long)regs.rip,
			       (unsigned long long)g->handler_ip);
	if (rp_check_ip(r, g->pos, regs.rip, "signal handler") < 0 ||
	    restore_sigframe(r, p, g, regs.rsp) < 0)
		return -1;
	if (g->pos > r->validated_to)
		r->validated_to = g->pos;
	return 0;
}

int rp_run_to(struct replayer *r, struct rp_proc *p, uint64_t target)
{
	uint64_t count = history_insn_count(r->h);

	if (target == count && target > p->pos) {
		/* The end: the last instruction by hand. */
		if (rp_run_to(r, p, target - 1) < 0)
			return -1;
		if (rp_watch_stopped(r))
			return 0;
		const struct trace_signal *g = rp_next_sig(r, p->pos);
		if (g && g->pos == target)
			return rp_fail(r, "a signal handler at the end of the recording");
		if (step_one(r, p, !rp_gdb_moves_pc(r, target)) < 0)
			return -1;
		return rp_gdb_writes_at(r, p, target);
	}
	while (p->pos < target && !rp_watch_stopped(r)) {
		const struct trace_signal *g = rp_next_sig(r, p->pos);
		uint64_t w = rp_next_gdb_write(r, p->pos);
		if (w != UINT64_MAX && w <= target && (!g || w < g->pos)) {
			/* gdb changed the program there: made as it stands
			 * before that instruction (a signal there comes after).
			 * Where gdb moved the PC (jump, call), the history has
			 * the new one there: the last step to it is not checked,
			 * nor is that address a breakpoint's. */
			if (w - 1 > p->pos && run_far(r, p, w - 1) < 0)
				return -1;
			if (rp_watch_stopped(r))
				return 0;
			if (step_one(r, p, !rp_gdb_moves_pc(r, w)) < 0 ||
			    rp_gdb_writes_at(r, p, w) < 0)
				return -1;
			continue;
		}
		if (!g || g->pos > target)
			return run_far(r, p, target);
		if (g->pos - 1 > p->pos && run_far(r, p, g->pos - 1) < 0)
			return -1;
		if (rp_watch_stopped(r))
			return 0;
		if (step_one(r, p, false) < 0)
			return -1;
		if (p->pos != g->pos)
			return rp_fail(r, "replay lost its position before signal %d",
				       g->signo);
		if (rp_gdb_writes_at(r, p, g->pos) < 0 || deliver(r, p, g) < 0)
			return -1;
	}
	return 0;
}

int rp_validate_ahead(struct replayer *r, struct rp_proc *p, uint64_t *upto)
{
	const struct trace_syscall *s = rp_next_sys(r, p->pos);
	const struct trace_signal *g = rp_next_sig(r, p->pos);
	struct user_regs_struct regs;
	int st;

	*upto = history_insn_count(r->h);
	uint64_t w = rp_next_gdb_write(r, p->pos);
	if (w != UINT64_MAX && (!s || w <= s->pos) && (!g || w <= g->pos)) {
		/* gdb changed the program first: a run that makes the change. */
		*upto = w;
		return rp_run_to(r, p, w);
	}
	if (!s || (g && g->pos <= s->pos)) {
		/* A signal first (rare): run to it the ordinary way, which
		 * checks it too; nothing at all: the end, nothing to check. */
		if (!g)
			return 0;
		*upto = g->pos;
		return rp_run_to(r, p, g->pos);
	}
	*upto = s->pos;
	if (s->pos == p->pos) {
		if (rp_resume_wait(r, p, PTRACE_SYSCALL, 0, &st) < 0)
			return -1;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80))
			return rp_fail(r, "replay diverged at position %llu: the "
				       "recorded syscall did not happen",
				       (unsigned long long)p->pos);
		return rp_check_entry(r, p, s, &regs);
	}
	/* Native speed to the next syscall entry: no breakpoint. */
	for (;;) {
		if (rp_resume_wait(r, p, PTRACE_SYSCALL, 0, &st) < 0)
			return -1;
		if (WSTOPSIG(st) == SIGSEGV) {
			if (rp_rdtsc(r, p, s->pos) < 0)
				return -1;
			continue;
		}
		if (WSTOPSIG(st) != (SIGTRAP | 0x80))
			return rp_fail(r, "replay diverged after position %llu: signal "
				       "%d the recording did not have",
				       (unsigned long long)p->pos, WSTOPSIG(st));
		return rp_check_entry(r, p, s, &regs);
	}
}
