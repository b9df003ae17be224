/* PT emission for the sw recorder backend: the packets a CPU tracing user
 * space only (IA32_RTIT_CTL.User=1, OS=0, BranchEn=1, TSCEn=1) would write
 * for the instructions the recorder single-steps, encoded with libipt's
 * packet encoder so that unmodified libipt decodes them.
 *
 * The recorder calls, per thread:
 *   ptenc_begin(ip)            once, at the first instruction;
 *   ptenc_step(ip, info, next) after each completed instruction;
 *   ptenc_interrupt(ip)        when a signal interrupts user execution at ip
 *                              (ip not executed), e.g. a fault or a signal
 *                              delivered between instructions;
 *   ptenc_end(ip)              when the thread exits or recording stops.
 * Tracing is disabled from a syscall/int or an interrupt until user code
 * runs again; the next ptenc_step (or an explicit ptenc_enable) emits the
 * TIP.PGE at the IP where user execution resumed (after the syscall, at a
 * signal handler, at the rt_sigreturn target).
 *
 * What is emitted (and why; libipt 2.0 src/pt_insn_decoder.c is the judge):
 *  - Start: PSB, TSC, PSBEND without FUP/MODE.exec (packet generation is
 *    off until user code runs), then MODE.exec(64-bit), TIP.PGE(first IP).
 *    This is what hardware writes when user-only tracing starts from the
 *    kernel, and libipt decodes from the very first instruction.
 *  - PSB+ every psb_period bytes, at an instruction boundary: pending TNT
 *    bits are flushed first, then PSB, TSC, MODE.exec, FUP(next IP), PSBEND.
 *    The RET-compression stack is emptied at each PSB so that a decoder
 *    starting at any PSB never meets a compressed RET it cannot resolve.
 *  - Conditional branches: one TNT bit each, packed into TNT-8 (6 bits) or,
 *    with tnt64, TNT-64 (47 bits) packets; always flushed before any packet
 *    that must follow them.
 *  - Indirect jumps/calls, far transfers: TIP with last-IP compression (the
 *    shortest form valid against the last IP, as hardware chooses).
 *  - Near RET: a taken TNT bit when its target equals the top of a 64-entry
 *    call stack kept exactly as libipt's decoder keeps it (push on calls
 *    except direct calls to the next instruction; drop the oldest entry when
 *    full; pop only on a compressed RET), otherwise a TIP.
 *  - Direct jumps/calls: nothing.
 *  - syscall/sysenter/int: TIP.PGD with the IP suppressed (the target is in
 *    the kernel, which user-only tracing never reveals).
 *  - Interrupt: FUP(ip) + TIP.PGD (suppressed): libipt reports an
 *    asynchronous [disabled] before the instruction at ip.
 *  - Enable: TSC (if the time moved), MODE.exec if none since the last PSB,
 *    TIP.PGE(ip): libipt reports [enabled] (or [resumed]).
 *  - End: FUP(ip) + TIP.PGD if still enabled; then all bytes are flushed.
 */
#ifndef PTREV_PT_ENCODER_H
#define PTREV_PT_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrev/insn_class.h"

#define PTENC_DEFAULT_PSB_PERIOD 4096

/* Receives encoded bytes in order. Returns 0, or -1 to fail the encoder. */
typedef int (*ptenc_sink_fn)(void *arg, const uint8_t *data, size_t len);

struct ptenc_config {
	uint32_t psb_period;   /* bytes of trace between PSB+; 0: 4096 */
	bool tnt64;            /* also use TNT-64 packets for long TNT runs */
	/* With a sink, bytes are handed over in chunks (at least every
	 * 64 KiB and on ptenc_flush/ptenc_end); without one they accumulate
	 * in memory and ptenc_data() returns them. */
	ptenc_sink_fn sink;
	void *sink_arg;
};

struct ptenc_stats {
	uint64_t insns;            /* completed instructions stepped */
	uint64_t bytes;            /* trace bytes emitted (incl. buffered) */
	uint64_t psbs;
	uint64_t tnt_bits;         /* conditional branches + compressed RETs */
	uint64_t tips;             /* TIP packets (indirect, uncompressed RET) */
	uint64_t rets_compressed;
	uint64_t rets_uncompressed;
	uint64_t disables;         /* TIP.PGD */
	uint64_t enables;          /* TIP.PGE */
};

struct ptenc;

/* NULL cfg means defaults. Returns NULL on allocation failure. */
struct ptenc *ptenc_new(const struct ptenc_config *cfg);
void ptenc_free(struct ptenc *e);

/* All functions below return 0 on success and -1 on failure (a sink error,
 * a call out of order, or a next IP that the instruction kind cannot
 * produce); ptenc_error() then says what went wrong and the encoder stays
 * failed. */

/* Start the trace: the first user instruction to execute is at ip. tsc is
 * the current time stamp (0: no TSC packets until ptenc_set_time). */
int ptenc_begin(struct ptenc *e, uint64_t ip, uint64_t tsc);

/* Remember the current time stamp (an rdtsc value). It is written as a TSC
 * packet in the next PSB+ and before the next TIP.PGE. */
void ptenc_set_time(struct ptenc *e, uint64_t tsc);

/* The instruction at ip (classified as *info) completed and the next user
 * instruction is at next_ip (ignored for INSN_SYSCALL/INSN_INT, after which
 * tracing is disabled). If tracing is disabled, TIP.PGE(ip) is emitted
 * first. A REP string instruction single-steps one iteration at a time:
 * an INSN_OTHER step with next_ip == ip is an unfinished iteration and
 * emits nothing.
 * Returns 1 when an instruction completed, 0 for an unfinished iteration,
 * -1 on error. */
int ptenc_step(struct ptenc *e, uint64_t ip, const struct insn_info *info,
	       uint64_t next_ip);

/* User execution resumes at ip after tracing was disabled (no-op when
 * enabled). ptenc_step does this by itself; call it directly to place the
 * TIP.PGE before other packets. */
int ptenc_enable(struct ptenc *e, uint64_t ip);

/* User execution is interrupted before the instruction at ip (a signal is
 * delivered there, or a fault at ip): FUP(ip) + TIP.PGD. No-op when tracing
 * is already disabled (e.g. a signal delivered on return from a syscall).
 * Then the handler's first instruction re-enables tracing. */
int ptenc_interrupt(struct ptenc *e, uint64_t ip);

/* Stop tracing: the thread exited or was killed, or recording ends, with
 * ip the next (unexecuted) user instruction if tracing is still enabled.
 * Emits FUP(ip) + TIP.PGD when enabled, flushes everything to the sink. */
int ptenc_end(struct ptenc *e, uint64_t ip);

/* A PSB+ before the next instruction (its IP in the FUP), whatever the
 * period says: a decoder that starts at ptenc_offset() now syncs there, at
 * that instruction (record btrace enabled for a thread mid-run). */
void ptenc_psb_next(struct ptenc *e);

/* Hand all complete bytes to the sink (pending TNT bits stay pending). */
int ptenc_flush(struct ptenc *e);

/* Sink-less mode: the bytes encoded so far (pending TNT bits excluded). */
const uint8_t *ptenc_data(const struct ptenc *e, size_t *len);

/* Trace offset of the next byte (bytes handed to the sink + buffered). */
uint64_t ptenc_offset(const struct ptenc *e);

bool ptenc_enabled(const struct ptenc *e);
const struct ptenc_stats *ptenc_stats(const struct ptenc *e);
const char *ptenc_error(const struct ptenc *e);

#endif
