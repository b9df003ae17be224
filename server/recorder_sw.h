/* Internals of the sw recorder backend, shared by its files:
 *   recorder_sw.c         the stepping loop (one waitpid per step, any thread)
 *   recorder_sw_thread.c  per-thread state and the classification cache
 *   recorder_sw_signal.c  signal stops: delivery, handlers, rdtsc emulation */
#ifndef PTREV_SERVER_RECORDER_SW_H
#define PTREV_SERVER_RECORDER_SW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "ptrev/insn_class.h"
#include "ptrev/pt_encoder.h"
#include "ptrev/recorder.h"
#include "ptrev/trace_file.h"
#include "sideband.h"

struct sw_rec;

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
};

/* One classification cache entry: valid when gen matches. */
struct icache_entry {
	uint64_t ip;
	uint32_t gen;
	struct insn_info info;
};

#define ICACHE_BITS 16

struct sw_rec {
	pid_t pid;
	int memfd;
	struct trace_writer *w;
	struct sideband *sb;
	uint32_t psb_period;
	struct sw_thread **threads;
	size_t nthreads, cap;
	size_t live;           /* threads not yet gone */
	pid_t *early;          /* new threads seen before their clone event */
	size_t nearly, capearly;
	struct icache_entry *icache;
	uint32_t gen;          /* bump to invalidate the whole cache */
	struct trace_end *end;
	char *err;
	size_t errlen;
};

/* ---- per-thread state (recorder_sw_thread.c) ---- */
struct sw_thread *sw_thread_find(struct sw_rec *r, pid_t tid);
struct sw_thread *sw_thread_add(struct sw_rec *r, pid_t tid);
/* Start tracing a stopped thread at its current IP (reads registers,
 * classifies, begins the encoder). Returns 0/-1. */
int sw_thread_start(struct sw_thread *t);
/* The thread ended: finish its stream (ip 0 = it ended inside a syscall
 * that did not return), write its THREAD exit record. */
int sw_thread_finish(struct sw_thread *t, uint64_t ip, int exit_code);
void sw_threads_free(struct sw_rec *r);
/* Classify the instruction at ip (cached). Returns 0, or -1 with err. */
int sw_classify(struct sw_rec *r, uint64_t ip, struct insn_info *out);
void sw_icache_invalidate(struct sw_rec *r);
long sw_read_mem(void *rec, uint64_t addr, void *buf, size_t len);

/* ---- the stepping loop (recorder_sw.c) ---- */
/* The instruction at t->regs.rip completed and the thread now stands at
 * now->rip: encode it, log a syscall, refresh the sideband. 0/-1. */
int sw_complete_step(struct sw_thread *t, const struct user_regs_struct *now);
/* Record the thread's current state as the new "before" state and resume
 * it with one single-step (delivering t->deliver). 0/-1. */
int sw_resume(struct sw_thread *t, const struct user_regs_struct *now);

/* ---- signals (recorder_sw_signal.c) ---- */
/* The thread stopped with signal sig (not the step's SIGTRAP), registers
 * now. Handles rdtsc emulation, completes the step if it ran, arranges the
 * delivery. Resumes the thread. 0/-1. */
int sw_signal_stop(struct sw_thread *t, int sig, struct user_regs_struct *now);
/* The thread stopped with SIGTRAP after a step that delivered a signal:
 * either at the handler's first instruction or (no handler) after the
 * instruction. Resumes the thread. 0/-1. */
int sw_delivered_stop(struct sw_thread *t, struct user_regs_struct *now);
/* The process dies of the signal being delivered: write its SIGNAL record
 * (handler 0). */
int sw_signal_fatal(struct sw_thread *t);

#endif
