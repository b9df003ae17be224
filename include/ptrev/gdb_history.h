/* The server's view of a recorded history: per thread, the instructions it
 * executed (a history index over its PT) and the position gdb stands at.
 * Position p means "instruction p is the next to execute"; p == count is
 * the end of the history (the live present, or the end of a recording).
 * At a past position only what the history knows is shown: the PC, and
 * read-only memory from the recording; everything else is unavailable. */
#ifndef PTREV_GDB_HISTORY_H
#define PTREV_GDB_HISTORY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/code_memory.h"
#include "ptrev/history.h"
#include "ptrev/trace_file.h"
#include "ptrev/trace_image.h"

struct gdb_hist_thread {
	pid_t tid;
	struct history *h;
	uint64_t pos;
	size_t fed;          /* bytes of the thread's PT appended so far */
	uint64_t end_ip;     /* where it stands after its last instruction */
	bool end_ip_known;
};

struct sched_map;

struct gdb_history {
	const struct trace_data *td;
	struct trace_image img;
	struct code_memory *mem;
	struct gdb_hist_thread *threads;
	size_t nthreads;
	bool saved;          /* a saved recording: there is no live process */
	/* Live recordings map new code as they run: images built later are
	 * copied into img.image (which the histories hold) and kept here. */
	struct trace_image *later;
	size_t nlater;
	size_t img_nmmaps, img_ncode; /* sideband the image covers */
	/* Thread switches (the recording's SCHED runs): when they cover every
	 * thread's history, the program stands at one global position, gpos
	 * instructions of all threads executed, and each thread's pos follows
	 * from it; moving one thread moves the others with it. Otherwise
	 * (no schedule: the pt backend, a killed recorder's file) each thread
	 * moves alone. */
	struct sched_map *sched;
	size_t sched_fed;    /* td->sched runs added to sched */
	bool sched_broken;   /* a run contradicted the others: never global */
	bool sched_warned;   /* told the user the order is unknown */
	bool global;         /* the schedule covers every thread's history */
	uint64_t gpos;
};

/* Build the history of every thread in td. Returns 0, or -1 with err. */
int gdb_history_open(struct gdb_history *gh, const struct trace_data *td, bool saved,
		     char *err, size_t errlen);
void gdb_history_close(struct gdb_history *gh);
struct gdb_hist_thread *gdb_history_thread(struct gdb_history *gh, pid_t tid);
/* Index the PT that live threads produced since the last call; threads at
 * the end of their history stay at the (new) end. */
int gdb_history_sync(struct gdb_history *gh);
/* The PC at thread t's position (false if unknown: e.g. the end of an
 * exited thread). */
bool gdb_history_pc(struct gdb_hist_thread *t, uint64_t *pc);
/* The same, and with a global order also the PC of a thread whose history
 * ends inside a syscall (it was blocked there when the program ended). */
bool gdb_history_pc_of(struct gdb_history *gh, struct gdb_hist_thread *t, uint64_t *pc);
/* Is t somewhere before the end of its history? */
bool gdb_history_in_past(const struct gdb_hist_thread *t);

/* Move thread t to its position pos. With a global order the program
 * moves there: instruction pos of t is next, everything before it has
 * executed and nothing after it (pos == t's end: just after its last
 * instruction). Without one, only t moves. */
void gdb_history_move(struct gdb_history *gh, struct gdb_hist_thread *t, uint64_t pos);
/* t executes its next instruction (and, with a global order, whatever
 * other threads executed before it). */
void gdb_history_step(struct gdb_history *gh, struct gdb_hist_thread *t);
/* Where t's instruction pos falls in the global order (pos == t's end:
 * just after its last); without a global order, pos itself. */
uint64_t gdb_history_global_of(const struct gdb_history *gh, const struct gdb_hist_thread *t,
			       uint64_t pos);
/* The whole program at global position g (global order only). */
void gdb_history_set_global(struct gdb_history *gh, uint64_t g);
/* Everything executed, all threads (global order), or t alone. */
bool gdb_history_at_end(const struct gdb_history *gh, const struct gdb_hist_thread *t);
/* Stand where the recording ended, each thread with a PC where one is
 * known: a thread that ended in a syscall (exit) stands on it. Returns the
 * thread to report: the one a fatal signal killed, else the one that ran
 * last (global order), else the first. */
struct gdb_hist_thread *gdb_history_to_end(struct gdb_history *gh);
/* Thread t alone at the end of its history, as gdb_history_to_end puts
 * each thread without a global order. */
void gdb_history_thread_to_end(struct gdb_hist_thread *t);
/* Does thread t exist at the current position (created, not yet ended)?
 * Always true without a global order. */
bool gdb_history_thread_exists(const struct gdb_history *gh, const struct gdb_hist_thread *t);
/* Internals of gdb_history.c and gdb_history_global.c: take the schedule
 * runs added to td since the last call (was_at_end: the program stood at
 * the end of the history, and stays there); is the whole program at the
 * end (global order only); the PC of a thread whose history ends inside a
 * syscall (global order only). */
void gdb_history_sched_sync(struct gdb_history *gh, bool was_at_end);
bool gdb_history_sched_at_end(const struct gdb_history *gh);
bool gdb_history_end_pc(const struct gdb_history *gh, struct gdb_hist_thread *t, uint64_t *pc);

#endif
