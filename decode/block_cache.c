/* Basic blocks for a block stepper (block_cache.h): decoding the straight
 * run of instructions at an IP up to the control transfer that ends it,
 * and a direct-mapped cache of them, so that code executed again and again
 * is read and decoded once. Each instruction is classified by insn_class
 * (the same answers the single-stepper's encoder gets); the terminator is
 * decoded once more with Zydis for what emulating it needs (its condition,
 * its operand and address sizes). */
#include "ptrev/block_cache.h"

#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#define CACHE_BITS 12
/* Bytes read at once: BLOCK_MAX_INSNS instructions of typical length. */
#define READ_CHUNK 256

struct entry {
	uint32_t gen;          /* valid when equal to the cache's */
	struct block b;
};

struct block_cache {
	block_read_fn read;
	void *arg;
	uint32_t gen;
	struct block_cache_stats stats;
	struct entry *e;
};

static int jcc_cc(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_JO: return 0x0;
	case ZYDIS_MNEMONIC_JNO: return 0x1;
	case ZYDIS_MNEMONIC_JB: return 0x2;
	case ZYDIS_MNEMONIC_JNB: return 0x3;
	case ZYDIS_MNEMONIC_JZ: return 0x4;
	case ZYDIS_MNEMONIC_JNZ: return 0x5;
	case ZYDIS_MNEMONIC_JBE: return 0x6;
	case ZYDIS_MNEMONIC_JNBE: return 0x7;
	case ZYDIS_MNEMONIC_JS: return 0x8;
	case ZYDIS_MNEMONIC_JNS: return 0x9;
	case ZYDIS_MNEMONIC_JP: return 0xa;
	case ZYDIS_MNEMONIC_JNP: return 0xb;
	case ZYDIS_MNEMONIC_JL: return 0xc;
	case ZYDIS_MNEMONIC_JNL: return 0xd;
	case ZYDIS_MNEMONIC_JLE: return 0xe;
	case ZYDIS_MNEMONIC_JNLE: return 0xf;
	default: return -1;
	}
}

/* How the terminator (already classified as kind) may be emulated. Only
 * branches with a 64-bit operand size: with a 0x66 prefix AMD truncates
 * the target to 16 bits where Intel does not, so those are stepped; and
 * loop with a 32-bit address size (ecx) is stepped too, rather than guess
 * what it does to rcx's upper half. */
static void term_emu(const uint8_t *code, size_t len, struct block *b)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	enum insn_kind kind = b->insn[b->n].kind;
	int cc;

	b->emu = BLOCK_EMU_NONE;
	b->cc = 0;
	if (kind != INSN_COND && kind != INSN_JMP)
		return;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, code, len, &in)))
		return;
	if (in.operand_width != 64 || (in.attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE))
		return;
	if (kind == INSN_JMP) {
		b->emu = BLOCK_EMU_JMP;
		return;
	}
	switch (in.mnemonic) {
	case ZYDIS_MNEMONIC_JRCXZ:
		b->emu = BLOCK_EMU_JRCXZ;
		return;
	case ZYDIS_MNEMONIC_JECXZ:
		b->emu = BLOCK_EMU_JECXZ;
		return;
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
		if (in.address_width != 64)
			return;
		b->emu = in.mnemonic == ZYDIS_MNEMONIC_LOOP ? BLOCK_EMU_LOOP :
			 in.mnemonic == ZYDIS_MNEMONIC_LOOPE ? BLOCK_EMU_LOOPE :
			 BLOCK_EMU_LOOPNE;
		return;
	default:
		break;
	}
	cc = jcc_cc(in.mnemonic);
	if (cc >= 0) {
		b->emu = BLOCK_EMU_JCC;
		b->cc = (uint8_t)cc;
	}
}

int block_decode(const uint8_t *code, size_t len, uint64_t ip, struct block *out)
{
	size_t off = 0;

	memset(out, 0, offsetof(struct block, insn));
	out->start = ip;
	for (;;) {
		struct insn_info *in = &out->insn[out->n];
		if (insn_classify(code + off, len - off, ip + off, in) < 0) {
			/* Unreadable or invalid here: the run stops before
			 * it and whoever executes it next finds out. */
			if (out->n == 0)
				return -1;
			break;
		}
		if (in->kind != INSN_OTHER) {
			out->has_term = true;
			term_emu(code + off, len - off, out);
			break;
		}
		off += in->len;
		out->n++;
		if (out->n == BLOCK_MAX_INSNS)
			break;
	}
	out->end = ip + off;
	return 0;
}

struct block_cache *block_cache_new(block_read_fn read, void *arg)
{
	struct block_cache *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	/* Zeroed pages: gen 0 marks never-filled entries. */
	c->e = calloc((size_t)1 << CACHE_BITS, sizeof *c->e);
	if (!c->e) {
		free(c);
		return NULL;
	}
	c->read = read;
	c->arg = arg;
	c->gen = 1;
	return c;
}

void block_cache_free(struct block_cache *c)
{
	if (!c)
		return;
	free(c->e);
	free(c);
}

void block_cache_invalidate(struct block_cache *c)
{
	c->stats.invalidations++;
	if (++c->gen == 0) {
		memset(c->e, 0, sizeof(*c->e) << CACHE_BITS);
		c->gen = 1;
	}
}

const struct block_cache_stats *block_cache_stats(const struct block_cache *c)
{
	return &c->stats;
}

/* Read as much as a block can need: a chunk, more if its instructions run
 * past it. A block decoded from a chunk that ended mid-way would be cut
 * short for nothing, so decode again with more bytes when the first try
 * stopped at the chunk's end. */
const struct block *block_cache_get(struct block_cache *c, uint64_t ip)
{
	uint64_t h = (ip * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS);
	struct entry *e = &c->e[h];
	uint8_t code[BLOCK_MAX_INSNS * 15 + 15];
	size_t have = 0;

	if (e->gen == c->gen && e->b.start == ip) {
		c->stats.hits++;
		return &e->b;
	}
	c->stats.misses++;
	for (;;) {
		size_t want = have + READ_CHUNK <= sizeof code ? READ_CHUNK : sizeof code - have;
		long got = c->read(c->arg, ip + have, code + have, want);
		if (got > 0)
			have += (size_t)got;
		if (block_decode(code, have, ip, &e->b) < 0) {
			e->gen = 0;
			return NULL;
		}
		/* Done unless the decode ran into the end of what was read
		 * while more could be read. */
		if (got < (long)want || have == sizeof code ||
		    e->b.has_term || e->b.n == BLOCK_MAX_INSNS)
			break;
	}
	e->gen = c->gen;
	return &e->b;
}

uint64_t block_ip_at(const struct block *b, uint32_t i)
{
	uint64_t ip = b->start;

	for (uint32_t k = 0; k < i && k < b->n; k++)
		ip += b->insn[k].len;
	return ip;
}

int block_index_of(const struct block *b, uint64_t ip)
{
	uint64_t at = b->start;

	for (uint32_t k = 0; k <= b->n; k++) {
		if (at == ip)
			return (int)k;
		if (k < b->n)
			at += b->insn[k].len;
	}
	return -1;
}
