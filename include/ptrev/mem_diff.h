/* What a syscall the syscall table cannot describe wrote, found by
 * comparing the program's writable memory before and after it (issue 12:
 * an unknown ioctl, fcntl or prctl case no longer costs the recording its
 * state from there on). Exact where nothing else writes the memory
 * meanwhile: the recorders take it only while the program has one thread.
 * A copy of all writable memory is made at the entry, so it is kept for
 * the rare calls the table does not know. */
#ifndef PTREV_MEM_DIFF_H
#define PTREV_MEM_DIFF_H

#include <stddef.h>
#include <sys/types.h>

#include "ptrev/syscall_table.h"

struct mem_diff;

/* The writable mappings of pid (/proc/PID/maps) and their contents, read
 * with read_mem. NULL when they cannot be read or hold more than limit
 * bytes. */
struct mem_diff *mem_diff_take(pid_t pid, sc_read_fn read_mem, void *ctx, size_t limit);

/* The ranges whose bytes differ now from the copy, coalesced, in *out
 * (malloc'd; the caller frees it). Their number, or -1 when the memory
 * cannot be read again (a mapping gone, for one). */
int mem_diff_changes(struct mem_diff *d, sc_read_fn read_mem, void *ctx, struct sc_range **out);

void mem_diff_free(struct mem_diff *d);

#endif
