/* The CPU this runs on, as Intel PT decoders want it (vendor string and
 * family/model/stepping with the extended fields folded in). */
#ifndef PTREV_CPU_ID_H
#define PTREV_CPU_ID_H

struct cpu_id {
	char vendor[13];   /* "GenuineIntel", "AuthenticAMD", ... */
	unsigned family, model, stepping;
};

/* Returns 0, or -1 if cpuid is not available. */
int cpu_id_read(struct cpu_id *id);

#endif
