/* waitpid for traced tasks, retried on EINTR: the one copy of the loop every
 * ptrace user needs (see include/ptrev/ptrace_wait.h). */
#include "ptrev/ptrace_wait.h"

#include <errno.h>
#include <stddef.h>
#include <sys/wait.h>

pid_t ptrace_waitpid_or_stop(pid_t pid, int *status, int flags,
			     const volatile sig_atomic_t *stop)
{
	for (;;) {
		pid_t w = waitpid(pid, status, flags);
		if (w >= 0 || errno != EINTR)
			return w;
		if (stop && *stop)
			return -1; /* errno is still EINTR */
	}
}

pid_t ptrace_waitpid(pid_t pid, int *status, int flags)
{
	return ptrace_waitpid_or_stop(pid, status, flags, NULL);
}

int ptrace_wait_task(pid_t tid, int *status)
{
	return ptrace_waitpid(tid, status, __WALL) == tid ? 0 : -1;
}
