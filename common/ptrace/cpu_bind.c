/* Binding the tracer and its tracee to one CPU (ptrev/cpu_bind.h). */
#include "ptrev/cpu_bind.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <unistd.h>

/* The CPUs ptrev could use before it bound itself: what a process let go
 * gets back. Two tracers of one ptrev (the gdb session's and a background
 * materialisation's) may bind at once: the lock keeps this consistent. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cpu_set_t before;
static bool bound;

int cpu_bind_tracer_and(pid_t pid)
{
	cpu_set_t allowed, one;
	int rc = -1;
	pthread_mutex_lock(&lock);
	if (sched_getaffinity(0, sizeof allowed, &allowed) < 0)
		goto out;
	if (!bound)
		before = allowed;
	rc = 0;
	if (CPU_COUNT(&allowed) <= 1)
		goto out;
	rc = -1;
	int cpu = sched_getcpu();
	if (cpu < 0 || !CPU_ISSET(cpu, &allowed))
		goto out;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(pid, sizeof one, &one) < 0)
		goto out;
	if (sched_setaffinity(0, sizeof one, &one) < 0) {
		sched_setaffinity(pid, sizeof allowed, &allowed);
		goto out;
	}
	bound = true;
	rc = 0;
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

int cpu_bind_thread_elsewhere(void)
{
	cpu_set_t mine, all, other;
	int rc = -1;
	pthread_mutex_lock(&lock);
	if (sched_getaffinity(0, sizeof mine, &mine) < 0)
		goto out;
	all = bound ? before : mine;
	CPU_XOR(&other, &all, &mine);
	CPU_AND(&other, &other, &all); /* ptrev's, not the maker's */
	rc = CPU_COUNT(&other) ? sched_setaffinity(0, sizeof other, &other) : 0;
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

void cpu_bind_release(pid_t pid)
{
	pthread_mutex_lock(&lock);
	if (bound)
		sched_setaffinity(pid, sizeof before, &before);
	pthread_mutex_unlock(&lock);
}
