/* Private to replay/: re-executing an event recording (docs/trace-format.md,
 * "Event recordings"): the program launched again as it started, every
 * thread created at its recorded clone, the threads run one at a time in
 * the recorded order (SCHED runs counted in events), every event met where
 * the recording says: syscalls emulated (or run, and checked), rdtsc given
 * its recorded value, signals delivered where they were, STATE points found
 * by their state (state_digest.h). A thread's code between two events runs
 * either at native speed or single-stepped, each instruction handed to an
 * observer: that is how the history (PT) is made (materialise.c).
 *
 * Files, bottom up:
 *   event_index.c    each thread's events in order, from the recording
 *   event_regs.c     the replay process's registers and memory
 *   event_hits.c     a native search's hits counted
 *   event_soft.c     int3s where the debug registers do not trap
 *   event_proc.c     the replay process: its threads, stops, syscalls,
 *                    clones, signal delivery
 *   event_step.c     stepping one thread to its next stop (blocks run
 *                    natively, or single steps), reporting instructions
 *   event_advance.c  running one thread on to its next event
 *   event_replay.c   the recorded order of runs */
#ifndef PTREV_EVENT_REPLAY_H
#define PTREV_EVENT_REPLAY_H

#include <stdatomic.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include <signal.h>

#include "ptrev/amd64_regfile.h"
#include "ptrev/block_cache.h"
#include "ptrev/block_step.h"
#include "ptrev/pass_model.h"
#include "ptrev/event_end.h"
#include "ptrev/insn_class.h"
#include "ptrev/state_record.h"
#include "ptrev/trace_file.h"
#include "relaunch.h"

enum erp_kind { ERP_SYSCALL, ERP_RDTSC, ERP_SIGNAL, ERP_STATE };

/* A copy of a one-thread replay process, parked (ptrace_handover.h) where
 * its thread had completed its events before `next`: a later replay of
 * the same recording starts there instead of at the program's start
 * (erp_replay_tail's resume). pid 0: none. */
struct erp_copy {
	pid_t pid;
	size_t next;
};
/* How many the end's replay keeps (make_copies: before the events 16, 32,
 * 64, ... from the end; the newest): each pins what the replay writes
 * after it, and the first tails begin near the end. */
#define ERP_COPIES_MAX 8
/* Copies kept inside stretches while the history is stepped (struct
 * erp_observer's copy_every). */
#define ERP_MID_COPIES_MAX 12

/* A copy of the one thread's replay process where it had completed pos
 * instructions of its history, stopped between two of them. */
struct erp_mid_copy {
	uint64_t pos;
	pid_t pid;
};

struct erp_event {
	enum erp_kind kind;
	const void *rec;      /* the trace_syscall / _rdtsc / _signal / _state */
	/* Wall time the thread ran natively from its previous event to this
	 * one in this replay (0: stepped, or not reached): how long the
	 * stretch is, for choosing a tail to make first (event_end.h); and
	 * its own CPU time in that run (0: unknown), the better measure. */
	uint64_t native_ns, native_cpu_ns;
};

struct erp_thread {
	pid_t rec_tid;        /* as recorded */
	pid_t tid;            /* in the replay process; 0 until created */
	struct erp_event *ev; /* its events, in order (event number = index) */
	size_t nev, evcap;    /* evcap: ev's room, grown by doubling */
	/* gdb's changes to it (trace_gdb_write), by position: made right
	 * after its event pos - 1 (event_advance.c). */
	const struct trace_gdb_write **gw;
	size_t ngw;
	size_t next;          /* events completed: the next one's number */
	bool at_entry;        /* stopped at the entry of the syscall that is
	                         its event next (not completed yet) */
	bool in_unrecorded;   /* stopped at the entry of a syscall the log
	                         does not hold (it never returned) */
	bool at_signal;       /* stands where its event next, a signal, is
	                         taken: held there (the end of a replay that
	                         stops before the program's end) */
	bool started;         /* the observer heard of its first instruction */
	bool ended;           /* ...and of its end */
	int clock;            /* its CPU-time counter (cpu_clock_open), once
				 clock_open; -1: none */
	bool clock_open;
	bool gone;            /* exited (or the process ended) */
	uint64_t insns;       /* instructions completed (stepped runs only) */
	/* rcx and r11 before its last syscall instruction (stepped runs):
	 * the instruction overwrites both, so a thread held at the entry
	 * of its syscall can still be shown as it stood before it. */
	uint64_t presys_rcx, presys_r11;
	bool presys_known;    /* ...for the syscall it stands at: stepped */
	/* Looking for the STATE point that is its event next: since when
	 * (search_for == next + 1), how often it stood at the point's PC,
	 * its user time and instructions when the search began
	 * (event_step.c). */
	size_t search_for;
	uint64_t search_hits;
	uint64_t search_utime_ns;
	uint64_t search_insns;  /* insns when it began (stepped) */
	uint64_t search_traps;  /* hits that stopped the thread */
	/* Passing over passes of a hot loop (event_skip.c): what the
	 * registers at the passes say, whether the latest pass was reached
	 * by a jump (already in the model), the pass (search_hits) where the
	 * model put the point once it let passes go uncounted (0: it has
	 * not), the run asked for last (ns; 0: none yet), the fastest
	 * pass rate seen, per ns of the loop's run (0: no run yet), how
	 * many runs in a row barely moved it, and the CPU time a resume
	 * costs the thread before and after it runs anything (runs timed
	 * by its CPU clock; 0: not measured yet). */
	struct pass_model model;
	/* The runs go by an estimate (pass_model_rough_left), not a count;
	 * passes were let go on the way to this point (a failure to find it
	 * may then be a pass let go: skip_missed). */
	bool skip_rough, skip_let_go;
	bool skip_jumped;
	uint64_t skip_target, skip_asked;
	double skip_rate;
	unsigned skip_futile;   /* runs in a row that barely moved it */
	uint64_t skip_overhead;
	bool skip_timed;        /* the runs are timed by its CPU clock */
	void *obs;            /* the observer's per-thread state */
};

struct erp;

/* What a stepped run reports, in order, for one thread. Every callback
 * returns 0, or -1 to stop the replay (with a reason in why). */
struct erp_observer {
	/* The thread's first instruction is at ip (before any step). */
	int (*start)(struct erp *e, struct erp_thread *t, uint64_t ip);
	/* The instruction at ip (classified info) completed and the next is
	 * at next_ip; for a syscall next_ip is where it returned to. REP
	 * iterations are reported as they step (next_ip == ip: unfinished). */
	int (*insn)(struct erp *e, struct erp_thread *t, uint64_t ip, const struct insn_info *info,
		    uint64_t next_ip);
	/* A signal is delivered before the instruction at ip. */
	int (*interrupt)(struct erp *e, struct erp_thread *t, uint64_t ip);
	/* Event k of the thread happened (at its instruction position when
	 * stepping); positions of events in a native run are not known. */
	int (*event)(struct erp *e, struct erp_thread *t, size_t k);
	/* The thread ended; ip its next instruction, 0 when it ended inside a
	 * syscall. */
	int (*end)(struct erp *e, struct erp_thread *t, uint64_t ip);
	/* One run of the recorded order ended: the thread executed its
	 * instructions first .. first + count - 1 in it. */
	int (*run)(struct erp *e, struct erp_thread *t, uint64_t first, uint64_t count);
	/* Optional: t is about to complete an instruction (to step or run
	 * one, or to finish the syscall it stands in); every event before it,
	 * a signal's delivery too, is done. */
	int (*ready)(struct erp *e, struct erp_thread *t);
	/* Optional: t is about to be stepped on to its next event, which is
	 * not a STATE point (a syscall, an rdtsc, a fault): the observer may
	 * first run it natively part of the way (erp_run_passes), for what
	 * it tells nothing of. */
	int (*before_stretch)(struct erp *e, struct erp_thread *t);
	/* Optional (one thread, stepped from the program's start): keep
	 * copies of the replay process on the way, the first after
	 * copy_every instructions, denser near the last (erp_mid_copy), for
	 * the history's replayer (erp_take_mid_copies). 0: none. */
	uint64_t copy_every;
	void *ctx;
};
/* Callbacks for an observer that needs only some of what a stepped run
 * reports (event_hold.c, event_watch.c): each does nothing. */
int erp_obs_ignore_ip(struct erp *e, struct erp_thread *t, uint64_t ip);
int erp_obs_ignore_event(struct erp *e, struct erp_thread *t, size_t k);
int erp_obs_ignore_run(struct erp *e, struct erp_thread *t, uint64_t first, uint64_t count);

struct erp {
	const struct trace_data *td;
	struct relaunch start;
	pid_t pid;            /* the replay process's leader */
	int memfd;
	struct erp_thread *threads; /* in the recording's THREAD order */
	size_t nthreads;
	const struct erp_observer *obs; /* NULL: runs are native */
	/* Stop before the program's end: its last exit_group, the last
	 * thread's exit or a fatal signal is reached but not done, so that
	 * the state there can be read (the end of a recording, as gdb sees
	 * it). */
	bool hold_at_end;
	/* The instruction classification cache, keyed by address, and the
	 * block cache; emptied when the program changes its mappings. */
	struct erp_icache *icache;
	struct block_cache *bcache;
	/* How a stepped replay steps (PTREV_SW_STEPPER=insn: single steps
	 * only), and the block stepper's breakpoints. */
	enum { ERP_STEP_UNSET, ERP_STEP_BLOCK, ERP_STEP_INSN } step_mode;
	struct bstep *bstep;
	uint64_t stops;       /* ptrace stops handled */
	/* The first native_runs runs of the recorded order run natively
	 * whatever obs is (a replay held at a position steps only the runs
	 * near it). */
	size_t native_runs;
	/* The thread whose run of the recorded order is being replayed
	 * (NULL between runs): what another thread reports meanwhile (its
	 * end, when the program ends in this run) comes after this run. */
	struct erp_thread *running;
	/* Set by another thread (a background materialisation's owner): give
	 * up at the next stop. NULL: never. */
	const atomic_bool *stop;
	/* Asked every tenth of a second or so, at a stop, by a replay that
	 * its caller waits for (a native search): true gives up (gave_up
	 * set; gdb's Ctrl-C). NULL: never. */
	const struct event_give_up *give_up;
	uint64_t give_up_next_ns;
	bool gave_up;
	/* A replay of a tail (single-threaded recordings): the thread's
	 * events before tail_from run natively; there, standing after event
	 * tail_from - 1, it either starts stepping with tail_obs (the tail's
	 * history: materialise.h) or, hold_at_tail, stops (held_at_tail set:
	 * the replayer's start for that history). 0: no tail. */
	size_t tail_from;
	/* ...or, where tail_point is set, at that point inside the stretch
	 * before event tail_from (a STATE record taken by erp_take_point):
	 * the thread runs natively on to it first. */
	const struct trace_state *tail_point;
	const struct erp_observer *tail_obs;
	/* A tail of a multi-threaded replay: the runs of the recorded order
	 * before this one run natively, and in it the completion of the
	 * syscall its thread's last run ended at; there (tail_due) it is
	 * held (hold_at_tail), or every thread that lives starts its history
	 * where it stands (one at the entry of a syscall before its
	 * instruction) and the replay goes on with tail_then as its
	 * observer (NULL: native_runs reach further). 0: none. */
	size_t tail_run;
	bool tail_due;
	const struct erp_observer *tail_then;
	bool hold_at_tail, held_at_tail;
	/* keep_start (a one-thread tail stepped with tail_obs): where the
	 * tail begins, a copy of the replay process is forked and parked
	 * (ptrace_handover.h) as start_copy, what erp_replay_until would
	 * have held there, for the tail's replayer (erp_take_start_copy);
	 * erp_free kills one not taken. */
	bool keep_start;
	pid_t start_copy;
	/* make_copies (a one-thread recording's replay to its end): copies
	 * made on the way, oldest first, kept stopped and traced by the
	 * replay's thread (erp_take_copy parks a fork of one); erp_free
	 * kills them. */
	bool make_copies;
	struct erp_copy copies[ERP_COPIES_MAX];
	size_t ncopies;
	/* The observer's copy_every: copies made while stepping (traced by
	 * the replay's thread until erp_take_mid_copies parks them). */
	struct erp_mid_copy mid[ERP_MID_COPIES_MAX];
	size_t nmid;
	uint64_t mid_last;  /* instructions at the last one */
	/* Start from this copy instead of launching the program (taken:
	 * adopted, or killed where that fails, then launched). */
	struct erp_copy resume;
	size_t resumed_at;    /* ...events done there (0: launched) */
	/* A search for breakpoint hits in a native replay (event_search.c):
	 * hardware breakpoints at search_addr armed in DR1-DR3 of the first
	 * thread at launch and of every thread at its clone (a new thread
	 * has none of its creator's; DR0 stays the STATE points'), every hit
	 * counted and passed (erp_resume), the last in the stretch before
	 * event search_last of its thread, in run search_last_run of the
	 * recorded order. */
	struct event_search_point search[EVENT_SEARCH_MAX];
	size_t nsearch;
	uint64_t search_dr7;     /* DR7's bits for them */
	/* The STATE point's breakpoint where the debug registers do not
	 * trap: an int3 at this PC while a thread runs (0: none). */
	uint64_t soft_pc;
	/* ...and the search's points as int3s there too (event_soft.c);
	 * the bytes in the code now (soft_at: where, soft_orig: what they
	 * replaced). */
	bool search_soft;
	uint64_t soft_at[EVENT_SEARCH_MAX + 1];
	uint8_t soft_orig[EVENT_SEARCH_MAX + 1];
	size_t nsoft;
	uint64_t search_hits;
	size_t search_last, search_last_run;
	/* The counts before the last hit, for erp_run_to_point: a hit at
	 * the point a search runs to is not before it. */
	size_t search_was_hits, search_was_last, search_was_last_run;
	uint64_t search_was_nth;
	uint64_t search_hit_stop; /* the value of stops at the last hit */
	uint64_t took_cpu_ns;     /* erp_take_point's run */
	/* How many hits came in the last hit's stretch (one thread: the
	 * last is the search_nth-th since event search_last - 1). */
	uint64_t search_nth;
	/* A replay to a hit (event_end_hit_point): the search_stop_nth-th
	 * hit in the stretch before event search_stop_at of the first
	 * thread ends the replay there (a failure, search_stopped set, the
	 * thread stopped at the hit, its instruction still to run); its
	 * event before that ends it too (search_passed: fewer hits came). */
	size_t search_stop_at;
	uint64_t search_stop_nth;
	bool search_stopped, search_passed;
	/* ...and (search_prev not NULL) the hit before it there described
	 * on the way (search_prev_ok), its stack in search_prev_sp, the
	 * thread's CPU clock then and at the stop (0: not read): one replay
	 * for both, where a piece to a hit begins at the hit before. The
	 * replay began at search_t0. */
	struct trace_state *search_prev;
	uint8_t *search_prev_sp;
	bool search_prev_ok;
	uint64_t search_prev_clock, search_stop_clock, search_t0;
	/* A search forwards (event_end_search_on): the first hit in a
	 * stretch before an event numbered search_from or later (its
	 * thread's next; 0: none searched for) ends the replay (a failure,
	 * search_found set, search_first that event: what the search asked
	 * for). search_runs (event_end_search_on_run): search_from counts
	 * the events of run search_run's thread, and any hit in a later run
	 * of the order comes after it (search_last_run says which); none in
	 * an earlier one does. */
	size_t search_from, search_first, search_run;
	bool search_runs, search_found;
	size_t cur_run;          /* the run of the recorded order replayed */
	bool exited;          /* the replay process is gone */
	/* How boldly passes of a hot loop are let go uncounted
	 * (event_skip.c): SKIP_BOLD first; a failure because passes were let
	 * go where the point was (skip_missed) tries again one level down;
	 * SKIP_NONE also where asked for (PTREV_STATE_SKIP=0); skip_from:
	 * the fewest passes ahead that timed runs start for
	 * (PTREV_STATE_SKIP=N; 0: event_skip.c's default). */
	enum { SKIP_BOLD, SKIP_CAREFUL, SKIP_NONE } skip_level;
	uint64_t skip_from;
	bool skip_missed;
	/* The syscall the replay cannot reproduce (erp_failed_at), or the
	 * event a thread went for when it diverged (erp_diverged_at), for a
	 * replay that ends there, or before, instead (event_cut.h). */
	struct event_end_failure failed_at;
	char why[512];
};

/* ---- event_index.c ---- */
/* Index td's events per thread (validating the numbering). 0, or -1. */
int erp_index(struct erp *e, const struct trace_data *td);
void erp_index_free(struct erp *e);
struct erp_thread *erp_thread_rec(struct erp *e, pid_t rec_tid);
struct erp_thread *erp_thread_live(struct erp *e, pid_t tid);
/* The SIGFRAME recorded for signal event k of rec_tid, or NULL. */
const struct trace_sigframe *erp_sigframe(const struct erp *e, pid_t rec_tid, uint64_t k);
int erp_fail(struct erp *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The failure about to be told (erp_fail) is t's syscall event k, which
 * it stands at the entry of as recorded, and which the replay cannot
 * reproduce. Kept in failed_at. */
void erp_failed_at(struct erp *e, const struct erp_thread *t, uint64_t k);
/* The failure just told (erp_fail) as t went for its next event: where
 * it says the replay diverged, kept in failed_at (diverged set) unless a
 * syscall no replay reproduces was kept there first. */
void erp_diverged_at(struct erp *e, const struct erp_thread *t);
/* A ptrace stop was taken: counted; -1 (with why) when the owner asked the
 * replay to stop, else 0. */
int erp_count_stop(struct erp *e);

/* ---- event_proc.c ---- */
int erp_launch(struct erp *e);
/* The search's points (search) in t's DR1-DR3 (at launch, at a clone, on
 * a copy resumed). */
int erp_arm_search(struct erp *e, struct erp_thread *t);
/* Was stop st of t (single-stepped, or resumed to run) a hit of the
 * search's points (DR1-DR3)? Counted (search_hits, search_last,
 * search_last_run). 1 when the hit was all (DR6 cleared: t is to go on
 * as it was resumed); 0 for no hit, or a hit that came with a single
 * step's end or a STATE point's (counted); -1 (erp_fail) at the first hit
 * at or after event search_from, where a search forwards ends
 * (search_first set). */
int erp_search_hit(struct erp *e, struct erp_thread *t, int st, bool stepped);
/* The hit of the search's points that DR6 bits dr6 name (B1-B3; B0 and BS
 * when the STATE point or a step's end came with it), t at it: counted
 * as erp_search_hit says, 1, 0 or -1. */
int erp_search_count(struct erp *e, struct erp_thread *t, uint64_t dr6);
void erp_kill(struct erp *e);
void erp_reap(struct erp *e);
int erp_get_regs(struct erp *e, struct erp_thread *t, struct user_regs_struct *regs);
/* A stopped replay shown to gdb (held at the end or at a position): t's
 * general registers and XSAVE area as they are, 0; -1 when t does not
 * exist there. Its memory: bytes read, -1 when none. */
int erp_regfile(struct erp *e, struct erp_thread *t, struct amd64_regfile *rf);
ssize_t erp_read_mem(struct erp *e, uint64_t addr, void *buf, size_t len);
int erp_set_regs(struct erp *e, struct erp_thread *t, const struct user_regs_struct *regs);
/* Resume t with req (PTRACE_SYSCALL, PTRACE_SINGLESTEP, ...) and wait for
 * its next stop (a new thread's first stop, exits of others, are taken in
 * passing). *st its status; the thread or process ending is a failure
 * unless allowed. */
int erp_resume(struct erp *e, struct erp_thread *t, int req, int sig, int *st);
/* The breakpoint that finds a STATE point's PC (and a tail's point, an
 * anchor's): DR0 (DR7 = search_dr7 | 1), or where this machine's debug
 * registers do not trap (inf_dr_traps) an int3 in the code while t runs
 * (erp_resume's runs but single steps, erp_run_for's), its hit told as
 * DR0's (t at pc, RF set; event_soft.c). 0, or -1. */
int erp_point_arm(struct erp *e, struct erp_thread *t, uint64_t pc);
int erp_point_disarm(struct erp *e, struct erp_thread *t);
/* Write one byte of the replay's code (an int3 or the byte it replaced).
 * 0, or -1 with why. */
int erp_put_code_byte(struct erp *e, uint64_t pc, uint8_t b);
/* Resume t (PTRACE_SYSCALL) to its next pass of pc, where the point is
 * armed (erp_point_arm), and wait for the stop. Where t stands on pc
 * after a pass counted (RF set: the kernel's after a hit, or
 * erp_pass_seen's), that instruction is stepped first with DR0 disarmed,
 * rather than left to RF: a second hit at the same pass would count it
 * twice. A syscall instruction at pc is resumed under RF (a step would
 * run the call). 0, or -1. */
int erp_resume_to_pass(struct erp *e, struct erp_thread *t, uint64_t pc, int *st);
/* t stands at pc, its pass there counted (a breakpoint's hit, a step or
 * a stop that ended there): DR6 cleared, and RF set where the kernel did
 * not set it, so that erp_resume_to_pass steps off instead of letting the
 * breakpoint see the same pass again. The kernel sets RF only for a #DB
 * whose DR6 names the register; in some VMs (an Intel Xeon guest here)
 * DR6 comes empty (the kernel reports an ICEBP's TRAP_BRKPT) or with a
 * stale single-step bit (TRAP_TRACE), or with a bit the kernel finds
 * no breakpoint for (TRAP_HWBKPT): 21 to 80 times in one replay of a
 * hot loop's recording, and each counted that pass twice: a skip's
 * count then named a pass before the point (event_skip.c). regs brought
 * up to date. 0, or -1. */
int erp_pass_seen(struct erp *e, struct erp_thread *t, struct user_regs_struct *regs);
/* CLOCK_MONOTONIC in ns: how long a run took. */
uint64_t erp_now_ns(void);
/* Let t run on natively (to its next syscall at most, a search's hits
 * counted on the way), then stop it wherever it is: with guard, t's
 * timer (ptrev/cpu_timer.h; -1: none) armed for guard_ns (0: not
 * armed), after that much of its own CPU time, however loaded its CPU;
 * the tracer's stop after ns of wall time in any case (the timer's
 * stops, late ones of earlier runs too, are passed then). 1 stopped so,
 * 0 another stop came first (*st; the stops asked for stay pending, and
 * the process is not to be used again), -1. */
int erp_run_for(struct erp *e, struct erp_thread *t, uint64_t ns, int guard, uint64_t guard_ns,
		int *st);
/* The wall time after which the tracer stops a run its timer is to stop
 * after cpu_ns of t's CPU time, in case the timer does not: much later,
 * since on a loaded machine t waits for its CPU, and its own run is
 * what counts. */
uint64_t erp_backstop_ns(uint64_t cpu_ns);
/* What timed runs of one thread need (erp_timed_begin to erp_timed_end):
 * t's CPU-time timer (guard for erp_run_for; -1 where the kernel has
 * none), and the tracer on another CPU than t's where there is one: on
 * the CPU they share the running thread, ahead in the scheduler's eyes,
 * may keep it for milliseconds past the time asked for. */
struct erp_timed {
	int guard;
	bool aside;        /* the tracer stepped aside; mine: its own CPUs */
	cpu_set_t mine;
};
void erp_timed_begin(struct erp_thread *t, struct erp_timed *tm);
/* The tracer back on its CPUs, the timer closed. With going_on (t is to
 * run on), a timer signal sent but not yet taken is taken now (it comes
 * before any instruction of t). 0, or -1. */
int erp_timed_end(struct erp *e, struct erp_thread *t, struct erp_timed *tm, bool going_on);
/* Is t's stop ws the signal of its timer guard (a late one: the kernel
 * sends it from an interrupt's aftermath)? */
bool erp_timer_stop(const struct erp_thread *t, int guard, int ws);
/* t stands at the entry stop of its syscall event k: emulate or run it
 * (a clone creates the thread, an exit ends one), ending after it. */
int erp_syscall(struct erp *e, struct erp_thread *t, const struct trace_syscall *s,
		const struct user_regs_struct *entry);
/* Deliver the recorded signal g to t, stopped where it is taken (for a
 * fault: on the faulting instruction, its stop seen); ends at the
 * handler's first instruction, or with the process gone. */
int erp_deliver(struct erp *e, struct erp_thread *t, const struct trace_signal *g, bool fault);
/* t is at the entry stop of a syscall: undo it (the thread back before
 * its syscall instruction). */
int erp_undo_entry(struct erp *e, struct erp_thread *t, const struct user_regs_struct *entry);
/* The instruction at ip, classified (cached). */
int erp_classify(struct erp *e, uint64_t ip, struct insn_info *out);
void erp_icache_clear(struct erp *e);

/* ---- event_soft.c ---- */
/* A search's points as int3s, where the debug registers do not trap: 0,
 * or -1 for a data point (no int3 sees a write). */
int erp_soft_arm_search(struct erp *e);
/* Before t runs natively with req (not a single step): where it stands
 * on one of the points (the search's, the STATE point's) with RF set (its
 * pass counted), that instruction is passed first. 1 go on (*skip: a PC
 * whose byte stays out, where sig is delivered first; 0: none), 0
 * something else came first (*st, the caller's stop), -1. */
int erp_soft_pass(struct erp *e, struct erp_thread *t, int req, int sig, int *st, uint64_t *skip);
/* The bytes in (the search's points, the STATE point's where armed; none
 * at skip) and out again: 0, or -1. */
int erp_soft_put(struct erp *e, uint64_t skip);
int erp_soft_take(struct erp *e);
/* Before a single step: a search's point where t stands without RF is a
 * hit, counted now (RF set). 0, or -1 (the hit ended the replay). */
int erp_soft_count_here(struct erp *e, struct erp_thread *t);
/* Stop st of t, resumed with req while the bytes are in: one of their
 * int3s? Counted and passed: 1 (t to be resumed with req again, the
 * bytes back); 0 a stop for the caller (*st: not an int3 of these, the
 * STATE point's hit told as DR0's, or what came while passing), -1. */
int erp_soft_hit(struct erp *e, struct erp_thread *t, int req, int *st);
/* Run t natively (PTRACE_SYSCALL) with an int3 at each of pcs[0..n) (at
 * most EVENT_SEARCH_MAX + 1), nothing else armed, to its next stop: at
 * one of them it is told as a debug register's hit (t at the pc, RF
 * set). 0 (*st), or -1. */
int erp_soft_run_to(struct erp *e, struct erp_thread *t, const uint64_t *pcs, int n, int *st);

/* ---- event_step.c ---- */
enum erp_stop_kind { AT_SYSCALL, AT_SIGNAL, AT_STATE };

/* Where a thread's run stopped. */
struct erp_stop {
	enum erp_stop_kind kind;
	int sig;                     /* AT_SIGNAL */
	siginfo_t si;
	struct user_regs_struct regs;
};

/* Step t (stepped replays only) until its next stop of interest: the
 * entry of a syscall, a signal (the instruction that raised it not
 * completed), or the STATE point st (when given), each instruction it
 * completes reported to the observer. */
int erp_step_to_stop(struct erp *e, struct erp_thread *t, const struct trace_state *st,
		     struct erp_stop *out);

/* ---- event_skip.c ---- */
/* t stands at a pass of st's PC that is not the point (regs): let it run
 * on natively past the passes that the registers say cannot be the
 * point, to a later pass. 1 it stands there (regs), 0 nothing done
 * (count on), -1 (skip_missed set when the point may have been among
 * the passes let go). */
int erp_skip_passes(struct erp *e, struct erp_thread *t, const struct trace_state *st,
		    struct user_regs_struct *regs);

/* ---- event_anchor.c ---- */
/* Run t natively to its n-th pass of the instruction at pc, the place it
 * stands counted when it stands there (n >= 1; 0 does nothing), with
 * nothing else on the way: a syscall's entry, a signal or an rdtsc first
 * is a failure (why set), and so is a pc that cannot be counted to (a
 * REP string instruction, a call into the kernel). 0, or -1. */
int erp_run_passes(struct erp *e, struct erp_thread *t, uint64_t pc, uint64_t n);

/* ---- event_advance.c ---- */
/* Is t where the STATE record st says (state_digest.h)? 1, 0, or -1. A
 * point with memory (the program's entry: trace_file.h, STATE_MEM) gets
 * its recorded registers (regs updated) and memory at its PC first. */
int erp_at_state(struct erp *e, struct erp_thread *t, const struct trace_state *st,
		 struct user_regs_struct *regs);
/* How a stepped replay steps unless told otherwise: by blocks, or single
 * steps only where PTREV_SW_STEPPER=insn (ERP_STEP_*). */
int erp_step_mode_default(void);
/* Does a reported instruction count as one (a position of the history)?
 * A REP iteration that leaves it unfinished (next == ip) does not. */
static inline bool erp_insn_counts(const struct insn_info *info, uint64_t ip, uint64_t next)
{
	return !(info->kind == INSN_OTHER && next == ip);
}
/* A completed instruction, or a REP iteration (next == ip), for the
 * observer; counts t's instructions. */
int erp_report_insn(struct erp *e, struct erp_thread *t, uint64_t ip,
		    const struct insn_info *info, uint64_t next);
/* Run t (stopped after its event next - 1, or at the entry of a syscall
 * that event next is) on to event next and through it; to_point: stop
 * where the event happens without doing it (a syscall at its entry, a
 * signal where it is taken, undelivered). */
int erp_advance(struct erp *e, struct erp_thread *t, bool to_point);
/* Run t on to the entry of a syscall the log does not hold: the one it
 * was in when the recording ended. */
int erp_advance_to_unrecorded(struct erp *e, struct erp_thread *t);
/* Run t natively to the point st describes (a STATE record that is not
 * one of its events: where a tail's history begins, inside the stretch
 * before its event next). */
int erp_run_to_point(struct erp *e, struct erp_thread *t, const struct trace_state *st);
/* The observer hears that t ends where it stands (once). */
int erp_end_here(struct erp *e, struct erp_thread *t);

/* ---- event_replay.c ---- */
/* Replay everything: every run of the recorded order, with obs (NULL:
 * native); hold_at_end and stop: see struct erp. 0, or -1 with e->why. */
int erp_replay_all(struct erp *e, const struct trace_data *td, const struct erp_observer *obs,
		   bool hold_at_end, const atomic_bool *stop);
/* The same with its first native_runs runs native; from a tail's run
 * (tail_run: the positions count from there, as materialise_tail_run's
 * history does; 0: none). */
int erp_replay_from(struct erp *e, const struct trace_data *td, const struct erp_observer *obs,
		    size_t native_runs, size_t tail_run);
/* The same with the debug registers set to points (0 to EVENT_SEARCH_MAX
 * of them) in every thread, their hits counted in search_hits (a stepped
 * run's single step that hits one too). */
int erp_replay_from_searching(struct erp *e, const struct trace_data *td,
			      const struct erp_observer *obs, size_t native_runs, size_t tail_run,
			      const struct event_search_point *points, size_t n);
/* Replay td (one thread) natively up to its event `from`, stepping
 * with obs from there to the end (the history of the tail); with run
 * set (any number of threads), up to the start of that run of the
 * recorded order instead. */
int erp_replay_tail(struct erp *e, const struct trace_data *td, const struct erp_observer *obs,
		    size_t from, const struct trace_state *point, size_t run,
		    const atomic_bool *stop, bool keep_start, struct erp_copy resume);
/* The replay of a recording to its end, held there (erp_replay_all's
 * hold_at_end), parking copies on the way where it has one thread
 * (make_copies). */
int erp_replay_to_end(struct erp *e, const struct trace_data *td);
/* A fork of the copy with the most events done, at most `from` (a tail
 * from event from starts there), parked, now the caller's; {0}: none. Only
 * in the thread that made the replay (its tracer). */
struct erp_copy erp_take_copy(struct erp *e, size_t from);
/* The parked copy of where a tail began (keep_start), now the caller's
 * (ptrace_adopt it, or ptrace_park_kill): 0 where none was made. */
pid_t erp_take_start_copy(struct erp *e);
/* ---- event_copies.c ---- */
/* Room for one more copy of e's replay process (a quarter of the memory
 * available for all of them together)? */
bool erp_copy_room(const struct erp *e);
/* t stands between two instructions of a stepped run: a copy of the
 * replay process here where the observer's copy_every says so (none while
 * an int3 of ours is in the code). Optional: nothing fails if none is
 * made. */
void erp_mid_copy(struct erp *e, struct erp_thread *t);
/* The copies erp_mid_copy made, parked for a tracer in another thread
 * (ptrace_handover.h), oldest first, into pos[i] and pid[i] (at most
 * max, the newest); now the caller's (adopt each, or ptrace_park_kill
 * it). How many. */
size_t erp_take_mid_copies(struct erp *e, uint64_t *pos, pid_t *pid, size_t max);
/* Replay td (one thread) natively until it stands after its event
 * from - 1 (or, point set, at that point inside the stretch that
 * follows), and hold it there. 0, or -1 with e->why. */
int erp_replay_until(struct erp *e, const struct trace_data *td, size_t from,
		     const struct trace_state *point);
/* The same from a copy (struct erp_copy: resume) instead of the start. */
int erp_replay_until_from(struct erp *e, const struct trace_data *td, size_t from,
			  const struct trace_state *point, struct erp_copy resume);
/* Replay td natively until the start of run `run` of its recorded order
 * (every thread where it stands then) and hold it there. */
int erp_replay_until_run(struct erp *e, const struct trace_data *td, size_t run);
/* The same with the debug registers set to points (1 to
 * EVENT_SEARCH_MAX of them), whose hits are counted on the way
 * (search_hits, search_last, search_last_run): to where the tail from
 * event from (point) begins, or (run not 0, any recording) to the start
 * of run `run`; give_up (NULL: none) may stop it (gave_up). */
int erp_replay_until_searching(struct erp *e, const struct trace_data *td, size_t from,
			       const struct trace_state *point, size_t run,
			       const struct event_search_point *points, size_t n,
			       const struct event_give_up *give_up, struct erp_copy resume);
/* A one-thread recording's replay natively (from the copy resume), with
 * points armed as erp_replay_until_searching arms them, that ends at the
 * nth hit in the stretch before the thread's event k (search_stopped:
 * the thread stands at that hit, its instruction still to run; the
 * replay's rc is then -1). One that gets to the end never met it. prev
 * (not NULL): hit nth - 1 described there on the way (search_prev). */
int erp_replay_to_hit(struct erp *e, const struct trace_data *td, size_t k, uint64_t nth,
		      const struct event_search_point *points, size_t n,
		      const struct event_give_up *give_up, struct erp_copy resume,
		      struct trace_state *prev, uint8_t prev_sp[STATE_RECORD_SP_LEN]);
/* A one-thread recording's replay natively to its end (from the copy
 * resume), with points as erp_replay_until_searching arms them, that ends
 * at the first hit after the thread's event from - 1 (search_found,
 * search_first); one that gets to the end met none there. runs: any
 * recording's, from its start, where from counts the events of run
 * `run`'s thread and every hit in a later run comes after them, none in
 * an earlier one (search_runs). */
int erp_replay_searching_from(struct erp *e, const struct trace_data *td, size_t run,
			      size_t from, bool runs, const struct event_search_point *points, size_t n,
			      const struct event_give_up *give_up, struct erp_copy resume);

/* ---- event_split.c ---- */
/* e is held after the one thread's event tail_from - 1 (erp_replay_until
 * without a point): let the thread run on natively for about after_ns of
 * wall time, stop it wherever it is and describe that place as a STATE
 * record (*out, pos tail_from: a point a replay finds again, as the
 * recorder's are found; state_digest.h; the stack around its rsp in sp).
 * after_ns 0: where the stretch ends at a STATE point in a loop, the place
 * of erp_near_state instead. Where the thread is in a loop with no
 * rarely passed PC nearby, the place where it leaves the loop; with
 * leave_loop as soon as it is seen to loop (for a point before a hit: the
 * later the better). 1 when taken, 0 when
 * the thread reached its next event first (nothing taken; e is spent
 * either way), -1 with e->why. */
/* (took_cpu_ns: the thread's own CPU time in that run, to where the
 * timer stopped it or to the STATE point its stretch ends at.) */
int erp_take_point(struct erp *e, uint64_t after_ns, bool leave_loop, struct trace_state *out,
		   uint8_t sp[STATE_RECORD_SP_LEN]);
/* t (stopped under ptrace, registers regs) described where it stands as
 * a STATE record of its event pos, reached at most ran_ns after its
 * previous event, with the stack around its rsp in sp: 1, or -1. */
int erp_describe(struct erp *e, struct erp_thread *t, const struct user_regs_struct *regs,
		 uint64_t pos, uint64_t ran_ns, struct trace_state *out,
		 uint8_t sp[STATE_RECORD_SP_LEN]);
/* On natively towards STATE point st, t's event next, as a replay finds
 * it in a hot loop (event_skip.c), but stopped at the first pass that the
 * loop's passes, let go uncounted, reach: a few thousand passes before
 * the point. 1 there (regs), 0 when no passes were let go (t then stands
 * at the point, or the loop was short), -1. */
int erp_near_state(struct erp *e, struct erp_thread *t, const struct trace_state *st,
		   struct user_regs_struct *regs);
/* Hand the held replay process over (its pid and /proc/PID/mem): erp_free
 * then leaves it alive. */
void erp_release(struct erp *e, pid_t *pid, int *memfd);
void erp_free(struct erp *e);

#endif
