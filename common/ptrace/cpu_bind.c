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

/* Bind the calling thread and pid to cpu (-1: the one the calling thread
 * runs on), one of those ptrev may use: 1 bound there, 0 cpu is not one
 * of them (nothing done), -1 with errno. Under the lock. */
static int bind_to(pid_t pid, int cpu)
{
	cpu_set_t allowed, one;
	if (sched_getaffinity(0, sizeof allowed, &allowed) < 0)
		return -1;
	if (!bound)
		before = allowed;
	if (cpu >= 0 && (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &before)))
		return 0;
	if (cpu < 0 && CPU_COUNT(&allowed) <= 1)
		return 1;
	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0 || !CPU_ISSET(cpu, &before))
		return -1;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(pid, sizeof one, &one) < 0)
		return -1;
	if (sched_setaffinity(0, sizeof one, &one) < 0) {
		sched_setaffinity(pid, sizeof allowed, &allowed);
		return -1;
	}
	bound = true;
	return 1;
}

int cpu_bind_tracer_and(pid_t pid)
{
	pthread_mutex_lock(&lock);
	int rc = bind_to(pid, -1);
	pthread_mutex_unlock(&lock);
	return rc < 0 ? -1 : 0;
}

int cpu_bind_tracer_and_on(pid_t pid, int cpu)
{
	pthread_mutex_lock(&lock);
	int rc = cpu >= 0 ? bind_to(pid, cpu) : 0;
	if (rc == 0 && bind_to(pid, -1) < 0)
		rc = -1;
	pthread_mutex_unlock(&lock);
	return rc;
}

void cpu_bind_tracer_on(int cpu)
{
	pthread_mutex_lock(&lock);
	if (cpu >= 0)
		bind_to(0, cpu);
	pthread_mutex_unlock(&lock);
}

int cpu_bind_index(void)
{
	cpu_set_t mine;
	if (sched_getaffinity(0, sizeof mine, &mine) < 0 || CPU_COUNT(&mine) != 1)
		return -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &mine))
			return i;
	return -1;
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

int cpu_bind_step_aside(cpu_set_t *saved)
{
	if (sched_getaffinity(0, sizeof *saved, saved) < 0)
		return -1;
	return cpu_bind_thread_elsewhere();
}

void cpu_bind_step_back(const cpu_set_t *saved)
{
	sched_setaffinity(0, sizeof *saved, saved);
}

void cpu_bind_release(pid_t pid)
{
	pthread_mutex_lock(&lock);
	if (bound)
		sched_setaffinity(pid, sizeof before, &before);
	pthread_mutex_unlock(&lock);
}
