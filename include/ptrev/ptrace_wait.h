/* Waiting for traced tasks: waitpid retried when a signal handler
 * interrupts it. Every ptrace user of ptrev (the inferior's all-stop
 * machinery, the recorders' own event loops, the replayer's processes,
 * injected syscalls) waits through here, so that a signal arriving at ptrev
 * (SIGCHLD, a stop request) never makes one of them lose a stop or give up
 * early by accident. */
#ifndef PTREV_PTRACE_WAIT_H
#define PTREV_PTRACE_WAIT_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* waitpid(pid, status, flags), again while it fails with EINTR: returns
 * what waitpid returns (0 for nothing yet with WNOHANG), never -1 with
 * errno EINTR. */
pid_t ptrace_waitpid(pid_t pid, int *status, int flags);

/* The same for a caller that must notice a stop request made by a signal
 * handler (`ptrev record` stops on SIGINT, installed without SA_RESTART):
 * when *stop is set after an interruption, returns -1 with errno EINTR
 * instead of waiting again. stop NULL: as ptrace_waitpid. */
pid_t ptrace_waitpid_or_stop(pid_t pid, int *status, int flags,
			     const volatile sig_atomic_t *stop);

/* The next status of one traced task (any kind: __WALL). 0, or -1 with
 * errno when the task is not (or no longer) our child. */
int ptrace_wait_task(pid_t tid, int *status);

/* Has thread tid of process pid finished exiting (a zombie, or gone)? From
 * /proc: a zombie leader never stops again (its exit is reported only when
 * the last thread has exited), and an exiting thread may be seen before
 * its exit is. */
bool ptrace_task_dead(pid_t pid, pid_t tid);

/* Thread tid of process pid's state letter in /proc ('T': stopped, 't':
 * at a ptrace stop, 'Z': a zombie...); 0 when it cannot be read (gone). */
char ptrace_task_state(pid_t pid, pid_t tid);

#endif
