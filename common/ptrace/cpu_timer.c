/* A stop after a thread's own CPU time (ptrev/cpu_timer.h). */
#include "ptrev/cpu_timer.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Thread tid's task-clock event: counting only, or (sample_period)
 * disabled until armed, waking at each overflow. */
static int task_clock(pid_t tid, uint64_t sample_period)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof a;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = sample_period;
	a.disabled = sample_period != 0;
	a.wakeup_events = sample_period != 0;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int cpu_timer_open(pid_t tid)
{
	int fd = task_clock(tid, 1000000000);
	if (fd < 0)
		return -1;
	/* The signal goes to the thread itself (F_OWNER_TID), as
	 * CPU_TIMER_SIGNAL with si_fd set, so that its stop tells it from
	 * any other. */
	struct f_owner_ex owner = {F_OWNER_TID, tid};
	if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETOWN_EX, &owner) < 0 ||
	    fcntl(fd, F_SETSIG, CPU_TIMER_SIGNAL) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int cpu_timer_arm(int fd, uint64_t ns)
{
	/* REFRESH 1: one overflow, then the event disables itself. */
	unsigned long long period = ns;
	if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &period) < 0 || ioctl(fd, PERF_EVENT_IOC_RESET, 0) < 0 ||
	    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) < 0)
		return -1;
	return 0;
}

void cpu_timer_disarm(int fd)
{
	if (fd >= 0)
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

bool cpu_timer_is(int fd, const siginfo_t *si)
{
	return fd >= 0 && si->si_signo == CPU_TIMER_SIGNAL && si->si_fd == fd;
}

void cpu_timer_close(int fd)
{
	if (fd < 0)
		return;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	close(fd);
}

int cpu_clock_open(pid_t tid)
{
	return task_clock(tid, 0);
}

uint64_t cpu_clock_read(int fd)
{
	uint64_t ns;
	return fd >= 0 && read(fd, &ns, sizeof ns) == (ssize_t)sizeof ns ? ns : 0;
}

static bool has(const char *line, const char *key, int sig)
{
	unsigned long long mask;
	size_t n = strlen(key);
	return strncmp(line, key, n) == 0 && sscanf(line + n, "%llx", &mask) == 1 &&
	       (mask >> (sig - 1)) & 1;
}

bool cpu_timer_let_through(pid_t tid, uint64_t *saved)
{
	uint64_t bit = 1ull << (CPU_TIMER_SIGNAL - 1), mask;
	if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof mask, saved) < 0 || !(*saved & bit))
		return false;
	mask = *saved & ~bit;
	return ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof mask, &mask) == 0;
}

int cpu_timer_mask_back(pid_t tid, uint64_t saved)
{
	return ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof saved, &saved) < 0 ? -1 : 0;
}

bool cpu_timer_pending(pid_t tid, int sig)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	bool yes = false;
	while (f && !yes && fgets(line, sizeof line, f))
		yes = has(line, "SigPnd:", sig) || has(line, "ShdPnd:", sig);
	if (f)
		fclose(f);
	return yes;
}
