/* Private to replay/: starting the recorded program again as it started
 * (relaunch.c): the same path, argv, environment, working directory,
 * auxv and AT_RANDOM bytes, address-space randomisation off, the vDSO
 * hidden when the recording hid it, rdtsc trapped where it was while
 * recording.
 * Shared by the replayer and the event replay. */
#ifndef PTREV_RELAUNCH_H
#define PTREV_RELAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>

#include "ptrev/inferior.h"
#include "ptrev/trace_file.h"

/* How every replay process is traced: clones followed (threads, and the
 * copies injected as checkpoints), killed with its tracer. */
#define RELAUNCH_PTRACE_OPTIONS \
	(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL)

struct relaunch {
	const struct trace_data *td; /* its binaries' copies (binary_copies.h) */
	char *path, *cwd;
	/* The file path named (META exe; NULL: not recorded), and whether
	 * path names it only from inside the process (/proc/self/exe). */
	char *exe;
	bool path_inside;
	char **argv, **envp;      /* envp NULL: not recorded, ours is used */
	uint8_t at_random[16];
	bool have_at_random;
	uint8_t *auxv;
	size_t auxv_len;
	/* The signals it started with ignored and blocked (recordings from
	 * before these were kept: ptrev's, as then). */
	bool have_signals;
	uint64_t sig_ignored, sig_blocked;
	/* Its resource limits, umask, personality (recordings from before
	 * these were kept: ours). */
	struct inherited_limits limits;
	int cpu;                  /* the CPU it ran on (META cpu_index), or -1 */
	bool tsc_untrapped;       /* rdtsc was not trapped (META rdtsc) */
	char warning[512];        /* what the recording lacks, or "" */
};

/* The start state from the recording's META (what is missing is taken
 * from this process and named in warning). 0, or -1 with why. */
int relaunch_read(struct relaunch *rl, const struct trace_data *td, char *why, size_t whylen);
void relaunch_free(struct relaunch *rl);

/* Launch it, stopped at its first instruction, traced with
 * PTRACE_O_TRACESYSGOOD | TRACECLONE | EXITKILL, its start state checked
 * against the recorded one; hide_vdso: hide the vDSO as the recording did.
 * *pid, and *memfd its /proc/PID/mem (read-write). 0, or -1 with why (no
 * process is left then). */
int relaunch_start(const struct relaunch *rl, bool hide_vdso, pid_t *pid, int *memfd, char *why,
		   size_t whylen);

/* A parked copy of such a process (ptrace_handover.h) taken over by the
 * calling thread as relaunch_start leaves a launch: traced with the same
 * options, the thread and the copy on the CPU the recording ran on (a
 * tail's job thread stands on another CPU than the session's: there,
 * every stop of the copy crossed CPUs, and a tail stepped at a sixth of
 * its rate), *memfd its /proc/PID/mem. 0, or -1 with why (the copy is
 * killed then). */
int relaunch_adopt(const struct relaunch *rl, pid_t pid, int *memfd, char *why, size_t whylen);

#endif
