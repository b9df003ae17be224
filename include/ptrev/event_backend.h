/* The event recorder backend (`--backend event`): the program runs at
 * native speed and ptrev stops it only for what is not deterministic:
 * syscalls (their results and the memory they wrote), signals, rdtsc (with
 * PR_SET_TSC), and thread switches. It writes no PT: the recording is the
 * event log, the start state and the sideband, and the history is made
 * later by re-executing it. Every event has an exact position without an
 * instruction counter (docs/trace-format.md, "Event recordings"):
 *  - synchronous signals (faults, int3, ud2) recur by themselves in a
 *    replay: logged, not placed;
 *  - an asynchronous signal that interrupts a syscall, or that the thread
 *    sent itself, is taken at that syscall's return;
 *  - one that arrives while the thread runs its own code is held until the
 *    thread's next syscall, and delivered before it;
 *  - a thread that runs on without a syscall past a bound while a signal
 *    waits for it, or while another thread waits for the CPU, is stopped
 *    where it is and the point logged by its state (a STATE record,
 *    include/ptrev/state_digest.h), where the signal is delivered or
 *    another thread gets the CPU;
 *  - threads run their own code one at a time (syscalls run beside it, as
 *    they may block), switching at syscalls and at STATE points; the order
 *    is logged as SCHED runs.
 * The program's `rseq` registration is refused (ENOSYS, as rr does): the
 * kernel would write the CPU number into its memory whenever it runs. */
#ifndef PTREV_EVENT_BACKEND_H
#define PTREV_EVENT_BACKEND_H

#include <signal.h>
#include <stdbool.h>

#include "ptrev/inferior.h"
#include "ptrev/trace_file.h"

struct event_record_opts {
	/* Set asynchronously (a SIGINT/SIGTERM handler) to stop: the program
	 * is killed, the recording ends there (status_kind 2). May be NULL. */
	volatile sig_atomic_t *stop;
	bool no_copy;          /* do not copy the mapped binaries (--no-copy) */
	/* How long a thread may run its own code without a syscall while a
	 * signal waits for it (signal_us) or another thread waits for the
	 * CPU (slice_us) before it is stopped at a STATE point. 0: defaults
	 * (5 and 50 ms). */
	unsigned signal_us, slice_us;
	/* META psb_period, written again when the program execs and the
	 * recording starts over with the new program (event_exec.c). */
	unsigned psb_period;
};

/* Record the launched, stopped inferior (inferior_launch, at its first
 * instruction; the caller has written META and the start state) until the
 * program exits or dies, or *opts->stop is set. Writes THREAD, MMAP/MUNMAP/
 * CODE/FILE, SYSCALL, SIGNAL, SIGFRAME, RDTSC, STATE and SCHED records and
 * fills *end (the caller writes END). The inferior is gone on return.
 * Returns 0, or -1 with a message in err (the program is killed; *end
 * still describes what was recorded, status_kind 2). */
int event_backend_record(struct inferior *inf, struct trace_writer *w,
			 const struct event_record_opts *opts, struct trace_end *end,
			 char *err, size_t errlen);

#endif
