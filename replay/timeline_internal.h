/* Shared by the timeline's files (include/ptrev/timeline.h), bottom up:
 *   timeline_threads.c  the recorded threads: their histories and positions
 *   timeline_order.c    the global order across threads (SCHED runs)
 *   timeline_anchor.c   where a held replay gets to natively
 *   timeline_state.c    the state at the current position (the replayer)
 *   timeline.c          opening, growing and closing a timeline
 *   timeline_search.c   moving: steps and searches in both directions */
#ifndef PTREV_TIMELINE_INTERNAL_H
#define PTREV_TIMELINE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/code_memory.h"
#include "ptrev/history.h"
#include "ptrev/materialise.h"
#include "ptrev/timeline.h"
#include "ptrev/trace_file.h"
#include "ptrev/trace_image.h"

struct sched_map;
struct replayer;

struct tl_thread {
	pid_t tid;
	struct history *h;
	uint64_t pos;
	size_t fed;          /* bytes of the thread's PT indexed so far */
	uint64_t end_ip;     /* where it stands after its last instruction */
	bool end_ip_known;
};

struct timeline {
	const struct trace_data *td;
	bool saved;          /* a saved recording: there is no live process */
	struct trace_image img;
	struct code_memory *mem;
	struct tl_thread *threads;
	size_t nthreads;
	/* Live recordings map new code as they run: images built later are
	 * copied into img.image (which the histories hold) and kept here. */
	struct trace_image *later;
	size_t nlater;
	size_t img_nmmaps, img_ncode; /* sideband the image covers */

	/* The global order (timeline_order.c): when the schedule covers every
	 * thread's history, the program stands at global position gpos and
	 * each thread's pos follows from it. */
	struct sched_map *sched;
	size_t sched_fed;    /* td->sched runs added to sched */
	uint64_t sched_fed_last; /* how much of the last of them: a recording
				  * being made grows its last run in place */
	bool sched_broken;   /* a run contradicted the others: never global */
	bool sched_warned;   /* told the user the order is unknown */
	bool global;
	uint64_t gpos;

	/* Full state by re-execution (timeline_state.c). */
	struct replayer *replayer;
	bool replayer_failed;  /* could not be created: PC level only */
	pid_t replay_tid;      /* where the replayer stands: valid when */
	uint64_t replay_pos;   /*   replay_state is 1 (-1: unavailable there) */
	int replay_state;
	char state_why[512];   /* why, where replay_state is -1 or creation failed */

	/* A history made from an event recording (events: that recording)
	 * with threads in a global order: the whole program held at gpos
	 * (event_hold.h) instead, valid where hold_state is 1 at hold_gpos. */
	const struct trace_data *events;
	pid_t start_copy;      /* for the replayer (timeline_give_start), 0: none */
	/* For the replayer too (timeline_give_checkpoints): its cps. */
	struct materialise_copies given;
	struct event_hold *hold;
	uint64_t hold_gpos;
	int hold_state;

	/* What the last move could not do (timeline_take_move_note). */
	char move_note[400];
	bool end_after_access; /* timeline_end_after_access, until a move */
	/* Asked during long searches (timeline_set_alive). */
	bool (*alive)(void *ctx);
	void *alive_ctx;
};

/* ---- timeline_threads.c ---- */
struct tl_thread *tl_thread(const struct timeline *tl, pid_t tid);
/* tid's thread, else the first (there is always one). */
struct tl_thread *tl_thread_or_first(const struct timeline *tl, pid_t tid);
int tl_add_thread(struct timeline *tl, pid_t tid, char *err, size_t errlen);
/* New code mapped by a live recording into the image; new threads; the PT
 * every thread produced since the last call. 0 / -1. */
int tl_threads_sync(struct timeline *tl);
uint64_t tl_count(const struct tl_thread *t);
bool tl_thread_in_past(const struct tl_thread *t);
/* The PC at t's position from its own history (false: unknown there). */
bool tl_thread_pc(const struct tl_thread *t, uint64_t *pc);

/* ---- timeline_anchor.c ---- */
struct event_hold_anchor;
/* Where a replay held at global position gpos gets to natively: true with
 * *a (event_hold.h), false when stepping from the run's start costs
 * little or nothing can be counted to. */
bool tl_hold_anchor(struct timeline *tl, uint64_t gpos, struct event_hold_anchor *a);

/* ---- timeline_order.c ---- */
/* Take the schedule runs added since the last call (was_at_end: the
 * program stood at the end and stays there). */
void tl_order_sync(struct timeline *tl, bool was_at_end);
bool tl_order_at_end(const struct timeline *tl);
void tl_set_global(struct timeline *tl, uint64_t g);
/* Where t's instruction pos falls in the global order (pos == t's count:
 * just after its last); without a global order, pos itself. */
uint64_t tl_global_of(const struct timeline *tl, const struct tl_thread *t, uint64_t pos);
/* Move t to pos (with a global order: the whole program moves there). */
void tl_move(struct timeline *tl, struct tl_thread *t, uint64_t pos);
/* t executes its next instruction (and what others executed before it). */
void tl_step(struct timeline *tl, struct tl_thread *t);
bool tl_at_end(const struct timeline *tl, const struct tl_thread *t);
/* t alone at the end of its history (on its last instruction when it
 * ended inside a syscall, so that it has a PC). */
void tl_thread_to_end(struct tl_thread *t);
struct tl_thread *tl_to_end(struct timeline *tl);
bool tl_thread_exists(const struct timeline *tl, const struct tl_thread *t);
/* The PC at t's position, also for a thread whose history ends inside a
 * syscall (global order: it was blocked there when the program ended). */
bool tl_pc(const struct timeline *tl, const struct tl_thread *t, uint64_t *pc);

/* ---- timeline_state.c ---- */
/* The replayer, created on first use; false if it cannot be (the reason
 * printed once). */
bool tl_ensure_replayer(struct timeline *tl);
void tl_state_free(struct timeline *tl);
/* Several threads of an event recording's history in one order: the
 * state is the event replay held at the global position (event_hold.h),
 * not the replayer's. */
bool tl_state_by_hold(const struct timeline *tl);

#endif
