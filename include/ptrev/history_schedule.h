/* The global order of a recording's instructions across threads, from its
 * schedule (SCHED runs, ptrev/trace_file.h): lets the server stand at one
 * position of the whole program ("G instructions of all threads have
 * executed") and say where every thread is there, which thread executed
 * the G-th instruction, and where a given instruction of a thread falls.
 *
 * Global index g counts from 0 over all runs in order. A thread's position
 * p (as in the per-thread history: instruction p is its next) maps to the
 * global index of that instruction. Lookups are O(log runs). */
#ifndef PTREV_HISTORY_SCHEDULE_H
#define PTREV_HISTORY_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/trace_file.h"

struct sched_map;

struct sched_map *sched_map_new(void);
void sched_map_free(struct sched_map *m);

/* Append a run (the next in global order). Merged into the previous run
 * when it continues it. A thread's first run may start at any pos (a
 * recording started mid-run); later runs must start where its previous one
 * ended. Returns 0, or -1 (nothing changed) for a run that breaks that
 * rule or has count 0, or on allocation failure. */
int sched_map_add(struct sched_map *m, const struct trace_sched_run *run);

/* Instructions in the schedule, all threads together. */
uint64_t sched_map_total(const struct sched_map *m);
/* Instructions of tid in the schedule (its last run's end; 0 if none). */
uint64_t sched_map_thread_end(const struct sched_map *m, pid_t tid);
/* The position tid's first run starts at (0 for a thread recorded from its
 * first instruction); false if tid has no run. */
bool sched_map_thread_start(const struct sched_map *m, pid_t tid, uint64_t *pos);

/* The global index of tid's instruction pos; false if the schedule does
 * not hold it. */
bool sched_map_global(const struct sched_map *m, pid_t tid, uint64_t pos, uint64_t *g);
/* The instruction at global index g: its thread and position there; false
 * when g >= total. */
bool sched_map_at(const struct sched_map *m, uint64_t g, pid_t *tid, uint64_t *pos);
/* tid's position once the first g instructions (global indices < g) have
 * executed: how far its runs before g got. A thread whose first run starts
 * at or after g stands at that run's pos. 0 for a thread with no run. */
uint64_t sched_map_thread_pos(const struct sched_map *m, pid_t tid, uint64_t g);

/* Threads with runs, in the order of their first run; *out malloc'ed. */
size_t sched_map_threads(const struct sched_map *m, pid_t **out);

#endif
