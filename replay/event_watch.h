/* Private to replay/: write watchpoints in the history of a
 * multi-threaded event recording, every thread at once.
 *
 * Why: the replayer's watch scans (replayer_watch.c) re-execute one
 * thread from forked checkpoints, which a process of several threads
 * cannot have; without this, a watchpoint in such a history was never
 * seen (a reverse-continue went to the start). The event replay that made
 * the history (event_hold.h) is stepped again instead, and the watched
 * bytes are compared at every stop of the stepper: a block and the
 * branch after it, a single step, a syscall's completion. The
 * instructions between two stops that changed the bytes are then stepped
 * one at a time in a second re-execution to find the one. The CPU's
 * writes and the kernel's (a read() into the watched bytes, a signal
 * frame) are found alike.
 *
 * What it finds: for a write watchpoint, a change of the bytes' value,
 * which is what gdb reports (a write of the same value it does not report
 * either). Read and access watchpoints are refused (their hits would be
 * the debug registers', which this VM loses some of).
 *
 * A search far back steps about as much as making that history did
 * (minutes for 10^8 instructions): it says how far it is every 10 s and
 * asks whether to give up (gdb's Ctrl-C) every tenth of a second. */
#ifndef PTREV_EVENT_WATCH_H
#define PTREV_EVENT_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrev/event_end.h"
#include "ptrev/trace_file.h"

/* Bytes a watch may cover (compared at every stop of the stepper). */
#define EVENT_WATCH_MAX_LEN 4096

/* The access to len bytes at addr (type: gdb's Z type, 2 write, 3 read,
 * 4 access) nearest to global position gpos of made (the history made
 * from the event recording ev, as event_hold_at counts it): back, the
 * last one before gpos; else the first one after. 1 with *after the
 * position right after it and *insns the instructions that made it (1; 0
 * where it came with none, between two: a signal's delivery); 0 when none
 * comes in the history; -1 with why (a read watch more than the three
 * debug registers hold, a replay that diverged). */
/* ... -2 where give_up (asked about every tenth of a second; NULL or no
 * ask: never) gave up first: gdb's Ctrl-C, or gdb gone. Progress is said
 * on stderr every 10 s. */
int event_watch_find(const struct trace_data *ev, const struct trace_data *made, uint64_t gpos,
		     bool back, int type, uint64_t addr, size_t len, uint64_t *after,
		     uint64_t *insns, const struct event_give_up *give_up, char *why,
		     size_t whylen);

#endif
