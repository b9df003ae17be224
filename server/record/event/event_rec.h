/* Internals of the event recorder backend (include/ptrev/event_backend.h),
 * shared by its files, bottom up (each uses only those above it):
 *   event_threads.c   threads, the SCHED runs, pending signals, reading
 *                     the process's memory
 *   event_live.c      a recording gdb drives: the stops it must see, the
 *                     program held for it
 *   event_cpu.c       the CPU: one thread runs its own code at a time;
 *                     resuming a thread (held while gdb holds the program)
 *   event_point.c     a STATE record of where a thread stands now
 *   event_signal.c    signals: which to take now, hold or pass on, and
 *                     delivering them where the recording says; rdtsc
 *   event_state.c     STATE points: stopping a thread that makes no
 *                     syscall, to deliver a held signal or let another run
 *   event_exec.c      the program execs: the recording starts again
 *   event_syscall.c   syscall entries and returns
 *   event_stop.c      what one waitpid status of a thread means
 *   event_record.c    the loop: set-up, waiting, timers, the end
 *   event_engine.c    a recording gdb drives: resume/wait/interrupt
 *                     (event_engine.h)
 * The program runs natively: every thread is resumed with PTRACE_SYSCALL,
 * so it stops only at syscalls, at signals (rdtsc traps as SIGSEGV with
 * PR_SET_TSC) and where the recorder stops it. Positions count events
 * (docs/trace-format.md, "Event recordings"). */
#ifndef PTREV_EVENT_REC_H
#define PTREV_EVENT_REC_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "ptrev/event_backend.h"
#include "ptrev/inferior.h"
#include "ptrev/mem_diff.h"
#include "ptrev/trace_file.h"

struct sideband;

enum ev_tstate {
	EV_T_NEW,       /* its clone was seen, its first stop not yet */
	EV_T_READY,     /* stopped at an event, waiting for the CPU */
	EV_T_RUNNING,   /* has the CPU: runs its own code */
	EV_T_SYSCALL,   /* inside a syscall (which may block): no CPU needed */
	EV_T_GONE,
};

#define EV_MAX_HELD 32

struct ev_rec;

struct ev_thread {
	pid_t tid;
	struct ev_rec *rec;
	enum ev_tstate state;
	bool started;              /* its first stop was seen */
	uint64_t events;           /* the number its next event gets */

	/* The syscall in progress (between its entry and return stops). */
	struct user_regs_struct entry;
	uint64_t entry_nr;
	struct mem_diff *watch;    /* its memory at the entry, for a call the
	                              syscall table cannot describe */
	bool undone_entry;         /* its entry was undone to deliver a
	                              signal: the return stop that follows is
	                              not a syscall of the program's */
	/* Stopped at a syscall's return with a signal pending: the next stop
	 * (before any instruction) takes it there. */
	bool at_return;
	bool check_pending;        /* ask at its next start whether a signal
	                              waits (it starts, or goes on from a
	                              STATE point) */

	/* Asynchronous signals that arrived while it ran its own code, held
	 * until its next syscall or STATE point. */
	siginfo_t held[EV_MAX_HELD];
	size_t nheld;
	uint64_t held_since;       /* ns, when the oldest was held */

	/* A signal sent by the recorder to be taken where the recording says
	 * (the stop it causes is ours), then delivered. */
	int own_sig;
	siginfo_t own_si;
	enum trace_signal_where own_where;
	bool delivering;           /* stepped with a signal: the next stop is
	                              at the handler's first instruction */
	struct trace_signal sig;   /* the SIGNAL record being completed */

	int stop_expected;         /* our SIGSTOPs not seen yet */
	bool wants_state;          /* ...one was sent for a STATE point */
	bool exiting;              /* in its exit syscall, keeping the CPU */
	/* Its last event is a syscall it gave the CPU up at, which it has not
	 * run past since: a replay completes it only when it runs next, so
	 * another thread's STATE point leaves out what it may write. */
	bool sys_unseen;
	bool restarting;           /* its syscall, interrupted by our SIGSTOP,
	                              is entered again next */
	uint64_t run_since;        /* ns, when it got the CPU */
	uint64_t event_ns;         /* ns, its previous event (or its start) */
	uint64_t run_first;        /* the event number its run started at */

	/* Driven by gdb (event_live.c; only with ev_rec.live). */
	bool running;              /* resumed, its next stop not seen yet */
	bool parked;               /* left stopped while the program is
	                              held for gdb: resumed (with parked_sig)
	                              when gdb resumes it */
	int parked_sig;
	bool moved;                /* ran its own code since its last event */
	bool gdb_go;               /* gdb resumed it (all-stop: its vCont) */
	bool gdb_step;             /* ...to step one instruction */
	int gdb_resume_sig;        /* ...with this signal */
	bool step_started;         /* the step's first resume was made */
	uint64_t step_rip;         /* where the step began */
	int gdb_sig;               /* the signal reported to gdb, undelivered */
	siginfo_t gdb_si;
	bool gdb_interrupt;        /* our SIGSTOP stops it for gdb's Ctrl-C */
	bool exit_hold;            /* its exit's entry undone: stop for gdb */
	bool exit_held;            /* ...done once: the exit goes on */
	bool exit_hold_point;      /* stands there now (a STATE point there
	                              says so: rcx, r11 are the syscall's) */
	pid_t fork_report;         /* its fork's child, held for gdb: the fork
	                              is reported at the call's return */
};

/* What gdb sees of an event recording it drives (event_live.c): the
 * program held at a stop, the stop to report. */
struct ev_live {
	bool on;
	bool halted;               /* every thread held for gdb */
	bool have_report;
	struct stop_event report;
	volatile sig_atomic_t interrupt;
	bool stop_before_exit;
	struct trace_data *kept;   /* the writer's records, kept (the engine's) */
};

struct ev_rec {
	struct inferior *inf;
	pid_t pid;
	pid_t self;
	int memfd;                 /* /proc/PID/mem, reopened after execve */
	struct trace_writer *w;
	struct sideband *sb;
	struct event_record_opts opts;
	uint64_t slice_ns, signal_ns;

	struct ev_thread **threads;
	size_t nthreads, cap;
	struct ev_thread *cpu;     /* running its own code, or NULL */
	size_t rr;                 /* round robin: where the search starts */
	pid_t *early;              /* threads whose first stop came before
	                              their clone event */
	size_t nearly, capearly;

	struct trace_sched_run *runs; /* finished runs not written yet */
	size_t nruns, runs_cap;

	/* The path and arguments of an execve in progress (event_exec.c). */
	char *exec_path;
	char **exec_argv;
	unsigned execs;            /* how many times the recording began again */
	char exec_last[4096];      /* with which program, the last time */

	struct ev_live live;
	uint64_t entry_bp;         /* our int3 at the entry point (event_entry.c),
	                              or 0 */

	struct trace_end end;
	bool proc_gone;
	uint64_t t0_ns;
	char err[512];
};

/* ---- event_record.c ---- */
void ev_init(struct ev_rec *r, struct inferior *inf, struct trace_writer *w,
	     const struct event_record_opts *opts);
/* Trace the launched program, note its first thread, trap rdtsc, and give
 * it the CPU. 0/-1. */
int ev_set_up(struct ev_rec *r);
/* End the program (unless gone) and reap every thread. */
void ev_kill_all(struct ev_rec *r);
void ev_free(struct ev_rec *r);

/* ---- event_threads.c ---- */
uint64_t ev_now_ns(void);
struct ev_thread *ev_thread_find(struct ev_rec *r, pid_t tid);
struct ev_thread *ev_thread_add(struct ev_rec *r, pid_t tid);
bool ev_early_take(struct ev_rec *r, pid_t tid);
int ev_early_add(struct ev_rec *r, pid_t tid);
/* t's event (numbered t->events) is in the log: the next gets the next
 * number, and the time of this one is noted (STATE records' ran_ns). */
void ev_event_done(struct ev_thread *t);
/* t stopped at a syscall's entry (registers now) stands on its syscall
 * instruction again, the call not made: the kernel skips a syscall
 * numbered -1; the return stop that follows is not the program's
 * (undone_entry). 0/-1. */
int ev_undo_entry(struct ev_thread *t, const struct user_regs_struct *now);
/* t had the CPU and stops where its run ends: after its event `last`. */
int ev_run_end(struct ev_thread *t, uint64_t last);
bool ev_any_ready(const struct ev_rec *r);
/* Write the runs collected so far. 0/-1. */
int ev_sched_flush(struct ev_rec *r);
long ev_read_mem(void *rec, uint64_t addr, void *buf, size_t len);
/* Is a signal pending for t that it does not block (it will be taken
 * before t runs another instruction)? */
bool ev_signal_pending(struct ev_thread *t);
/* Is our SIGSTOP, not yet seen, the only signal pending for t that it
 * does not block? */
bool ev_only_our_stop_pending(struct ev_thread *t);
/* Is a signal other than our SIGSTOP pending for t that it does not
 * block? */
bool ev_other_signal_pending(struct ev_thread *t);
int ev_open_memfd(struct ev_rec *r);
/* The mappings from now on (a new sideband, the old one freed: at the
 * start and when the program execs), their binaries copied unless
 * --no-copy. */
int ev_sideband_start(struct ev_rec *r);
int ev_fail(struct ev_rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- event_entry.c ---- */
/* Where rdtsc does not trap, stop the program at its entry point once
 * (a dynamically linked program, just exec'd): the point's memory holds
 * the loader's TSC leftovers. Nothing where it cannot. */
void ev_entry_arm(struct ev_rec *r);
/* The stop at the entry: its STATE point written, t going on (or gdb
 * told of its own breakpoint there), 1; 0 when the stop is not that;
 * -1 on failure. */
int ev_entry_stop(struct ev_thread *t, int sig, const siginfo_t *si, struct user_regs_struct *now);

/* ---- event_live.c (a recording gdb drives: event_engine.c) ---- */
/* Hold the program for gdb with ev as the stop to report: every thread
 * that runs is stopped (our SIGSTOP), and none is resumed until gdb
 * resumes it. 0/-1. */
int ev_live_report(struct ev_rec *r, const struct stop_event *ev);
/* A stop gdb asked for (a breakpoint, a watchpoint, a step, our SIGSTOP
 * for its Ctrl-C): reported, 1; 0 when the recorder handles the stop as
 * usual; -1 on failure. */
int ev_live_stop(struct ev_thread *t, int sig, const siginfo_t *si,
		 struct user_regs_struct *now);
/* The program's own signal sig (not rdtsc's): 1 when gdb is to see it
 * first (it does not pass it), held undelivered; 0: the recorder takes it
 * as usual. */
int ev_live_signal(struct ev_thread *t, int sig, const siginfo_t *si);
/* How ev_resume resumes t when gdb drives the recording: 1 when t stays
 * stopped (held, or its step is done and reported), else 0 with *req the
 * ptrace request to use. */
int ev_live_resume(struct ev_thread *t, int sig, int *req);

/* t enters its exit (exit_group, or the last thread's exit) at regs now:
 * 1 when it is held there for gdb, before the syscall instruction. */
int ev_live_exit_entry(struct ev_thread *t, struct user_regs_struct *now);
/* The skipped exit's return: the stop before the exit, for gdb. */
int ev_live_exit_stop(struct ev_thread *t);
/* A fork or vfork of t (PTRACE_EVENT_FORK/VFORK, child pid): its child
 * let go clean, or, where gdb hears of them, held for gdb, and the parent
 * reported (a vfork here, inside its call, as the live target does; a
 * fork at the call's return, ev_live_forked). 1 when reported, 0: t goes
 * on; -1 on failure. */
int ev_live_fork(struct ev_thread *t, pid_t child, bool vfork, bool stop_seen);
/* t's fork returned, logged: reported to gdb if ev_live_fork held its
 * child. 0/-1. */
int ev_live_forked(struct ev_thread *t);
/* t's vfork child has exec'd or exited (PTRACE_EVENT_VFORK_DONE): gdb's
 * breakpoints go back, and gdb hears of it where it heard of the vfork. 1
 * when reported, 0: t goes on. */
int ev_live_vfork_done(struct ev_thread *t);
/* The program execs: the recording kept in memory (live.kept) is let go
 * (unkeep), and kept again from the writer's new start (keep). 0/-1. */
int ev_live_unkeep(struct ev_rec *r);
int ev_live_keep(struct ev_rec *r);

/* ---- event_cpu.c ---- */
/* Resume a thread to its next stop (PTRACE_SYSCALL, sig delivered; while
 * gdb holds the program, kept until gdb resumes it: ev_live_resume). */
int ev_resume(struct ev_thread *t, int sig);
/* The CPU is free: give it to the next ready thread, round robin. */
int ev_dispatch(struct ev_rec *r);

/* ---- event_point.c ---- */
/* Write a STATE record for t (stopped, registers now) as its next event. */
int ev_point_write(struct ev_thread *t, const struct user_regs_struct *now);
/* The same with memory a replay puts in place there (trace_state.mem). */
int ev_point_write_mem(struct ev_thread *t, const struct user_regs_struct *now,
		       const struct trace_mem_write *mem, size_t nmem);

/* ---- event_signal.c ---- */
/* Thread t stopped with signal sig (a signal-delivery stop, not ours),
 * registers now. */
int ev_signal_stop(struct ev_thread *t, int sig, const siginfo_t *si,
		   struct user_regs_struct *now);
/* t stopped again after being stepped with a signal: it stands at the
 * handler's first instruction (or the signal was ignored after all). */
int ev_delivered_stop(struct ev_thread *t, struct user_regs_struct *now);
/* Send the first held signal to t (stopped, its previous event done), to
 * be taken at where: its stop then delivers it (ev_own_signal_stop). */
int ev_send_held(struct ev_thread *t, enum trace_signal_where where);
/* gdb resumes t, which has the CPU and stood for gdb, with no signal of
 * gdb's: a signal that waits for t (held, or pending in the kernel) is
 * taken before t runs on, as gdbserver's resume has the kernel deliver it
 * at once, at a STATE point where t stands (none right after an event).
 * 0/-1. */
int ev_signal_take_waiting(struct ev_thread *t);
/* The stop our own signal caused: put the recorded siginfo in place and
 * deliver it. */
int ev_own_signal_stop(struct ev_thread *t);
/* rdtsc/rdtscp trapped (SIGSEGV, SI_KERNEL): emulate and log it; 1 if it
 * was one, 0 if not, -1 on failure. */
int ev_rdtsc(struct ev_thread *t, struct user_regs_struct *now);

/* ---- event_state.c ---- */
/* Check the running thread against the time bounds; stop it for a STATE
 * point when it runs on without a syscall while a signal waits for it or
 * another thread waits for the CPU. */
int ev_state_check(struct ev_rec *r);
/* Our SIGSTOP stopped t: a STATE point if one was wanted there. */
int ev_state_stop(struct ev_thread *t, struct user_regs_struct *now);
/* Nanoseconds until the next bound is reached (-1: none running). */
int64_t ev_state_next_ns(const struct ev_rec *r);

/* ---- event_exec.c ---- */
/* At an execve's entry: note its path and arguments. */
void ev_exec_entry(struct ev_thread *t, const struct user_regs_struct *regs);
/* PTRACE_EVENT_EXEC reported by tid: the thread that exec'd is left alone,
 * with the pid. */
int ev_exec_event(struct ev_rec *r, pid_t tid);
/* t's execve returned: the recording starts again with the new program. */
int ev_exec_restart(struct ev_thread *t);
void ev_exec_free(struct ev_rec *r);
/* Tell the user the recording began again at an exec, if it did. */
void ev_exec_report(const struct ev_rec *r);

/* ---- event_syscall.c ---- */
int ev_syscall_stop(struct ev_thread *t, struct user_regs_struct *now);

/* ---- event_stop.c ---- */
int ev_on_status(struct ev_rec *r, pid_t tid, int st);
/* A leader that exits while other threads live is reported only when
 * they are all gone: it gives up the CPU when it is a zombie. */
int ev_exited_leader(struct ev_rec *r);

#endif
