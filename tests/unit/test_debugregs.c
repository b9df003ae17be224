/* debugregs: which SIGTRAPs may be an execution breakpoint's hit whose DR6
 * a VM got wrong (inf_dr_lost_exec_hit, inf_dr_stale_step_hit), told by
 * what the kernel says of real traps of a child of this test: the
 * program's own ICEBP (TRAP_BRKPT, its byte before the PC: not a hit),
 * its own int3 (SI_KERNEL: neither), a trap of its own TF (TRAP_TRACE
 * with TF set: not a hit), a tracer's step (TRAP_TRACE, TF not shown:
 * what a stale BS looks like, which callers ask only of a thread they
 * resumed to run); and a real hit of DR0, which DR6 names (with DR6
 * cleared after it: what a hit the kernel could not attribute looks
 * like). First the probe (debugregs_probe.c): PTREV_DEBUG_REGISTERS=0
 * refuses an enabling DR7 with ENODEV; where the probe says the machine's
 * registers do not trap, a DR0 armed by hand must not stop the child, and
 * the rest is skipped. */
#include "ptrev/debugregs.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"

enum what { ICEBP, INT3, OWN_TF, PLAIN };
extern const char debugregs_nops[];

/* In the child: stop for the tracer, then trap as asked. */
static void child(enum what w)
{
	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	raise(SIGSTOP);
	switch (w) {
	case ICEBP:
		__asm__ volatile(".byte 0xf1");
		break;
	case INT3:
		__asm__ volatile("int3");
		break;
	case OWN_TF:
		/* TF set by popf: a trap after the next instruction. */
		__asm__ volatile("pushfq; orq $0x100, (%%rsp); popfq; nop; "
				 "pushfq; andq $~0x100, (%%rsp); popfq" ::: "memory", "cc");
		break;
	case PLAIN:
		__asm__ volatile(".globl debugregs_nops\ndebugregs_nops: nop; nop; nop");
		break;
	}
	_exit(0);
}

/* A child stopped at its SIGSTOP. */
static pid_t start(enum what w)
{
	pid_t pid = fork();
	if (pid == 0)
		child(w);
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP) {
		printf("child did not stop\n");
		exit(1);
	}
	return pid;
}

/* Resume pid with req; true when it stopped with SIGTRAP (regs then). */
static bool trap(pid_t pid, int req, struct user_regs_struct *regs)
{
	int st;
	if (ptrace(req, pid, NULL, NULL) < 0 || waitpid(pid, &st, 0) != pid ||
	    !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
		return false;
	return ptrace(PTRACE_GETREGS, pid, NULL, regs) == 0;
}

static void finish_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* PTREV_DEBUG_REGISTERS=0 (in a child: the answer is taken once): the
 * registers are dead, an enabling DR7 is refused with ENODEV before any
 * ptrace, a disabling one is not. */
static void dead_registers(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		setenv("PTREV_DEBUG_REGISTERS", "0", 1);
		int bad = inf_dr_traps();
		errno = 0;
		bad |= inf_dr_write(getppid(), 7, inf_dr7_slot(0, DR_EXEC, 1)) != -1 ||
		       errno != ENODEV;
		errno = 0;
		bad |= inf_dr_write(getppid(), 7, 0) == 0 || errno == ENODEV; /* not traced */
		bad |= strstr(inf_dr_strerror(ENODEV), "do not trap") == NULL;
		_exit(bad);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "PTREV_DEBUG_REGISTERS=0: an enabling DR7 refused with ENODEV, a clearing one not");
}

int main(void)
{
	struct user_regs_struct r;
	pid_t pid;

	dead_registers();
	/* The probe's answer against a trap of our own: the machine's
	 * registers trap, or the hit below never comes. */
	if (!inf_dr_traps()) {
		pid = start(PLAIN);
		uint64_t at = (uint64_t)(uintptr_t)debugregs_nops + 1;
		CHECK(inf_dr_write_raw(pid, 0, at) == 0 &&
		      inf_dr_write_raw(pid, 7, inf_dr7_slot(0, DR_EXEC, 1)) == 0 &&
		      !trap(pid, PTRACE_CONT, &r), "the probe says the registers do not trap: "
		      "DR0 armed by hand does not stop the child");
		finish_child(pid);
		printf("SKIP the rest: %s\n", inf_dr_strerror(ENODEV));
		return failures ? 1 : 77;
	}

	pid = start(ICEBP);
	CHECK(trap(pid, PTRACE_CONT, &r), "the ICEBP traps");
	CHECK(!inf_dr_lost_exec_hit(pid, r.rip) && !inf_dr_lost_hit(pid, &r),
	      "the program's ICEBP is no lost hit");
	CHECK(!inf_dr_stale_step_hit(pid, r.eflags), "...nor a stale step's");
	finish_child(pid);

	pid = start(INT3);
	CHECK(trap(pid, PTRACE_CONT, &r), "the int3 traps");
	CHECK(!inf_dr_lost_exec_hit(pid, r.rip) && !inf_dr_stale_step_hit(pid, r.eflags),
	      "the program's int3 is no hit");
	finish_child(pid);

	pid = start(OWN_TF);
	CHECK(trap(pid, PTRACE_CONT, &r), "the program's TF traps");
	CHECK((r.eflags & 0x100) && !inf_dr_stale_step_hit(pid, r.eflags),
	      "a trap of the program's own TF is no hit: eflags %#llx",
	      (unsigned long long)r.eflags);
	CHECK(!inf_dr_lost_exec_hit(pid, r.rip), "...nor a lost one");
	CHECK(!inf_dr_lost_hit(pid, &r), "...nor either");
	finish_child(pid);

	/* The tracer's step: TRAP_TRACE, TF not shown. From a thread the
	 * tracer resumed to run, this is what a hit with a stale BS is. */
	pid = start(PLAIN);
	CHECK(trap(pid, PTRACE_SINGLESTEP, &r), "the step traps");
	CHECK(inf_dr_stale_step_hit(pid, r.eflags) && inf_dr_lost_hit(pid, &r),
	      "a step's end looks like a stale BS");
	CHECK(!inf_dr_lost_exec_hit(pid, r.rip), "...not like an empty DR6");

	/* A real hit: DR6 names the register. */
	uint64_t at = (uint64_t)(uintptr_t)debugregs_nops + 1; /* the second nop */
	CHECK(inf_dr_write(pid, 0, at) == 0 &&
	      inf_dr_write(pid, 7, inf_dr7_slot(0, DR_EXEC, 1)) == 0, "DR0 armed");
	CHECK(trap(pid, PTRACE_CONT, &r) && r.rip == at, "DR0 hit at %#llx",
	      (unsigned long long)r.rip);
	CHECK(inf_dr_read_dr6(pid) & 1, "DR6 names DR0: %#llx",
	      (unsigned long long)inf_dr_read_dr6(pid));
	CHECK(!inf_dr_lost_exec_hit(pid, r.rip), "a hit DR6 names is not a lost one");
	inf_dr_clear_dr6(pid);
	CHECK(!(inf_dr_read_dr6(pid) & 0xf), "DR6 cleared");
	/* TRAP_HWBKPT with no bit in the thread's DR6: what the VM's hit the
	 * kernel could not attribute looks like. */
	CHECK(inf_dr_lost_exec_hit(pid, r.rip), "a register's trap, DR6 empty, is a lost hit");
	finish_child(pid);

	if (failures)
		printf("%d failure(s)\n", failures);
	return failures != 0;
}
