/* The state at the end of an event recording, before its history is made:
 * the recording re-executed natively (every thread in the recorded order)
 * up to where it ended and held there, just before the program's end
 * (its exit_group, or the fatal signal of a crash), so that gdb can look
 * at every thread's registers and all memory at once. Quick: the program
 * runs at about native speed between its events. */
#ifndef PTREV_EVENT_END_H
#define PTREV_EVENT_END_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ptrev/amd64_regfile.h"
#include "ptrev/debugregs.h"
#include "ptrev/state_record.h"
#include "ptrev/trace_file.h"

struct event_end;

/* Where a replay stopped because it cannot reproduce a recorded syscall
 * (syscall_table.h: io_uring, AIO, userfaultfd...):
 * thread tid (as recorded) stood at the entry of its syscall `event`, as
 * the recording has it (its number and arguments checked). diverged: the
 * replay went differently from the recording instead, found as thread
 * tid went for its event `event` (what it met there differs: the state
 * before may differ from the recording's already, somewhere no event
 * shows; its earlier syscalls met the recording's, so the replay can end
 * at the last one's entry: event_cut_before). tid 0: it failed otherwise
 * (the program did not start, ptrace failed). */
struct event_end_failure {
	pid_t tid;
	uint64_t event;
	bool diverged;
};

/* Re-execute td (an event recording, borrowed) to its end. NULL with err
 * when it cannot be (the replay diverged, the program cannot start), and
 * where it failed in *at (may be NULL). */
struct event_end *event_end_open(const struct trace_data *td, struct event_end_failure *at,
				 char *err, size_t errlen);
void event_end_close(struct event_end *ee);

/* A copy of this replay parked on its way to the end (one thread only:
 * before each of the last events and before events further back, twice
 * as far each time), from which a tail from event from is made without
 * replaying the program natively from its start: the copy with the most
 * events done, at most from (*next of them), now the caller's to hand to
 * materialise_tail_to_memory (struct materialise_copies). 0: none. */
pid_t event_end_take_copy(struct event_end *ee, size_t from, size_t *next);

/* The recorded threads that still exist at the end; *ids malloc'ed. */
size_t event_end_threads(struct event_end *ee, pid_t **ids);
/* Registers of recorded thread tid at the end (a thread inside a syscall
 * there shows the registers of its entry). 0; 1 when the thread stands
 * before the syscall instruction that ends the program (its history's last
 * position: rip on the instruction, rax the syscall's number) and rcx and
 * r11 are not known (the held process has run the instruction, which
 * overwrote them); -1. */
int event_end_registers(struct event_end *ee, pid_t tid, struct amd64_regfile *rf);
/* Memory at the end. Bytes read, or -1. */
ssize_t event_end_read(struct event_end *ee, uint64_t addr, void *buf, size_t len);

/* Where a tail of the history that takes about budget_ns of the
 * program's own native run time begins: the event of its one thread
 * after which it starts (materialise_tail), at least the last stretch.
 * 0 when there is no tail to make (more than one thread, or the tail
 * would be all of it). From the wall time this replay ran each stretch
 * natively, less a ptrace stop's cost each: an estimate, good enough to
 * choose how much to step first. */
size_t event_end_tail_from(const struct event_end *ee, uint64_t budget_ns);
/* A multi-threaded recording's tail (materialise_tail_to_memory's run):
 * the run of its recorded order it begins with, so that the runs from
 * there hold about budget_ns of the program's own run (the same
 * estimate), at least the last run. 0 when there is none to make (one
 * thread, or it would be all of it). */
size_t event_end_tail_run(const struct event_end *ee, uint64_t budget_ns);
/* The program's own run in the runs from `from` to the end. */
uint64_t event_end_runs_ns(const struct event_end *ee, size_t from);
/* ...in runs from .. to - 1. */
uint64_t event_end_runs_between_ns(const struct event_end *ee, size_t from, size_t to);
/* Where a piece of a multi-threaded recording's history that ends with
 * run `last` begins so that it holds about budget_ns of the program's own
 * run, at least run `last` (event_end_tail_run, walking back from there);
 * 0: none (one thread, no such run). */
size_t event_end_run_back(const struct event_end *ee, size_t last, uint64_t budget_ns);
/* Where such a piece that begins with run `first` ends to hold about
 * budget_ns: its last run; SIZE_MAX where that would be the recording's
 * last run or beyond (the tail to the end instead). */
size_t event_end_run_on(const struct event_end *ee, size_t first, uint64_t budget_ns);
/* The same for a tail of the last n runs (tests). */
size_t event_end_tail_runs_of(const struct event_end *ee, size_t n);
/* The same walking back from before event end (a tail that ends there:
 * materialise_cut). */
size_t event_end_tail_back(const struct event_end *ee, size_t end, uint64_t budget_ns);
/* The same for a piece that may stop short of the budget: the last
 * stretch (before event end - 1) and as many before it as fit in
 * budget_ns, none that would take it past (a stretch of a long
 * computation next to short ones: growing a piece is no reason to step
 * it). */
size_t event_end_piece_back(const struct event_end *ee, size_t end, uint64_t budget_ns);
/* The same on from a piece's last event `last` (going forwards past its
 * end): the event a longer piece ends at, the next stretch and as many
 * after it as fit in budget_ns; SIZE_MAX where the recording's last
 * stretch would be in it (one thread only). */
size_t event_end_piece_on(const struct event_end *ee, size_t last, uint64_t budget_ns);
/* The same from the program's start: the event a piece that begins there
 * ends at (materialise_cut): the first stretch and as many after it as
 * fit in budget_ns; its last event, or SIZE_MAX where that would be (about)
 * all of it (one thread only). */
size_t event_end_head_to(const struct event_end *ee, uint64_t budget_ns);
/* The program's own native run time in the stretches before events
 * from .. end - 1 (the same estimate). */
uint64_t event_end_tail_ns(const struct event_end *ee, size_t from, size_t end);
/* The same for a tail of the last n events (tests). */
size_t event_end_tail_of(const struct event_end *ee, size_t n);
/* A tail's first stretch (the one before its event from) may alone run
 * far longer than budget_ns (a computation before the program's exit:
 * milliseconds, millions of instructions to step). How much of that
 * stretch's native run to leave out, so that the tail holds about
 * budget_ns in all: 0 when not worth it (what it saves in stepping, less
 * than one more native replay up to there costs). */
uint64_t event_end_tail_split(const struct event_end *ee, size_t from, uint64_t budget_ns);
/* Where a tail (or a piece of the history) that was to begin after
 * event from - 1 begins instead: further back, so that it neither begins
 * at a recorded signal (a delivery right after the event before has no
 * position of its own there: the history's first instruction would be
 * the handler's, the replay's the interrupted one) nor right after one
 * (going back past the tail's start would pass the signal's stop without
 * a word). 0: the whole history. */
size_t event_end_clear_of_signals(const struct event_end *ee, size_t from);
/* The last recorded signal among events lo .. hi - 1, plus 1 (0: none). */
size_t event_end_last_signal(const struct event_end *ee, size_t lo, size_t hi);
/* The last run among runs lo .. hi - 1 of a recording's thread order that
 * delivers a recorded signal, plus 1 (0: none). */
size_t event_end_last_signal_run(const struct event_end *ee, size_t lo, size_t hi);
/* Does the stretch before event from end at a STATE point? */
bool event_end_stretch_ends_at_state(const struct event_end *ee, size_t from);
/* Take the point where such a tail begins: td (an event recording of
 * one thread) replayed natively to its event from - 1 (from ee's copy
 * nearest before: event_end_take_copy; ee NULL: from the start), then on
 * for about after_ns, and the thread's place there described as a STATE record
 * (pos from; replay/event_split.c says why any such place can be found
 * again), with the stack around its rsp in sp; after_ns 0: where the
 * stretch ends at a STATE point in a loop, a few thousand passes before
 * it (erp_take_point). leave_loop: stopped in a long loop, the place
 * where the loop is left instead (a point before a hit); without it that
 * is only where no PC in the loop is rare enough. 1 taken, 0 when
 * the stretch ended first (no point: use the whole stretch), -1 with err.
 * *ran_cpu_ns (where not NULL): the thread's own CPU time in that run
 * after after_ns began counting, to the point or to the stretch's end (0:
 * not known). */
int event_end_tail_point(struct event_end *ee, const struct trace_data *td, size_t from,
			 uint64_t after_ns, bool leave_loop, struct trace_state *out,
			 uint8_t sp[STATE_RECORD_SP_LEN], uint64_t *ran_cpu_ns, char *err,
			 size_t errlen);

/* The same from a point inside a stretch (from: a STATE record of the
 * stretch before its event from->pos, event_end_hit_point's): replayed
 * natively to it, then on for about after_ns, the place there described
 * (pos from->pos). A piece of the history that ends at from grows to
 * there (history_event_longer): what lies after it in the stretch is
 * stepped only as far as a move needs. 1, 0 when the stretch ended first,
 * -1 with err. */
int event_end_point_after(struct event_end *ee, const struct trace_data *td,
			  const struct trace_state *from, uint64_t after_ns, bool leave_loop,
			  struct trace_state *out,
			  uint8_t sp[STATE_RECORD_SP_LEN], uint64_t *ran_cpu_ns, char *err,
			  size_t errlen);

/* A breakpoint or a piece of a watchpoint, as one debug register holds
 * it: kind DR_EXEC (len 1), DR_WRITE or DR_ACCESS (len 1, 2, 4 or 8, addr
 * a multiple of it: inf_dr_split). */
struct event_search_point {
	uint64_t addr;
	int kind;
	int len;
};
/* Going back past a tail's start with a reverse-continue: where the last
 * hit of one of points (1 to EVENT_SEARCH_MAX of them) before the tail's
 * start came. td (one thread) replayed natively to where the tail from
 * event from (point: inside the stretch before it) begins, with the
 * debug registers (or int3s) counting hits on the way
 * (replay/event_search.c). 1
 * with *stretch the event number k such that the last hit came after
 * event k - 1 and before event k (so a tail from k holds it; k == from:
 * before the point), 0 when none came, -1 with err (the replay diverged,
 * no debug registers), -2 given up (give_up, below). The CPU's hits
 * only: a syscall that writes a watched byte is not one (the tail from k
 * then holds it all the same, when it comes after a hit). */
/* At most EVENT_SEARCH_DR points where one is a watchpoint's: the debug
 * registers DR1-DR3 (DR0 is the STATE points'). Breakpoints alone may be
 * more, up to EVENT_SEARCH_MAX: beyond the registers (and where they do
 * not trap) they are int3s (replay/event_soft.c). gdb's own breakpoint in
 * the dynamic loader takes one, and a breakpoint on an inlined function
 * or a template several. */
#define EVENT_SEARCH_DR 3
#define EVENT_SEARCH_MAX 8
/* A search takes seconds, or minutes where it counts the passes of a
 * loop to a STATE point one by one: ask(ctx) is asked every tenth of a
 * second or so, and true gives it up (-2; gdb's Ctrl-C). */
struct event_give_up {
	bool (*ask)(void *ctx);
	void *ctx;
};
int event_end_tail_search(const struct trace_data *td, size_t from,
			  const struct trace_state *point,
			  const struct event_search_point *points, size_t n, size_t *stretch,
			  const struct event_give_up *give_up, char *err, size_t errlen);
/* The same, from ee's copies (event_end_take_copy) nearest before the
 * tail first, then further back, segment by segment, and from the
 * program's start only where no hit came after any copy. */
int event_end_tail_search_near(struct event_end *ee, const struct trace_data *td, size_t from,
			       const struct trace_state *point,
			       const struct event_search_point *points, size_t n, size_t *stretch,
			       uint64_t *nth, const struct event_give_up *give_up, char *err,
			       size_t errlen);
/* The address of the syscall instruction that event k of td (one
 * thread; a syscall) ran: td replayed natively from ee's copy nearest
 * before until the thread stands after that event, its PC less the
 * instruction's two bytes (checked to be a syscall instruction). A
 * stretch has no other syscall, so a breakpoint there is hit once in it,
 * right before its event (a piece can begin there). 0, -1 with err. */
int event_end_syscall_pc(struct event_end *ee, const struct trace_data *td, size_t k,
			 uint64_t *pc, char *err, size_t errlen);
/* ...where nth is not NULL, with *nth the last hit's number among the
 * hits in its stretch (1: the first after event *stretch - 1).
 *
 * The place of that hit, as a point a replay finds again (a STATE record
 * of event k, state_digest.h): td (one thread) replayed natively from ee's
 * copy nearest before the stretch before event k (NULL: from the start),
 * with points armed, to the nth hit in that stretch, where the thread
 * stands with the hit's instruction still to run; the stack around its
 * rsp in sp, and (cpu_ns not NULL) the thread's own CPU time from the
 * stretch's start to there in *cpu_ns (0: not known; the traps at the
 * hits before count too). A piece of the history can end there (materialise_cut_at),
 * so that going back to a hit steps its stretch only up to the hit. 1
 * taken, 0 with err where the stretch has fewer hits (a continue asks
 * for the next one after a piece's end), -1 with err (the replay
 * diverged), -2 given up (give_up). */
int event_end_hit_point(struct event_end *ee, const struct trace_data *td, size_t k,
			uint64_t nth, const struct event_search_point *points, size_t n,
			const struct event_give_up *give_up, struct trace_state *out,
			uint8_t sp[STATE_RECORD_SP_LEN], uint64_t *cpu_ns, char *err,
			size_t errlen);
/* The same, with hit nth - 1 of that stretch (nth > 1) described on the
 * way in *prev, prev_sp and *prev_cpu_ns (its own run there; 0: not
 * known), *prev_ok saying whether it was: one replay for a piece that
 * begins at the hit before its end (the two cost a replay each, and
 * each replay traps at every hit before: 20,000 in sqlite3's stretch,
 * 0.8 s). */
int event_end_hit_and_before(struct event_end *ee, const struct trace_data *td, size_t k,
			     uint64_t nth, const struct event_search_point *points, size_t n,
			     const struct event_give_up *give_up, struct trace_state *out,
			     uint8_t sp[STATE_RECORD_SP_LEN], uint64_t *cpu_ns,
			     struct trace_state *prev, uint8_t prev_sp[STATE_RECORD_SP_LEN],
			     uint64_t *prev_cpu_ns, bool *prev_ok, char *err, size_t errlen);
/* The same for any recording (one with several threads too), to the
 * start of run `run` (> 0) of its recorded order: 1 with *hit_run the run
 * the last hit came in (so a tail from that run holds it) and *hit_event
 * the event of that run's thread it came before, 0, -1, -2. */
int event_end_tail_search_run(const struct trace_data *td, size_t run,
			      const struct event_search_point *points, size_t n, size_t *hit_run,
			      size_t *hit_event, const struct event_give_up *give_up, char *err,
			      size_t errlen);
/* Going on forwards past a piece's end with a continue: where the first
 * hit after event from - 1 comes (from > 0), the same way, the replay
 * (from ee's copy nearest before) going no further than that hit: 1 with
 * *stretch the event number k such that it came after event k - 1 and
 * before event k, 0 when none came before the recording's end, -1, -2. */
int event_end_search_on(struct event_end *ee, const struct trace_data *td, size_t from,
			const struct event_search_point *points, size_t n, size_t *stretch,
			const struct event_give_up *give_up, char *err, size_t errlen);
/* The same for any recording from its start, threads in the recorded
 * order: the first hit in run `run` after that run's thread's event
 * from - 1 (SIZE_MAX: none there), or in a later run: 1 with *hit_run
 * the run it came in (a tail from that run holds it), 0 when none came
 * before the end, -1, -2. */
int event_end_search_on_run(const struct trace_data *td, size_t run, size_t from,
			    const struct event_search_point *points, size_t n, size_t *hit_run,
			    const struct event_give_up *give_up, char *err, size_t errlen);

#endif
