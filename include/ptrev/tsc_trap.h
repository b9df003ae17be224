/* Does PR_SET_TSC make rdtsc trap on this machine?
 *
 * The recorders trap the program's rdtsc/rdtscp (PR_TSC_SIGSEGV) to log
 * the values it reads. Some hypervisors run the guest with the TSC
 * readable whatever the guest kernel asks (seen: a Firecracker guest on an
 * AMD EPYC, kernel 6.18: prctl succeeds, rdtsc runs): the program then
 * reads the TSC unseen, its values are not in the recording, and a replay
 * reads others (the dynamic loader keeps the time its relocations took in
 * its data: every STATE point's memory digest then differs).
 *
 * Asked once, by a child that traps rdtsc and reads it: call it before
 * anything is traced (cli_main does), as its child could be taken by a
 * waitpid(-1) of another thread. PTREV_TSC_TRAPS=0 answers no without
 * asking (tests), =1 yes. */
#ifndef PTREV_TSC_TRAP_H
#define PTREV_TSC_TRAP_H

#include <stdbool.h>

bool tsc_traps(void);
/* Where it does not: say so on stderr, once (a recorder, as it asks for
 * the trap). */
void tsc_traps_warn(void);

/* The recording's META key and value that say its program read the TSC
 * unseen (record_startup.c; ptrev info, the replay's warning). */
#define TSC_META_KEY "rdtsc"
#define TSC_META_UNTRAPPED "not trapped"

#endif
