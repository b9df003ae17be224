/* tsc_trap: the probe's answer against a child of this test that traps
 * rdtsc as the recorders ask (PR_TSC_SIGSEGV) and reads the TSC: killed by
 * SIGSEGV where the probe says it traps, on to its exit where it says it
 * does not; PTREV_TSC_TRAPS=0 says no without asking (in a child: the
 * answer is taken once). */
#include "ptrev/tsc_trap.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "../check.h"

/* Did a child that asked for the trap and read the TSC die of SIGSEGV? */
static bool child_trapped(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
		volatile unsigned long long t = __rdtsc();
		(void)t;
		_exit(0);
	}
	int st;
	return waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
}

int main(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		setenv("PTREV_TSC_TRAPS", "0", 1);
		_exit(tsc_traps() ? 1 : 0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "PTREV_TSC_TRAPS=0: rdtsc taken for untrapped");
	bool says = tsc_traps();
	CHECK(says == child_trapped(), "the probe says rdtsc %s, and a child's rdtsc %s",
	      says ? "traps" : "does not trap", says ? "must trap" : "must not");
	if (failures)
		printf("%d failure(s)\n", failures);
	return failures != 0;
}
