/* sw backend: how a thread that holds the CPU executes its next
 * instructions. The block stepper runs the basic block at its IP natively
 * (block_step.h) through every instruction whose successor is known in
 * advance (block_cache.h: falling through, direct jumps and calls) to the
 * control transfer that decides from the registers where to go: one stop
 * per such transfer instead of one per instruction. Standing before it,
 * the thread knows where it goes (block_successor), so the next run starts
 * with the transfer itself and goes on through the next block ("fold"):
 * returns and calls execute natively (the stack, a shadow stack and
 * watchpoints see them as they are), and no stop is spent on them. A
 * conditional or direct jump that cannot fold (the next block ends where
 * the thread stands: a tight loop) is executed from the registers instead
 * (block_emulate); anything else is single-stepped. Runs are cut short
 * before any breakpoint of the caller's and at the end of the thread's
 * quantum, so that they stop exactly where single steps would have.
 *
 * Single steps remain where they are simpler or the only way: the
 * `insn` stepper, a caller's stepi, a signal to deliver (the step stops at
 * the handler's first instruction), the first instruction of a resume off
 * a breakpoint, syscalls, int, far transfers, and anything a block cannot
 * start with.
 *
 * The breakpoint that ends a run: an int3 written for the run while the
 * thread is the process's only one (measured ~30% cheaper per stop than a
 * debug register in this VM, and nothing else can meet the byte: no other
 * thread runs and no syscall is in progress to fork or read the memory);
 * with other threads, or a CLONE_VM child sharing the memory, a debug
 * register gdb's points leave free; with none free, single steps. */
#include "recorder_sw.h"

#include "ptrev/record_events.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>

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
	if (k == INSN_SYSCALL && !sig && t->regs.rax == SYS_rseq && !r->allow_rseq &&
	    ptrace(PTRACE_POKEUSER, t->tid, offsetof(struct user_regs_struct, rax),
		   (void *)-1L) < 0 && errno != ESRCH) {
		/* rseq is refused (the event backend does too, as rr does):
		 * the kernel would write the CPU number into the program's
		 * memory whenever it runs. Number -1 fails with ENOSYS; the
		 * log keeps the program's number (t->regs). */
		snprintf(r->err, r->errlen, "cannot refuse rseq in thread %d: %s", (int)t->tid,
			 strerror(errno));
		return -1;
	}
	if (k == INSN_SYSCALL && !sig) {
		mem_diff_free(t->watch);
		t->watch = record_syscall_watch(r->pid, t->regs.rax, &t->regs, r->live == 1,
						sw_read_mem, r);
	}
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

/* Start a native run of b's first n instructions (after the control
 * transfer at the IP, with fold). 0, or 1 when it cannot start. */
static int start_run(struct sw_thread *t, const struct block *b, uint32_t n, bool fold)
{
	struct sw_rec *r = t->rec;
	enum bstep_mech how = BSTEP_INT3;
	int slot = -1;

	if (r->stepper == SW_STEPPER_BLOCK_HW || r->live > 1 || r->shared_vm) {
		how = BSTEP_HW;
		slot = free_slot(r->inf);
		if (slot < 0)
			return 1;
	}
	t->blk = *b;
	t->blk.has_term = n == b->n && b->has_term;
	t->blk.n = n;
	t->blk.end = b->ip[n];
	/* An int3 that cannot be written (a shared read-only mapping), or
	 * the thread is gone: the caller's single step copes. */
	if (bstep_run(r->bstep, t->tid, t->blk.end, how, slot, r->inf->dr7) < 0)
		return 1;
	t->in_block = true;
	t->fold = fold;
	t->inflight = true;
	t->delivering = false;
	t->exiting = false;
	return 0;
}

/* t stands at the control transfer that ends block x. Fold it into a run
 * through the block it goes to, when that block has instructions before
 * its own end, no breakpoint at its start, and does not come back through
 * here (one address twice in a run would make a stop there ambiguous).
 * 0 (running) or 1 (not folded). */
static int fold(struct sw_thread *t, const struct block *x, uint32_t limit)
{
	struct sw_rec *r = t->rec;
	const struct block *sb;
	uint64_t next;
	uint32_t n;

	if (limit < 2 || !block_successor(x, &t->regs, sw_read_mem, r, &next) ||
	    sw_breakpoint_at(r->inf, next) != STOP_NONE ||
	    !(sb = block_cache_get(r->bcache, next)))
		return 1;
	n = sw_breakpoint_cut(r->inf, sb, sb->n < limit - 1 ? sb->n : limit - 1);
	for (uint32_t i = 0; i <= n; i++)
		if (sb->ip[i] == t->regs.rip)
			return 1;
	/* Nor may the run's end lie inside the transfer's own bytes (the
	 * int3 there would change it before it runs). */
	if (sb->ip[n] > t->regs.rip && sb->ip[n] < t->regs.rip + x->insn[0].len)
		return 1;
	if (n == 0)
		return 1;
	return start_run(t, sb, n, true);
}

int sw_run(struct sw_thread *t, uint32_t limit, struct user_regs_struct *emu)
{
	struct sw_rec *r = t->rec;
	const struct block *b;
	struct block x;
	uint32_t n;
	int rc;

	if (!r->bstep || t->deliver || t->stepping || !t->info.len ||
	    (t->exempt && t->regs.rip == t->reported_ip &&
	     sw_breakpoint_at(r->inf, t->regs.rip) != STOP_NONE))
		return sw_run_step(t);
	b = block_cache_get(r->bcache, t->regs.rip);
	if (!b)
		return sw_run_step(t);
	n = sw_breakpoint_cut(r->inf, b, b->n < limit ? b->n : limit);
	if (n > 0)
		return start_run(t, b, n, false) == 0 ? 0 : sw_run_step(t);
	/* At the control transfer itself (kept: reading the next block may
	 * drop this one from the cache). */
	x = *b;
	if (!x.has_term || insn_kind_enters_kernel(x.insn[0].kind) ||
	    x.insn[0].kind == INSN_FAR)
		return sw_run_step(t);
	if (fold(t, &x, limit) == 0)
		return 0;
	if (emu && (rc = emulate(t, &x, emu)) != 0)
		return rc;
	return sw_run_step(t);
}
