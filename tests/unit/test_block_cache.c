/* block_cache: blocks decoded from hand-assembled bytes (where they end,
 * what ends them, cuts at the maximum length and at bytes that cannot be
 * decoded or read), the cache (hits, invalidation, reads), positions in a
 * block, and branch emulation checked against the CPU itself: every jcc,
 * jrcxz, jecxz, loop, loope and loopne is executed here for every
 * combination of the flags it reads and must go where block_emulate says. */
#include "ptrev/block_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../check.h"

#define IP 0x401000ull

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;
	for (; hex[0] && hex[1] && n < cap; hex += 2) {
		unsigned v;
		if (hex[0] == ' ') {
			hex--;
			continue;
		}
		sscanf(hex, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

struct mem {
	uint64_t base;
	uint8_t bytes[4096];
	size_t len;
	int reads;
};

static long mem_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct mem *m = arg;
	m->reads++;
	if (addr < m->base || addr >= m->base + m->len)
		return -1;
	if (len > m->base + m->len - addr)
		len = m->base + m->len - addr;
	memcpy(buf, m->bytes + (addr - m->base), len);
	return (long)len;
}

static int decode_hex(const char *hex, struct block *b)
{
	static struct mem m;
	m.base = IP;
	m.len = unhex(hex, m.bytes, sizeof m.bytes);
	return block_decode(mem_read, &m, IP, b);
}

static void case_shapes(void)
{
	struct block b;

	/* mov rbp, rsp; add eax, 1; nop; jnz -16 */
	CHECK(decode_hex("4889e5 83c001 90 75f0", &b) == 0, "decodes");
	CHECK(b.start == IP && b.n == 3 && b.end == IP + 7 && b.has_term,
	      "straight run of 3, then the jcc: n %u end %#llx", b.n,
	      (unsigned long long)b.end);
	CHECK(b.insn[3].kind == INSN_COND && b.insn[3].len == 2 &&
	      b.insn[3].target == IP + 9 - 16, "terminator classified");
	CHECK(b.emu == BLOCK_EMU_JCC && b.cc == 5, "jnz: emu %d cc %d", b.emu, b.cc);
	CHECK(block_ip_at(&b, 0) == IP && block_ip_at(&b, 2) == IP + 6 &&
	      block_ip_at(&b, 3) == IP + 7, "addresses");
	CHECK(block_index_of(&b, IP) == 0 && block_index_of(&b, IP + 3) == 1 &&
	      block_index_of(&b, IP + 7) == 3, "positions");
	CHECK(block_index_of(&b, IP + 1) == -1 && block_index_of(&b, IP + 8) == -1,
	      "inside an instruction or past the end: none");

	/* At a control transfer: nothing runs natively. */
	CHECK(decode_hex("c3", &b) == 0 && b.n == 0 && b.end == IP && b.has_term &&
	      b.insn[0].kind == INSN_RET && b.emu == BLOCK_EMU_NONE, "ret alone");
	CHECK(decode_hex("90 0f05", &b) == 0 && b.n == 1 && b.has_term &&
	      b.insn[1].kind == INSN_SYSCALL && b.emu == BLOCK_EMU_NONE, "syscall ends");
	CHECK(decode_hex("90 cc", &b) == 0 && b.n == 1 && b.insn[1].kind == INSN_INT,
	      "int3 ends");
	CHECK(decode_hex("ebfe", &b) == 0 && b.n == 0 && b.has_term &&
	      b.emu == BLOCK_EMU_JMP && b.insn[0].target == IP, "jmp to itself ends");
	CHECK(decode_hex("e9 00100000", &b) == 0 && b.n == 1 && !b.has_term &&
	      b.end == IP + 5 + 0x1000, "a direct jmp is followed (to unreadable code: cut)");
	CHECK(decode_hex("ffe0", &b) == 0 && b.insn[0].kind == INSN_JMP_IND &&
	      b.emu == BLOCK_EMU_NONE, "indirect jmp stepped");
	/* Not emulated: the 0x66 prefix (AMD truncates the target), loop
	 * with a 32-bit address size. */
	CHECK(decode_hex("6675f0", &b) == 0 && b.has_term && b.emu == BLOCK_EMU_NONE,
	      "66 jnz stepped: emu %d", b.emu);
	CHECK(decode_hex("67e2fe", &b) == 0 && b.emu == BLOCK_EMU_NONE, "67 loop stepped");
	CHECK(decode_hex("e2fe", &b) == 0 && b.emu == BLOCK_EMU_LOOP, "loop");
	CHECK(decode_hex("e1fe", &b) == 0 && b.emu == BLOCK_EMU_LOOPE, "loope");
	CHECK(decode_hex("e0fe", &b) == 0 && b.emu == BLOCK_EMU_LOOPNE, "loopne");
	CHECK(decode_hex("e3fe", &b) == 0 && b.emu == BLOCK_EMU_JRCXZ, "jrcxz");
	CHECK(decode_hex("67e3fe", &b) == 0 && b.emu == BLOCK_EMU_JECXZ, "jecxz");
	CHECK(decode_hex("0f8f00010000", &b) == 0 && b.emu == BLOCK_EMU_JCC && b.cc == 0xf,
	      "jg rel32");
	/* REP, rdtsc and the like fall through: they stay in the block. */
	CHECK(decode_hex("f3a4 0f31 0f01f9 0fa2 74fe", &b) == 0 && b.n == 4 &&
	      b.has_term, "rep movsb, rdtsc, rdtscp, cpuid inside: n %u", b.n);

	/* Invalid bytes: the block stops before them; at the start, none. */
	CHECK(decode_hex("90 90 06", &b) == 0 && b.n == 2 && !b.has_term &&
	      b.end == IP + 2, "cut before an invalid instruction: n %u", b.n);
	CHECK(decode_hex("06", &b) < 0, "no block at an invalid instruction");
	/* Bytes that end mid-instruction (the end of a mapping). */
	CHECK(decode_hex("90 90 b8 0100", &b) == 0 && b.n == 2 && !b.has_term,
	      "cut before a truncated instruction");

	/* A straight run longer than the maximum is cut. */
	{
		char hex[2 * (BLOCK_MAX_INSNS + 10) + 8];
		size_t k = 0;
		for (int i = 0; i < BLOCK_MAX_INSNS + 10; i++)
			k += (size_t)sprintf(hex + k, "90");
		sprintf(hex + k, "c3");
		CHECK(decode_hex(hex, &b) == 0 && b.n == BLOCK_MAX_INSNS && !b.has_term &&
		      b.end == IP + BLOCK_MAX_INSNS, "cut at %d: n %u", BLOCK_MAX_INSNS, b.n);
	}
}

/* ---- the cache -------------------------------------------------------- */

static void case_cache(void)
{
	struct mem m = { .base = IP };
	struct block_cache *c = block_cache_new(mem_read, &m);
	const struct block *b;

	/* 300 nops (longer than a read chunk), then ret. */
	memset(m.bytes, 0x90, 300);
	m.bytes[300] = 0xc3;
	m.len = 301;
	CHECK(c != NULL, "new");
	if (!c)
		return;
	b = block_cache_get(c, IP + 280);
	CHECK(b && b->n == 20 && b->has_term && b->insn[20].kind == INSN_RET,
	      "block near the end: n %u", b ? b->n : 0);
	b = block_cache_get(c, IP);
	CHECK(b && b->n == BLOCK_MAX_INSNS && !b->has_term, "long run cut");
	int reads = m.reads;
	b = block_cache_get(c, IP);
	CHECK(b && m.reads == reads && block_cache_stats(c)->hits == 1,
	      "second get from the cache: %d reads", m.reads - reads);
	/* The code changes: invalidated, read again. */
	m.bytes[2] = 0xc3;
	b = block_cache_get(c, IP);
	CHECK(b && b->n == BLOCK_MAX_INSNS, "stale until invalidated");
	block_cache_invalidate(c);
	b = block_cache_get(c, IP);
	CHECK(b && b->n == 2 && b->has_term && m.reads > reads, "after invalidation: n %u",
	      b ? b->n : 0);
	/* An instruction running past the readable bytes: cut before it. */
	m.len = 299;
	m.bytes[297] = 0xb8; /* mov eax, imm32 needs 5 bytes */
	block_cache_invalidate(c);
	b = block_cache_get(c, IP + 290);
	CHECK(b && b->n == 7 && !b->has_term && b->end == IP + 297,
	      "cut at the end of the mapping: n %u", b ? b->n : 0);
	CHECK(block_cache_get(c, IP + 4096) == NULL, "unreadable: NULL");
	CHECK(block_cache_stats(c)->invalidations == 2, "invalidations counted");
	block_cache_free(c);
}

/* ---- emulation against the CPU ---------------------------------------- */

/* Code run here: rdi = flags, rsi = rcx; push rdi; popf; mov rcx, rsi;
 * BRANCH; xor eax, eax (fell through); ret; taken: mov eax, 1; ret. The
 * branch's displacement (its last disp bytes) points at `taken`; the final
 * rcx is stored at [rdx]. */
typedef int (*probe_fn)(uint64_t flags, uint64_t rcx, uint64_t *rcx_out);

static probe_fn make_probe(uint8_t *page, const uint8_t *br, size_t brlen, size_t disp)
{
	uint8_t *p = page;
	*p++ = 0x57;                          /* push rdi */
	*p++ = 0x9d;                          /* popf */
	*p++ = 0x48; *p++ = 0x89; *p++ = 0xf1; /* mov rcx, rsi */
	memcpy(p, br, brlen);
	uint8_t *rel = p + brlen - disp;
	p += brlen;
	*p++ = 0x48; *p++ = 0x89; *p++ = 0x0a; /* mov [rdx], rcx */
	*p++ = 0x31; *p++ = 0xc0;             /* xor eax, eax */
	*p++ = 0xc3;                          /* ret */
	int32_t d = (int32_t)(p - (rel + disp));
	memcpy(rel, &d, disp); /* little endian: rel8 is d's low byte */
	*p++ = 0x48; *p++ = 0x89; *p++ = 0x0a; /* taken: mov [rdx], rcx */
	*p++ = 0xb8; *p++ = 1; *p++ = 0; *p++ = 0; *p++ = 0; /* mov eax, 1 */
	*p++ = 0xc3;
	return (probe_fn)(uintptr_t)page;
}

static void check_branch(const char *what, const uint8_t *br, size_t brlen,
			 size_t disp, uint8_t *page)
{
	static const uint64_t bits[] = { 0x001, 0x004, 0x040, 0x080, 0x800 };
	static const uint64_t rcxs[] = { 0, 1, 2, 0x100000000ull, 0xffffffffull };
	struct block b;
	int bad = 0;

	if (mprotect(page, 4096, PROT_READ | PROT_WRITE) < 0)
		return;
	probe_fn f = make_probe(page, br, brlen, disp);
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) < 0)
		return;
	uint64_t at = (uint64_t)(uintptr_t)page + 5;
	struct mem code = { .base = at, .len = 16 };
	memcpy(code.bytes, page + 5, 16);
	if (block_decode(mem_read, &code, at, &b) < 0 || b.n != 0 || b.emu == BLOCK_EMU_NONE) {
		CHECK(0, "%s: not an emulable block", what);
		return;
	}
	for (unsigned m = 0; m < 32; m++) {
		uint64_t fl = 0x202; /* IF and the reserved bit 1 */
		for (int i = 0; i < 5; i++)
			if (m & (1u << i))
				fl |= bits[i];
		for (size_t k = 0; k < sizeof rcxs / sizeof *rcxs; k++) {
			struct user_regs_struct r = {0};
			uint64_t rcx_out = 0;
			int taken = f(fl, rcxs[k], &rcx_out);
			r.rip = at;
			r.eflags = fl;
			r.rcx = rcxs[k];
			if (!block_emulate(&b, &r)) {
				bad++;
				continue;
			}
			uint64_t want = taken ? b.insn[0].target : at + b.insn[0].len;
			if (r.rip != want || r.rcx != rcx_out) {
				if (!bad)
					CHECK(0, "%s, flags %#llx rcx %#llx: CPU %s (rcx %#llx), "
					      "emulated rip %#llx rcx %#llx", what,
					      (unsigned long long)fl, (unsigned long long)rcxs[k],
					      taken ? "taken" : "fell through",
					      (unsigned long long)rcx_out,
					      (unsigned long long)r.rip, (unsigned long long)r.rcx);
				bad++;
			}
		}
	}
	CHECK(bad == 0, "%s: %d disagreements", what, bad);
}

static void case_emulate(void)
{
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char what[32];

	CHECK(page != MAP_FAILED, "mmap");
	if (page == MAP_FAILED)
		return;
	for (int cc = 0; cc < 16; cc++) {
		uint8_t br[2] = { (uint8_t)(0x70 + cc), 0 };
		snprintf(what, sizeof what, "j%x rel8", cc);
		check_branch(what, br, 2, 1, page);
		uint8_t br32[6] = { 0x0f, (uint8_t)(0x80 + cc), 0, 0, 0, 0 };
		snprintf(what, sizeof what, "j%x rel32", cc);
		check_branch(what, br32, 6, 4, page);
	}
	check_branch("jrcxz", (const uint8_t[]){ 0xe3, 0 }, 2, 1, page);
	check_branch("jecxz", (const uint8_t[]){ 0x67, 0xe3, 0 }, 3, 1, page);
	check_branch("loop", (const uint8_t[]){ 0xe2, 0 }, 2, 1, page);
	check_branch("loope", (const uint8_t[]){ 0xe1, 0 }, 2, 1, page);
	check_branch("loopne", (const uint8_t[]){ 0xe0, 0 }, 2, 1, page);


	/* Not at the terminator, no terminator, a call: refused. */
	struct block b;
	struct user_regs_struct r = { .rip = IP };
	CHECK(decode_hex("90 74fe", &b) == 0 && !block_emulate(&b, &r) && r.rip == IP,
	      "rip not at the terminator: refused");
	r.rip = IP;
	CHECK(decode_hex("e8 fbffffff", &b) == 0 && b.n == 0 && b.has_term &&
	      !block_emulate(&b, &r), "call (to itself) refused");
	r.rip = IP;
	CHECK(decode_hex("ebfe", &b) == 0 && block_emulate(&b, &r) && r.rip == IP,
	      "jmp emulated");
	CHECK(decode_hex("90 90 06", &b) == 0 && (r.rip = b.end, !block_emulate(&b, &r)),
	      "no terminator: refused");
	munmap(page, 4096);
}

/* Blocks go on through direct jumps and calls; every address once. */
static void case_superblocks(void)
{
	struct block b;

	/* jmp +5 over five nops, nop, nop, ret */
	CHECK(decode_hex("e905000000 9090909090 9090c3", &b) == 0 && b.n == 3 &&
	      b.ip[0] == IP && b.ip[1] == IP + 10 && b.ip[2] == IP + 11 &&
	      b.end == IP + 12 && b.has_term && b.insn[3].kind == INSN_RET &&
	      b.src.kind == BLOCK_SRC_STACK, "through a jmp: n %u end %#llx", b.n,
	      (unsigned long long)b.end);
	CHECK(block_index_of(&b, IP + 10) == 1 && block_index_of(&b, IP + 5) == -1 &&
	      block_ip_at(&b, 3) == IP + 12, "positions across the jump");
	/* call +5, then the callee: nop, ret */
	CHECK(decode_hex("e805000000 9090909090 90c3", &b) == 0 && b.n == 2 &&
	      b.insn[0].kind == INSN_CALL && b.ip[1] == IP + 10 && b.end == IP + 11 &&
	      b.has_term, "through a call: n %u", b.n);
	/* nop, nop, jmp back to the start: the jmp ends it */
	CHECK(decode_hex("9090ebfc", &b) == 0 && b.n == 2 && b.has_term &&
	      b.insn[2].kind == INSN_JMP && b.emu == BLOCK_EMU_JMP && b.end == IP + 2,
	      "jmp back into the block ends it: n %u", b.n);
	/* nop; jmp +1 (to IP+4); [IP+3] nop; [IP+4] jmp -3 (to IP+3), whose
	 * nop falls into IP+4 again: the block stops before that nop. */
	CHECK(decode_hex("90 eb01 90 ebfd", &b) == 0 && b.n == 3 && !b.has_term &&
	      b.ip[2] == IP + 4 && b.end == IP + 3, "fall-through into the block: cut "
	      "before it: n %u end %#llx", b.n, (unsigned long long)b.end);
	/* Overlapping code. mov ax, 0x05eb; jmp -4 lands inside the mov:
	 * the jmp ends the block (no stop inside an instruction's bytes). */
	CHECK(decode_hex("66b8eb05 ebfc", &b) == 0 && b.n == 1 && b.has_term &&
	      b.insn[1].kind == INSN_JMP && b.end == IP + 4, "jmp into an instruction "
	      "ends the block: n %u", b.n);
	/* jmp +2; [IP+4] jmp -3 to IP+3, where mov al, 0xeb covers IP+4: the
	 * block stops before it. */
	CHECK(decode_hex("eb02 90 b0 ebfd", &b) == 0 && b.n == 2 && !b.has_term &&
	      b.end == IP + 3, "an instruction over another's start: cut before it: "
	      "n %u end %#llx", b.n, (unsigned long long)b.end);
}

/* Where a terminator goes, from registers and memory. */
static void case_successor(void)
{
	static struct mem m;
	struct block b;
	struct user_regs_struct r;
	uint64_t next = 0, v = 0x5555123456;

	/* Code at IP, data at IP + 0x100. */
	memset(&m, 0, sizeof m);
	m.base = IP;
	m.len = 0x200;
	memcpy(m.bytes + 0x100, &v, 8);
#define DECODE(hex) (unhex(hex, m.bytes, 0x100), block_decode(mem_read, &m, IP, &b))
	memset(&r, 0, sizeof r);
	r.rip = IP;
	r.rsp = IP + 0x100;
	CHECK(DECODE("c3") == 0 && block_successor(&b, &r, mem_read, &m, &next) &&
	      next == v, "ret: %#llx", (unsigned long long)next);
	r.rax = 0x1234;
	CHECK(DECODE("ffd0") == 0 && block_successor(&b, &r, mem_read, &m, &next) &&
	      next == 0x1234, "call rax");
	CHECK(DECODE("41ffe3") == 0 && (r.r11 = 0x777, block_successor(&b, &r, mem_read, &m, &next)) &&
	      next == 0x777, "jmp r11");
	/* jmp [rip + 0xfa]: the next instruction (IP + 6) + 0xfa = IP + 0x100 */
	CHECK(DECODE("ff25fa000000") == 0 && block_successor(&b, &r, mem_read, &m, &next) &&
	      next == v, "jmp [rip+disp]");
	/* call [rsp + 8]: rsp as before the push */
	r.rsp = IP + 0xf8;
	CHECK(DECODE("ff542408") == 0 && block_successor(&b, &r, mem_read, &m, &next) &&
	      next == v, "call [rsp+8]");
	/* jmp [rax + rcx*8 + 0x20] */
	r.rax = IP + 0x100 - 0x20 - 2 * 8;
	r.rcx = 2;
	CHECK(DECODE("ff64c820") == 0 && block_successor(&b, &r, mem_read, &m, &next) &&
	      next == v, "jmp [rax+rcx*8+0x20]");
	CHECK(DECODE("64ff20") == 0 && !block_successor(&b, &r, mem_read, &m, &next),
	      "fs override: unknown");
	CHECK(DECODE("67ff20") == 0 && !block_successor(&b, &r, mem_read, &m, &next),
	      "32-bit address: unknown");
	CHECK(DECODE("0f05") == 0 && !block_successor(&b, &r, mem_read, &m, &next),
	      "syscall: unknown");
	r.rsp = IP + 0x1000;
	CHECK(DECODE("c3") == 0 && !block_successor(&b, &r, mem_read, &m, &next),
	      "ret with an unreadable stack: unknown");
	r.eflags = 0x40;
	CHECK(DECODE("7410") == 0 && block_successor(&b, &r, mem_read, &m, &next) &&
	      next == IP + 0x12, "jz taken");
	r.eflags = 0;
	CHECK(block_successor(&b, &r, mem_read, &m, &next) && next == IP + 2, "jz not taken");
	CHECK(DECODE("e8fbffffff") == 0 && block_successor(&b, &r, mem_read, &m, &next) &&
	      next == IP, "direct call (to itself)");
	r.rip = IP + 1;
	CHECK(!block_successor(&b, &r, mem_read, &m, &next), "rip elsewhere: refused");
#undef DECODE
}

int main(void)
{
	case_shapes();
	case_superblocks();
	case_successor();
	case_cache();
	case_emulate();
	if (failures)
		printf("%d failure(s)\n", failures);
	else
		printf("block_cache: all checks passed\n");
	return failures ? 1 : 0;
}
