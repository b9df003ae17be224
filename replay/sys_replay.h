/* Private to replay/: replaying one recorded syscall in a process stopped
 * at its entry (sys_replay.c), shared by the replayer (sw and materialised
 * recordings, one thread) and the event replay (event recordings, every
 * thread): the syscall is emulated (the recorded result and the memory it
 * wrote put in place) or, for those that build the address space or the
 * signal state, run for real and checked. */
#ifndef PTREV_SYS_REPLAY_H
#define PTREV_SYS_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "ptrev/syscall_table.h"
#include "ptrev/trace_file.h"

struct sys_replay {
	const struct trace_data *td;  /* for the file a mmap mapped */
	pid_t tid;                    /* stopped at the syscall's entry */
	int memfd;                    /* /proc/PID/mem, read-write */
	bool stepped_recording;       /* sw backend: TF was in r11 */
	uint64_t *stops;              /* ptrace stops counted here (may be NULL) */
	char *why;                    /* the reason of a failure */
	size_t whylen;
};

/* Is the entry stop (registers regs) the recorded syscall s: same number
 * and arguments? 0, or -1 with the difference in why. */
int sys_replay_check(const struct sys_replay *c, const struct trace_syscall *s,
		     const struct user_regs_struct *regs);

/* Syscalls run for real in a replay (syscall_table.h: SYSCALL_RUN, and
 * SYSCALL_RUN_OK where it succeeded): those that build the address space
 * or the signal state (which must give the recorded result). One that
 * failed in the recording did nothing, and is emulated. */
bool sys_replay_runs(const struct trace_syscall *s);

/* From the entry stop of s (registers entry, checked): emulate or run it,
 * ending at its exit stop with the recorded outcome in place (rax,
 * orig_rax, the memory it wrote). 0, or -1 with why. */
int sys_replay_do(const struct sys_replay *c, const struct trace_syscall *s,
		  const struct user_regs_struct *entry);

/* Does s make a process (fork, vfork, a clone without CLONE_THREAD)? The
 * recorders let such children go unrecorded, so a replay makes none:
 * sys_replay_fork emulates it, the parent told the recorded pid (also
 * where CLONE_PARENT_SETTID asked). A vfork child's writes to the memory it
 * shared with its parent before exec are not in the recording: a replay
 * leaves the parent's memory as it was (only the child's part of the
 * stack, below the parent's, is touched in practice). */
bool sys_replay_is_fork(const struct sys_replay *c, const struct trace_syscall *s);
/* clone's or clone3's (its struct clone_args read) flags, and where the
 * kernel writes the new tid: ptid (CLONE_PARENT_SETTID), ctid
 * (CLONE_CHILD_SETTID), 0 without the flag. False for another syscall or
 * an unreadable clone_args. */
bool sys_replay_clone_args(const struct sys_replay *c, const struct trace_syscall *s,
			   uint64_t *flags, uint64_t *ptid, uint64_t *ctid);
int sys_replay_fork(const struct sys_replay *c, const struct trace_syscall *s,
		    const struct user_regs_struct *entry);

/* Why a replay cannot reproduce s (syscall_table.h: a new thread where a
 * replay runs one, exec, shared memory, io_uring ...), or NULL where it
 * can: one that failed did nothing and is emulated. */
const char *sys_replay_unsupported(const struct trace_syscall *s);

#endif
