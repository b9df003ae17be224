/* Tests of the /proc/PID/maps reader (common/ptrace/proc_maps.c): this
 * process's own mappings hold a writable private one around a static
 * variable, an executable one around main, and [stack] by its name; the
 * mappings come in address order, and a process that does not exist has
 * none. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ptrev/proc_maps.h"
#include "../check.h"

static int variable = 1;

int main(void)
{
	FILE *f = proc_maps_open(getpid());
	CHECK(f != NULL);
	struct proc_mapping m;
	uint64_t var = (uintptr_t)&variable, code = (uintptr_t)&main, prev_end = 0;
	bool saw_var = false, saw_code = false, saw_stack = false, ordered = true;
	while (f && proc_maps_next(f, &m)) {
		ordered = ordered && m.start < m.end && m.start >= prev_end;
		prev_end = m.end;
		if (m.start <= var && var < m.end)
			saw_var = m.perms[1] == 'w' && m.perms[3] == 'p';
		if (m.start <= code && code < m.end)
			saw_code = m.perms[2] == 'x' && m.name[0] == '/';
		saw_stack = saw_stack || strcmp(m.name, "[stack]") == 0;
	}
	if (f)
		fclose(f);
	CHECK(saw_var, " the static variable's mapping is writable and private");
	CHECK(saw_code, " main's mapping is executable and names its file");
	CHECK(saw_stack, " [stack] is named");
	CHECK(ordered, " the mappings come in address order");
	CHECK(proc_maps_open(0x7ffffff0) == NULL, " no such process");
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
