/* The event recorder as an execution engine, for a recording gdb drives
 * (`ptrev serve --record --backend event`): the contract of sw_engine.h
 * (all-stop resume/wait/interrupt as the inferior module has them), but
 * the program runs natively and only what is not deterministic is logged,
 * as `ptrev record --backend event` does (event_backend.h).
 *
 * What a caller sees is what it would see without recording:
 *  - step=true stops after one instruction (STOP_STEP); a syscall
 *    instruction is stepped through its entry and return, an rdtsc is
 *    emulated, a signal's delivery stops at the handler;
 *  - an int3 of inferior_insert_swbreak reports STOP_SWBREAK with the IP
 *    on it (the caller lifts it to go on, as gdb does); a debug register
 *    the inferior module armed, STOP_HWBREAK or STOP_WATCH;
 *  - signals in pass_signals are taken as the recorder takes them; others
 *    stop the thread (STOP_SIGNAL) undelivered: the next resume with sig
 *    lets the recorder deliver it where the log can place it, with 0 drops
 *    it;
 *  - event_engine_interrupt stops the running thread where it is (no
 *    signal reaches the program) and reports STOP_SIGNAL SIGINT;
 *  - the exit or death of the process is reported once (STOP_EXITED or
 *    STOP_KILLED), the inferior marked gone; with stop_before_exit the
 *    thread about to end the program stops first, with signal 0, on its
 *    exit_group (or last exit) instruction;
 *  - threads the program creates are added to inf->threads.
 * At a stop every thread is held. Nothing is logged for a stop itself: a
 * STATE point marks the present only when a history of it is asked for
 * (event_engine_present). */
#ifndef PTREV_EVENT_ENGINE_H
#define PTREV_EVENT_ENGINE_H

#include <stdbool.h>
#include <sys/types.h>

#include "ptrev/event_backend.h"
#include "ptrev/inferior.h"
#include "ptrev/trace_file.h"

struct event_engine;

/* An engine for a launched inferior stopped at its first instruction. w
 * stays open until event_engine_free; from now on its records are also
 * kept in memory (event_engine_data), so the caller writes META and the
 * start state (event_engine_meta, or to w) after this, then starts the
 * engine. NULL with err. */
struct event_engine *event_engine_new(struct inferior *inf, struct trace_writer *w,
				      const struct event_record_opts *o, char *err,
				      size_t errlen);
/* Take the program over (the mappings, rdtsc trapped); it stays stopped
 * until the first resume. 0, or -1 with err. */
int event_engine_start(struct event_engine *e, char *err, size_t errlen);
int event_engine_resume(struct event_engine *e, pid_t tid, bool step, int sig);
/* 1 with *ev; 0 when block is false and nothing happened within about
 * 10 ms; -1 on a recording error (event_engine_error) or with nothing to
 * wait for. */
int event_engine_wait(struct event_engine *e, struct stop_event *ev, bool block);
/* Only sets a flag (safe from a signal handler); the next wait acts on it. */
int event_engine_interrupt(struct event_engine *e);
const char *event_engine_error(const struct event_engine *e);
void event_engine_stop_before_exit(struct event_engine *e, bool on);
/* At a stop: complete the log up to the present, so that a replay of
 * event_engine_data ends where every thread stands now (a STATE point for
 * a thread that ran its own code since its last event, the SCHED runs so
 * far). 0/-1. */
int event_engine_present(struct event_engine *e, char *err, size_t errlen);
/* At a stop, gdb is about to change the program (set var, call, jump):
 * g (pos ignored) goes into the log right after the event its thread
 * stands at (a STATE point where it stands, if it ran its own code since
 * its previous event), where a replay makes it again. The thread is the
 * one that has the CPU (gdb's changes come between its instructions, in
 * the recorded order); for registers, also one that waits for the CPU at
 * its previous event (only it sees them). 0, or -1 where the change
 * cannot be placed so (the thread is inside a syscall, none has the
 * CPU, ...): the caller ends the recording. */
int event_engine_gdb_write(struct event_engine *e, const struct trace_gdb_write *g);
/* Is tid held before the program's end, on the syscall instruction it
 * entered once already (stop_before_exit)? Then its rcx and r11 are what
 * that instruction put there, not the program's. */
bool event_engine_at_entered_syscall(const struct event_engine *e, pid_t tid);
/* Does tid stand inside a syscall that the log does not hold yet (entered
 * and not returned: blocked, or stopped at its entry, or interrupted by
 * the program held for gdb and to be restarted)? Its history ends before
 * the syscall instruction, and so is it shown at the present: the call
 * runs (again) when it goes on. */
bool event_engine_in_syscall(const struct event_engine *e, pid_t tid);
/* The recording so far, as the reader would return it (complete after
 * event_engine_finish). Its arrays move as the recording grows. */
const struct trace_data *event_engine_data(const struct event_engine *e);
/* The recording ends (END written when write_end; status from the exit,
 * else status_kind 2). A process still there keeps running unrecorded
 * under the inferior module: rdtsc is no longer trapped in its stopped
 * threads. 0/-1. */
int event_engine_finish(struct event_engine *e, struct trace_end *end, bool write_end,
			char *err, size_t errlen);
void event_engine_free(struct event_engine *e);
/* A META record, to the file and the memory copy. 0/-1. */
int event_engine_meta(void *engine, const char *key, const char *value);

#endif
