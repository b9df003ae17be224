/* sw backend: the stop that ends a native run of a basic block
 * (recorder_sw_run.c started it). Whatever stopped the thread, the
 * instructions from the block's start up to its IP ran (after the control
 * transfer the run started with, if it folded one in and the IP moved),
 * each going to the next: they are encoded one by one, as their single
 * steps would have been, and the thread then stands at a boundary exactly
 * as after a single step that executed nothing more:
 *  - our breakpoint at the block's end: go on from there (the control
 *    transfer is emulated or stepped, recorder_sw_step.c decides);
 *  - a watchpoint of the caller's: it triggered on the instruction before
 *    the IP, which is encoded already; reported as a single step would
 *    report it;
 *  - a signal (an asynchronous one anywhere, a fault, rdtsc trapped by
 *    PR_SET_TSC, our SIGSTOP): before the instruction at the IP, handled
 *    by recorder_sw_signal.c as for a step that did not execute. */
#include "recorder_sw.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "ptrev/inferior_raw.h"

/* A SIGTRAP that is not ours: one of the caller's debug registers? A
 * watchpoint becomes the thread's pending STOP_WATCH; an execution
 * breakpoint (which the run should have stopped before) stopped it before
 * the instruction, where the breakpoint check finds it. Returns whether it
 * was one. */
static bool callers_trap(struct sw_thread *t)
{
	struct inferior *inf = t->rec->inf;
	uint64_t dr6;
	bool any = false;

	if (!inf->dr7)
		return false;
	dr6 = inf_dr_read_dr6(t->tid) & 0xf;
	for (int i = 0; i < 4 && dr6; i++) {
		if (!(dr6 & (1u << i)) || !inf->hw[i].used)
			continue;
		any = true;
		if (inf->hw[i].type == 1 || t->has_pending)
			continue;
		sw_set_pending(t, STOP_WATCH, SIGTRAP);
		t->pending.watch_addr = inf->hw[i].req_addr;
		t->pending.watch_type = inf->hw[i].type;
	}
	if (any)
		inf_dr_clear_dr6(t->tid);
	return any;
}

/* A syscall-entry stop: orig_rax the syscall's number and rax -ENOSYS
 * (after a fault or a trap orig_rax is -1). */
static bool at_syscall_entry(int st, const struct user_regs_struct *regs)
{
	return WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP &&
	       regs->orig_rax != (unsigned long long)-1 && regs->rax == (unsigned long long)-ENOSYS;
}

/* A debug register's trap (TRAP_HWBKPT) that neither the run (bstep) nor
 * the caller's points claimed. The program never gets one of its own: its
 * debug registers are its tracer's, ours (perf breakpoints signal
 * TRAP_PERF). So it is the run's register reported away from its place or
 * without its DR6 bit, a form this VM has more of than bstep knows (CI:
 * rec_threads' block-hw recording delivered one to the program, which
 * died of SIGTRAP). The thread goes on from where it stands, its
 * instructions up to there counted. */
static bool stray_hw_trap(struct sw_thread *t)
{
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) < 0 || si.si_code != TRAP_HWBKPT)
		return false;
	inf_dr_clear_dr6(t->tid);
	return true;
}

int sw_block_stop(struct sw_thread *t, int st)
{
	struct sw_rec *r = t->rec;
	struct user_regs_struct now;
	struct insn_info info = t->info;
	bool moved = false;
	int reached, k = -1;

	t->in_block = false;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &now) < 0) {
		/* Gone meanwhile: its exit status follows. */
		memset(&now, 0, sizeof now);
		bstep_stopped(r->bstep, t->tid, st, &now);
		return errno == ESRCH ? 0 : -1;
	}
	reached = bstep_stopped(r->bstep, t->tid, st, &now);
	if (reached < 0) {
		snprintf(r->err, r->errlen, "registers of thread %d: %s",
			 (int)t->tid, strerror(errno));
		return -1;
	}
	if (!reached && at_syscall_entry(st, &now)) {
		/* A debug register's run went past its end (bstep_run: it
		 * goes to the next syscall at most; a run holds none). This
		 * recorder asks for no PTRACE_O_TRACESYSGOOD: the stop is a
		 * plain SIGTRAP, told by the registers. */
		snprintf(r->err, r->errlen, "thread %d ran past the end of its block "
			 "(%#llx) to a syscall at %#llx: the debug register set there "
			 "did not stop it (a VM that loses such hits now and then); what "
			 "ran between is not known, so the recording ends here",
			 (int)t->tid, (unsigned long long)t->blk.end,
			 (unsigned long long)now.rip);
		return -1;
	}
	if (t->fold && now.rip != t->regs.rip) {
		/* The control transfer the run started with went where it
		 * was known to go (t->regs, t->info: the state before it). */
		struct user_regs_struct after = now;
		after.rip = t->blk.start;
		if (sw_complete_step(t, &after) < 0)
			return -1;
		moved = true;
	}
	if (!t->fold || moved) {
		k = block_index_of(&t->blk, now.rip);
		if (k < 0) {
			snprintf(r->err, r->errlen, "thread %d stopped at %#llx, outside "
				 "its block %#llx..%#llx (status %#x)", (int)t->tid,
				 (unsigned long long)now.rip,
				 (unsigned long long)t->blk.start,
				 (unsigned long long)t->blk.end, st);
			return -1;
		}
		if (sw_complete_run(t, &t->blk, (uint32_t)k) < 0)
			return -1;
		moved = moved || k > 0;
		info = t->blk.insn[k];
		if (k == (int)t->blk.n && !t->blk.has_term &&
		    sw_classify(r, now.rip, &info) < 0)
			memset(&info, 0, sizeof info);
	}
	if (moved) {
		/* It moved on from where it was last reported. */
		t->exempt = false;
		t->reported = false;
	}
	/* The state before the instruction at the IP, as a step would
	 * leave it: then the signal code sees a step that ran nothing. */
	t->regs = now;
	t->info = info;
	if (reached)
		return sw_resume(t, &now, false);
	if ((st >> 16) != 0) {
		snprintf(r->err, r->errlen, "thread %d: ptrace event %d in a "
			 "native run", (int)t->tid, st >> 16);
		return -1;
	}
	if (WSTOPSIG(st) == SIGTRAP && (callers_trap(t) || stray_hw_trap(t)))
		return sw_resume(t, &now, false);
	return sw_signal_stop(t, WSTOPSIG(st), &now);
}
