/* block_step: a stopped thread run natively to an address and stopped
 * there, by an int3 written for the run (gone from memory afterwards) and
 * by a debug register (left armed, RF set, re-armed elsewhere); a fault
 * before the address (told apart, int3 lifted); single steps over an armed
 * register, kept for a near instruction, disarmed (and RF cleared) for one
 * that saves EFLAGS; a register run never hit stopped at the next syscall;
 * the thread's end during a run. Inferior:
 * tests/programs/blk_prog, whose labels nm gives. */
#include "ptrev/block_step.h"
#include "ptrev/debugregs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"

static char prog[PATH_MAX];

static uint64_t sym(const char *name)
{
	char cmd[PATH_MAX + 32], line[512];
	uint64_t addr = 0;
	snprintf(cmd, sizeof cmd, "nm '%s'", prog);
	FILE *f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long a;
		char type, s[400];
		if (sscanf(line, "%llx %c %399s", &a, &type, s) == 3 && !strcmp(s, name))
			addr = a;
	}
	pclose(f);
	return addr;
}

static pid_t launch(void)
{
	int st;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1);
		dup2(null, 2);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(prog, prog, "fault", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		return -1;
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_EXITKILL);
	return pid;
}

static uint64_t peek_dr(pid_t pid, int n)
{
	errno = 0;
	return (uint64_t)ptrace(PTRACE_PEEKUSER, pid,
				(void *)(offsetof(struct user, u_debugreg) + n * sizeof(long)), NULL);
}

static uint8_t byte_at(pid_t pid, uint64_t addr)
{
	char path[64];
	uint8_t b = 0;
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY);
	if (fd >= 0) {
		if (pread(fd, &b, 1, (off_t)addr) != 1)
			b = 0;
		close(fd);
	}
	return b;
}

/* Run to stop_ip by how; returns bstep_stopped's answer, *st the status,
 * regs the registers after. */
static int run_to(struct bstep *b, pid_t pid, uint64_t stop_ip, enum bstep_mech how,
		  int slot, int *st, struct user_regs_struct *regs)
{
	memset(regs, 0, sizeof *regs);
	if (bstep_run(b, pid, stop_ip, how, slot, 0) < 0) {
		CHECK(0, "bstep_run to %#llx: %s", (unsigned long long)stop_ip, strerror(errno));
		return -1;
	}
	CHECK(bstep_running(b, pid), "running");
	if (waitpid(pid, st, 0) != pid)
		return -1;
	if (WIFSTOPPED(*st))
		ptrace(PTRACE_GETREGS, pid, NULL, regs);
	return bstep_stopped(b, pid, *st, regs);
}

int main(void)
{
	const char *dir = getenv("PTREV_TEST_PROGRAMS");
	struct user_regs_struct r;
	char err[256];
	int st;

	if (!dir) {
		printf("PTREV_TEST_PROGRAMS not set\n");
		return 77;
	}
	snprintf(prog, sizeof prog, "%s/blk_prog", dir);
	uint64_t a = sym("blk_a"), bb = sym("blk_b"), c = sym("blk_c"), d = sym("blk_d"),
		 ud2 = sym("blk_ud2"), e = sym("blk_e"), e2 = sym("blk_e2"),
		 e3 = sym("blk_e3"), never = sym("blk_never");
	CHECK(a && bb && c && d && ud2 && e && e2 && e3 && never, "symbols of %s", prog);
	if (failures)
		return 1;
	pid_t pid = launch();
	CHECK(pid > 0, "launch %s", prog);
	if (pid <= 0)
		return 1;
	struct bstep *b = bstep_new(pid, err, sizeof err);
	CHECK(b != NULL, "bstep_new: %s", err);
	if (!b)
		return 1;

	/* int3: to blk_a from the entry, then blk_a -> blk_b straight. */
	uint8_t orig_a = byte_at(pid, a), orig_b = byte_at(pid, bb);
	CHECK(run_to(b, pid, a, BSTEP_INT3, -1, &st, &r) == 1 && r.rip == a,
	      "int3 run to blk_a: rip %#llx", (unsigned long long)r.rip);
	CHECK(byte_at(pid, a) == orig_a, "int3 lifted at blk_a");
	CHECK(!bstep_running(b, pid), "not running after the stop");
	struct user_regs_struct back;
	ptrace(PTRACE_GETREGS, pid, NULL, &back);
	CHECK(back.rip == a, "the rewound IP is written back");
	CHECK(run_to(b, pid, bb, BSTEP_INT3, -1, &st, &r) == 1 && r.rip == bb && r.rax == 3,
	      "int3 run to blk_b: rip %#llx rax %llu", (unsigned long long)r.rip,
	      (unsigned long long)r.rax);
	CHECK(byte_at(pid, bb) == orig_b, "int3 lifted at blk_b");

	/* A debug register: armed, RF set at the stop. */
	CHECK(run_to(b, pid, c, BSTEP_HW, 3, &st, &r) == 1 && r.rip == c && r.rax == 15,
	      "hw run to blk_c: rip %#llx rax %llu", (unsigned long long)r.rip,
	      (unsigned long long)r.rax);
	CHECK(r.eflags & BSTEP_EFLAGS_RF, "RF after a debug register stop");
	CHECK(peek_dr(pid, 3) == c && peek_dr(pid, 7) == inf_dr7_slot(3, DR_EXEC, 1),
	      "DR3 %#llx DR7 %#llx", (unsigned long long)peek_dr(pid, 3),
	      (unsigned long long)peek_dr(pid, 7));
	CHECK(byte_at(pid, c) != 0xcc, "nothing written to memory");
	/* A single step off the hit: the register disarmed first, RF not
	 * relied on (in some VMs it fires again under RF now and then,
	 * which stopped the step before its instruction). */
	CHECK(bstep_before_step(b, pid, &r, false, 0) == 0 && peek_dr(pid, 7) == 0,
	      "disarmed for the step: DR7 %#llx", (unsigned long long)peek_dr(pid, 7));
	ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL);
	waitpid(pid, &st, 0);
	ptrace(PTRACE_GETREGS, pid, NULL, &r);
	CHECK(r.rip == d && r.rax == 31, "stepped off the hit: rip %#llx",
	      (unsigned long long)r.rip);

	/* A fault before the end: told apart, the int3 lifted, the register
	 * still armed from before disarmed for an int3 run. */
	uint8_t orig_e = byte_at(pid, e);
	CHECK(run_to(b, pid, e, BSTEP_INT3, -1, &st, &r) == 0 && WIFSTOPPED(st) &&
	      WSTOPSIG(st) == SIGILL && r.rip == ud2, "SIGILL at the ud2 first: sig %d rip %#llx",
	      WIFSTOPPED(st) ? WSTOPSIG(st) : -1, (unsigned long long)r.rip);
	CHECK(byte_at(pid, e) == orig_e, "int3 lifted after a foreign stop");
	CHECK(peek_dr(pid, 7) == 0, "register disarmed for the int3 run: DR7 %#llx",
	      (unsigned long long)peek_dr(pid, 7));
	r.rip += 2; /* over the ud2, the signal dropped */
	ptrace(PTRACE_SETREGS, pid, NULL, &r);

	/* Armed, hit, then disarmed by the caller and armed again. */
	CHECK(run_to(b, pid, e2, BSTEP_HW, 2, &st, &r) == 1 && r.rip == e2, "hw run to blk_e2");
	CHECK(bstep_disarm(b, pid, 0) == 0 && peek_dr(pid, 7) == 0, "disarmed");
	/* Stopped there by the register, but the instruction is one that
	 * saves EFLAGS: disarmed and RF cleared before the step. */
	ptrace(PTRACE_SETREGS, pid, NULL, &r);
	CHECK(run_to(b, pid, e3, BSTEP_HW, 2, &st, &r) == 1 && r.rip == e3 &&
	      peek_dr(pid, 2) == e3, "hw re-armed at blk_e3");
	CHECK(bstep_before_step(b, pid, &r, true, 0) == 0 && peek_dr(pid, 7) == 0 &&
	      !(r.eflags & BSTEP_EFLAGS_RF), "disarmed, RF cleared: DR7 %#llx eflags %#llx",
	      (unsigned long long)peek_dr(pid, 7), (unsigned long long)r.eflags);
	ptrace(PTRACE_GETREGS, pid, NULL, &back);
	CHECK(!(back.eflags & BSTEP_EFLAGS_RF), "RF cleared in the thread");

	/* A register's run that its hit never ends (a VM that loses one; here
	 * an address never executed) goes no further than the thread's next
	 * syscall: stopped at its entry, not run on to the program's exit. */
	CHECK(run_to(b, pid, never, BSTEP_HW, 1, &st, &r) == 0 && WIFSTOPPED(st) &&
	      WSTOPSIG(st) == SIGTRAP && r.orig_rax != (unsigned long long)-1 &&
	      r.rax == (unsigned long long)-ENOSYS,
	      "a lost hit stops at the next syscall's entry: status %#x orig_rax %lld",
	      st, (long long)r.orig_rax);
	bstep_disarm(b, pid, 0);

	/* The end of the thread during a run. */
	CHECK(run_to(b, pid, never, BSTEP_INT3, -1, &st, &r) == 0 && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0, "exit during the run: status %#x", st);
	CHECK(!bstep_running(b, pid), "forgotten");
	bstep_free(b);
	if (failures)
		printf("%d failure(s)\n", failures);
	else
		printf("block_step: all checks passed\n");
	return failures ? 1 : 0;
}
