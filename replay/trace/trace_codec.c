/* Field-by-field little-endian encoding shared by the .ptrev writer and
 * reader (layout: docs/trace-format.md). */
#include "trace_codec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void enc_reserve(struct enc *e, size_t extra)
{
	size_t need = e->len + extra;
	if (need <= e->cap)
		return;
	size_t cap = e->cap ? e->cap : 256;
	while (cap < need)
		cap *= 2;
	uint8_t *p = realloc(e->buf, cap);
	if (!p) {
		fputs("ptrev: out of memory\n", stderr);
		abort();
	}
	e->buf = p;
	e->cap = cap;
}

void enc_u32(struct enc *e, uint32_t v)
{
	enc_reserve(e, 4);
	le_put32(e->buf + e->len, v);
	e->len += 4;
}

void enc_u64(struct enc *e, uint64_t v)
{
	enc_reserve(e, 8);
	le_put64(e->buf + e->len, v);
	e->len += 8;
}

void enc_bytes(struct enc *e, const void *p, size_t n)
{
	if (!n)
		return;
	enc_reserve(e, n);
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

void dec_init(struct dec *d, const uint8_t *p, size_t len)
{
	d->p = p;
	d->len = len;
	d->off = 0;
	d->bad = false;
	d->why[0] = '\0';
}

void dec_fail(struct dec *d, const char *fmt, ...)
{
	if (!d->bad) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d->why, sizeof d->why, fmt, ap);
		va_end(ap);
	}
	d->bad = true;
}

size_t dec_left(const struct dec *d)
{
	return d->len - d->off;
}

const uint8_t *dec_bytes(struct dec *d, size_t n)
{
	if (n > dec_left(d)) {
		dec_fail(d, "needs %zu more bytes at payload offset %zu but only %zu remain",
			 n, d->off, dec_left(d));
		d->off = d->len;
		return NULL;
	}
	const uint8_t *p = d->p + d->off;
	d->off += n;
	return p;
}

uint32_t dec_u32(struct dec *d)
{
	const uint8_t *p = dec_bytes(d, 4);
	return p ? le_get32(p) : 0;
}

uint64_t dec_u64(struct dec *d)
{
	const uint8_t *p = dec_bytes(d, 8);
	return p ? le_get64(p) : 0;
}

const char *trace_type_name(uint32_t type)
{
	switch (type) {
	case TRACE_REC_META: return "META";
	case TRACE_REC_PT: return "PT";
	case TRACE_REC_MMAP: return "MMAP";
	case TRACE_REC_MUNMAP: return "MUNMAP";
	case TRACE_REC_CODE: return "CODE";
	case TRACE_REC_SYSCALL: return "SYSCALL";
	case TRACE_REC_SIGNAL: return "SIGNAL";
	case TRACE_REC_RDTSC: return "RDTSC";
	case TRACE_REC_THREAD: return "THREAD";
	case TRACE_REC_END: return "END";
	case TRACE_REC_FILE: return "FILE";
	case TRACE_REC_SCHED: return "SCHED";
	case TRACE_REC_SIGFRAME: return "SIGFRAME";
	case TRACE_REC_STATE: return "STATE";
	case TRACE_REC_STATE_STACK: return "STATE_STACK";
	case TRACE_REC_STATE_MEM: return "STATE_MEM";
	case TRACE_REC_GDB_MEM: return "GDB_MEM";
	case TRACE_REC_GDB_REGS: return "GDB_REGS";
	}
	return NULL;
}
