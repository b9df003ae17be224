/* Parking a stopped tracee and adopting it in another thread
 * (ptrace_handover.h). */
#include "ptrev/ptrace_handover.h"

#include "ptrev/ptrace_wait.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

int ptrace_park(pid_t pid)
{
	/* A SIGSTOP queued, then detached with no signal: the pending
	 * SIGSTOP is taken on the way back to user mode, before any
	 * instruction, and its default action stops the whole process (it
	 * has one thread: a fork's copy). Not the signal handed to
	 * PTRACE_DETACH: that one is dropped at a stop that is not a
	 * signal's delivery (the first stop of a copy whose tracer seized
	 * its parent is a PTRACE_EVENT_STOP), and the copy would run on,
	 * untraced, doing for real what the replay emulates. */
	if (kill(pid, SIGSTOP) < 0 || ptrace(PTRACE_DETACH, pid, NULL, NULL) < 0) {
		int saved = errno;
		ptrace_park_kill(pid);
		errno = saved;
		return -1;
	}
	/* Seen stopped, or killed: never left running. */
	for (int ms = 0; ms < 1000; ms++) {
		if (ptrace_task_state(pid, pid) == 'T')
			return 0;
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	ptrace_park_kill(pid);
	errno = ETIMEDOUT;
	return -1;
}

int ptrace_adopt(pid_t pid, long options, char *err, size_t errlen)
{
	int st = 0;
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)options) < 0) {
		snprintf(err, errlen, "taking over the copy %d: %s", (int)pid, strerror(errno));
		ptrace_park_kill(pid);
		return -1;
	}
	/* A seized process in group-stop (or about to enter it: the SIGSTOP
	 * may still be on its way) reports that stop to its new tracer at
	 * once. One that someone let go on (a SIGCONT) would leave this wait
	 * for ever: after a while it is interrupted. Not at once: an
	 * interrupt of a process already stopping adds a stop of its own
	 * after the next resume. */
	bool stopped = false;
	for (int ms = 0; ms < 200 && !stopped; ms++) {
		pid_t w = ptrace_waitpid(pid, &st, __WALL | WNOHANG);
		if (w < 0)
			break;
		stopped = w == pid;
		if (!stopped)
			nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	if (!stopped) {
		ptrace(PTRACE_INTERRUPT, pid, NULL, NULL);
		if (ptrace_wait_task(pid, &st) < 0) {
			snprintf(err, errlen, "the copy %d did not stop: %s", (int)pid,
				 strerror(errno));
			ptrace_park_kill(pid);
			return -1;
		}
	}
	if (!WIFSTOPPED(st)) {
		snprintf(err, errlen, "the copy %d did not stop (status %#x)", (int)pid, st);
		ptrace_park_kill(pid);
		return -1;
	}
	return 0;
}

void ptrace_park_kill(pid_t pid)
{
	int st;
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	/* Ours to reap (syscall_inject_fork_sibling: any thread of ptrev's
	 * may); exit signal 0 needs __WALL. */
	ptrace_waitpid(pid, &st, __WALL);
}
