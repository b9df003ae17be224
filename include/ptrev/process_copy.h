/* A stopped copy of a traced process whose memory is its own: the
 * replayer's checkpoints and the event replay's copies. A fork shares the
 * writable shared mappings (mmap MAP_SHARED, SysV shared memory) with
 * the process it copies, so a checkpoint's memory there would change as
 * the replay goes on from it, and going back to it would show later
 * values. The copy gets each of them as a mapping of its own with the
 * same bytes, still shared (so that it is left out of the state digest as
 * the recording's was: state_digest.h), at the same address with the same
 * protection. What the copy's /proc/PID/maps names them changes (an
 * anonymous shared mapping, "/dev/zero (deleted)"): a replay emulates the
 * reads a program makes of its maps, so the program cannot tell. */
#ifndef PTREV_PROCESS_COPY_H
#define PTREV_PROCESS_COPY_H

#include <stddef.h>
#include <sys/types.h>

/* syscall_inject_fork, then the copy's writable shared mappings made its
 * own. 0 with *child, or -1 with err (no copy left). */
int process_copy(pid_t pid, pid_t *child, char *err, size_t errlen);
/* The same from syscall_inject_fork_sibling (the copy a child of ours). */
int process_copy_sibling(pid_t pid, pid_t *child, char *err, size_t errlen);

/* Make process pid's (stopped as for syscall_inject) writable shared
 * mappings its own, as above. 0, or -1 with err. */
int process_unshare_memory(pid_t pid, char *err, size_t errlen);

#endif
