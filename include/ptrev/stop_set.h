/* What stops an execution that runs on its own: the breakpoints and
 * watchpoints gdb has set (Z packets), and the conditions gdb gave with
 * them (ConditionalBreakpoints), evaluated by their owner, the gdb layer.
 * A type of its own because every executor needs it and none owns it: the
 * live targets (a breakpoint whose condition is false is stepped over) and
 * the timeline (a search skips such hits). */
#ifndef PTREV_STOP_SET_H
#define PTREV_STOP_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct stop_point {
	int type;       /* Z type: 0/1 execution, 2 write, 3 read, 4 access */
	uint64_t addr;
	size_t len;     /* watched bytes (1 for breakpoints) */
};

struct stop_set {
	const struct stop_point *v;
	size_t n;
	/* Does the hit of thread tid at the breakpoint at pc count? Called
	 * while the program stands at the hit, so the state read through the
	 * executor is the state there. NULL: every hit counts. */
	bool (*holds)(void *ctx, pid_t tid, uint64_t pc);
	void *ctx;
};

#endif
