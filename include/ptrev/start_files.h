/* What a recorded program inherited that only syscalls show it: the file
 * descriptors open at its exec (what each one is and how it is open) and
 * its place in its session (process group, controlling terminal, whether
 * its group has the terminal). Kept as META records so that `ptrev info`
 * tells the user how the recording started.
 *
 * A replay needs nothing more: every way a program learns these facts is
 * a syscall (fcntl, fstat, ioctl on the terminal, getsid, readlink of
 * /proc/self/fd ...) whose result the recording holds, and no syscall a
 * replay runs for real takes a descriptor (a file mapping is replayed from
 * the bytes the recording copied). So a replay shows the recorded facts
 * whatever descriptors and terminal `ptrev replay` itself has
 * (tests/reverse/start_fds.py). */
#ifndef PTREV_START_FILES_H
#define PTREV_START_FILES_H

#include <sys/types.h>

#include "ptrev/record_meta.h"

/* META "fd" (one per open descriptor, in number order: "N HOW TARGET",
 * HOW being read-only, write-only or read-write, then ",append",
 * ",non-blocking", ",terminal" as they apply; TARGET what /proc/PID/fd/N
 * names) and "session" ("group=leader|member session=leader|member
 * foreground=yes|no terminal=PATH|none", the terminal last: it may hold
 * spaces) of process pid, read from /proc; ptrev info shows them.
 * Returns 0, or -1 when something could not be read or written. */
int start_files_meta(record_meta_fn put, void *ctx, pid_t pid);

#endif
