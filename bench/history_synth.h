/* A synthetic thread for the history index's test and benchmark: control
 * flow emulated over a small hand-assembled code buffer (a loop with a
 * data-dependent branch, a call, a syscall and a signal handler), fed to
 * the sw PT encoder without running anything. The branch outcomes come from
 * a seeded generator, so any length of history is cheap to make; the list
 * of executed IPs and events is the ground truth. */
#ifndef PTREV_BENCH_HISTORY_SYNTH_H
#define PTREV_BENCH_HISTORY_SYNTH_H

#include "ptrev/pt_encoder.h"

#include <intel-pt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SYNTH_BASE 0x400000ull
#define SYNTH_SIZE 0x100
#define SYNTH_HANDLER (SYNTH_BASE + 0x80)
#define SYNTH_NEVER (SYNTH_BASE + 0xc0)  /* code that never runs */

/* The code, with the kind/length/target of every instruction. */
static const uint8_t synth_code_bytes[] = {
	/* 0x00 */ 0x48, 0xff, 0xc0,             /* inc rax */
	/* 0x03 */ 0x74, 0x05,                   /* je 0x0a */
	/* 0x05 */ 0x48, 0xff, 0xc3,             /* inc rbx */
	/* 0x08 */ 0xeb, 0x03,                   /* jmp 0x0d */
	/* 0x0a */ 0x48, 0xff, 0xc1,             /* inc rcx */
	/* 0x0d */ 0xe8, 0x2e, 0x00, 0x00, 0x00, /* call 0x40 */
	/* 0x12 */ 0x75, 0xec,                   /* jne 0x00 */
	/* 0x14 */ 0x0f, 0x05,                   /* syscall */
	/* 0x16 */ 0xeb, 0xe8,                   /* jmp 0x00 */
};
static const uint8_t synth_func_bytes[] = {
	/* 0x40 */ 0x48, 0xff, 0xc6,             /* inc rsi */
	/* 0x43 */ 0x74, 0x01,                   /* je 0x46 */
	/* 0x45 */ 0x90,                         /* nop */
	/* 0x46 */ 0xc3,                         /* ret */
};
static const uint8_t synth_handler_bytes[] = {
	/* 0x80 */ 0x48, 0xff, 0xc7,             /* inc rdi */
	/* 0x83 */ 0x0f, 0x05,                   /* syscall (rt_sigreturn) */
};

static inline void synth_code(uint8_t code[SYNTH_SIZE])
{
	memset(code, 0xf4, SYNTH_SIZE); /* hlt */
	memcpy(code, synth_code_bytes, sizeof synth_code_bytes);
	memcpy(code + 0x40, synth_func_bytes, sizeof synth_func_bytes);
	memcpy(code + 0x80, synth_handler_bytes, sizeof synth_handler_bytes);
	code[0xc0] = 0x90;
}

static inline struct insn_info synth_insn(uint64_t ip)
{
	struct insn_info i = {.kind = INSN_OTHER};
	switch (ip - SYNTH_BASE) {
	case 0x00: case 0x05: case 0x0a: case 0x40: case 0x80:
		i.len = 3; break;
	case 0x03: i.len = 2; i.kind = INSN_COND; i.target = SYNTH_BASE + 0x0a; break;
	case 0x08: i.len = 2; i.kind = INSN_JMP; i.target = SYNTH_BASE + 0x0d; break;
	case 0x0d: i.len = 5; i.kind = INSN_CALL; i.target = SYNTH_BASE + 0x40; break;
	case 0x12: i.len = 2; i.kind = INSN_COND; i.target = SYNTH_BASE; break;
	case 0x14: case 0x83: i.len = 2; i.kind = INSN_SYSCALL; break;
	case 0x16: i.len = 2; i.kind = INSN_JMP; i.target = SYNTH_BASE; break;
	case 0x43: i.len = 2; i.kind = INSN_COND; i.target = SYNTH_BASE + 0x46; break;
	case 0x45: i.len = 1; break;
	case 0x46: i.len = 1; i.kind = INSN_RET; break;
	default: abort();
	}
	return i;
}

struct synth_truth {
	uint64_t *ip;          /* executed instructions */
	size_t n, cap;
	uint8_t *ev;           /* enum history_event bits before ip[i] */
	uint64_t *psb_insn;    /* each PSB, in order: the insn it precedes */
	size_t npsb, psbcap;
};

static inline void synth_push(struct synth_truth *t, uint64_t ip)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 4096;
		t->ip = realloc(t->ip, t->cap * sizeof *t->ip);
		t->ev = realloc(t->ev, (t->cap + 1) * sizeof *t->ev);
		if (!t->ip || !t->ev)
			abort();
	}
	t->ip[t->n] = ip;
	t->ev[t->n + 1] = 0;
	t->n++;
}

static inline uint64_t synth_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Emulate ninsn instructions (seeded), with a syscall about every
 * syscall_every loop iterations and a signal about every signal_every
 * instructions (0: never). Fills t (optional) and returns the encoder,
 * ended; its buffered bytes are the trace. */
static inline struct ptenc *synth_run(uint64_t ninsn, uint64_t seed,
				      uint32_t psb_period, unsigned syscall_every,
				      unsigned signal_every, struct synth_truth *t)
{
	struct ptenc_config cfg = {0};
	struct ptenc *e;
	uint64_t ip = SYNTH_BASE, ret = 0, sigret = 0, tsc = 1000, rs = seed | 1;
	bool in_handler = false;

	cfg.psb_period = psb_period;
	e = ptenc_new(&cfg);
	if (!e || ptenc_begin(e, ip, tsc) < 0)
		abort();
	if (t) {
		memset(t, 0, sizeof *t);
		t->ev = calloc(1, 1);
		t->psbcap = 256;
		t->psb_insn = malloc(t->psbcap * 8);
		t->psb_insn[t->npsb++] = 0; /* ptenc_begin's PSB */
	}
	for (uint64_t k = 0; k < ninsn; k++) {
		struct insn_info in;
		uint64_t next, psbs = ptenc_stats(e)->psbs;
		bool was_enabled = ptenc_enabled(e);

		if (signal_every && !in_handler && was_enabled &&
		    synth_rand(&rs) % signal_every == 0) {
			if (ptenc_interrupt(e, ip) < 0)
				abort();
			if (t)
				t->ev[t->n] |= 2 /* HISTORY_EV_ASYNC */;
			sigret = ip;
			ip = SYNTH_HANDLER;
			in_handler = true;
			was_enabled = false;
		}
		in = synth_insn(ip);
		switch (in.kind) {
		case INSN_COND:
			if (ip == SYNTH_BASE + 0x12)
				next = syscall_every == 0 ||
				       synth_rand(&rs) % syscall_every ?
				       in.target : ip + in.len;
			else
				next = synth_rand(&rs) & 1 ? in.target : ip + in.len;
			break;
		case INSN_JMP: next = in.target; break;
		case INSN_CALL: next = in.target; ret = ip + in.len; break;
		case INSN_RET: next = ret; break;
		case INSN_SYSCALL:
			if (in_handler) {
				next = sigret;
				in_handler = false;
			} else {
				next = ip + in.len;
			}
			ptenc_set_time(e, tsc += 100);
			break;
		default: next = ip + in.len; break;
		}
		if (ptenc_step(e, ip, &in, next) != 1)
			abort();
		if (t) {
			if (!was_enabled)
				t->ev[t->n] |= 4 /* HISTORY_EV_ENABLED */;
			if (ptenc_stats(e)->psbs != psbs) {
				if (t->npsb == t->psbcap) {
					t->psbcap = t->psbcap ? t->psbcap * 2 : 256;
					t->psb_insn = realloc(t->psb_insn, t->psbcap * 8);
				}
				t->psb_insn[t->npsb++] = t->n;
			}
			synth_push(t, ip);
			if (in.kind == INSN_SYSCALL)
				t->ev[t->n] |= 1 /* HISTORY_EV_DISABLED */;
		}
		ip = next;
	}
	if (ptenc_end(e, ip) < 0)
		abort();
	if (t)
		t->ev[t->n] |= 2; /* the end: FUP + TIP.PGD */
	return e;
}

static inline void synth_truth_free(struct synth_truth *t)
{
	free(t->ip);
	free(t->ev);
	free(t->psb_insn);
}

/* The code as a file in a section cache, as trace_image.c does for the
 * recorded code: a memfd, opened by libipt as /proc/self/fd/N whenever it
 * maps the section (so the fd stays open until exit). Returns the image. */
static inline struct pt_image *synth_image(struct pt_image_section_cache **isc)
{
	char path[64];
	uint8_t code[SYNTH_SIZE];
	struct pt_image *image = pt_image_alloc("synth");
	int fd = memfd_create("history_synth", 0), isid;

	synth_code(code);
	if (fd < 0 || write(fd, code, sizeof code) != (ssize_t)sizeof code)
		abort();
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	*isc = pt_iscache_alloc("synth");
	isid = pt_iscache_add_file(*isc, path, 0, SYNTH_SIZE, SYNTH_BASE);
	if (!image || !*isc || isid < 0 ||
	    pt_image_add_cached(image, *isc, isid, NULL) < 0)
		abort();
	return image;
}

#endif
