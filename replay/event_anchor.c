/* Event replay: running one thread natively to the n-th pass of one of its
 * instructions, inside a stretch (no event on the way): how a
 * multi-threaded replay held at a history position (event_hold.c) gets
 * near it without stepping the whole run that holds it, which can be tens
 * of millions of instructions (a worker compressing a block: minutes at
 * the stepper's rate). Which pass is the position comes from the history
 * (timeline_anchor.c).
 *
 * The passes are counted with an int3 written over the instruction, not a
 * debug register: this VM now and then loses a debug register's hit, and a
 * pass lost here would leave the thread a pass further on with nothing to
 * tell; an int3 is an instruction and cannot be missed. The original byte
 * is back before anything else runs or reads the code: only the running
 * thread runs in an event replay. Anything but the int3's trap (a
 * syscall's entry, a signal, an rdtsc's fault) means the history's count
 * was not for this stretch: a failure, which the caller answers by
 * stepping instead. */
#include "event_replay.h"

#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

/* Step t off the instruction at pc it stands on (the original byte in
 * place): 0, or -1 when something else than the step's end came. */
static int step_off(struct erp *e, struct erp_thread *t, struct user_regs_struct *regs)
{
	int st;
	if (erp_resume(e, t, PTRACE_SINGLESTEP, 0, &st) < 0)
		return -1;
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
		return erp_fail(e, "thread %d: a signal (%d) came while it ran to its position",
				(int)t->rec_tid, WIFSTOPPED(st) ? WSTOPSIG(st) : 0);
	return erp_get_regs(e, t, regs);
}

int erp_run_passes(struct erp *e, struct erp_thread *t, uint64_t pc, uint64_t n)
{
	struct insn_info info;
	struct user_regs_struct regs;
	uint8_t orig;
	if (n == 0)
		return 0;
	if (erp_classify(e, pc, &info) < 0 || erp_get_regs(e, t, &regs) < 0)
		return -1;
	/* A REP instruction's single step is one of its iterations (it
	 * stays on it), and a call into the kernel is an event. */
	if (info.rep || insn_kind_enters_kernel(info.kind))
		return erp_fail(e, "thread %d: its position's instruction at %#llx cannot be "
				"counted to", (int)t->rec_tid, (unsigned long long)pc);
	if (erp_read_mem(e, pc, &orig, 1) != 1)
		return erp_fail(e, "cannot read the code at %#llx of the replay",
				(unsigned long long)pc);
	uint64_t passes = 0;
	for (;;) {
		if (regs.rip == pc) {
			if (++passes == n)
				return 0;
			if (step_off(e, t, &regs) < 0)
				return -1;
			continue; /* a loop of one instruction is at pc again */
		}
		int st;
		if (erp_put_code_byte(e, pc, 0xcc) < 0)
			return -1;
		int rc = erp_resume(e, t, PTRACE_SYSCALL, 0, &st);
		if (erp_put_code_byte(e, pc, orig) < 0 || rc < 0)
			return -1;
		siginfo_t si;
		memset(&si, 0, sizeof si);
		ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si);
		if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP || si.si_code != SI_KERNEL ||
		    erp_get_regs(e, t, &regs) < 0 || regs.rip != pc + 1)
			return erp_fail(e, "thread %d: %s came before pass %llu of %#llx",
					(int)t->rec_tid,
					WIFSTOPPED(st) && WSTOPSIG(st) == (SIGTRAP | 0x80) ? "a syscall"
											     : "a signal",
					(unsigned long long)n, (unsigned long long)pc);
		regs.rip = pc;
		if (erp_set_regs(e, t, &regs) < 0)
			return -1;
	}
}
