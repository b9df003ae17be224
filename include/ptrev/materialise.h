/* Making the history of an event recording (docs/trace-format.md, "Event
 * recordings"): the recording is re-executed (every thread in the recorded
 * order, every event met where the recording says) with every instruction
 * single-stepped and encoded as the sw backend encodes it, so the result is
 * the recording the sw backend would have made of the same execution: the
 * same META, sideband and events with positions in instructions, a PT
 * stream per thread, SCHED runs in instructions, END. For a deterministic
 * program it decodes to exactly the instructions the sw backend records.
 * Everything downstream (history index, timeline, replayer, decode,
 * btrace) then works on it as on an sw recording. */
#ifndef PTREV_MATERIALISE_H
#define PTREV_MATERIALISE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/event_end.h"
#include "ptrev/trace_file.h"

struct materialise_stats {
	uint64_t instructions;  /* stepped, all threads */
	uint64_t stops;         /* ptrace stops it took */
	uint64_t ns;            /* how long it took */
	size_t resumed_at;      /* a tail's replay began at a copy (struct
	                           materialise_copies) with this many events
	                           done; 0: at the program's start */
	bool cut_short;         /* the thread order ended before the program
	                           did (a recorder stopped early): the history
	                           ends there */
	/* A failure at a syscall no replay can reproduce: where
	 * (event_cut.h makes the recording that ends there). */
	struct event_end_failure failed_at;
};

/* How far a materialisation has gone, for another thread to read while it
 * runs (a background one: materialise_job.h), and how that thread asks it
 * to stop. */
struct materialise_progress {
	atomic_bool stop;                    /* set: give up at the next stop */
	atomic_uint_fast64_t events;         /* events of the log replayed */
	atomic_uint_fast64_t events_total;   /* all of them */
	atomic_uint_fast64_t instructions;   /* made so far, all threads */
};

/* One or two lines on stderr: how much history was made and how long
 * it took; whether it ends before the program did. */
void materialise_say_made(const struct materialise_stats *st);

/* Every event of every thread of ev (what progress counts up to). */
size_t materialise_event_count(const struct trace_data *ev);

/* The events a tail's history holds (what its progress counts to): from
 * the one thread's event from, or from run `run` of the recorded order
 * (both 0: all of them). */
size_t materialise_tail_events(const struct trace_data *ev, size_t from, size_t run);

/* Is td an event recording whose positions still count events (its
 * history not made yet)? */
bool materialise_needed(const struct trace_data *td);

/* Re-execute ev and write the recording with its history to w (a file, or
 * a writer keeping it in memory). 0, or -1 with err (the replay diverged,
 * the program cannot be started again, it was asked to stop, ...). st and
 * progress may be NULL. */
int materialise(const struct trace_data *ev, struct trace_writer *w,
		struct materialise_stats *st, struct materialise_progress *progress, char *err,
		size_t errlen);

/* The same into memory: *out is the recording with its history (free it
 * with trace_data_free). */
int materialise_to_memory(const struct trace_data *ev, struct trace_data *out,
			  struct materialise_stats *st, struct materialise_progress *progress,
			  char *err, size_t errlen);

/* The history of a tail only (single-threaded recordings): the program
 * replayed natively up to its thread's event `from` (after event from - 1,
 * where a stretch begins) and stepped from there to the end. The result
 * is a recording whose history starts there (META history_from = from:
 * its positions count from there; mappings made before are there from its
 * start; events before it are left out). A replayer shows its state with
 * the event recording beside it (replayer_set_events). Made first, so
 * that the end of a long recording can be stepped back through at once
 * (server/target/history_event.c). */
/* point (NULL: none) is where the tail begins inside the stretch before
 * event from (event_end_tail_point): the thread is run natively on to it
 * and stepped from there; the result holds it as its one STATE record.
 * A multi-threaded recording's tail begins at the start of a run of its
 * recorded order instead (run set, from 0; META history_from_run = run):
 * every thread that lives there starts its history where it stands, the
 * events each made before are left out, and the threads made before are
 * there from its start; its state is the event replay's held at a
 * position (event_hold.h), which runs natively up to there.
 * progress as materialise's (NULL: nobody asks, nothing stops it). */
/* Copies of replay processes (ptrace_handover.h) that spare a one-thread
 * tail's making and showing a native replay from the program's start
 * each. NULL: none. */
/* Fewer than the replayer's own (REPLAYER_MAX_CHECKPOINTS). */
#define MATERIALISE_CHECKPOINTS 12
struct materialise_copies {
	/* In: a copy parked where the thread had done its events before
	 * from_next (event_end_take_copy; from_next <= the tail's from),
	 * which the tail's replay starts from; always taken (0: none). */
	pid_t from;
	size_t from_next;
	/* Out: a copy of the tail's replay parked where the tail begins,
	 * for the tail's replayer (replayer_give_start); now the caller's
	 * (0: none made). */
	pid_t start;
	/* Out, for the whole history of a one-thread recording (from the
	 * program's start): copies of its replay made while it was stepped
	 * (inside stretches too), about twice as far apart at each step back
	 * from the end, parked for the history's replayer
	 * (replayer_give_checkpoints), oldest first; now the caller's
	 * (materialise_copies_kill where not given). A replayer reaches a
	 * position in a long loop from the nearest (a trap a pass), not from
	 * the program's start: a minute for a loop of 7 M instructions. */
	size_t ncps;
	uint64_t cp_pos[MATERIALISE_CHECKPOINTS];
	pid_t cp_pid[MATERIALISE_CHECKPOINTS];
};
/* Kill what copies still holds (parked, nobody to adopt them). */
void materialise_copies_kill(struct materialise_copies *copies);
int materialise_tail_to_memory(const struct trace_data *ev, size_t from,
			       const struct trace_state *point, size_t run,
			       struct trace_data *out, struct materialise_stats *st,
			       struct materialise_progress *progress,
			       struct materialise_copies *copies, char *err, size_t errlen);
/* A tail that ends early (a piece of the history): *view is ev as if its
 * recorder had stopped at its one thread's event `last` (done, or for a
 * syscall at its entry; later events left out, no END), sharing ev's
 * arrays (never trace_data_free it; it lives as long as ev does). A tail
 * of the view made with materialise_tail_to_memory holds the stretches
 * from its event from through event last only, so going back to a hit
 * far from the recording's end steps only what lies between. 0, or -1
 * when ev is not one thread's with its events in order. */
int materialise_cut(const struct trace_data *ev, size_t last, struct trace_data *view);
/* The same, cut inside the stretch before event st->pos instead, at the
 * point st describes (a breakpoint's hit: event_end_hit_point): the
 * events before that one, and st as the view's last, as if the recorder
 * had stopped the thread there for gdb. The view's STATE records are a
 * copy, *owned (free it once the view is no longer used); st's own
 * pointers (skip, sp_bytes) are copied with them. 0, or -1. */
int materialise_cut_at(const struct trace_data *ev, const struct trace_state *st,
		       struct trace_data *view, struct trace_state **owned);
/* A made history's META history_from (0: it starts at the program's start). */
size_t materialise_tail_from(const struct trace_data *td);
/* A multi-threaded tail's META history_from_run (0: none). */
size_t materialise_tail_run(const struct trace_data *td);
/* ...and the point inside the stretch before that event where it starts
 * (its one STATE record), or NULL: right after event history_from - 1. */
const struct trace_state *materialise_tail_point(const struct trace_data *td);

#endif
