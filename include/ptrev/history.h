/* The history index of one thread: its PT stream, indexed so that reverse
 * execution asks questions about instruction numbers without decoding the
 * whole history.
 *
 * Instructions are numbered 0, 1, 2, ... in execution order, counting only
 * instructions the trace proves were executed. The stream is cut at its PSBs
 * into segments; per segment the index keeps its trace offset, TSC, first
 * instruction number, instruction count, the IP at the PSB, and a Bloom
 * filter over the 64-byte code lines its instructions lie in (so "may this
 * segment execute address A?" has no false negatives). Answers decode one
 * segment (ip at N) or only the segments whose filter admits an address
 * (previous/next execution), with the decoded segments' IPs cached.
 *
 * Segments: the first PSB, then every PSB whose PSB+ carries a status
 * update (MODE.exec, i.e. tracing was on at the PSB; also CBR/MODE.TSX/PIP
 * on hardware). A PSB written while tracing was off starts no segment; its
 * bytes belong to the previous one. Segment boundaries are found by counting
 * libipt's status-update events, so a segment's instructions are exactly
 * those a decoder from the first PSB would give between the two PSBs.
 *
 * Growing streams: history_append() adds bytes and indexes every segment
 * that became complete (its successor PSB+ arrived); the last, open segment
 * is re-decoded on each append (at most one segment of work). Instructions
 * in the open segment count only up to its last tracing-disable event
 * (TIP.PGD: a syscall, a signal, a stop, the end): past it a decoder would
 * run on through straight-line code the program may not have executed yet.
 *
 * Errors: a decode error ends the segment's known instructions where the
 * decoder stopped; decoding resumes at the next segment's PSB and that
 * segment is marked as following a gap. Instruction numbers run on across a
 * gap (the unknown instructions get no numbers), and history_events_before()
 * says HISTORY_EV_GAP for the first instruction after one.
 *
 * Hardware traces may compress a RET whose CALL lies before the PSB; a
 * segment that cannot be decoded standalone is decoded from an earlier
 * segment's PSB (up to HISTORY_MAX_BACK segments back).
 *
 * Not thread-safe: one history per thread, used from one thread. */
#ifndef PTREV_HISTORY_H
#define PTREV_HISTORY_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HISTORY_MAX_BACK 8

struct history_config {
	/* The code the thread ran. Borrowed: it must outlive the history
	 * (build it with a pt_image_section_cache for speed, as
	 * decode/trace_image.c does). */
	struct pt_image *image;
	/* Cpu that wrote the trace, for libipt's errata workarounds; all
	 * zero (pcv_unknown) for sw traces. */
	struct pt_cpu cpu;
	/* Decoded segments kept in the IP cache; 0: 8. */
	unsigned cache_segments;
};

struct history_segment {
	uint64_t offset;       /* trace offset of the PSB */
	uint64_t tsc;          /* TSC in its PSB+ (0: none) */
	uint64_t first_insn;   /* number of its first instruction */
	uint64_t ninsn;        /* instructions in it */
	uint64_t psb_ip;       /* FUP IP in its PSB+ (0: tracing was off) */
	bool gap_before;       /* unknown instructions precede it */
	bool complete;         /* false for the open (last) segment */
};

/* Events between instruction N-1 and instruction N ("before N"); at N ==
 * history_insn_count() they follow the last instruction. */
enum history_event {
	HISTORY_EV_DISABLED = 1 << 0, /* tracing stopped: syscall, int */
	HISTORY_EV_ASYNC = 1 << 1,    /* asynchronous stop: a signal or a
				       * fault interrupted execution after
				       * N-1 (N: e.g. the handler's first
				       * instruction); also the end of a sw
				       * trace (ptenc_end's FUP+TIP.PGD) */
	HISTORY_EV_ENABLED = 1 << 2,  /* tracing (re)started at N */
	HISTORY_EV_GAP = 1 << 3,      /* unknown instructions (decode error) */
};
#define HISTORY_EV_ALL 0xf

struct history;

/* NULL when out of memory or cfg->image is NULL. */
struct history *history_new(const struct history_config *cfg);
void history_free(struct history *h);

/* Append trace bytes and index what they complete. Returns 0, or -1 when
 * out of memory (the history is unchanged then). Decode errors are not
 * failures: they become gaps. */
int history_append(struct history *h, const uint8_t *data, size_t len);

/* No bytes will follow (a saved recording): the open segment counts every
 * instruction the decoder completes up to where the bytes end, not only
 * those a disable confirmed. Why it matters: a recording whose recorder
 * was killed ends mid-segment; the sw recorder flushes its PT every 250
 * ms without a disable (a thread in ld.so makes no syscall for its first
 * ~20,000 instructions), so without the seal such a file had no
 * instruction at all. What the decoder completes after the last packet
 * (direct jumps and calls, no packet needed) is what the thread runs
 * next, deterministically: a replay that does not get there says so.
 * Returns 0, -1 when out of memory. Append nothing after. */
int history_seal(struct history *h);

/* Instructions known so far. */
uint64_t history_insn_count(const struct history *h);

size_t history_segment_count(const struct history *h);
/* Segment i (< history_segment_count), or NULL. */
const struct history_segment *history_segment(const struct history *h,
					      size_t i);
/* Index of the segment holding instruction n, or -1 if n is out of range. */
long history_segment_of(const struct history *h, uint64_t n);

/* The IP of instruction n. Returns 0, -1 if n >= history_insn_count() or
 * the segment cannot be decoded again (out of memory). */
int history_ip_at(struct history *h, uint64_t n, uint64_t *ip);

/* The last instruction strictly before n whose IP is one of addrs[0..naddr),
 * into *found. Returns 1, 0 when there is none, -1 on error (memory). */
int history_prev_exec(struct history *h, uint64_t n, const uint64_t *addrs,
		      size_t naddr, uint64_t *found);
/* The same, looking no further back than instruction lo (0: none found
 * in lo .. n - 1); the segments before lo are not decoded. */
int history_prev_exec_since(struct history *h, uint64_t lo, uint64_t n, const uint64_t *addrs,
			    size_t naddr, uint64_t *found);
/* The first instruction at or after n whose IP is one of addrs. */
int history_next_exec(struct history *h, uint64_t n, const uint64_t *addrs,
		      size_t naddr, uint64_t *found);

/* enum history_event bits for what happened right before instruction n. */
unsigned history_events_before(const struct history *h, uint64_t n);
/* The largest m <= n (prev) or smallest m >= n (next) with an event in
 * mask before it, into *found. Returns 1, or 0 when there is none. */
int history_prev_event(const struct history *h, uint64_t n, unsigned mask,
		       uint64_t *found);
int history_next_event(const struct history *h, uint64_t n, unsigned mask,
		       uint64_t *found);

/* Segment decodes done so far by ip_at/searches (cache misses): lets tests
 * and benchmarks check that a query decoded only what it had to. */
uint64_t history_decode_count(const struct history *h);

/* The IP the thread stands at after its last instruction, when the trace
 * says (tracing was disabled asynchronously there: a fault, a stop, the
 * end of a sw recording). Returns 1 with *ip, 0 when unknown (the thread
 * ended in a syscall, e.g. exit), -1 on error. */
int history_resume_ip(struct history *h, uint64_t *ip);

#endif
