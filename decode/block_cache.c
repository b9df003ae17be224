/* Basic blocks for a block stepper (block_cache.h): decoding the run of
 * instructions at an IP whose successors are known without running them
 * (falling through, direct jmp and call followed to their targets) up to
 * the control transfer that ends it, and a direct-mapped cache of them, so
 * that code executed again and again is read and decoded once. Each
 * instruction is classified by insn_class (the same answers the
 * single-stepper's encoder gets); the terminator is decoded once more with
 * Zydis, operands included, for what emulating or predicting it needs
 * (its condition, where an indirect one finds its target). */
#include "ptrev/block_cache.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#define CACHE_BITS 12
/* Bytes read at once: several instructions of typical length. */
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

/* A 64-bit general register as the word it is in user_regs_struct, or -1
 * (for any other register, which an operand we predict may not use). */
static int regs_word(ZydisRegister r)
{
#define W(f) (int)(offsetof(struct user_regs_struct, f) / sizeof(unsigned long long))
	switch (r) {
	case ZYDIS_REGISTER_RAX: return W(rax);
	case ZYDIS_REGISTER_RCX: return W(rcx);
	case ZYDIS_REGISTER_RDX: return W(rdx);
	case ZYDIS_REGISTER_RBX: return W(rbx);
	case ZYDIS_REGISTER_RSP: return W(rsp);
	case ZYDIS_REGISTER_RBP: return W(rbp);
	case ZYDIS_REGISTER_RSI: return W(rsi);
	case ZYDIS_REGISTER_RDI: return W(rdi);
	case ZYDIS_REGISTER_R8: return W(r8);
	case ZYDIS_REGISTER_R9: return W(r9);
	case ZYDIS_REGISTER_R10: return W(r10);
	case ZYDIS_REGISTER_R11: return W(r11);
	case ZYDIS_REGISTER_R12: return W(r12);
	case ZYDIS_REGISTER_R13: return W(r13);
	case ZYDIS_REGISTER_R14: return W(r14);
	case ZYDIS_REGISTER_R15: return W(r15);
	default: return -1;
	}
#undef W
}

/* Where an indirect jmp/call finds its target: its one explicit operand,
 * a 64-bit register or a memory operand addressed with 64-bit registers
 * (or rip) and no segment override. Anything else stays unknown. */
static void ind_src(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op,
		    struct block_src *src)
{
	if (in->operand_count_visible < 1 || in->operand_width != 64)
		return;
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		int r = regs_word(op->reg.value);
		if (r >= 0) {
			src->kind = BLOCK_SRC_REG;
			src->base = (int8_t)r;
		}
		return;
	}
	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || in->address_width != 64 ||
	    op->size != 64 || (op->mem.segment != ZYDIS_REGISTER_DS &&
			       op->mem.segment != ZYDIS_REGISTER_SS &&
			       op->mem.segment != ZYDIS_REGISTER_NONE))
		return;
	src->base = src->index = -1;
	if (op->mem.base == ZYDIS_REGISTER_RIP) {
		src->rip_rel = true;
	} else if (op->mem.base != ZYDIS_REGISTER_NONE &&
		   (src->base = (int8_t)regs_word(op->mem.base)) < 0) {
		return;
	}
	if (op->mem.index != ZYDIS_REGISTER_NONE &&
	    (src->index = (int8_t)regs_word(op->mem.index)) < 0)
		return;
	src->scale = op->mem.scale ? op->mem.scale : 1;
	src->disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
	src->kind = BLOCK_SRC_MEM;
}

/* What emulating or predicting the terminator needs. Only branches with a
 * 64-bit operand size are emulated: with a 0x66 prefix AMD truncates the
 * target to 16 bits where Intel does not, so those run; and loop with a
 * 32-bit address size (ecx) too, rather than guess what it does to rcx's
 * upper half. */
static void term_info(const uint8_t *code, size_t len, struct block *b)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	enum insn_kind kind = b->insn[b->n].kind;
	int cc;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, len, &in, ops)))
		return;
	if (kind == INSN_RET) {
		if (in.operand_width == 64)
			b->src.kind = BLOCK_SRC_STACK;
		return;
	}
	if (kind == INSN_JMP_IND || kind == INSN_CALL_IND) {
		ind_src(&in, &ops[0], &b->src);
		return;
	}
	if ((kind != INSN_COND && kind != INSN_JMP) || in.operand_width != 64 ||
	    (in.attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE))
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

/* The code being decoded: a window read at base, refilled where the
 * decoding goes (a jump elsewhere, or the window's end). */
struct window {
	block_read_fn read;
	void *arg;
	uint64_t base;
	size_t len;
	bool eof;              /* nothing readable past base + len */
	uint8_t code[READ_CHUNK];
};

/* Bytes at ip, at least 15 when readable; NULL when none are. */
static const uint8_t *bytes_at(struct window *w, uint64_t ip, size_t *len)
{
	bool inside = ip >= w->base && ip < w->base + w->len;

	if (!inside || (w->base + w->len - ip < ZYDIS_MAX_INSTRUCTION_LENGTH && !w->eof)) {
		long got = w->read(w->arg, ip, w->code, sizeof w->code);
		w->base = ip;
		w->len = got > 0 ? (size_t)got : 0;
		w->eof = got < (long)sizeof w->code;
	}
	if (ip < w->base || ip >= w->base + w->len)
		return NULL;
	*len = w->base + w->len - ip;
	return w->code + (ip - w->base);
}

/* Is ip one of the block's instructions, or inside one's bytes? */
static bool in_block(const struct block *b, uint64_t ip)
{
	for (uint32_t i = 0; i < b->n; i++)
		if (ip >= b->ip[i] && ip < b->ip[i] + b->insn[i].len)
			return true;
	return false;
}

/* Would [ip, ip + len) cover the start of one of the block's
 * instructions? (Overlapping instructions: code jumping into the middle
 * of others.) */
static bool covers(const struct block *b, uint64_t ip, unsigned len)
{
	for (uint32_t i = 0; i < b->n; i++)
		if (b->ip[i] > ip && b->ip[i] < ip + len)
			return true;
	return false;
}

int block_decode(block_read_fn read, void *arg, uint64_t ip, struct block *out)
{
	struct window w = { .read = read, .arg = arg };
	uint64_t cur = ip;

	memset(out, 0, offsetof(struct block, ip));
	out->start = ip;
	out->src.base = out->src.index = -1;
	while (out->n < BLOCK_MAX_INSNS) {
		struct insn_info *in = &out->insn[out->n];
		const uint8_t *code;
		size_t len = 0;
		uint64_t next;

		code = bytes_at(&w, cur, &len);
		if (!code || insn_classify(code, len, cur, in) < 0) {
			/* Unreadable or invalid here: the run stops before
			 * it and whoever executes it next finds out. */
			if (out->n == 0)
				return -1;
			break;
		}
		if (in->kind == INSN_OTHER)
			next = cur + in->len;
		else if (in->kind == INSN_JMP || in->kind == INSN_CALL)
			next = in->target;
		else
			next = 0; /* decided when it runs */
		if (covers(out, cur, in->len))
			break; /* overlapping code: the next block's */
		if (next && (in_block(out, next) ||
			     (next >= cur && next < cur + in->len))) {
			/* Back into the block: one address twice in a run
			 * would make a stop there ambiguous, and a stop
			 * inside an instruction's bytes would write an
			 * int3 into code still to run. A jump or call ends
			 * the block; an instruction falling into it is the
			 * next block's first. */
			if (in->kind == INSN_OTHER)
				break;
			next = 0;
		}
		if (!next) {
			out->has_term = true;
			term_info(code, len, out);
			break;
		}
		out->ip[out->n++] = cur;
		cur = next;
	}
	out->end = cur;
	out->ip[out->n] = cur;
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

const struct block *block_cache_get(struct block_cache *c, uint64_t ip)
{
	uint64_t h = (ip * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS);
	struct entry *e = &c->e[h];

	if (e->gen == c->gen && e->b.start == ip) {
		c->stats.hits++;
		return &e->b;
	}
	c->stats.misses++;
	if (block_decode(c->read, c->arg, ip, &e->b) < 0) {
		e->gen = 0;
		return NULL;
	}
	e->gen = c->gen;
	return &e->b;
}

uint64_t block_ip_at(const struct block *b, uint32_t i)
{
	return b->ip[i <= b->n ? i : b->n];
}

int block_index_of(const struct block *b, uint64_t ip)
{
	for (uint32_t k = 0; k <= b->n; k++)
		if (b->ip[k] == ip)
			return (int)k;
	return -1;
}
