/* Private to replay/: the full state of a multi-threaded event recording
 * at one position of its history, every thread at once.
 *
 * Why: the replayer (replayer.h) re-executes one thread and keeps forked
 * checkpoints, which a process of several threads cannot have (fork copies
 * only the calling thread). The event replay (event_replay.h) re-executes
 * every thread in the recorded order, and the history of an event
 * recording was made by stepping exactly that replay (materialise.c): its
 * global order of instructions is the order in which the replay completes
 * them. So stepping the replay again from the start and stopping after
 * its gpos-th instruction leaves the whole program where the history's
 * global position gpos is: every thread's registers, all memory.
 *
 * What it costs: a re-execution from the start for every new position
 * (nothing is kept between positions): natively (near the program's own
 * speed between its events) up to a few runs of the recorded order before
 * the position, stepped from there (some 200,000 instructions a second
 * here), but for the run that holds the position, where the thread runs
 * natively to an anchor the history chose (below) and steps the rest.
 * Which run holds the position comes from the history's own thread
 * order (made: SCHED runs counted in instructions, one per run of the
 * event order that ran any), matched to the event order by thread. A thread held at the entry of a syscall (its run
 * ended there; the syscall completes when it runs next) is shown as it
 * stood before the syscall instruction, as the history places it. */
#ifndef PTREV_EVENT_HOLD_H
#define PTREV_EVENT_HOLD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/amd64_regs.h"
#include "ptrev/trace_file.h"

struct event_hold;

/* A place inside the run that holds a position, reached natively: the
 * thread (recorded tid) runs alone from global instruction start (the
 * first of a stretch of it with no event inside, up to the position) to
 * global instruction at, where it stands on its passes-th pass of pc
 * counted from start (timeline_anchor.c chooses it from the history).
 * Stepped from there. Without one, a hold steps the whole run, and the two
 * before it, from their start: a run can be tens of millions of
 * instructions, minutes at the stepper's rate. */
struct event_hold_anchor {
	pid_t tid;
	uint64_t pc, passes;
	uint64_t start, at;
};

/* Re-execute the event recording ev (borrowed) and hold it before global
 * instruction gpos of the history made, made from it; through anchor when
 * given (NULL: none). NULL with why when the replay failed (through an
 * anchor: met something on the way there) or ended first.
 * PTREV_HOLD_ANCHOR_SAY (tests): whether the anchor was used is said on
 * stderr. */
struct event_hold *event_hold_at(const struct trace_data *ev, const struct trace_data *made,
				 uint64_t gpos, const struct event_hold_anchor *anchor, char *why,
				 size_t whylen);
void event_hold_free(struct event_hold *h);

/* How many runs of ev's order can run natively before gpos (runs from
 * first, made's first: materialise_tail_run), and how many of made's
 * instructions they hold (*done): a replay that steps from there on
 * counts made's positions (also event_watch.c's). */
size_t event_hold_native_prefix(const struct trace_data *ev, const struct trace_data *made,
				size_t first, uint64_t gpos, uint64_t *done);

/* Thread rec_tid's registers (general and XSAVE) there: 0; 1 when rcx
 * and r11 are not known (it stands before a syscall instruction that the
 * re-execution ran natively: the instruction overwrote both); -1 when it
 * does not exist there. */
int event_hold_registers(struct event_hold *h, pid_t rec_tid, struct amd64_regfile *rf);
/* Memory there: bytes read, -1 when none. */
ssize_t event_hold_read(struct event_hold *h, uint64_t addr, void *buf, size_t len);

#endif
