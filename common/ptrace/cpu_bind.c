/* Binding the tracer and its tracee to one CPU (ptrev/cpu_bind.h). */
#include "ptrev/cpu_bind.h"

#include <sched.h>
#include <stdbool.h>
#include <unistd.h>

/* The CPUs ptrev could use before it bound itself: what a process let go
 * gets back. */
static cpu_set_t before;
static bool bound;

int cpu_bind_tracer_and(pid_t pid)
{
	cpu_set_t allowed, one;
	if (sched_getaffinity(0, sizeof allowed, &allowed) < 0)
		return -1;
	if (!bound)
		before = allowed;
	if (CPU_COUNT(&allowed) <= 1)
		return 0;
	int cpu = sched_getcpu();
	if (cpu < 0 || !CPU_ISSET(cpu, &allowed))
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
	return 0;
}

void cpu_bind_release(pid_t pid)
{
	if (bound)
		sched_setaffinity(pid, sizeof before, &before);
}
