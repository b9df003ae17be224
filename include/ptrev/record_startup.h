/* What a recording must keep so that re-execution starts exactly as the
 * recorded program did: its environment, auxiliary vector and the kernel's
 * AT_RANDOM bytes (the stack canary and pointer guard come from them).
 * The replayer (replay/replayer_start.c) reads the records; what both sides
 * do to the process itself is the ptrace layer's (ptrev/start_state.h). */
#ifndef PTREV_RECORD_STARTUP_H
#define PTREV_RECORD_STARTUP_H

#include <sys/types.h>

#include "ptrev/record_meta.h"
#include "ptrev/trace_file.h"

/* Write the META records "env" (one per variable, in order; then
 * "env_count" with their number, so that an empty environment is told
 * from an old recording), "auxv" (the raw /proc/PID/auxv bytes as lowercase
 * hex) and "at_random" (the 16 bytes at AT_RANDOM, hex) for process pid,
 * stopped under ptrace before it ran (right after inferior_launch).
 * Returns 0, or -1 when something could not be read or written (what could
 * be is written anyway; the replayer then warns about the rest). */
int record_startup_meta(struct trace_writer *w, pid_t pid);
/* The same, for any META sink (record_meta.h; the live engine's). */
int record_startup_meta_to(record_meta_fn put, void *ctx, pid_t pid);
int record_startup_hide_vdso_to(record_meta_fn put, void *ctx, pid_t pid);

/* Keep the program's clock reads off the vDSO's kernel data, as a replay
 * will too (start_state_hide_vdso in ptrev/start_state.h: its clock
 * functions become syscalls), and write META "vdso" = "hidden" so that the
 * replayer does the same. pid must stand at its first instruction after
 * execve. Returns 0, -1 if the vDSO could not be patched or the record not
 * written. */
int record_startup_hide_vdso(struct trace_writer *w, pid_t pid);
/* The patch alone: start_state_hide_vdso, by the name the live server and
 * the tests call it. */
int startup_hide_vdso(pid_t pid);

#endif
