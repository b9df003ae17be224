/* sw backend: how a thread that holds the CPU executes its next
 * instructions. The block stepper runs the basic block at its IP natively
 * to the control transfer that ends it (block_step.h): one stop per block
 * instead of one per instruction; the transfer itself is then emulated
 * when it only reads registers (jcc, jmp) or single-stepped. The run is
 * cut short before any breakpoint of the caller's and at the end of the
 * thread's quantum, so that it stops exactly where single steps would have
 * stopped.
 *
 * Single steps remain where they are simpler or the only way: the
 * `insn` stepper, a caller's stepi, a signal to deliver (the step stops at
 * the handler's first instruction), the first instruction of a resume off
 * a breakpoint, a syscall, and anything a block cannot start with.
 *
 * The breakpoint that ends a run: an int3 written for the run while the
 * thread is the process's only one (measured ~30% cheaper per stop than a
 * debug register in this VM, and nothing else can meet the byte: no other
 * thread runs and no syscall is in progress to fork or read the memory);
 * with other threads, or a CLONE_VM child sharing the memory, a debug
 * register gdb's points leave free; with none free, single steps. */
#include "recorder_sw.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

int sw_run_step(struct sw_thread *t)
{
	struct sw_rec *r = t->rec;
	int sig = t->deliver;
	enum insn_kind k = t->info.kind;

	if (r->inf->nbps)
		sw_lift_int3(t);
	/* Our debug register may still be armed at this instruction. */
	if (r->bstep && bstep_before_step(r->bstep, t->tid, &t->regs,
					  insn_kind_enters_kernel(k) || k == INSN_FAR,
					  r->inf->dr7) < 0 && errno != ESRCH) {
		snprintf(r->err, r->errlen, "debug registers of thread %d: %s",
			 (int)t->tid, strerror(errno));
		return -1;
	}
	t->deliver = 0;
	t->delivering = sig != 0;
	t->exiting = !sig && sw_is_exit_syscall(t);
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, (void *)(long)sig) < 0 &&
	    errno != ESRCH) {
		snprintf(r->err, r->errlen, "cannot step thread %d: %s",
			 (int)t->tid, strerror(errno));
		return -1;
	}
	t->inflight = true;
	return 0;
}

/* The highest debug register gdb's points leave free (gdb fills them from
 * DR0 up), or -1. */
static int free_slot(const struct inferior *inf)
{
	for (int i = 3; i >= 0; i--)
		if (!inf->hw[i].used)
			return i;
	return -1;
}

/* Execute the branch at the IP from the registers (block_emulate), and
 * write them to the thread: RF, left by a debug register stop here, is
 * cleared as the CPU clears it once an instruction completes. */
static int emulate(struct sw_thread *t, const struct block *b,
		   struct user_regs_struct *emu)
{
	*emu = t->regs;
	if (!block_emulate(b, emu))
		return 0;
	emu->eflags &= ~BSTEP_EFLAGS_RF;
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, emu) < 0) {
		if (errno == ESRCH)
			return 0; /* gone: the step finds out */
		snprintf(t->rec->err, t->rec->errlen, "registers of thread %d: %s",
			 (int)t->tid, strerror(errno));
		return -1;
	}
	return 1;
}

int sw_run(struct sw_thread *t, uint32_t limit, struct user_regs_struct *emu)
{
	struct sw_rec *r = t->rec;
	const struct block *b;
	enum bstep_mech how = BSTEP_INT3;
	uint32_t n;
	int slot = -1, rc;

	if (!r->bstep || t->deliver || t->stepping || !t->info.len ||
	    (t->exempt && t->regs.rip == t->reported_ip &&
	     sw_breakpoint_at(r->inf, t->regs.rip) != STOP_NONE))
		return sw_run_step(t);
	b = block_cache_get(r->bcache, t->regs.rip);
	if (!b)
		return sw_run_step(t);
	n = sw_breakpoint_cut(r->inf, b, b->n < limit ? b->n : limit);
	if (n == 0) {
		/* At the control transfer itself. */
		if (emu && (rc = emulate(t, b, emu)) != 0)
			return rc;
		return sw_run_step(t);
	}
	if (r->stepper == SW_STEPPER_BLOCK_HW || r->live > 1 || r->shared_vm) {
		how = BSTEP_HW;
		slot = free_slot(r->inf);
		if (slot < 0)
			return sw_run_step(t);
	}
	t->blk = *b;
	t->blk.has_term = n == b->n && b->has_term;
	t->blk.n = n;
	t->blk.end = block_ip_at(b, n);
	if (bstep_run(r->bstep, t->tid, t->blk.end, how, slot, r->inf->dr7) < 0) {
		/* An int3 that cannot be written (a shared read-only
		 * mapping), or the thread is gone: the step copes. */
		return sw_run_step(t);
	}
	t->in_block = true;
	t->inflight = true;
	t->delivering = false;
	t->exiting = false;
	return 0;
}
