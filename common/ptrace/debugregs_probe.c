/* Do this machine's debug registers trap?
 *
 * Why: some hypervisors take every write of DR0-DR7 and never raise the
 * #DB they program (a bhyve guest, AMD EPYC, kernel 6.18: gdb's own
 * `hbreak` and `watch` never stop there either, and gdbserver says OK to
 * Z1/Z2 all the same). A replay that runs to a hardware breakpoint there
 * runs past its place and meets the next syscall as a divergence, or never
 * stops. Asked once, before anything else is traced (a child of ours that
 * a waitpid(-1) loop could take): a child runs over an address DR0 holds,
 * and either stops there or exits. */
#include "ptrev/debugregs.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_once_t probed = PTHREAD_ONCE_INIT;
static bool traps = true;

/* What the probe's child runs; its first byte is the breakpoint's. */
static __attribute__((noinline)) void probe_mark(void)
{
	__asm__ volatile("" ::: "memory");
}

/* Its own write of the registers (debugregs.c's asks this file first). */
static int poke_dr(pid_t pid, int n, uint64_t value)
{
	return ptrace(PTRACE_POKEUSER, pid,
		      (void *)(offsetof(struct user, u_debugreg) + (size_t)n * sizeof(long)),
		      (void *)value) < 0 ? -1 : 0;
}

static bool probe(void)
{
	void (*volatile mark)(void) = probe_mark;
	pid_t pid = fork();
	if (pid < 0)
		return true; /* not known: as before, the registers trusted */
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		mark();
		_exit(0);
	}
	int st;
	bool ok = true;
	if (waitpid(pid, &st, 0) == pid && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP &&
	    poke_dr(pid, 0, (uint64_t)(uintptr_t)probe_mark) == 0 &&
	    poke_dr(pid, 7, 1) == 0 && /* DR0 enabled: execution, 1 byte */
	    ptrace(PTRACE_CONT, pid, NULL, NULL) == 0 && waitpid(pid, &st, 0) == pid)
		ok = WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP;
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) == pid && !WIFEXITED(st) && !WIFSIGNALED(st))
		;
	return ok;
}

static void decide(void)
{
	/* PTREV_DEBUG_REGISTERS=0 (tests): as on a machine whose registers
	 * never trap; =1: trusted without asking. */
	const char *v = getenv("PTREV_DEBUG_REGISTERS");
	if (v && strcmp(v, "0") == 0)
		traps = false;
	else if (!(v && strcmp(v, "1") == 0))
		traps = probe();
}

bool inf_dr_traps(void)
{
	pthread_once(&probed, decide);
	return traps;
}

const char *inf_dr_strerror(int err)
{
	return err == ENODEV ? "this machine's debug registers do not trap (its hypervisor "
			       "ignores them)" : strerror(err);
}
