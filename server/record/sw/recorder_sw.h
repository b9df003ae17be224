/* Internals of the sw recorder backend, shared by its files. Each file
 * calls only the files below it in this list (no circles):
 *   recorder_sw.c         `ptrev record`: sw_backend_record on the engine
 *   sw_engine.c           the engine API: resume/wait/interrupt in all-stop
 *                         style, stopping every thread, reporting
 *   recorder_sw_stop.c    one waitpid status of a thread: what it means
 *   recorder_sw_block.c   the stop that ends a native run: the block's
 *                         executed prefix encoded, then the stop handled
 *                         as a single step's would be
 *   recorder_sw_signal.c  signal stops: delivery, handlers, rdtsc emulation
 *   recorder_sw_step.c    complete a step (encode, log), decide to step
 *                         again or stop
 *   recorder_sw_sched.c   one thread on the CPU at a time; the SCHED runs
 *   recorder_sw_run.c     how a thread executes its next instructions: a
 *                         native run to the end of its basic block, an
 *                         emulated branch, or a single step
 *   recorder_sw_bp.c      the caller's breakpoints before each instruction;
 *                         our int3 lifted for a step over it
 *   recorder_sw_thread.c  per-thread state, memory reads, the
 *                         classification and block caches
 * Records go through one trace writer (trace_file.h): the caller's file,
 * kept in memory too for the engine's caller, or memory alone.
 *
 * Two steppers produce the same PT (PTREV_SW_STEPPER selects): `insn`
 * single-steps every instruction; `block` (the default) runs each basic
 * block natively to its control transfer (block_step.h) and hands every
 * instruction of it to the encoder exactly as single steps would, then
 * emulates or single-steps the transfer. `block-hw` is `block` with debug
 * registers only (no int3 writes), for comparisons. */
#ifndef PTREV_SERVER_RECORDER_SW_H
#define PTREV_SERVER_RECORDER_SW_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/user.h>

#include "ptrev/block_cache.h"
#include "ptrev/block_step.h"
#include "ptrev/inferior.h"
#include "ptrev/insn_class.h"
#include "ptrev/mem_diff.h"
#include "ptrev/pt_encoder.h"
#include "ptrev/recorder.h"
#include "ptrev/trace_file.h"
#include "ptrev/sideband.h"

struct sw_rec;

enum sw_stepper {
	SW_STEPPER_BLOCK = 0,  /* native runs per block (int3, or a debug
				* register when other threads exist) */
	SW_STEPPER_INSN,       /* one single step per instruction */
	SW_STEPPER_BLOCK_HW,   /* native runs with debug registers only */
};

struct sw_thread {
	pid_t tid;
	struct sw_rec *rec;
	struct ptenc *enc;
	bool started;          /* encoder begun at the first instruction */
	bool gone;
	uint64_t insns;        /* completed instructions (event positions) */
	struct user_regs_struct regs; /* at the last stop, before the step */
	struct insn_info info; /* the instruction at regs.rip */
	int deliver;           /* signal to deliver with the next step */
	bool delivering;       /* the last step delivered a signal */
	struct trace_signal sig; /* the signal being delivered */

	/* engine state (the caller's view, as struct inf_thread) */
	bool resumed;          /* resumed by the caller, not yet reported */
	bool stepping;         /* the caller asked for one instruction */
	bool inflight;         /* a step was issued and its stop not collected */
	bool exiting;          /* stepping exit/exit_group: never stops again */
	bool has_pending;
	struct stop_event pending;
	pid_t fork_child;      /* a fork child held for gdb: reported when the
				* parent's fork has returned */
	bool exec_report;      /* its exec succeeded: reported at the boundary */
	struct mem_diff *watch; /* its memory before a syscall the table
				 * cannot describe (record_syscall_watch) */
	bool mid_step;         /* reported inside its step (a vfork's events):
				* its resume goes on with that step */
	bool held;             /* t->sig is a reported, undelivered signal */
	siginfo_t held_si;
	int stop_expected;     /* SIGSTOPs we sent and have not collected */
	bool reported;         /* its last report was at reported_ip and it */
	uint64_t reported_ip;  /* has not executed anything since */
	bool exempt;           /* first instruction of a resume off a stop */
	uint64_t lifted;       /* int3 lifted for this thread's step (0 none) */
	bool ready;            /* waits for the CPU (sw_rec.cpu) to step */
	/* A native run in flight (block stepper): blk.n instructions from
	 * blk.start, stopping at blk.end (blk.has_term: before the control
	 * transfer there). With fold, the run starts with the control
	 * transfer at the thread's IP (t->info, t->regs), known to go to
	 * blk.start. A copy: the cache may drop its block meanwhile. */
	bool in_block;
	bool fold;
	struct block blk;
};

/* One classification cache entry: valid when gen matches. */
struct icache_entry {
	uint64_t ip;
	uint32_t gen;
	struct insn_info info;
};

#define ICACHE_BITS 16

struct lifted_bp {
	uint64_t addr;
	int count;
};

struct sw_rec {
	struct inferior *inf;
	pid_t pid;
	int memfd;
	/* Where every record goes: the caller's writer, or our own memory
	 * writer (mem) when the caller has no file. With keep, the writer
	 * also decodes each record into td (trace_writer_keep): the
	 * recording so far exactly as the reader would return it. */
	struct trace_writer *w;
	struct trace_writer *mem;
	bool keep;
	struct trace_data td;
	bool finished;         /* sw_engine_finish ran: the writer is let go */
	bool stop_before_exit; /* sw_engine_stop_before_exit */
	struct sideband *sb;
	uint32_t psb_period;
	struct sw_thread **threads;
	size_t nthreads, cap;
	size_t live;           /* threads not yet gone */
	pid_t *early;          /* new threads seen before their clone event */
	size_t nearly, capearly;
	struct icache_entry *icache;
	uint32_t gen;          /* bump to invalidate the whole cache */
	struct block_cache *bcache; /* blocks, invalidated with icache */
	struct bstep *bstep;   /* native runs (NULL: single steps only) */
	enum sw_stepper stepper;
	/* A CLONE_VM child that is not a traced thread shares the memory:
	 * an int3 written for a run could be met by it. */
	bool shared_vm;
	struct trace_end end;  /* the summary so far */
	char err[512];
	size_t errlen;
	volatile sig_atomic_t *stop; /* sw_record_opts.stop */
	bool allow_rseq;             /* sw_record_opts.allow_rseq */
	bool killed;           /* we sent SIGKILL because *stop was set */

	/* engine */
	bool stopping;         /* collecting every thread: step nothing */
	bool proc_gone;        /* the leader's exit was collected */
	bool gone_reported;    /* ... and reported */
	bool failed;           /* a recording error: err says which */
	volatile sig_atomic_t interrupt_req;
	struct lifted_bp lifted[8];
	pid_t self;            /* getpid(), for synthetic siginfo */
	struct stop_event exit_ev; /* the process's end, once proc_gone */
	uint64_t t0_ns;        /* CLOCK_MONOTONIC at the start */
	uint64_t flushed_ns;   /* when the trace last went to the file */

	/* One thread executes user-space instructions at a time, so that all
	 * threads' instructions have one true order, logged as SCHED runs
	 * (syscalls run beside it: they may block in the kernel). */
	struct sw_thread *cpu; /* stepping a user-space instruction, or NULL */
	uint32_t slice;        /* steps cpu made since it got the CPU */
	size_t rr_next;        /* where the round robin looks next */
	struct trace_sched_run run; /* the run being extended (count 0: none) */
	struct trace_sched_run *runs; /* finished runs not yet written */
	size_t nruns, runs_cap;
};

/* Instructions a thread executes before another ready thread gets the
 * CPU (both steppers count completed instructions, so they switch at the
 * same positions). */
#define SW_QUANTUM 1000
/* Branches emulated one after the other before the thread is stepped once
 * anyway (so that a jump to itself still goes through waitpid, where
 * interrupts and other threads are seen). */
#define SW_EMU_CHAIN 64
/* Finished runs kept before they are written as one SCHED record. */
#define SW_SCHED_BATCH 512

/* The engine is the recorder's state (sw_engine.h). */
struct sw_engine {
	struct sw_rec r;
};

/* ---- per-thread state, memory (recorder_sw_thread.c) ---- */
struct sw_thread *sw_thread_find(struct sw_rec *r, pid_t tid);
struct sw_thread *sw_thread_add(struct sw_rec *r, pid_t tid);
/* Start tracing a stopped thread at its current IP (reads registers,
 * classifies, begins the encoder). Returns 0/-1. */
int sw_thread_start(struct sw_thread *t);
/* The thread ended: finish its stream (ip 0 = it ended inside a syscall
 * that did not return), write its THREAD exit record. */
int sw_thread_finish(struct sw_thread *t, uint64_t ip, int exit_code);
void sw_threads_free(struct sw_rec *r);
/* Make ev the thread's pending event. */
void sw_set_pending(struct sw_thread *t, enum stop_kind kind, int sig);
/* Classify the instruction at ip (cached; our int3 bytes hidden).
 * Returns 0, or -1 with err. */
int sw_classify(struct sw_rec *r, uint64_t ip, struct insn_info *out);
/* Code may have changed: forget classifications and blocks. */
void sw_icache_invalidate(struct sw_rec *r);
/* /proc/PID/mem for reading, (re)opened (after execve; the block
 * stepper's too). 0/-1. */
int sw_open_memfd(struct sw_rec *r);
long sw_read_mem(void *rec, uint64_t addr, void *buf, size_t len);
/* The program's code at addr: memory with the caller's int3 bytes hidden
 * (block_read_fn, for the block cache). */
long sw_read_code(void *rec, uint64_t addr, void *buf, size_t len);

/* Is t about to execute exit or exit_group (it never stops again)? */
static inline bool sw_is_exit_syscall(const struct sw_thread *t)
{
	return t->info.kind == INSN_SYSCALL &&
	       (t->regs.rax == SYS_exit || t->regs.rax == SYS_exit_group);
}

/* ---- the caller's breakpoints (recorder_sw_bp.c) ---- */
/* A breakpoint of the caller's before the instruction at ip: its kind,
 * or STOP_NONE. */
enum stop_kind sw_breakpoint_at(const struct inferior *inf, uint64_t ip);
/* Lift our int3 at t's IP for its step. */
void sw_lift_int3(struct sw_thread *t);
/* Put it back once t's step is over (the last thread stepping it). */
void sw_restore_int3(struct sw_thread *t);

/* The first of b's instructions 1..n-1 with a breakpoint of the caller's
 * before it (a native run must stop there), or n. */
uint32_t sw_breakpoint_cut(const struct inferior *inf, const struct block *b, uint32_t n);

/* ---- executing the next instructions (recorder_sw_run.c) ---- */
/* Single-step the instruction at t's IP (delivering t->deliver). 0/-1. */
int sw_run_step(struct sw_thread *t);
/* t holds the CPU at a boundary (breakpoints checked): run its block
 * natively, at most limit instructions, or single-step. With emu, a
 * control transfer at the IP that only reads registers is executed here
 * instead: returns 1 with the registers after it in *emu (written to the
 * thread). 0 (running), 1 (emulated) or -1. */
int sw_run(struct sw_thread *t, uint32_t limit, struct user_regs_struct *emu);

/* ---- the CPU and the schedule (recorder_sw_sched.c) ---- */
/* Run t (standing at a boundary, breakpoints checked) when it may have
 * the CPU; else it waits, ready. A syscall steps at once. 0, 1 when an
 * instruction was emulated (sw_run: registers in *emu; emu NULL: never),
 * or -1. */
int sw_sched_run(struct sw_thread *t, struct user_regs_struct *emu);
/* t stops stepping (an event, not resumed, stopping, gone): give the CPU
 * back if it has it. */
void sw_sched_release(struct sw_thread *t);
/* Give a free CPU to the next ready thread (round robin): the thread to
 * advance (sw_advance), or NULL. */
struct sw_thread *sw_sched_dispatch(struct sw_rec *r);
/* Forget who waits (everything stopped for a report). */
void sw_sched_reset(struct sw_rec *r);
/* t completed its instruction pos: extend the schedule. 0/-1. */
int sw_sched_note(struct sw_thread *t, uint64_t pos);
/* Write the schedule so far (and close the current run), so that the
 * recording holds the order of every instruction executed. 0/-1. */
int sw_sched_flush(struct sw_rec *r);

/* ---- one thread's step (recorder_sw_step.c) ---- */
/* The instruction at t->regs.rip completed and the thread now stands at
 * now->rip: encode it, log a syscall, refresh the sideband. 0/-1. */
int sw_complete_step(struct sw_thread *t, const struct user_regs_struct *now);
/* The first k instructions of b (each going to the next) completed in a
 * native run: encode each as its own step would have. 0/-1. */
int sw_complete_run(struct sw_thread *t, const struct block *b, uint32_t k);
/* Write the SYSCALL record of the syscall t just completed (registers
 * before in t->regs) with result, and the memory it wrote. 0/-1. */
int sw_log_syscall(struct sw_thread *t, int64_t result);
/* The thread stands at an instruction boundary with registers now: record
 * that as its "before" state, then step it again or leave it stopped with
 * an event (after_step: an instruction step ended here, which ends a
 * caller's single-step). 0/-1. */
int sw_resume(struct sw_thread *t, const struct user_regs_struct *now, bool after_step);
/* Step a thread standing at a boundary (t->regs current) unless it must
 * stop: an event pending, not resumed, stopping, a breakpoint here. 0/-1. */
int sw_advance(struct sw_thread *t);

/* ---- signals (recorder_sw_signal.c) ---- */
/* The thread stopped with signal sig (not the step's SIGTRAP), registers
 * now. Handles rdtsc emulation, our own SIGSTOPs, completes the step if it
 * ran, then delivers (pass_signals) or holds the signal as an event. 0/-1. */
int sw_signal_stop(struct sw_thread *t, int sig, struct user_regs_struct *now);
/* The thread stopped with SIGTRAP after a step that delivered a signal:
 * either at the handler's first instruction or (no handler) after the
 * instruction. Resumes the thread. 0/-1. */
int sw_delivered_stop(struct sw_thread *t, struct user_regs_struct *now);
/* The process dies of the signal being delivered: write its SIGNAL record
 * (handler 0). */
int sw_signal_fatal(struct sw_thread *t);
/* Arrange delivery of sig with the thread's next step (pos = now), with
 * siginfo si (NULL: as the kernel makes one for a tracer-injected signal). */
void sw_prepare_signal(struct sw_thread *t, int sig, const siginfo_t *si);
/* Keep sig (siginfo si, NULL: synthetic) undelivered as the thread's
 * pending STOP_SIGNAL; the next resume delivers or suppresses it. */
void sw_hold_signal(struct sw_thread *t, int sig, const siginfo_t *si);
/* Trap rdtsc in thread t (PR_SET_TSC) or undo it. A signal that arrived
 * meanwhile becomes the thread's pending signal. 0/-1. */
int sw_set_tsc_trapping(struct sw_thread *t, bool on);

/* ---- the end of a native run (recorder_sw_block.c) ---- */
/* t, in a native run, stopped with waitpid status st. 0/-1. */
int sw_block_stop(struct sw_thread *t, int st);

/* ---- one waitpid status (recorder_sw_stop.c) ---- */
/* Process one waitpid status. 0/-1 (err set). */
int sw_on_status(struct sw_rec *r, pid_t tid, int st);

#endif
