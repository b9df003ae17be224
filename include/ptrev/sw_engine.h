/* The sw recorder as an execution engine: the same contract as the
 * inferior module's resume/wait/interrupt (ptrev/inferior.h: all-stop,
 * pending events, pass_signals), but every instruction is single-stepped
 * and recorded as PT plus sideband and event log. `ptrev record` runs on it
 * (resume everything, wait for the exit); the gdb server drives it like
 * the inferior module while recording.
 *
 * What a caller sees is what it would see without recording:
 *  - step=true stops after one instruction (STOP_STEP);
 *  - before each instruction, a software breakpoint (inferior_has_swbreak)
 *    or a hardware execution breakpoint (inf->hw[] type 1) at the IP stops
 *    the thread there, the instruction not executed (STOP_SWBREAK /
 *    STOP_HWBREAK), except at the first instruction of a resume of a thread
 *    that reported its last stop at that IP (stepping/continuing off the
 *    breakpoint); inserted int3 bytes are never executed;
 *  - data watchpoints (inf->hw[] types 2/4) report STOP_WATCH after the
 *    instruction that triggered them;
 *  - signals in pass_signals are delivered silently; others stop the thread
 *    (STOP_SIGNAL) undelivered: the next resume of the thread with sig
 *    delivers it (recorded), with 0 suppresses it (nothing recorded);
 *  - rdtsc/rdtscp are trapped (PR_SET_TSC), emulated and logged, never
 *    reported;
 *  - sw_engine_interrupt stops every thread and reports STOP_SIGNAL SIGINT
 *    for one of them without any real signal;
 *  - the process's exit or death is reported once (STOP_EXITED/KILLED) and
 *    the inferior is marked gone (inf->exited), as inferior_wait does;
 *  - threads the program creates are traced from their first instruction
 *    and added to inf->threads (exited ones removed).
 * At every reported stop each thread's PT stream is closed off at its IP
 * (FUP + TIP.PGD, as hardware writes when the thread enters the kernel) and
 * flushed, so sw_engine_data() holds exactly the instructions executed so
 * far; the next resume continues with TIP.PGE at wherever the thread then
 * is (gdb may have changed its registers). */
#ifndef PTREV_SW_ENGINE_H
#define PTREV_SW_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ptrev/inferior.h"
#include "ptrev/recorder.h"
#include "ptrev/trace_file.h"

struct sw_engine;

/* Take over a launched inferior whose threads are all stopped
 * (inferior_launch, or after inferior_wait returned a stop). w may be NULL
 * (the recording is kept in memory only); else it must stay open until
 * sw_engine_finish, or sw_engine_free when that is not called: its records
 * are kept in memory too (trace_writer_keep) unless o->file_only. Every
 * existing thread's trace starts at its current instruction, so recording
 * may start mid-run. Events pending in the inferior module are taken over.
 * Returns NULL with a message in err. */
struct sw_engine *sw_engine_new(struct inferior *inf, struct trace_writer *w,
				const struct sw_record_opts *o, char *err, size_t errlen);

/* As inferior_resume / inferior_wait / inferior_interrupt. wait returns 1
 * with *ev, 0 (block=false: no event within a short time slice, about
 * 10 ms), or -1 (no process, nothing resumed and block, or a recording
 * error: sw_engine_error says which). interrupt only sets a flag (safe from
 * a signal handler); the next wait acts on it. */
int sw_engine_resume(struct sw_engine *e, pid_t tid, bool step, int sig);
int sw_engine_wait(struct sw_engine *e, struct stop_event *ev, bool block);
int sw_engine_interrupt(struct sw_engine *e);
/* The reason of the last -1, or "" */
const char *sw_engine_error(const struct sw_engine *e);
/* Stop before the program ends (on): a thread about to execute the
 * exit_group syscall, or the exit of the last thread, reports STOP_SIGNAL
 * with signal 0 there, before it executes it, so that the history stays
 * for reverse execution (gdb's record full stops there too; rr shows the
 * end of a replay). Resuming it then ends the program. */
void sw_engine_stop_before_exit(struct sw_engine *e, bool on);
/* Thread tid's trace from here (record btrace enabled for it now): the
 * offset in its PT stream from which a decoder syncs at its next
 * instruction (a PSB+ is written there). 0, or -1 for a thread the
 * recording does not know. */
int sw_engine_btrace_mark(struct sw_engine *e, pid_t tid, uint64_t *offset);

/* gdb is about to change the program (set var, call, jump): g (pos
 * ignored) goes into the recording at thread g->tid's position, where a
 * replay makes it again; a change of its PC is an asynchronous jump in
 * its trace. 0, or -1 where the thread does not stand between two
 * instructions (the change cannot be placed). */
int sw_engine_gdb_write(struct sw_engine *e, const struct trace_gdb_write *g);

/* Everything recorded so far, as the trace reader would return it for the
 * file written so far, since the writer decodes each record with the
 * reader's parser (streams per thread complete up to the last stop, mmaps,
 * code, syscalls, signals, rdtsc, threads; complete = true and end set
 * after sw_engine_finish). NULL when opts->file_only. Valid until
 * sw_engine_free; the arrays move as the recording grows. */
const struct trace_data *sw_engine_data(const struct sw_engine *e);

/* Finish the recording: end every live thread's stream, undo the rdtsc
 * trapping in a live process, hand pending events back to the inferior
 * module (which can then resume/wait as usual), fill *end (may be NULL;
 * status from the exit if the program ended, else status_kind 2), and
 * write it as the END record when there is a writer and write_end. The
 * inferior stays as it is. sw_engine_data stays valid. Returns 0, or -1
 * with err. */
int sw_engine_finish(struct sw_engine *e, struct trace_end *end, bool write_end,
		     char *err, size_t errlen);
void sw_engine_free(struct sw_engine *e);
/* Add a META record: to the file (if any) and to the in-memory recording,
 * so that a live recording carries what a saved one does. 0 or -1. */
int sw_engine_meta(void *engine, const char *key, const char *value);

#endif
