/* The recording's sideband: which code is at which address. The process's
 * mappings (/proc/PID/maps) are written as TRACE_REC_MMAP at the start and
 * re-read after every syscall that changes the address space; differences
 * become MUNMAP/MMAP records. Executable mappings whose bytes a decoder
 * could not get from an unchanged file ([vdso], anonymous, deleted or
 * replaced files) are copied as TRACE_REC_CODE. Every distinct file mapped
 * executable (program, ld.so, libraries) is copied whole once, as
 * TRACE_REC_FILE, unless told not to (--no-copy). */
#ifndef PTREV_SIDEBAND_H
#define PTREV_SIDEBAND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/trace_file.h"

struct sideband;

/* memfd: /proc/PID/mem opened for reading (the code bytes). The records
 * go to w (a file, or memory: trace_writer_open_memory/keep). */
struct sideband *sideband_new(pid_t pid, int memfd, struct trace_writer *w);
void sideband_free(struct sideband *sb);
/* After an execve the old /proc/PID/mem no longer reads the new image. */
void sideband_set_memfd(struct sideband *sb, int memfd);

/* Copy each executable file into the recording (the default), or not. */
void sideband_set_copy_files(struct sideband *sb, bool on);

/* Re-read the maps; write what changed, attributed to thread tid at its
 * position pos (tid 0 for the initial map). Returns the number of changes
 * (0 = nothing changed), or -1 when the maps or a write failed. */
int sideband_update(struct sideband *sb, pid_t tid, uint64_t pos);

#endif
