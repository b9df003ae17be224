/* An event recording cut short where its replay must stop: at the entry of
 * a recorded syscall that no replay can reproduce (SysV shared memory,
 * io_uring, AIO, userfaultfd: syscall_table.h), so that everything before
 * it can still be debugged with full state instead of nothing. The cut
 * recording reads as if its recorder had been killed there (no END): the
 * thread that made the syscall stands at its entry, which the log does
 * not hold, and every other thread where its last run of the recorded
 * order before that ended (at the entry of the syscall that ended the
 * run, likewise not held, or at its STATE point). Positions keep their
 * numbers: a cut recording is the original's prefix. */
#ifndef PTREV_EVENT_CUT_H
#define PTREV_EVENT_CUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/trace_file.h"

/* *out is td cut at the entry of thread tid's syscall event `event`. Its
 * event, mapping, thread and order arrays are its own; everything else
 * (META, code, file copies, the recorded bytes) is td's, which must
 * outlive it: free it with event_cut_free, never trace_data_free. 0, or
 * -1 with err (td has no such syscall, or its thread order does not hold
 * it). */
int event_cut(const struct trace_data *td, pid_t tid, uint64_t event, struct trace_data *out,
	      char *err, size_t errlen);
/* The same at the end of run `run` of td's thread order, whose last
 * event must be a syscall the thread was in when the next run began (not
 * one that completes within the run: an exit, a clone, an mprotect),
 * so that the thread stands where the whole history has it there: before
 * its syscall instruction. 0, or -1 with err. */
int event_cut_after_run(const struct trace_data *td, size_t run, struct trace_data *out,
			char *err, size_t errlen);
/* The same at the entry of thread tid's last syscall event before event
 * `event` that a cut can end at (a replay that diverged as tid went for
 * `event`: the syscalls before met the recording's, so the state at the
 * last one's entry is as re-executed everywhere else), *at that event.
 * 0, or -1 with err (none among the last EVENT_CUT_BEFORE_TRIES). */
#define EVENT_CUT_BEFORE_TRIES 64
int event_cut_before(const struct trace_data *td, pid_t tid, uint64_t event,
		     struct trace_data *out, uint64_t *at, char *err, size_t errlen);
/* Where a replay of td failed at thread tid's event `event`: event_cut
 * there (a syscall no replay reproduces), or, where it diverged,
 * event_cut_before; *at the event cut at. */
int event_cut_where_failed(const struct trace_data *td, pid_t tid, uint64_t event,
			   bool diverged, struct trace_data *out, uint64_t *at, char *err,
			   size_t errlen);
void event_cut_free(struct trace_data *out);
/* Does syscall s complete within the run of the recorded order it ends,
 * the thread not held at its entry until its next run? An exit, a
 * clone, one that changes the address space or that the table cannot
 * describe (the CPU kept: syscall_keeps_cpu, kept_cpu). The replay
 * (event_replay.c) and a cut (which keeps such a syscall) agree by it. */
bool event_cut_completes_in_run(const struct trace_syscall *s);

#endif
