/* The full-state layer: a process standing exactly at a history position of
 * a recording, with every register and all memory as they were, produced by
 * deterministic re-execution (as rr does).
 *
 * The recorded program is launched again (same path, argv, environment,
 * cwd, no address-space randomisation, the recorded AT_RANDOM bytes) and
 * run forward at native speed: every syscall is emulated from the event
 * log (not executed: the recorded result and the memory it wrote are put
 * in place), except those that build the address space or the signal state
 * (mmap, munmap, mprotect, brk, mremap, madvise, arch_prctl, rseq,
 * rt_sigaction, rt_sigprocmask, sigaltstack, rt_sigreturn ...), which run
 * and must give the recorded result. rdtsc/rdtscp trap (PR_SET_TSC) and get
 * the recorded values; recorded signals with a handler are delivered at
 * their exact positions. Stopping at position N uses the history index: a
 * breakpoint at ip(N), each hit's position known from the history, single
 * steps for short distances. Every stop is checked against the history
 * (ip, syscall number and arguments at the recorded positions): a
 * divergence makes the state unavailable with the reason, never a wrong
 * value.
 *
 * Checkpoints are stopped forked copies of the replay process (clone
 * injected through ptrace), each knowing its position; a checkpoint is never
 * run itself, a fork of it is. They are kept dense near the last requested
 * position and exponentially sparser further back, at most
 * REPLAYER_MAX_CHECKPOINTS.
 *
 * Single-threaded recordings only: for more threads every seek answers
 * "multi-threaded full-state replay is not supported yet".
 *
 * Without an instruction counter (a VM has no PMU) a divergence that only
 * changes how many times a loop runs keeps every address right until the
 * next recorded event; so before a position past the stretch already
 * checked is shown, a throwaway fork runs on at native speed to the next
 * recorded event and must agree there (replayer.c: validate).
 *
 * Processes made here are children of the calling thread (ptrace): call
 * everything from one thread. They are always stopped between calls, so a
 * waitpid(-1) elsewhere (the live inferior's) sees no event of theirs.
 *
 * How the server uses it: one replayer per recording (replayer_new after
 * the recording is read or, live, once it has its first PT bytes;
 * replayer_sync after it grew). When gdb reads registers or memory (g, p,
 * m, x) while the selected thread stands in the past (position N <
 * history length): replayer_seek(r, tid, N) once per new position, then
 * replayer_get_regs / replayer_get_xstate / replayer_read_mem; on -1 print
 * the reason on stderr (once per position) and answer as PC-level replay
 * does (registers "xx", memory from the recording or E01). At the present
 * position the live process (or, for a saved recording, seek to N = the
 * history length) answers. `monitor checkpoints`: replayer_checkpoints.
 * replayer_free at the end of the session. */
#ifndef PTREV_REPLAYER_H
#define PTREV_REPLAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "ptrev/strbuf.h"
#include "ptrev/trace_file.h"

#define REPLAYER_MAX_CHECKPOINTS 16

struct replayer;

/* Prepare replaying td (borrowed: it must outlive the replayer; for a live
 * recording it may grow, see replayer_sync). Builds its own image and
 * history index. Launches nothing yet (the first seek does). NULL with a
 * message in err when the recording cannot be replayed at all (no program,
 * image cannot be built). */
struct replayer *replayer_new(const struct trace_data *td, char *err, size_t errlen);

/* td is the history of a tail of the event recording events (META
 * history_from: materialise.h): its position 0 is reached by replaying
 * events natively (borrowed: it must outlive the replayer). */
void replayer_set_events(struct replayer *r, const struct trace_data *events);

/* ...and copy, a parked replay process standing where that tail begins
 * (materialise_tail_to_memory's start_copy), is its position 0: adopted
 * (ptrace_handover.h) when first needed instead of replaying events
 * natively once more. Now the replayer's (killed by replayer_free if
 * never used). */
void replayer_give_start(struct replayer *r, pid_t copy);

/* ...and n parked replay processes that stand where pos[i] instructions
 * of the history (from the program's start) are done, made while it was
 * stepped (materialise_copies' cps): the replayer's first checkpoints,
 * adopted with its start, each checked against the history's
 * instruction there (one that differs is dropped). Now the replayer's. */
void replayer_give_checkpoints(struct replayer *r, const uint64_t *pos, const pid_t *pid,
			       size_t n);

/* A live recording grew (new PT bytes and events in td): index them. The
 * arrays of td may have been reallocated. Returns 0, -1 out of memory. */
int replayer_sync(struct replayer *r);

/* td is a saved recording: nothing will be added to it, so the history
 * counts its last instructions too where the recorder stopped mid-run
 * (history_seal). Returns 0, -1 out of memory. */
int replayer_seal(struct replayer *r);

/* Make the replay process stand at position pos of thread tid (pos = the
 * number of instructions tid had completed, as in the history index;
 * pos == history length is the end of the recording when the trace says
 * where the thread stood). Returns 0 when it does; -1 when the state at
 * pos is unavailable, with the reason in why (for the user: print it). */
int replayer_seek(struct replayer *r, pid_t tid, uint64_t pos, char *why, size_t whylen);

/* State of the replay process after a successful seek (-1 otherwise). */
int replayer_get_regs(struct replayer *r, struct user_regs_struct *regs);
/* NT_X86_XSTATE; *len in: buffer size, out: bytes filled. */
int replayer_get_xstate(struct replayer *r, void *buf, size_t *len);
/* Bytes read (short at an unmapped page), -1 if none or no state. */
ssize_t replayer_read_mem(struct replayer *r, uint64_t addr, void *buf, size_t len);

/* Where the replay process stands (valid after a successful seek). */
uint64_t replayer_position(const struct replayer *r);

/* Watchpoints in the past (gdb's Z2/Z4 with bc/bs), as gdb's `record
 * full` reports them: positions are "right after" the accessing
 * instruction, so seeking there shows the new value. An access is an
 * instruction of the thread that wrote (type 2) or read or wrote (type 4;
 * 3, a read watchpoint, is watched as 4: x86 cannot watch reads alone) any
 * byte of [addr, addr+len), found with hardware watchpoints while
 * re-executing (at most four aligned 1/2/4/8-byte pieces: e.g. 8 bytes at
 * any address, 32 aligned), or a recorded syscall result written there
 * (a read() into the range: at the syscall's position + 1). Kernel writes
 * that the event log does not hold (a signal frame) are not seen.
 *
 * find_prev: the largest *pos < before; find_next: the smallest
 * *pos > from (an instruction at position >= from), up to the end of the
 * recording. Exact, without an instruction counter (bisection by
 * re-execution). Returns 1 found, 0 none (the start / the end of the
 * recording reached), -1 with the reason in why (replay unavailable there,
 * range too large, no debug registers). What the replayer shows (the last
 * seek) is left as it was; checkpoints may be added. */
int replayer_find_prev_access(struct replayer *r, pid_t tid, uint64_t before,
			      uint64_t addr, size_t len, int type, uint64_t *pos,
			      char *why, size_t whylen);
int replayer_find_next_access(struct replayer *r, pid_t tid, uint64_t from,
			      uint64_t addr, size_t len, int type, uint64_t *pos,
			      char *why, size_t whylen);

/* `monitor checkpoints`: one line per checkpoint, "POSITION PID\n", in
 * increasing position. */
void replayer_checkpoints(struct replayer *r, struct strbuf *out);

/* A warning about the whole replay (e.g. the recording has no start state:
 * environment/auxv/AT_RANDOM taken from here, values derived from them may
 * differ), or NULL. Valid after the first seek. */
const char *replayer_warning(const struct replayer *r);

/* Counters for tests and benchmarks. */
struct replayer_stats {
	uint64_t launches;      /* times the program was started afresh */
	uint64_t adopted;       /* ...of them, from a tail's parked copy */
	uint64_t given;         /* checkpoints adopted from the history's making */
	uint64_t forks;         /* clones injected (checkpoints and runs) */
	uint64_t insns_run;     /* instructions executed by replay processes */
	uint64_t stops;         /* ptrace stops handled */
	uint64_t checkpoints;   /* checkpoints held now */
};
void replayer_get_stats(const struct replayer *r, struct replayer_stats *st);

/* Kill every process it made, free everything. NULL is fine. */
void replayer_free(struct replayer *r);

#endif
