/* The timeline of a recording, as rr's ReplayTimeline: where the recorded
 * program stands in its history, how it moves there (back and forth, a step
 * or to the nearest breakpoint hit, watched access or recorded signal), and
 * what its state is at that point. No protocol here: the targets
 * (server/target) turn requests into these calls and stops into replies.
 *
 * Positions. A thread's position p means "instruction p of that thread is
 * the next to execute" (p instructions completed); p == the thread's
 * instruction count is the end of its history (the live present while
 * recording, the end of a saved recording). With the recording's schedule
 * (SCHED runs) covering every thread, the program stands at one global
 * position and every thread's position follows from it: moving one thread
 * moves the others as they ran, and searches stop at any thread's events.
 * Without one (the pt backend, a killed recorder's file), each thread
 * moves alone.
 *
 * State. At a past position the full state (registers, memory) comes from
 * re-execution (replayer.h), created on first use; where that is not
 * possible only what the history knows is given: the PC, and read-only
 * memory from the recording. Never the live values. */
#ifndef PTREV_TIMELINE_H
#define PTREV_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/amd64_regfile.h"
#include "ptrev/stop_set.h"
#include "ptrev/strbuf.h"
#include "ptrev/trace_file.h"

struct timeline;

/* A timeline over td (borrowed; a live recording's td may grow and move:
 * call timeline_sync after it did). saved: a saved recording, there is no
 * live process at the end. Every thread stands at the end of its history.
 * NULL with a message in err. */
struct timeline *timeline_open(const struct trace_data *td, bool saved, char *err, size_t errlen);
/* td is the history made from the event recording events (borrowed: it
 * must outlive tl): with several threads in a global order, the full state
 * at a position comes from re-executing events to there, every thread at
 * once (the replayer re-executes one thread only). */
void timeline_set_events(struct timeline *tl, const struct trace_data *events);
/* The parked copy of where tl's history (a tail) begins, for its replayer
 * (replayer_give_start); now tl's. */
void timeline_give_start(struct timeline *tl, pid_t copy);
/* The whole history's checkpoints (copies' cps: parked copies at
 * positions of tl's history, from the program's start), for its replayer
 * (replayer_give_checkpoints); now tl's (copies' cps emptied). */
struct materialise_copies;
void timeline_give_checkpoints(struct timeline *tl, struct materialise_copies *copies);
/* What a long search in the history (a watchpoint's in a multi-threaded
 * one) asks about every tenth of a second: true stops it, and the move
 * ends where it stood (TIMELINE_INTERRUPTED). NULL: never. */
void timeline_set_alive(struct timeline *tl, bool (*alive)(void *ctx), void *ctx);
/* Kills the replay processes, frees everything. NULL is fine. */
void timeline_close(struct timeline *tl);
/* Index what a live recording added since the last call; threads at the
 * end of their history stay at the (new) end. 0, or -1. */
int timeline_sync(struct timeline *tl);
const struct trace_data *timeline_data(const struct timeline *tl);
bool timeline_saved(const struct timeline *tl);

/* ---- threads ---- */
/* The recorded threads, in creation order. */
size_t timeline_thread_count(const struct timeline *tl);
pid_t timeline_thread_tid(const struct timeline *tl, size_t i);
bool timeline_has_thread(const struct timeline *tl, pid_t tid);
/* tid when it is a recorded thread, else the first one: the thread a
 * request about "the current thread" means. */
pid_t timeline_thread_or_first(const struct timeline *tl, pid_t tid);
/* The threads that exist at the current position (created, not yet ended;
 * every recorded thread without a global order). *ids is malloc'ed (free
 * it); returns the count. */
size_t timeline_threads_here(const struct timeline *tl, pid_t **ids);
/* One position for all threads (the schedule covers them all)? */
bool timeline_global(const struct timeline *tl);

/* ---- where the program stands ---- */
struct timeline_where {
	uint64_t pos, count;   /* the thread's position and instruction count */
	bool at_end;           /* nothing more to execute (all threads, with a
	                          global order; else this one) */
	bool global;
	uint64_t gpos, gtotal; /* the global position and total (global only) */
};
void timeline_where(struct timeline *tl, pid_t tid, struct timeline_where *w);
/* Does tid stand before the end of its history? */
bool timeline_in_past(const struct timeline *tl, pid_t tid);
/* Does every thread stand at the end (global), or tid at its own end? */
bool timeline_at_end(const struct timeline *tl, pid_t tid);
/* Stand where the recording ended; returns the thread to report: the one
 * a fatal signal killed, else the one that ran last, else the first. A
 * thread that ended in a syscall (exit) stands on it, so it has a PC. */
pid_t timeline_to_end(struct timeline *tl);
/* Stand at tid's position pos (clamped to its count; with a global order
 * the whole program moves there). */
void timeline_move_to(struct timeline *tl, pid_t tid, uint64_t pos);
/* With a global order: the whole program at global position g (clamped
 * to the total); nothing without one. */
void timeline_move_global(struct timeline *tl, uint64_t g);
/* Instructions recorded, all threads. */
uint64_t timeline_insn_total(const struct timeline *tl);

/* ---- moving ---- */
/* What stops a move: gdb's points and conditions (stop_set.h). A hit's
 * condition is evaluated while the timeline stands at the candidate hit,
 * so holds() may read the state there through this timeline. */
enum timeline_stop_kind {
	TIMELINE_STEP,       /* one instruction moved */
	TIMELINE_BREAKPOINT, /* a breakpoint hit whose condition holds */
	TIMELINE_WATCH,      /* a watched access (point names which) */
	TIMELINE_SIGNAL,     /* a recorded signal delivery (sig), going forward */
	TIMELINE_BEGIN,      /* the start of the history */
	TIMELINE_END,        /* the end of the history (the live present, or
	                        the end of a saved recording) */
	TIMELINE_INTERRUPTED, /* a search gdb's Ctrl-C stopped: where it stood */
};
struct timeline_stop {
	enum timeline_stop_kind kind;
	pid_t tid;           /* the thread that stops (it may be another than
	                        the one that moved, with a global order) */
	int sig;             /* TIMELINE_SIGNAL: the host signal */
	size_t point;        /* TIMELINE_WATCH: index into the points */
};

/* Backwards (bs/bc): tid moves back one of its instructions (step), or to
 * the nearest earlier breakpoint hit, watched access or recorded signal
 * delivery, else to the start. A signal stops at the instruction its
 * handler begins with (the caller shows the state before the delivery, as
 * going forwards); before_signal says tid is shown so already, so the
 * signal delivered at its position is behind it. A breakpoint at that
 * first instruction is reported before the signal, as forwards it is
 * after. all: the other threads move too and their hits count (with a
 * global order); otherwise only tid's do. Returns 0 with *stop, -1 when
 * the history could not be indexed. */
int timeline_reverse(struct timeline *tl, pid_t tid, bool all, bool step, bool before_signal,
		     const struct stop_set *pts, struct timeline_stop *stop);
/* The thread at the end stands right after a watched access that no
 * move has reported (a piece of the history made to end at a write
 * watchpoint's hit, which traps after its instruction): the next reverse
 * move looks at that instruction too, where one never reports the
 * access it stands right after. */
void timeline_end_after_access(struct timeline *tl);
/* Forwards: the same the other way; recorded signals stop too, and the
 * end of the history. Returns 0 with *stop; 1 when tid stands at the live
 * end of a recording still being made (nothing to replay: the caller runs
 * the program for real); -1 when the history could not be indexed. */
int timeline_forward(struct timeline *tl, pid_t tid, bool all, bool step,
		     const struct stop_set *pts, struct timeline_stop *stop);

/* ---- the state at the current position ---- */
enum timeline_state {
	TIMELINE_STATE_NONE = 0, /* nothing known, not even the PC */
	TIMELINE_STATE_PC,       /* only rf->gpr.rip is known */
	TIMELINE_STATE_FULL,     /* every register */
	/* every register but rcx and r11: the thread stands before a
	 * syscall instruction that a native re-execution ran (which
	 * overwrote both) */
	TIMELINE_STATE_BEFORE_SYSCALL,
};
/* Registers of tid where it stands (rf zeroed first). The first time the
 * full state cannot be had at a position, why is printed on stderr. */
enum timeline_state timeline_registers(struct timeline *tl, pid_t tid, struct amd64_regfile *rf);
/* Why the full state of tid where it stands cannot be had (the reason
 * timeline_registers printed), or NULL when it can. */
const char *timeline_state_why(struct timeline *tl, pid_t tid);
/* What the last move could not do as asked (a watchpoint it could not
 * check, so it went on without it): true with the reason in buf, once. */
bool timeline_take_move_note(struct timeline *tl, char *buf, size_t len);
/* The PC of tid where it stands (false if unknown). */
bool timeline_pc(struct timeline *tl, pid_t tid, uint64_t *pc);
/* Memory where tid stands: the full state when re-execution can show it,
 * else what the recording holds read-only (code). Bytes read, or -1. */
ssize_t timeline_read_memory(struct timeline *tl, pid_t tid, uint64_t addr, void *buf, size_t len);
/* The siginfo of the signal recorded where tid stands, or of the fatal one
 * when it stands at the end (a crash): 0, or -EINVAL when there is none. */
int timeline_siginfo(struct timeline *tl, pid_t tid, struct strbuf *out);
/* The signal the recording ended with (a crash), else SIGTRAP. */
int timeline_end_signal(const struct timeline *tl);
/* `monitor checkpoints`: one line per checkpoint, or why there are none. */
void timeline_checkpoints(struct timeline *tl, struct strbuf *out);

#endif
