/* The lines of /proc/PID/maps, parsed: one reader for the places that
 * walk a process's mappings (the state digest, the vDSO's range, the
 * memory comparison of an unknown syscall). */
#ifndef PTREV_PROC_MAPS_H
#define PTREV_PROC_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct proc_mapping {
	uint64_t start, end;
	char perms[5];   /* "rw-p" */
	uint64_t inode;  /* of the mapped file; each shared anonymous mapping and
			  * System V segment is a file of its own; 0 otherwise */
	/* The path (up to its first space) or [stack], [vvar] ...; "" when
	 * anonymous. Whole: a loader found by its file's name in a long
	 * path (proc_maps_is_loader) was missed when it was cut at 63 bytes. */
	char name[4096];
};

/* /proc/PID/maps opened for proc_maps_next, or NULL. fclose it. */
FILE *proc_maps_open(pid_t pid);

/* The next mapping; false at the end. Lines that do not parse are skipped. */
bool proc_maps_next(FILE *f, struct proc_mapping *m);

/* The PROT_* bits of a maps line's permissions ("rw-p"). */
int proc_maps_prot(const char *perms);

/* Is m the dynamic loader's own (a mapping of its ld-linux* file, or of a
 * replay's memory file holding the recording's copy of it)? Where
 * rdtsc does not trap, the loader keeps TSC values there: the state
 * digest leaves its writable part out, and the event recorder keeps it
 * with the program's entry point. */
bool proc_maps_is_loader(const struct proc_mapping *m);

#endif
