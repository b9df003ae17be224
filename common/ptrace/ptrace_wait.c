/* waitpid for traced tasks, retried on EINTR: the one copy of the loop every
 * ptrace user needs; and whether a task has finished exiting (see
 * include/ptrev/ptrace_wait.h). */
#include "ptrev/ptrace_wait.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

char ptrace_task_state(pid_t pid, pid_t tid)
{
	char path[80], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the name may contain anything */
	return p && p[1] ? p[2] : 0;
}

bool ptrace_task_dead(pid_t pid, pid_t tid)
{
	char state = ptrace_task_state(pid, tid);
	return state == 0 || state == 'Z' || state == 'X';
}
