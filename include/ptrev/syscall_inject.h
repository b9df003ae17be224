/* Running a system call inside a stopped, ptrace-stopped thread of the
 * inferior, as if the program had made it: used by the recorder (prctl
 * PR_SET_TSC) and by checkpointing (an injected fork()). */
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

#endif
