/* Shared by the target implementations (server/target/), not an interface
 * for anyone else:
 *   process_run.c       running a real process with gdb's actions and
 *                       breakpoint conditions (the live and the recording
 *                       targets, over ptrace or the sw recorder)
 *   target_live.c       the live target, and what a recording target
 *                       pushed over it needs to know of it
 *   target_history.c    the history target, which a recording target also
 *                       uses for the past of the recording it makes
 *   history_objects.c   what gdb reads of a recording (auxv, program,
 *                       libraries, maps)
 *   history_event.c     an event recording before and after its history
 *                       is made
 *   history_sigframe.c  the state just before a recorded signal's
 *                       delivery, from the handler's frame */
#ifndef PTREV_TARGET_INTERNAL_H
#define PTREV_TARGET_INTERNAL_H

#include <stdint.h>

#include "ptrev/event_end.h"
#include "ptrev/inferior.h"
#include "ptrev/materialise.h"
#include "ptrev/state_record.h"
#include "ptrev/target.h"
#include "ptrev/timeline.h"
#include "ptrev/trace_file.h"

struct materialise_job;

/* ---- process_run.c ---- */
/* What executes a live process: plain ptrace (inferior.h) or the sw
 * recorder (sw_engine.h), which keep the same all-stop contract. */
struct process_exec_ops {
	int (*resume)(void *ctx, pid_t tid, bool step, int sig);
	int (*wait)(void *ctx, struct stop_event *ev, bool block);
};

#define PROCESS_MAX_ACTIONS 64

struct process_run {
	struct inferior *inf;
	const struct process_exec_ops *exec;
	void *ctx;
	/* The execution in progress, resumed again after a breakpoint whose
	 * condition was false (its signals are delivered only once). */
	struct target_action acts[PROCESS_MAX_ACTIONS];
	size_t nacts;
	const struct stop_set *stops;
};

/* Resume every thread per its leftmost matching action (forward only).
 * 0, or TARGET_REFUSED when the process is gone or nothing resumed. */
int process_run_resume(struct process_run *pr, const struct target_resume *r);
/* As target_wait: a breakpoint stop whose condition does not hold is
 * stepped over and the execution goes on (0 is returned: no stop yet). */
int process_run_wait(struct process_run *pr, struct target_stop *stop, bool block);
/* The CPU a thread last ran on (from /proc), or -1. */
int process_thread_core(pid_t pid, pid_t tid);
/* A recording target's stop at the present, reached going forwards
 * through its history (TARGET_STOP_HISTORY_END): the PC gdb is told is
 * the one t shows there, the live thread's. gdb's changes made at the
 * present (the registers it restored after calling a function) moved it
 * from where the history's last instruction left it. */
void process_present_pc(struct target *t, struct target_stop *stop);

/* ---- target_live.c ---- */
/* The process of a live target, or NULL (another kind of target, or its
 * process is gone). */
struct inferior *target_live_inferior(struct target *t);
/* Has the live program not run yet (it stands at its first instruction)? */
bool target_live_at_start(struct target *t);
void target_live_mark_started(struct target *t);

/* ---- target_event_recording.c ---- */
/* target_record_start with the event backend (o->backend "event"). */
struct target *target_event_record_start(struct target *t, const struct target_record_opts *o,
					 char *err, size_t errlen);
bool target_is_event_recording(const struct target *t);

/* ---- target_history.c ---- */
/* The history target over a live recording's timeline (taking tl over):
 * the past of a recording target, with pid the live process's. */
struct target *history_target_live(struct timeline *tl, const struct trace_data *td, pid_t pid);
struct timeline *history_target_timeline(struct target *t);
/* Does tid stand before the present of the live recording whose past t
 * is (not at the end of its history, or at the end of a piece of it)? */
bool history_target_in_past(struct target *t, pid_t tid);
/* history's resume answer when the thread stands at the live present:
 * nothing to replay, the program runs for real. */
#define HISTORY_AT_PRESENT 1
/* `monitor save FILE` of td, ending with end (NULL: as td ended). */
void history_save(const struct trace_data *td, const struct trace_end *end, const char *path,
		  struct strbuf *out);

/* ---- history_event.c ---- */
struct history_event {
	const struct trace_data *ev; /* the event recording (borrowed) */
	struct event_end *end;       /* its state at the end */
	struct trace_data made;      /* its whole history, once made */
	bool made_ok;
	/* The history of its last stretches only, made first when the whole
	 * one is not ready (materialise_tail_to_memory); tail_events of them,
	 * made in tail_seconds. */
	struct trace_data tail;
	bool tail_ok;
	pid_t tail_start_copy; /* its replayer's start (ptrace_handover.h), 0: none */
	size_t tail_events;
	bool tail_split;      /* ...and part of the stretch before them */
	uint8_t tail_point_sp[STATE_RECORD_SP_LEN]; /* the stack at that point */
	/* Called every tenth of a second while a request waits for the
	 * history (target_set_alive); NULL: nobody asked. true: gdb asked to
	 * stop, and interrupted says so until history_event_interrupted. */
	bool (*alive)(void *ctx);
	void *alive_ctx;
	bool interrupted;
	double tail_seconds;
	uint64_t tail_insns;     /* ...and its instructions */
	uint64_t tail_budget_ns; /* the native run time it was chosen to hold */
	/* A tail that ends early, after event tail_last (a piece: going back
	 * to a breakpoint hit far from the end), made from tail_view, the
	 * recording cut there (materialise_cut). */
	bool tail_cut;
	size_t tail_last;
	/* The last search's hit (history_event_search_back, by runs): the
	 * event of its run's thread it came before. */
	size_t hit_event;
	/* ...and (one thread) its number among the hits in its stretch (0:
	 * not a hit's, a recorded signal's). */
	uint64_t hit_nth;
	/* ...or (one thread) that event's own write to watched memory,
	 * which the debug registers do not see (event_writes.h): the piece
	 * holds the event and the stretch after it. */
	bool hit_write;
	/* The piece ends at a breakpoint's hit inside the stretch after
	 * event tail_last (history_event_piece_to_hit), the last STATE
	 * record of tail_view, which tail_hit_owned holds (NULL: it does
	 * not: history_event_ends_inside). */
	struct trace_state *tail_hit_owned;
	/* How far past the hit, in the program's native run, the piece was
	 * last grown inside the stretch (history_event_longer; 0: not). */
	uint64_t tail_hit_ns;
	/* The last growth began at the end before, where the thread stands
	 * (history_event_longer: the piece there held GROW_FROM_END_INSNS): the
	 * thread's place is the new piece's start. */
	bool grew_from_end;
	/* Such a piece may begin at an earlier hit of the same points in
	 * that stretch (the tail's point): its number there and the end's
	 * (tail_start_nth 0: it begins at an event), and the points, so
	 * that going back past its start begins at a hit further back. */
	uint64_t tail_start_nth, tail_end_nth;
	uint64_t tail_end_cpu; /* the thread's own run to the end hit (0: not known) */
	struct event_search_point tail_pts[EVENT_SEARCH_MAX];
	size_t tail_npts;
	/* What history_event_search_on found for history_event_on: the
	 * next hit inside the stretch such a piece ends in (on_inside), or
	 * the points whose first hit in the stretch it names (on_npts 0:
	 * none known, the piece holds that whole stretch). */
	bool on_inside;
	uint64_t on_nth, on_hit_cpu;
	struct trace_state on_hit;
	uint8_t on_hit_sp[STATE_RECORD_SP_LEN];
	bool on_start_ok; /* ...and the hit before it, where the piece begins */
	struct trace_state on_start;
	uint8_t on_start_sp[STATE_RECORD_SP_LEN];
	struct event_search_point on_pts[EVENT_SEARCH_MAX];
	size_t on_npts;
	size_t on_from; /* the event the search began at */
	/* ...or an event before that hit which may write watched memory
	 * where the debug registers do not see it (event_writes.h): the
	 * piece holds it and the stretch after it. */
	bool on_write;
	/* What the continues to hits inside the stretch before event near_k
	 * have cost so far (wall time; near_t0: the current one's start). */
	size_t near_k;
	uint64_t near_ns, near_t0;
	struct trace_data tail_view;
	pid_t last;                  /* the thread that ended it */
	/* A saved recording whose replay must stop at a syscall it cannot
	 * reproduce is served cut there (event_cut.h), one whose replay
	 * diverged at the syscall before (event_cut_before): ev is the cut, of
	 * the recording given to history_event_open; cut_note says so to
	 * gdb's user once (history_event_take_note). */
	struct trace_data cut;
	bool cut_ok, cut_told;
	/* A multi-threaded recording cut after the first runs of its order
	 * (event_cut.h), which the history of the program's start is made
	 * from (history_event_head); kept while it may be tail_view. */
	struct trace_data head;
	bool head_ok;
	uint64_t head_at;  /* the first run's thread's event it is cut at */
	bool tail_head;    /* the tail is made from it */
	/* A multi-threaded piece from a run of the order on (the tail's
	 * history_from_run) to the end of run runs_last, made from runs_cut,
	 * the recording cut at the syscall that run ends at (event_cut.h);
	 * kept while it may be tail_view. */
	struct trace_data runs_cut;
	bool runs_cut_ok;
	size_t runs_last;
	char cut_note[1024];
	/* Its history being made in the background from the start (NULL:
	 * not, PTREV_BACKGROUND_HISTORY=0, or taken). */
	struct materialise_job *job;
	/* The copies its replay left on the way (checkpoints), for the
	 * first timeline of the whole history (made_ok). */
	struct materialise_copies made_copies;
	/* PTREV_BACKGROUND_HISTORY=after-move: started once the first move
	 * has ended (history_event_moved). */
	bool job_held;
};
/* The state at the end (a native re-execution). With may_cut (a saved
 * recording, not a live session's past, which must reach the present),
 * a recording whose replay meets a syscall it cannot reproduce ends at
 * that syscall's entry instead. 0, or -1 with err. */
int history_event_open(struct history_event *he, const struct trace_data *ev, bool may_cut,
		       char *err, size_t errlen);
/* What gdb's user is to hear once about this history (it ends before the
 * recording does): true with it in out. */
bool history_event_take_note(struct history_event *he, char *out, size_t outlen);
void history_event_close(struct history_event *he);
/* The timeline over its history, at its end: the whole history (made
 * now, or the background's waited for), or, unless whole, the history of
 * a tail when the whole one is not ready and a tail can be made (a
 * single-threaded program; PTREV_TAIL_HISTORY=0: never). NULL with err. */
struct timeline *history_event_make(struct history_event *he, bool whole, char *err,
				    size_t errlen);
/* The recording the last timeline made is over. */
const struct trace_data *history_event_data(const struct history_event *he);
/* Is the whole history made, in the background or before? */
bool history_event_whole_ready(struct history_event *he);
/* A move has ended: the background's history starts now if it was held
 * until then (PTREV_BACKGROUND_HISTORY=after-move). */
void history_event_moved(struct history_event *he);
/* Did gdb stop the last wait for a history (history_event_make or
 * history_event_widen failed so)? Says it once. */
bool history_event_interrupted(struct history_event *he);
/* Is only a tail made? */
bool history_event_tail_only(const struct history_event *he);
/* Going back past the start of a tail's history (history_event_tail_only):
 * where a tail that holds the last hit of stops' breakpoints before it
 * begins, found by a native replay (event_end_tail_search): 1 with *from
 * (an event; the run of the recorded order for a multi-threaded tail:
 * history_event_tail_run); 0 when none comes before (on to the program's
 * start: the whole history); -1 when the stops cannot be searched for
 * natively (more breakpoints and watchpoint pieces than debug registers;
 * a multi-threaded tail with only signals to stop at) or the search
 * failed (said on stderr), or gdb's Ctrl-C (he->alive) stopped it
 * (he->interrupted). */
int history_event_search_back(struct history_event *he, const struct stop_set *stops,
			      size_t *from);
/* Can a reverse-continue end its history at the hit found (a piece),
 * watchpoints among them (any kind: the search's access registers see
 * reads too; with history_event_search_back's he->hit_write): a
 * recording of one thread.
 * PTREV_WATCH_PIECES=0: never (the reference of benchmarks). */
bool history_event_watch_pieces(const struct history_event *he);
/* ...or where a tail begins that holds four times the native run time of
 * the last one (and ends where it does), and at least one stretch more;
 * 0: that is the whole history. */
size_t history_event_wider(struct history_event *he);
/* Where a piece that holds the stretch before event k begins: that
 * stretch alone after a tail; after a piece, stretches back to twice its
 * native run time. */
size_t history_event_piece_from(struct history_event *he, size_t k);
/* Where the tail made begins (its first event; 0: none made). */
size_t history_event_tail_from(const struct history_event *he);
/* Does the tail made begin inside a stretch (at a point, not an event)? */
bool history_event_tail_in_stretch(const struct history_event *he);
/* Does the piece made end inside a stretch (at a hit, or a point after
 * it: history_event_piece_to_hit)? */
static inline bool history_event_ends_inside(const struct history_event *he)
{
	return he->tail_hit_owned != NULL;
}
/* Does the history made end before the recording does (a piece)? */
bool history_event_cut(const struct history_event *he);
/* Make the tail from event `from` (whole stretches) to the end, or to
 * event last only (HISTORY_TO_END: to the end), the history: the
 * timeline over it, at its end, with old (over the tail before) closed;
 * why begins the line that says so. NULL with err, old and the tail
 * before kept. */
#define HISTORY_TO_END SIZE_MAX
struct timeline *history_event_widen(struct history_event *he, size_t from, size_t last,
				     const char *why, struct timeline *old, char *err,
				     size_t errlen);
/* The piece made, from where it begins (its event, or the point inside
 * a stretch it begins at), on to the recording's end, as
 * history_event_widen makes one: positions count alike in both (one
 * from the piece's first event began before a point, every position
 * shifted: a reverse-continue after the whole history was made in the
 * background ended at the program's start, past every hit). */
struct timeline *history_event_piece_to_end(struct history_event *he, const char *why,
					    struct timeline *old, char *err, size_t errlen);
/* The piece for a write to watched memory that the debug registers do
 * not see (history_event_search_back's he->hit_write: event k's own):
 * from event from to the stretch after k, which ends it; where from is
 * k and k's stretch ran long, from a point shortly before k's syscall. */
struct timeline *history_event_write_piece(struct history_event *he, size_t from, size_t k,
					   const char *why, struct timeline *old, char *err,
					   size_t errlen);
/* A tail that ends where the one made does (a piece: at its last event,
 * or at the hit it ends at), from event from, as history_event_widen
 * makes one. */
struct timeline *history_event_widen_back(struct history_event *he, size_t from,
					  const char *why, struct timeline *old, char *err,
					  size_t errlen);
/* Going back to a breakpoint hit that history_event_search_back found
 * in the stretch before event k (one thread, breakpoints only): the
 * piece from event from that ends at that hit (event_end_hit_point), at
 * its end, the hit's instruction still to run, as history_event_widen
 * makes one: what follows the hit in its stretch is not stepped; a
 * piece of that stretch alone (from == k) begins near the hit too (at
 * the hit before in it, or about a first tail's run before the hit:
 * PTREV_HIT_NEAR=0 never). NULL with err, or with err empty where that
 * is not worth it (a short stretch: PTREV_HIT_POINT=0 never, 1 always)
 * or cannot be. */
struct timeline *history_event_piece_to_hit(struct history_event *he, size_t from, size_t k,
					    const struct stop_set *stops, const char *why,
					    struct timeline *old, char *err, size_t errlen);
/* A piece of the history that begins at the program's start, made as
 * history_event_widen makes one: where a reverse-continue found no hit
 * before, only that is stepped. One thread: the stretches that hold about
 * four times a first tail's native run; several: the first thread alone,
 * up to the entry of the clone that makes another (the recording cut
 * there: event_cut.h). Going on past its end: history_event_search_on,
 * or (one thread) history_event_longer. NULL with err, or with err empty where the whole history is about as
 * short or no such piece can be. */
struct timeline *history_event_head(struct history_event *he, struct timeline *old, char *err,
				    size_t errlen);
/* Going on forwards past a piece's end with breakpoints only (a
 * continue): 1 with *at the event k whose stretch holds the next hit
 * (found natively from ee's copies: event_end_search_on), 0 when none
 * comes before the recording's end, -1 when that is not for this search
 * to say (a recorded signal on the way, watchpoints, more points than
 * the debug registers hold, the search failed: said on stderr; gdb's
 * Ctrl-C: interrupted). Then history_event_on makes the piece of that
 * stretch alone (at 0: the recording's last stretches), at its end, as
 * history_event_widen does: no hit lies between, so only it is stepped;
 * where that stretch runs long, only up to the hit. From a piece that
 * ends inside a stretch (at a hit, or past one), the next hit in that
 * same stretch first: *at its event, and history_event_on makes only the
 * way to it; where the continues in one stretch have cost about what its
 * rest would, -1 (the piece grows instead: history_event_longer).
 * Past the end of a multi-threaded recording's first thread alone
 * (history_event_head): *at the run of the order that holds the hit
 * (event_end_search_on_run), and history_event_on makes the tail from
 * that run (at 0: the last runs, as a first tail's); a hit in the first
 * run is for the whole history (-1). */
int history_event_search_on(struct history_event *he, const struct stop_set *stops, size_t *at);
struct timeline *history_event_on(struct history_event *he, size_t at, struct timeline *old,
				  char *err, size_t errlen);
/* Going on forwards past a piece's end otherwise (a step, more points
 * than the debug registers hold, watchpoints): the piece from the same
 * start made about four times as long, at least a stretch (or run) more,
 * as history_event_widen makes one; NULL where that is not for a piece
 * (err empty: no piece, the whole history ready, the recording's last
 * stretch reached: its tail to the end) or with err. A piece that ends
 * inside a stretch (at a hit: history_event_ends_inside) grows, where inside, to a point
 * further on in it (event_end_point_after: four times the last such
 * growth, a quarter of a first tail's run first), else to the stretch's event
 * (a continue, whose next hit is then searched for from there). */
struct timeline *history_event_longer(struct history_event *he, bool inside,
				      struct timeline *old,
				      char *err, size_t errlen);
/* A multi-threaded recording's hit (found natively) in run `run` of its
 * order: that piece from the program's start, where it holds the hit (in
 * the first run, before the first clone: he->hit_event); NULL otherwise
 * (err empty) or with err. */
struct timeline *history_event_head_to_run(struct history_event *he, size_t run,
					   struct timeline *old, char *err, size_t errlen);
/* Does the history made (a piece) begin at the program's start? Then
 * going back ends there; going on past its end needs the whole one. */
bool history_event_at_start(const struct history_event *he);
/* A multi-threaded recording's tail: the run of its order where the one
 * made begins (0: none made, or not such a tail); where one that holds
 * four times its native run time begins, at least a run more (0: the
 * whole history); and that tail made, as history_event_widen makes one. */
size_t history_event_tail_run(const struct history_event *he);
size_t history_event_wider_run(struct history_event *he);
struct timeline *history_event_widen_run(struct history_event *he, size_t run, const char *why,
					 struct timeline *old, char *err, size_t errlen);
/* Is the history made a multi-threaded piece that ends before the
 * recording does, after a run of its order (history_event_runs_piece)? */
bool history_event_runs_cut(const struct history_event *he);
/* A multi-threaded piece: runs `run` to `last` of the order, or to the
 * end of the first run after it (before run `limit`; SIZE_MAX: any)
 * that ends at a syscall of its thread (the recording cut at that
 * syscall's entry: event_cut.h), made as
 * history_event_widen makes one; NULL with err (none such: err says so;
 * err empty: PTREV_RUN_PIECES=0, the tail to the end instead, the
 * reference of tests and benchmarks). */
struct timeline *history_event_runs_piece(struct history_event *he, size_t run, size_t last,
					  size_t limit, const char *why, struct timeline *old,
					  char *err, size_t errlen);
/* A line on how far its history is made (`monitor history`). */
void history_event_progress(struct history_event *he, struct strbuf *out);
/* tid when it exists at the end, else one that does. */
pid_t history_event_thread(struct history_event *he, pid_t tid);
int history_event_registers(struct history_event *he, pid_t tid, struct amd64_regfile *rf);
int history_event_siginfo(struct history_event *he, pid_t tid, struct strbuf *out);
int history_event_end_signal(const struct history_event *he);

/* ---- history_sigframe.c ---- */
/* rf: the full state at a handler's first instruction, where a recorded
 * delivery put the thread; made the state just before that delivery, from
 * the frame at rf's rsp, read with rd(ctx, tid, ...) at that position.
 * 0, or -1 when the frame cannot be read (rf then partly changed). */
int history_sigframe_interrupted(ssize_t (*rd)(void *ctx, pid_t tid, uint64_t addr, void *buf,
					       size_t len),
				 void *ctx, pid_t tid, struct amd64_regfile *rf);

/* ---- history_objects.c ---- */
int history_auxv(const struct trace_data *td, struct strbuf *out);
/* The recorded program (absolute), as a path gdb can read: the file when
 * unchanged, else a temporary copy from the recording (*is_temp; path is
 * the cache, empty at first). */
int history_exec_file(const struct trace_data *td, char *path, size_t pathlen, bool *is_temp,
		      struct strbuf *out);
int history_libraries_svr4(struct target *t, pid_t tid, const struct trace_data *td,
			   const char *annex, struct strbuf *out);
/* /proc/PID/maps of the recorded process, from its MMAP records. */
int history_maps(const struct trace_data *td, pid_t pid, const char *path, struct strbuf *out);

/* ---- gdb_change.c ---- */
/* gdb changes the program at the present of a recording (set var, call,
 * jump): the record a recorder keeps of it (trace_file.h: GDB_MEM,
 * GDB_REGS; pos left for the recorder). Registers: false when out of
 * memory; free the bytes with gdb_change_free. */
void gdb_change_memory(pid_t tid, uint64_t addr, const void *buf, size_t len,
		       struct trace_gdb_write *g);
bool gdb_change_registers(pid_t tid, const struct amd64_regfile *rf, struct trace_gdb_write *g);
void gdb_change_free(struct trace_gdb_write *g);
/* Does gdb's write of len bytes at addr change something (they read, and
 * len is not 0)? One that fails or writes nothing is not recorded. */
bool gdb_change_possible(struct target *live, pid_t tid, uint64_t addr, size_t len);
/* Does writing rf into tid leave it as it is, but for orig_rax? gdb writes
 * registers it did not change too: orig_rax -1 after `run` in extended
 * mode (it does so whenever it sets a Linux thread's PC, so that no
 * interrupted syscall restarts), which matters only to a thread stopped
 * inside a syscall. Such a write is not recorded. */
bool gdb_change_same_registers(struct target *live, pid_t tid, const struct amd64_regfile *rf);

#endif
