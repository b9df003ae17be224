/* Private to replay/trace_*.c: the byte layout of the .ptrev file
 * (docs/trace-format.md) and cursors that put and get fixed-width
 * little-endian fields, so no C struct is ever written raw. */
#ifndef PTREV_REPLAY_TRACE_CODEC_H
#define PTREV_REPLAY_TRACE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrev/trace_file.h"

/* File header: magic[8] version:u32 crc32c(bytes 0..11):u32. */
#define TRACE_MAGIC "PTREVREC"
#define TRACE_MAGIC_LEN 8
#define TRACE_FILE_HEADER_LEN 16
/* Record header: type:u32 length:u32 payload_crc:u32 header_crc:u32,
 * header_crc = crc32c(bytes 0..11 of the record header). */
#define TRACE_RECORD_HEADER_LEN 16
/* A payload is at most 1 GiB: the writer splits PT and CODE larger than
 * that, the reader rejects a larger length before reading anything. */
#define TRACE_MAX_PAYLOAD (1u << 30)

/* META keys: 1-64 characters of [a-z0-9_]. */
#define TRACE_META_KEY_MAX 64
/* Linux signal numbers are 1..64 (SIGRTMAX). */
#define TRACE_MAX_SIGNO 64

/* Bits of the flags fields; any other bit set makes a record malformed. */
#define TRACE_SYSCALL_UNKNOWN 1u
#define TRACE_SYSCALL_KEPT_CPU 2u
#define TRACE_RDTSC_IS_RDTSCP 1u
#define TRACE_THREAD_EXITED 1u

#define TRACE_MMAP_FIXED_LEN (4 + 8 * 4 + 4 * 3 + 20 + 4)
#define TRACE_MUNMAP_LEN (4 + 8 * 3)
#define TRACE_SYSCALL_FIXED_LEN (4 + 8 * 2 + 8 * 6 + 8 + 4 + 4)
#define TRACE_MEM_WRITE_HEADER_LEN (8 + 4)
#define TRACE_SIGNAL_LEN (4 + 8 + 4 + 128 + 8)
/* Event recordings add where:u32 (enum trace_signal_where); a SIGNAL
 * without it is at an instruction position. */
#define TRACE_SIGNAL_WHERE_LEN (TRACE_SIGNAL_LEN + 4)
/* STATE: tid:i32 pos:u64 regs[27]:u64 vec_hash stack_lo stack_hi
 * stack_hash mem_bytes mem_hash (u64 each). */
#define TRACE_STATE_LEN (4 + 8 + 27 * 8 + 6 * 8)
#define TRACE_RDTSC_LEN (4 + 8 + 8 + 4 + 4)
#define TRACE_THREAD_LEN (4 + 4 + 8 + 4 + 4)
#define TRACE_END_LEN (4 + 4 + 8 * 5)
/* SCHED: nruns:u32, then per run tid:i32 pos:u64 count:u64. */
#define TRACE_SCHED_RUN_LEN (4 + 8 + 8)
/* SIGFRAME: tid:i32 pos:u64 addr:u64, then the frame's bytes; STATE_STACK
 * the same, with the stack's bytes. */
#define TRACE_SIGFRAME_FIXED_LEN (4 + 8 + 8)
/* FILE: build_id_len:u32 build_id[20] size:u64 offset:u64 path_len:u32,
 * then the path and the chunk's bytes. */
#define TRACE_FILE_FIXED_LEN (4 + 20 + 8 + 8 + 4)
/* A file's copy is written in chunks of this many bytes, so the writer's
 * record buffer (and a reader's) stays small however big the file. */
#define TRACE_FILE_CHUNK (1u << 20)

static inline void le_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void le_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t le_get32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static inline uint64_t le_get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Appending cursor over a growable buffer (the writer's record). */
struct enc {
	uint8_t *buf;
	size_t len, cap;
};
void enc_reserve(struct enc *e, size_t extra);
void enc_u32(struct enc *e, uint32_t v);
void enc_u64(struct enc *e, uint64_t v);
void enc_bytes(struct enc *e, const void *p, size_t n);

/* Reading cursor over one payload. Reads past the end return zeros and
 * set `bad`, so a parser checks once at the end instead of after each
 * field; `why` keeps the first problem found. */
struct dec {
	const uint8_t *p;
	size_t len, off;
	bool bad;
	char why[160];
};
void dec_init(struct dec *d, const uint8_t *p, size_t len);
uint32_t dec_u32(struct dec *d);
uint64_t dec_u64(struct dec *d);
/* Pointer to the next n bytes (NULL and `bad` if fewer remain). */
const uint8_t *dec_bytes(struct dec *d, size_t n);
size_t dec_left(const struct dec *d);
void dec_fail(struct dec *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "PT", "SYSCALL", ... or NULL for a type this version does not know. */
const char *trace_type_name(uint32_t type);

#endif
