/* Does PR_SET_TSC make rdtsc trap here (ptrev/tsc_trap.h)? A child asks
 * for the trap and reads the TSC: SIGSEGV kills it where the trap works;
 * it exits where the read went through. */
#include "ptrev/tsc_trap.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

static pthread_once_t probed = PTHREAD_ONCE_INIT;
static bool traps = true;

static bool probe(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return true; /* not known: as before, the trap trusted */
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0)
			_exit(2);
		volatile unsigned long long t = __rdtsc();
		(void)t;
		_exit(0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return true; /* not known (taken by another wait): trusted */
	/* Killed by SIGSEGV: trapped. Exit 0: the read went through. Exit 2:
	 * no such prctl (the recorder says so when it asks). */
	return !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void decide(void)
{
	const char *v = getenv("PTREV_TSC_TRAPS");
	if (v && strcmp(v, "0") == 0)
		traps = false;
	else if (!(v && strcmp(v, "1") == 0))
		traps = probe();
}

bool tsc_traps(void)
{
	pthread_once(&probed, decide);
	return traps;
}

void tsc_traps_warn(void)
{
	static bool said;
	if (tsc_traps() || said)
		return;
	said = true;
	fprintf(stderr, "ptrev: rdtsc does not trap on this machine (its hypervisor ignores "
		"PR_SET_TSC): the TSC values the program reads are not recorded, and a replay "
		"can differ where it uses them\n");
}
