/* Running a system call inside a stopped, ptrace-stopped thread of a traced
 * process, as if the program had made it: used by the sw recorder and the
 * replayer (prctl PR_SET_TSC, so that rdtsc traps) and by the replayer's
 * checkpoints (an injected fork). */
#ifndef PTREV_SYSCALL_INJECT_H
#define PTREV_SYSCALL_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Make thread tid (in a ptrace stop, not in a syscall-entry stop) execute
 * syscall nr with args (6 values; NULL = all zero). The registers and the
 * code bytes borrowed for the `syscall` instruction are restored
 * afterwards, so the program cannot tell. *result is rax after the call
 * (a negative errno on failure). Returns 0, or -1 with a message in err
 * when the injection itself failed (the thread is then left as it was
 * where possible). Signals arriving meanwhile are not lost: the first one
 * is returned in *pending_sig (0 = none) for the caller to deliver. */
int syscall_inject(pid_t tid, uint64_t nr, const uint64_t args[6],
		   int64_t *result, int *pending_sig, char *err, size_t errlen);

/* A copy of the single-threaded process pid (stopped as above, traced with
 * PTRACE_O_TRACECLONE): an injected clone() without CLONE_VM (its memory
 * copy-on-write) and with exit signal 0 (so that killing the copy sends pid
 * no SIGCHLD to hide). Both end stopped, with pid's registers and code as
 * they were; the copy is our tracee, *child its pid. Returns 0, or -1 with
 * a message in err (no copy is left then). No signal may be pending in pid:
 * any other stop than the clone's is a failure. */
int syscall_inject_fork(pid_t pid, pid_t *child, char *err, size_t errlen);
/* The same with CLONE_PARENT: the copy is the child of pid's parent (the
 * tracer's process), which is told of its stops (SIGCHLD) and reaps it,
 * not pid, whose replay must not see a signal it never had
 * (ptrace_handover.h parks such a copy). */
int syscall_inject_fork_sibling(pid_t pid, pid_t *child, char *err, size_t errlen);

/* Make process pid, stopped where an exec left it (one thread, its
 * stack fresh), exec path with argv and envp (copied onto its stack,
 * below its stack pointer): a path such as /proc/self/exe names the
 * program only from inside it. 0 once it stands at the new program's
 * first instruction, or -1 with err (the exec failed: it is as it was). */
int syscall_inject_exec(pid_t pid, const char *path, char *const argv[], char *const envp[],
			char *err, size_t errlen);

#endif
