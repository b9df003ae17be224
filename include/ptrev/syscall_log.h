/* Which user memory a system call wrote: the recorder reads those ranges
 * back from the inferior after the call and stores them in the event log,
 * so that replay can emulate the call instead of running it. */
#ifndef PTREV_SYSCALL_LOG_H
#define PTREV_SYSCALL_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sc_range {
	uint64_t addr;
	uint64_t len;
};

/* Reads inferior memory; returns bytes read or -1. */
typedef long (*sc_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

/* Fill out[0..max) with the ranges syscall nr (args, completed with
 * result) wrote; read_mem reads structures the call used (iovecs,
 * msghdr). Returns the number of ranges, or -1 when the syscall is not in
 * the table (its writes are unknown). Ranges beyond max are dropped. */
int syscall_log_writes(uint64_t nr, const uint64_t args[6], int64_t result,
		       sc_read_fn read_mem, void *arg, struct sc_range *out,
		       int max);

/* Does the syscall change the address space (mappings, protections)? */
bool syscall_changes_maps(uint64_t nr);

#endif
