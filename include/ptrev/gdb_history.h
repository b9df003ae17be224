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
/* Is t somewhere before the end of its history? */
bool gdb_history_in_past(const struct gdb_hist_thread *t);

#endif
