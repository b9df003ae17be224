/* A STATE record (trace_file.h) from a thread's registers and the
 * description state_digest.h takes of its state: how the event recorder
 * marks where it stopped a thread, and how a replay marks the point where
 * a tail's history begins (replay/event_split.c). */
#ifndef PTREV_STATE_RECORD_H
#define PTREV_STATE_RECORD_H

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ptrev/state_digest.h"
#include "ptrev/trace_file.h"

/* st: thread tid's point before its event number pos, reached at most
 * ran_ns after its previous event (0: not known). */
static inline void state_record_fill(struct trace_state *st, pid_t tid, uint64_t pos,
				     const struct user_regs_struct *regs,
				     const struct state_digest *d, uint64_t ran_ns)
{
	memset(st, 0, sizeof *st);
	st->tid = tid;
	st->pos = pos;
	_Static_assert(sizeof *regs == sizeof st->regs, "user_regs_struct is 27 words");
	memcpy(st->regs, regs, sizeof st->regs);
	st->vec_hash = d->vec_hash;
	st->stack_lo = d->stack_lo;
	st->stack_hi = d->stack_hi;
	st->stack_hash = d->stack_hash;
	st->mem_bytes = d->mem_bytes;
	st->mem_hash = d->mem_hash;
	st->flags = (d->flags & STATE_DIGEST_LIVE_STACKS ? TRACE_STATE_LIVE_STACKS : 0) |
		    (d->flags & STATE_DIGEST_NO_LOADER_DATA ? TRACE_STATE_NO_LOADER_DATA : 0) |
		    (d->flags & STATE_DIGEST_NO_CPUID_COPY ? TRACE_STATE_NO_CPUID_COPY : 0);
	st->ran_ns = ran_ns;
	st->skip = d->skip;
	st->nskip = d->nskip;
}

/* The stack around the point's rsp, read from memfd into buf (from the
 * red zone's start, STATE_RECORD_SP_LEN bytes, fewer where the mapping
 * ends), for st (sp_*; nothing where none can be read). */
#define STATE_RECORD_SP_LEN 512
static inline void state_record_stack(struct trace_state *st, int memfd,
				      uint8_t buf[STATE_RECORD_SP_LEN])
{
	uint64_t addr = st->regs[19] - 128; /* rsp */
	ssize_t n = pread(memfd, buf, STATE_RECORD_SP_LEN, (off_t)addr);
	if (n < 8 || addr > UINT64_MAX - STATE_RECORD_SP_LEN)
		return;
	st->sp_addr = addr;
	st->sp_len = (size_t)n & ~(size_t)7;
	st->sp_bytes = buf;
}

#endif
