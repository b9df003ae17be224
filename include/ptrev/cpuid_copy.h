/* Where glibc keeps what CPUID told it in a traced process (its answers
 * hold the APIC ID of the CPU that asked, which some hypervisors change
 * under the program): the state digests leave it out
 * (common/ptrace/cpuid_copy.c says why and how it is found). */
#ifndef PTREV_CPUID_COPY_H
#define PTREV_CPUID_COPY_H

#include <stdint.h>
#include <sys/types.h>

/* The range of process pid (stopped) that holds it in writable memory:
 * 1 with (address, length) in range, 0 for none (a dynamically linked
 * program's is read-only once relocated; a stripped static executable
 * has no symbol that tells it). */
int cpuid_copy_ranges(pid_t pid, uint64_t range[2]);

#endif
