/* Making an event recording's history in the background (replay/
 * materialise_job.c): a thread of ptrev's own re-executes the recording
 * stepped (materialise.h), with a replay process of its own, on another CPU
 * than its maker's where there is one (but a replay's, relaunch.h), at the
 * lowest priority, while the maker goes on (a gdb session looking at the
 * end state). The history is then ready, or nearer, when the first command
 * needs it. */
#ifndef PTREV_MATERIALISE_JOB_H
#define PTREV_MATERIALISE_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrev/materialise.h"
#include "ptrev/trace_file.h"

struct materialise_job;

/* The nice value of the job's thread and its replay process: the
 * session's own replays come first. */
#define MATERIALISE_JOB_NICE 19

/* Start making ev's history (ev must stay as it is until the job is
 * finished or cancelled). NULL with err when no thread could be made. */
struct materialise_job *materialise_job_start(const struct trace_data *ev, char *err,
					      size_t errlen);
/* ...or the history of its tail from event from (point: inside the
 * stretch before it, or NULL; copied), or from run `run` of its recorded
 * order (a multi-threaded recording), as materialise_tail_to_memory, at
 * the maker's priority: the maker waits for it, and can stop it (a gdb
 * user's Ctrl-C) where a call of its own could not be. copies (NULL: none)
 * as materialise_tail_to_memory's: its `from` is the job's once it
 * started (the caller's still where none could be); the copy parked
 * where the tail begins comes back through materialise_job_finish. */
struct materialise_job *materialise_job_start_tail(const struct trace_data *ev, size_t from,
						   const struct trace_state *point, size_t run,
						   struct materialise_copies *copies, char *err,
						   size_t errlen);

/* Where a job stands. */
struct materialise_job_status {
	bool done;              /* it ended (made the history, or failed) */
	bool failed;
	uint64_t events, events_total, instructions;
	double seconds;         /* since it started, or how long it took */
};
void materialise_job_status(struct materialise_job *j, struct materialise_job_status *out);

/* Wait for it to end and free it: 0 with *out the recording with its
 * history (free it with trace_data_free) and *st, or -1 with err; a
 * tail's copy parked where it begins in copies->start, the whole
 * history's checkpoints in copies->cp_* (none: 0; copies NULL: killed). */
int materialise_job_finish(struct materialise_job *j, struct trace_data *out,
			   struct materialise_stats *st, struct materialise_copies *copies,
			   char *err, size_t errlen);

/* Stop it at its next ptrace stop (its replay process killed), wait, free
 * it. NULL: nothing. */
void materialise_job_cancel(struct materialise_job *j);

#endif
