/* Event replay: breakpoints as int3s where this machine's debug registers
 * do not trap (inf_dr_traps: a hypervisor that accepts DR0-DR7 and never
 * raises their #DB). Two users: the STATE point's breakpoint (soft_pc,
 * erp_point_arm) and a native search's instruction points (search_soft,
 * erp_arm_search; a data point has no int3 form, and its search is
 * refused, so the history is stepped instead). Where the registers do
 * trap, a search for more breakpoints than they hold (EVENT_SEARCH_DR)
 * uses int3s too; the STATE point keeps DR0 there.
 *
 * They behave as the debug registers do, so that everything above them
 * counts the same hits:
 * - The bytes are in the code only while a thread runs natively
 *   (erp_resume's runs but single steps, erp_run_for's runs): a stop, a
 *   read of the code or of memory for a digest, a copy forked at a stop,
 *   never sees them. Threads run one at a time, so the one running is
 *   the only one that can meet them.
 * - A hit leaves the thread at the point's PC, its instruction still to
 *   run, with RF set: as the kernel leaves it after a debug register's
 *   trap. RF here is only the mark "this pass is counted" (the CPU
 *   ignores it for an int3); the CPU clears it when the instruction
 *   completes, as it does for a debug register's pass.
 * - A thread resumed where it stands on a point with RF set passes that
 *   instruction once without a trap: it is stepped with the bytes out
 *   (a syscall instruction is resumed to its entry stop instead: a step
 *   would run the call unseen). Without RF it is a hit still to come:
 *   the int3 traps at once.
 * - A single step from a search point without RF counts the hit first,
 *   as the register's trap would come before the step's.
 * - A point at an address not mapped yet (a library ld.so or dlopen
 *   maps after the replay's start) is put at the first resume that finds
 *   it mapped: nothing can run there before.
 * A hit costs two traps (the int3's, the step over it) where a debug
 * register's costs one. */
#include "event_replay.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "ptrev/debugregs.h"
#include "ptrev/ptrace_wait.h"

#define RF 0x10000ull

/* The search's instruction points at pc: bit i + 1 for point i (DR6's
 * B1-B3 for the first three, as the registers would set them; up to
 * EVENT_SEARCH_MAX), 0 for none. */
static uint64_t search_bits(const struct erp *e, uint64_t pc)
{
	uint64_t bits = 0;
	if (!e->search_soft)
		return 0;
	for (size_t i = 0; i < e->nsearch; i++)
		if (e->search[i].kind == DR_EXEC && e->search[i].addr == pc)
			bits |= 2ull << i;
	return bits;
}

/* Is one of the bytes at pc? */
static bool armed_at(const struct erp *e, uint64_t pc)
{
	return search_bits(e, pc) || (e->soft_pc && e->soft_pc == pc);
}

int erp_soft_arm_search(struct erp *e)
{
	for (size_t i = 0; i < e->nsearch; i++)
		if (e->search[i].kind != DR_EXEC)
			return erp_fail(e, "no debug register for a watchpoint's search: %s",
					inf_dr_traps() ? "more points than the registers hold"
						       : inf_dr_strerror(ENODEV));
	e->search_soft = true;
	e->search_dr7 = 0;
	return 0;
}

/* The byte at pc. A point whose address is not mapped yet (unmapped_ok:
 * a search's or the STATE point's, armed from the program's start, in a
 * library ld.so or dlopen maps later) cannot be hit before it is: it
 * stays out, and the next resume, after the mmap's syscall stop, puts
 * it, as a debug register holds an address whatever is mapped there. */
static int put_one(struct erp *e, uint64_t pc, bool unmapped_ok)
{
	for (size_t i = 0; i < e->nsoft; i++)
		if (e->soft_at[i] == pc)
			return 0; /* the STATE point's and a search point's */
	uint8_t orig;
	if (e->nsoft == sizeof e->soft_at / sizeof e->soft_at[0])
		return erp_fail(e, "more than %zu int3 breakpoints at once", e->nsoft);
	bool mapped = erp_read_mem(e, pc, &orig, 1) == 1;
	if (!mapped && unmapped_ok && !e->exited)
		return 0;
	if (!mapped || erp_put_code_byte(e, pc, 0xcc) < 0)
		return erp_fail(e, "no breakpoint at %#llx (%s; and the code cannot be written)",
				(unsigned long long)pc, inf_dr_strerror(ENODEV));
	e->soft_at[e->nsoft] = pc;
	e->soft_orig[e->nsoft++] = orig;
	return 0;
}

int erp_soft_put(struct erp *e, uint64_t skip)
{
	for (size_t i = 0; e->search_soft && i < e->nsearch; i++)
		if (e->search[i].kind == DR_EXEC && e->search[i].addr != skip &&
		    put_one(e, e->search[i].addr, true) < 0)
			return -1;
	if (e->soft_pc && e->soft_pc != skip && put_one(e, e->soft_pc, true) < 0)
		return -1;
	return 0;
}

int erp_soft_take(struct erp *e)
{
	int rc = 0;
	while (e->nsoft > 0) {
		e->nsoft--;
		if (!e->exited && erp_put_code_byte(e, e->soft_at[e->nsoft], e->soft_orig[e->nsoft]) < 0)
			rc = -1;
	}
	return rc;
}

/* Step t over the instruction at its PC (bytes out), for req's run:
 * 1 done (t to be resumed with req), 0 something else came (*st, for the
 * caller: a signal, the entry of the syscall that instruction is), -1. */
static int step_over(struct erp *e, struct erp_thread *t, int req,
		     struct user_regs_struct *regs, int *st)
{
	uint8_t b[2] = {0};
	bool sys = erp_read_mem(e, regs->rip, b, 2) == 2 && b[0] == 0x0f && b[1] == 0x05;
	if (sys) {
		/* Its entry stop comes before anything else runs; RF, only
		 * the mark, is not to reach r11. */
		regs->eflags &= ~RF;
		if (erp_set_regs(e, t, regs) < 0)
			return -1;
	}
	int how = sys ? PTRACE_SYSCALL : PTRACE_SINGLESTEP;
	if (ptrace(how, t->tid, NULL, NULL) < 0)
		return erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
	if (ptrace_waitpid(t->tid, st, __WALL) < 0)
		return erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
	if (erp_count_stop(e) < 0)
		return -1;
	if (sys || req == PTRACE_SINGLESTEP || !WIFSTOPPED(*st) || WSTOPSIG(*st) != SIGTRAP)
		return 0;
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) < 0 || si.si_code == SI_KERNEL ||
	    si.si_code <= 0)
		return 0; /* not the step's own trap */
	return 1;
}

int erp_soft_pass(struct erp *e, struct erp_thread *t, int req, int sig, int *st, uint64_t *skip)
{
	struct user_regs_struct regs;
	*skip = 0;
	if (erp_get_regs(e, t, &regs) < 0)
		return -1;
	if (!(regs.eflags & RF) || !armed_at(e, regs.rip))
		return 1;
	if (sig) {
		/* The handler runs first; the byte stays out for this run,
		 * as RF would have it (the frame keeps RF for the return). */
		*skip = regs.rip;
		return 1;
	}
	return step_over(e, t, req, &regs, st);
}

int erp_soft_count_here(struct erp *e, struct erp_thread *t)
{
	struct user_regs_struct regs;
	if (!e->search_soft || erp_get_regs(e, t, &regs) < 0 || (regs.eflags & RF))
		return 0;
	uint64_t bits = search_bits(e, regs.rip);
	if (!bits)
		return 0;
	regs.eflags |= RF;
	if (erp_set_regs(e, t, &regs) < 0)
		return -1;
	return erp_search_count(e, t, bits) < 0 ? -1 : 0;
}

/* Is stop st of t the trap of an int3 at one of pcs[0..n)? Then regs
 * holds t's registers as a debug register's hit would leave them (at
 * that PC, RF set), not yet written back. No for anything else: another
 * stop, the program's own int3. */
static bool int3_at(struct erp *e, struct erp_thread *t, int st, const uint64_t *pcs, size_t n,
		    struct user_regs_struct *regs)
{
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
		return false;
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) < 0 || si.si_code != SI_KERNEL ||
	    erp_get_regs(e, t, regs) < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (pcs[i] == regs->rip - 1) {
			regs->rip--;
			regs->eflags |= RF;
			return true;
		}
	return false;
}

int erp_soft_hit(struct erp *e, struct erp_thread *t, int req, int *st)
{
	struct user_regs_struct regs;
	if (!int3_at(e, t, *st, e->soft_at, e->nsoft, &regs))
		return 0;
	uint64_t pc = regs.rip;
	bool at_state = e->soft_pc == pc;
	/* Out while the hit is counted: the count may describe the place
	 * (a digest of memory). */
	if (erp_set_regs(e, t, &regs) < 0 || erp_soft_take(e) < 0)
		return -1;
	uint64_t bits = search_bits(e, pc);
	int rc = bits ? erp_search_count(e, t, bits | (at_state ? 1 : 0)) : 0;
	if (rc < 0)
		return -1;
	if (at_state)
		return 0; /* the STATE point's hit: the caller's */
	if ((rc = step_over(e, t, req, &regs, st)) <= 0)
		return rc;
	return erp_soft_put(e, 0) < 0 ? -1 : 1;
}

int erp_soft_run_to(struct erp *e, struct erp_thread *t, const uint64_t *pcs, int n, int *st)
{
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++)
		rc = put_one(e, pcs[i], false);
	if (rc == 0 && (ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL) < 0 ||
			ptrace_waitpid(t->tid, st, __WALL) < 0))
		rc = erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
	else if (rc == 0 && erp_count_stop(e) < 0)
		rc = -1;
	if (erp_soft_take(e) < 0)
		rc = -1;
	struct user_regs_struct regs;
	if (rc < 0 || !int3_at(e, t, *st, pcs, (size_t)n, &regs))
		return rc;
	return erp_set_regs(e, t, &regs);
}
