/* What one ptrace stop costs the block stepper, by the breakpoint that
 * ends a run (not a timed test): a child loops over two basic blocks of
 * 4 and 3 instructions, each ending in a conditional jump, and is driven
 *   insn  by PTRACE_SINGLESTEP, one stop per instruction;
 *   int3  by block_step.h's BSTEP_INT3 runs to each jump (the byte written
 *         and lifted per run), the jump emulated (block_emulate's SETREGS);
 *   hw    the same with BSTEP_HW: one debug register, re-armed per run
 *         since the two blocks end at different addresses;
 *   int3-1, hw-1  one run per iteration, to the jne (the js, never taken,
 *         runs natively): the same address every time, so the debug
 *         register is never re-armed.
 * Prints microseconds per stop and instructions per second, the best of
 * ROUNDS (default 5) interleaved rounds of ITERATIONS loop iterations
 * (default 20000). This is the measurement behind the choice of int3 for
 * a thread alone in its process (docs/design.md).
 *
 *   stop_cost [ITERATIONS] [ROUNDS] */
#include "ptrev/block_step.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char cost_loop[], cost_a[], cost_b[], cost_done[];

/* rdx iterations of: 4 instructions to a js never taken, 3 to a jne back. */
__asm__(".text\n"
	"cost_loop: add $1, %rax\n"
	"add $2, %rbx\n"
	"test %rax, %rax\n"
	"cost_a: js cost_done\n"
	"xor %rax, %rcx\n"
	"cmp %rdx, %rax\n"
	"cost_b: jne cost_loop\n"
	"cost_done: mov $60, %eax\n"
	"xor %edi, %edi\n"
	"syscall\n");

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A child stopped at cost_loop with rax = 0, rdx = n. */
static pid_t child(long n)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		__asm__ volatile("xor %%eax, %%eax\n jmp cost_loop" :: "d"(n));
		_exit(1);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_EXITKILL);
	struct user_regs_struct r;
	ptrace(PTRACE_GETREGS, pid, NULL, &r);
	r.rip = (uint64_t)(uintptr_t)cost_loop;
	r.rax = 0;
	r.rdx = (uint64_t)n;
	ptrace(PTRACE_SETREGS, pid, NULL, &r);
	return pid;
}

/* Single steps to the end: stops made. */
static long run_insn(pid_t pid)
{
	long stops = 0;
	int st;

	for (;;) {
		ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL);
		if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
			return stops;
		stops++;
	}
}

/* Native runs to each jump (only to the jne with one_stop), the jump
 * emulated (js never taken, jne taken while rax != rdx): stops made. */
static long run_blocks(pid_t pid, enum bstep_mech how, bool one_stop)
{
	char err[128];
	struct bstep *b = bstep_new(pid, err, sizeof err);
	struct user_regs_struct r;
	uint64_t a = (uint64_t)(uintptr_t)cost_a, bb = (uint64_t)(uintptr_t)cost_b;
	uint64_t stop = one_stop ? bb : a;
	long stops = 0;
	int st;

	if (!b) {
		fprintf(stderr, "stop_cost: %s\n", err);
		return -1;
	}
	for (;;) {
		if (bstep_run(b, pid, stop, how, 3, 0) < 0 || waitpid(pid, &st, 0) != pid)
			break;
		if (!WIFSTOPPED(st))
			break;
		ptrace(PTRACE_GETREGS, pid, NULL, &r);
		if (bstep_stopped(b, pid, st, &r) != 1) {
			fprintf(stderr, "stop_cost: unexpected stop at %#llx\n",
				(unsigned long long)r.rip);
			break;
		}
		stops++;
		/* Emulate the jump: js (2 bytes) falls through; jne goes
		 * back unless the count is reached. */
		if (stop == a) {
			r.rip = a + 2;
			stop = bb;
		} else {
			r.rip = r.rax != r.rdx ? (uint64_t)(uintptr_t)cost_loop : bb + 2;
			stop = r.rax == r.rdx ? 0 : one_stop ? bb : a;
		}
		r.eflags &= ~BSTEP_EFLAGS_RF;
		ptrace(PTRACE_SETREGS, pid, NULL, &r);
		if (!stop) {
			ptrace(PTRACE_CONT, pid, NULL, NULL);
			waitpid(pid, &st, 0);
			break;
		}
	}
	bstep_free(b);
	return stops;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	static const char *names[] = { "insn", "int3", "hw", "int3-1", "hw-1" };
	double best[5] = { 0 };
	long stops[5] = { 0 };

	for (int round = 0; round < rounds; round++) {
		for (int m = 0; m < 5; m++) {
			pid_t pid = child(m == 0 ? n / 4 : n);
			if (pid < 0)
				return 1;
			double t0 = now();
			long s = m == 0 ? run_insn(pid) :
				 run_blocks(pid, m % 2 ? BSTEP_INT3 : BSTEP_HW, m >= 3);
			double us = (now() - t0) * 1e6 / (double)(s > 0 ? s : 1);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			if (s > 0 && (!best[m] || us < best[m])) {
				best[m] = us;
				stops[m] = s;
			}
		}
	}
	printf("one stop, best of %d rounds (2-block loop, 7 instructions an iteration):\n",
	       rounds);
	for (int m = 0; m < 5; m++) {
		/* Instructions a stop: 1 stepped; 3.5 with two runs an
		 * iteration, 7 with one. */
		double per = m == 0 ? 1.0 : m < 3 ? 3.5 : 7.0;
		printf("  %-5s %7.2f us/stop  %9.0f insn/s  (%ld stops)\n", names[m], best[m],
		       best[m] > 0 ? per * 1e6 / best[m] : 0.0, stops[m]);
	}
	printf("  hw / int3 per stop: %.2f re-armed, %.2f same address\n",
	       best[1] > 0 ? best[2] / best[1] : 0.0, best[3] > 0 ? best[4] / best[3] : 0.0);
	return 0;
}
