/* `ptrev info --machine`: what this machine offers the recorders and the
 * replay, each asked of the machine itself (rr's `rr cpufeatures` answers
 * the same question for rr). Some hypervisors take the requests and do
 * nothing: debug registers that never trap, a PR_SET_TSC that lets rdtsc
 * through. The tests ask it too, and skip what cannot work here. */
#include "ptrev/cli.h"
#include "ptrev/debugregs.h"
#include "ptrev/pt_backend.h"
#include "ptrev/tsc_trap.h"

#include <stdio.h>

int machine_info_main(void)
{
	char why[512];
	bool pt = pt_backend_probe(why, sizeof why) == 0;
	if (pt)
		puts("intel pt: yes");
	else
		printf("intel pt: no (%s)\n", why);
	printf("debug registers: %s\n", inf_dr_traps()
		       ? "trap (hardware breakpoints and watchpoints)"
		       : "do not trap (its hypervisor ignores them): a replay runs to its places "
			 "and searches for breakpoint hits with int3; searches for watchpoint hits step");
	printf("rdtsc trap: %s\n", tsc_traps()
		       ? "yes (PR_SET_TSC: the values a program reads are recorded)"
		       : "no (its hypervisor ignores PR_SET_TSC): the TSC values a program reads are "
			 "not recorded, and its replay can differ where it uses them");
	return 0;
}
