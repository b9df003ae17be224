/* Handing a stopped tracee from one tracer thread to another. ptrace ties
 * a tracee to the thread that attached it: a tail's history is made by a
 * thread of ptrev's own (materialise_job.h), whose replay passes the place
 * where the tail begins, and the replayer that shows the state there runs
 * in the session's thread. A copy forked there is parked by the first
 * (detached, stopped by SIGSTOP: it runs no instruction in between) and
 * adopted by the second (seized, its stop waited for), so that the
 * replayer need not replay the program natively up to there once more.
 * The copy is a child of ptrev's own (syscall_inject_fork_sibling): its
 * stop notifies ptrev, not the replay process it was forked from, whose
 * replay would otherwise meet a SIGCHLD the recording never had.
 *
 * A parked copy is traced by no one: if ptrev dies before adopting it, it
 * stays stopped until killed (PTRACE_O_EXITKILL no longer covers it). The
 * window is the time between making a tail and the first state shown in
 * it. */
#ifndef PTREV_PTRACE_HANDOVER_H
#define PTREV_PTRACE_HANDOVER_H

#include <stddef.h>
#include <sys/types.h>

/* pid, in a ptrace-stop of the caller's, detached and left stopped. 0, or
 * -1 with errno (pid is then killed). */
int ptrace_park(pid_t pid);

/* A parked pid traced by the calling thread with options, in a ptrace-stop
 * (its group-stop, reported as PTRACE_EVENT_STOP). 0, or -1 with err
 * (pid is then killed). */
int ptrace_adopt(pid_t pid, long options, char *err, size_t errlen);

/* A parked pid that nobody will adopt (or one traced by the caller),
 * killed and reaped. 0: nothing. */
void ptrace_park_kill(pid_t pid);

#endif
