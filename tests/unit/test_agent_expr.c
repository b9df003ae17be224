/* Tests for the agent-expression evaluator: hand-assembled bytecode for each
 * opcode family, error cases, the X-string parser, and an oracle part that
 * evaluates the exact bytecode gdb 13 sent to gdbserver 13 for real
 * breakpoint conditions on tests/programs/agent_cond.c. */
#include "ptrev/agent_expr.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

/* ---- a fake target: a register file and two memory regions ---- */

#define NREGS 32
#define STACK_BASE 0x7ffffffde000ull /* where the fake stack lives */
#define DATA_BASE 0x555555558000ull  /* agent_cond's .data, as gdb saw it */
#define REGION_SIZE 0x100

struct fake {
	uint64_t regs[NREGS];
	int reg_ok[NREGS];
	uint8_t stack[REGION_SIZE];
	uint8_t data[REGION_SIZE];
	int mem_reads;
};

static int fake_reg(void *ctx, int regnum, uint64_t *val)
{
	struct fake *f = ctx;
	if (regnum < 0 || regnum >= NREGS || !f->reg_ok[regnum])
		return -1;
	*val = f->regs[regnum];
	return 0;
}

static uint8_t *fake_at(struct fake *f, uint64_t addr, size_t len)
{
	if (addr >= STACK_BASE && addr - STACK_BASE <= REGION_SIZE - len)
		return f->stack + (addr - STACK_BASE);
	if (addr >= DATA_BASE && addr - DATA_BASE <= REGION_SIZE - len)
		return f->data + (addr - DATA_BASE);
	return NULL;
}

static long fake_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;
	f->mem_reads++;
	uint8_t *src = fake_at(f, addr, len);
	if (!src)
		return -1;
	memcpy(buf, src, len);
	return (long)len;
}

/* Store little-endian, as the amd64 inferior would. */
static void poke(struct fake *f, uint64_t addr, uint64_t v, size_t len)
{
	uint8_t *dst = fake_at(f, addr, len);
	if (!dst) {
		fprintf(stderr, "test bug: poke outside the fake memory\n");
		exit(1);
	}
	for (size_t i = 0; i < len; i++)
		dst[i] = (uint8_t)(v >> (8 * i));
}

static void set_reg(struct fake *f, int n, uint64_t v)
{
	f->regs[n] = v;
	f->reg_ok[n] = 1;
}

static struct fake fk;
static const struct agent_ctx actx = {&fk, fake_reg, fake_mem};

static int run_bytes(const uint8_t *code, size_t len, int64_t *res)
{
	struct agent_expr e = {(uint8_t *)code, len};
	return agent_expr_eval(&e, &actx, res);
}

/* Evaluate bytecode given as a literal list; expect success and `want`. */
#define EXPECT(want, ...)                                                  \
	do {                                                               \
		static const uint8_t code_[] = {__VA_ARGS__};             \
		int64_t r_ = 0x5a5a;                                       \
		int rc_ = run_bytes(code_, sizeof code_, &r_);             \
		CHECK(rc_ == 0 && r_ == (int64_t)(want),                   \
		      "rc %d result %" PRId64 " (%#" PRIx64 "), want %"    \
		      PRId64, rc_, r_, (uint64_t)r_, (int64_t)(want));     \
	} while (0)

/* Evaluate bytecode; expect an error. */
#define EXPECT_ERR(...)                                                    \
	do {                                                               \
		static const uint8_t code_[] = {__VA_ARGS__};             \
		int64_t r_ = 0;                                            \
		int rc_ = run_bytes(code_, sizeof code_, &r_);             \
		CHECK(rc_ == -1, "rc %d result %" PRId64, rc_, r_);        \
	} while (0)

/* opcode names, for readable hand assembly */
enum {
	FLOAT = 0x01, ADD = 0x02, SUB = 0x03, MUL = 0x04, DIVS = 0x05,
	DIVU = 0x06, REMS = 0x07, REMU = 0x08, LSH = 0x09, RSHS = 0x0a,
	RSHU = 0x0b, TRACE = 0x0c, TRACEQ = 0x0d, LNOT = 0x0e, BAND = 0x0f,
	BOR = 0x10, BXOR = 0x11, BNOT = 0x12, EQ = 0x13, LTS = 0x14,
	LTU = 0x15, EXT = 0x16, REF8 = 0x17, REF16 = 0x18, REF32 = 0x19,
	REF64 = 0x1a, REFF = 0x1b, REFD = 0x1c, REFLD = 0x1d, LTOD = 0x1e,
	DTOL = 0x1f, IFGOTO = 0x20, GOTO = 0x21, C8 = 0x22, C16 = 0x23,
	C32 = 0x24, C64 = 0x25, REG = 0x26, END = 0x27, DUP = 0x28,
	POP = 0x29, ZEXT = 0x2a, SWAP = 0x2b, GETV = 0x2c, SETV = 0x2d,
	TRACEV = 0x2e, TRACENZ = 0x2f, TRACE16 = 0x30, INVALID2 = 0x31,
	PICK = 0x32, ROT = 0x33, PRINTF = 0x34,
};

/* push -1 as a 64-bit constant */
#define CM1 C64, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
/* push INT64_MIN */
#define CMIN C64, 0x80, 0, 0, 0, 0, 0, 0, 0

static void test_constants(void)
{
	EXPECT(0x7f, C8, 0x7f, END);
	EXPECT(0xff, C8, 0xff, END); /* no sign extension */
	EXPECT(0x1234, C16, 0x12, 0x34, END); /* big-endian */
	EXPECT(0x89abcdef, C32, 0x89, 0xab, 0xcd, 0xef, END);
	EXPECT(0x0123456789abcdefll,
	       C64, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, END);
	EXPECT(-1, CM1, END);
	/* result is the top, not the bottom */
	EXPECT(2, C8, 1, C8, 2, END);
}

static void test_arithmetic(void)
{
	EXPECT(5, C8, 2, C8, 3, ADD, END);
	EXPECT(-1, C8, 2, C8, 3, SUB, END); /* a - b, b on top */
	EXPECT(42, C8, 6, C8, 7, MUL, END);
	/* wrap-around instead of signed overflow */
	EXPECT(INT64_MIN, C64, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	       C8, 1, ADD, END);
	EXPECT(0, CMIN, C8, 2, MUL, END);
	EXPECT(INT64_MAX, CMIN, C8, 1, SUB, END);
	EXPECT(INT64_MIN, CMIN, CM1, MUL, END);

	/* division: signed truncates toward zero, unsigned sees 2^64-7 */
	EXPECT(2, C8, 5, C8, 2, DIVS, END);
	EXPECT(-2, C8, 0xfb, EXT, 8, C8, 2, DIVS, END);       /* -5/2 */
	EXPECT(2, C8, 0xfb, EXT, 8, C8, 0xfe, EXT, 8, DIVS, END); /* -5/-2 */
	EXPECT(-1, C8, 0xfb, EXT, 8, C8, 2, REMS, END);       /* -5%2 */
	EXPECT(1, C8, 5, C8, 0xfe, EXT, 8, REMS, END);        /* 5%-2 */
	EXPECT(0x7ffffffffffffffdll, C8, 0xfb, EXT, 8, C8, 2, DIVU, END);
	EXPECT(1, C8, 0xfb, EXT, 8, C8, 2, REMU, END);
	EXPECT(3, C8, 0xfb, EXT, 8, C8, 4, REMU, END); /* 2^64-5 mod 4 */
	/* INT64_MIN / -1 wraps rather than trapping */
	EXPECT(INT64_MIN, CMIN, CM1, DIVS, END);
	EXPECT(0, CMIN, CM1, REMS, END);

	/* division by zero is an error, for all four */
	EXPECT_ERR(C8, 1, C8, 0, DIVS, END);
	EXPECT_ERR(C8, 1, C8, 0, DIVU, END);
	EXPECT_ERR(C8, 1, C8, 0, REMS, END);
	EXPECT_ERR(C8, 1, C8, 0, REMU, END);
}

static void test_shifts(void)
{
	EXPECT(0x50, C8, 5, C8, 4, LSH, END);
	EXPECT(INT64_MIN, C8, 1, C8, 63, LSH, END);
	EXPECT(0, C8, 1, C8, 64, LSH, END);   /* count >= width: all out */
	EXPECT(0, C8, 1, C8, 200, LSH, END);
	EXPECT(-4, C8, 0xf0, EXT, 8, C8, 2, RSHS, END);
	EXPECT(0x3ffffffffffffffcll, C8, 0xf0, EXT, 8, C8, 2, RSHU, END);
	EXPECT(4, C8, 0x10, C8, 2, RSHS, END);
	EXPECT(-1, C8, 0xf0, EXT, 8, C8, 64, RSHS, END);
	EXPECT(-1, C8, 0xf0, EXT, 8, C8, 63, RSHS, END);
	EXPECT(0, C8, 0x70, C8, 99, RSHS, END);
	EXPECT(0, C8, 0xf0, EXT, 8, C8, 64, RSHU, END);
	EXPECT(1, C8, 0xf0, EXT, 8, C8, 63, RSHU, END);
	EXPECT(0xf0, C8, 0xf0, C8, 0, RSHS, END);
	EXPECT(0, C8, 1, CM1, LSH, END); /* "negative" count */
}

static void test_logic_compare(void)
{
	EXPECT(1, C8, 0, LNOT, END);
	EXPECT(0, C8, 9, LNOT, END);
	EXPECT(0x0c, C8, 0x0e, C8, 0x3c, BAND, END);
	EXPECT(0x3e, C8, 0x0e, C8, 0x3c, BOR, END);
	EXPECT(0x32, C8, 0x0e, C8, 0x3c, BXOR, END);
	EXPECT(-1, C8, 0, BNOT, END);
	EXPECT(~(int64_t)0x55, C8, 0x55, BNOT, END);
	EXPECT(1, C8, 7, C8, 7, EQ, END);
	EXPECT(0, C8, 7, C8, 8, EQ, END);
	EXPECT(1, C8, 7, C8, 8, LTS, END);  /* a < b */
	EXPECT(0, C8, 8, C8, 7, LTS, END);
	EXPECT(0, C8, 7, C8, 7, LTS, END);
	EXPECT(1, CM1, C8, 0, LTS, END);     /* -1 < 0 signed */
	EXPECT(0, CM1, C8, 0, LTU, END);     /* 2^64-1 > 0 unsigned */
	EXPECT(1, C8, 0, CM1, LTU, END);
	EXPECT(1, CMIN, C64, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	       LTS, END);
	EXPECT(0, CMIN, C64, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	       LTU, END);
}

static void test_extension(void)
{
	EXPECT(-1, C8, 0xff, EXT, 8, END);
	EXPECT(0x7f, C8, 0x7f, EXT, 8, END);
	EXPECT(-128, C8, 0x80, EXT, 8, END);
	EXPECT(-32768, C16, 0x80, 0x00, EXT, 16, END);
	EXPECT(0x7fff, C32, 0xff, 0xff, 0x7f, 0xff, EXT, 16, END);
	EXPECT(-2, C32, 0xff, 0xff, 0xff, 0xfe, EXT, 32, END);
	EXPECT(-1, C8, 1, EXT, 1, END);  /* a 1-bit signed field */
	EXPECT(0, C8, 2, EXT, 1, END);
	EXPECT(-4, C8, 0x1c, EXT, 5, END); /* 11100b in 5 bits */
	EXPECT(12, C8, 0x0c, EXT, 5, END);
	EXPECT(-1, CM1, EXT, 64, END);
	EXPECT(-1, CM1, EXT, 99, END);   /* wider than a value: no-op */
	EXPECT_ERR(C8, 1, EXT, 0, END);  /* no sign bit */
	EXPECT(0xff, CM1, ZEXT, 8, END);
	EXPECT(0x1f, CM1, ZEXT, 5, END);
	EXPECT(0xffffffff, CM1, ZEXT, 32, END);
	EXPECT(-1, CM1, ZEXT, 64, END);
	EXPECT(0, CM1, ZEXT, 0, END);
	/* missing operand byte */
	EXPECT_ERR(C8, 1, EXT);
	EXPECT_ERR(C8, 1, ZEXT);
}

static void test_memory(void)
{
	memset(&fk, 0, sizeof fk);
	memset(fk.data, 0xee, sizeof fk.data);
	poke(&fk, DATA_BASE + 0x10, 0x8877665544332211ull, 8);
	/* low-address byte first: the fake target is little-endian */
	EXPECT(0x11, C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80, 0x10,
	       REF8, END);
	EXPECT(0x2211, C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80, 0x10,
	       REF16, END);
	EXPECT(0x44332211, C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80, 0x10,
	       REF32, END);
	EXPECT((int64_t)0x8877665544332211ull,
	       C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80, 0x10, REF64, END);
	/* zero-extended; gdb adds `ext` for signed types */
	EXPECT(0x88, C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80, 0x17,
	       REF8, END);
	EXPECT(-120, C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80, 0x17,
	       REF8, EXT, 8, END);
	/* unmapped, and a read that would run past the end of a region */
	EXPECT_ERR(C8, 0x10, REF8, END);
	EXPECT_ERR(C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80, 0xfd, REF32, END);
	EXPECT(0xeeeeee, C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80, 0xfd,
	       REF16, C8, 8, LSH, C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80,
	       0xff, REF8, BOR, END);
	EXPECT_ERR(REF8, END); /* no address */

	/* floating point is not supported */
	EXPECT_ERR(C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80, 0x10, REFF, END);
	EXPECT_ERR(C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80, 0x10, REFD, END);
	EXPECT_ERR(C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80, 0x10, REFLD, END);

	/* no read_mem callback at all */
	static const uint8_t code[] = {C64, 0, 0, 0x55, 0x55, 0x55, 0x55, 0x80,
				       0x10, REF8, END};
	struct agent_expr e = {(uint8_t *)code, sizeof code};
	struct agent_ctx none = {&fk, fake_reg, NULL};
	int64_t r;
	CHECK(agent_expr_eval(&e, &none, &r) == -1, "no read_mem");
}

/* a fake that returns fewer bytes than asked */
static long short_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	(void)addr;
	memset(buf, 0, len);
	return len > 1 ? (long)len - 1 : 0;
}

static void test_short_read(void)
{
	static const uint8_t code[] = {C8, 0x10, REF32, END};
	struct agent_expr e = {(uint8_t *)code, sizeof code};
	struct agent_ctx c = {NULL, fake_reg, short_mem};
	int64_t r;
	CHECK(agent_expr_eval(&e, &c, &r) == -1, "short read accepted");
}

static void test_registers(void)
{
	memset(&fk, 0, sizeof fk);
	set_reg(&fk, 0, 0x1122334455667788ull);
	set_reg(&fk, 16, 0x401000);
	set_reg(&fk, 5, 4);
	EXPECT((int64_t)0x1122334455667788ull, REG, 0, 0, END);
	EXPECT(0x401000, REG, 0, 16, END); /* big-endian register number */
	EXPECT(1, REG, 0, 5, C8, 4, EQ, END);
	EXPECT_ERR(REG, 0, 7, END);        /* unavailable */
	EXPECT_ERR(REG, 0x01, 0x00, END);  /* 256: out of the fake's range */
	EXPECT_ERR(REG, 0);                /* truncated register number */

	static const uint8_t code[] = {REG, 0, 0, END};
	struct agent_expr e = {(uint8_t *)code, sizeof code};
	struct agent_ctx none = {&fk, NULL, fake_mem};
	int64_t r;
	CHECK(agent_expr_eval(&e, &none, &r) == -1, "no read_reg");
}

static void test_stack_ops(void)
{
	EXPECT(6, C8, 3, DUP, ADD, END);
	EXPECT(1, C8, 1, C8, 2, POP, END);
	EXPECT(1, C8, 1, C8, 2, SWAP, END);
	EXPECT(1, C8, 5, C8, 6, SWAP, SUB, END); /* 6 - 5 after the swap */
	/* rot: a b c => c a b. With 1 2 3: top becomes 2, then 1, then 3. */
	EXPECT(2, C8, 1, C8, 2, C8, 3, ROT, END);
	EXPECT(1, C8, 1, C8, 2, C8, 3, ROT, POP, END);
	EXPECT(3, C8, 1, C8, 2, C8, 3, ROT, POP, POP, END);
	/* pick 0 is dup; pick 2 reaches two below the top */
	EXPECT(3, C8, 1, C8, 2, C8, 3, PICK, 0, END);
	EXPECT(1, C8, 1, C8, 2, C8, 3, PICK, 2, END);
	EXPECT(3, C8, 1, C8, 2, C8, 3, PICK, 2, POP, END);
	EXPECT_ERR(C8, 1, C8, 2, C8, 3, PICK, 3, END);
	EXPECT_ERR(C8, 1, PICK);

	/* underflow of every shape */
	EXPECT_ERR(END);
	EXPECT_ERR(ADD, END);
	EXPECT_ERR(C8, 1, ADD, END);
	EXPECT_ERR(C8, 1, EQ, END);
	EXPECT_ERR(DUP, END);
	EXPECT_ERR(POP, END);
	EXPECT_ERR(C8, 1, SWAP, END);
	EXPECT_ERR(C8, 1, C8, 2, ROT, END);
	EXPECT_ERR(LNOT, END);
	EXPECT_ERR(BNOT, END);
	EXPECT_ERR(C8, 1, POP, END); /* empty at end */

	/* overflow: DUP forever, bounded by the stack limit */
	static const uint8_t grow[] = {C8, 1, DUP, GOTO, 0, 2};
	int64_t r;
	CHECK(run_bytes(grow, sizeof grow, &r) == -1, "stack overflow");
	/* exactly the limit is fine */
	uint8_t *many = malloc(2 * AGENT_EXPR_MAX_STACK + 2);
	for (int i = 0; i < AGENT_EXPR_MAX_STACK; i++) {
		many[2 * i] = C8;
		many[2 * i + 1] = (uint8_t)i;
	}
	many[2 * AGENT_EXPR_MAX_STACK] = END;
	CHECK(run_bytes(many, 2 * AGENT_EXPR_MAX_STACK + 1, &r) == 0 &&
		      r == (AGENT_EXPR_MAX_STACK - 1) % 256,
	      "full stack: r %" PRId64, r);
	many[2 * AGENT_EXPR_MAX_STACK] = DUP;
	many[2 * AGENT_EXPR_MAX_STACK + 1] = END;
	CHECK(run_bytes(many, 2 * AGENT_EXPR_MAX_STACK + 2, &r) == -1,
	      "one past the stack limit");
	free(many);
}

static void test_control_flow(void)
{
	/* if_goto taken / not taken; targets are absolute offsets */
	EXPECT(7, C8, 1, IFGOTO, 0, 8, C8, 9, END, C8, 7, END);
	EXPECT(9, C8, 0, IFGOTO, 0, 8, C8, 9, END, C8, 7, END);
	EXPECT(7, GOTO, 0, 5, C8, 9, C8, 7, END);
	/* any nonzero value is true, including the sign bit alone */
	EXPECT(7, CMIN, IFGOTO, 0, 15, C8, 9, END, C8, 7, END);
	/* a loop: sum 1..10 with pick/rot-free stack juggling
	 *  0: const8 0        acc
	 *  2: const8 10       acc n
	 *  4: dup             acc n n
	 *  5: log_not         acc n !n
	 *  6: if_goto 20      acc n
	 *  9: swap            n acc
	 * 10: pick 1          n acc n
	 * 12: add             n acc+n
	 * 13: swap            acc n
	 * 14: const8 1        acc n 1
	 * 16: sub             acc n-1
	 * 17: goto 4
	 * 20: pop             acc
	 */
	EXPECT(55, C8, 0, C8, 10, DUP, LNOT, IFGOTO, 0, 20, SWAP, PICK, 1, ADD,
	       SWAP, C8, 1, SUB, GOTO, 0, 4, POP, END);

	/* jumps outside the code */
	EXPECT_ERR(GOTO, 0, 4, END);
	EXPECT_ERR(GOTO, 0xff, 0xff, END);
	EXPECT_ERR(C8, 1, IFGOTO, 0, 6, END);
	EXPECT_ERR(GOTO, 0);            /* truncated offset */
	EXPECT_ERR(C8, 1, IFGOTO, 0);
	EXPECT_ERR(IFGOTO, 0, 0, END);  /* nothing to test */
	/* a not-taken jump to a bad target is never followed */
	EXPECT(5, C8, 5, C8, 0, IFGOTO, 0xff, 0xff, END);

	/* running off the end without `end` */
	EXPECT_ERR(C8, 1);
	EXPECT_ERR(C8, 1, C8, 0, IFGOTO, 0, 0);

	/* an infinite loop stops at the step limit */
	int64_t r;
	static const uint8_t spin[] = {GOTO, 0, 0};
	CHECK(run_bytes(spin, sizeof spin, &r) == -1, "goto self");
	static const uint8_t spin2[] = {C8, 1, IFGOTO, 0, 0, END};
	CHECK(run_bytes(spin2, sizeof spin2, &r) == -1, "if_goto loop");

	/* A count-down loop costs 1 + 6 per round + 4 steps: 166000 rounds
	 * (996005 steps) finish under the limit, 170000 (1020005) do not. */
	EXPECT(0, C32, 0x00, 0x02, 0x88, 0x70, DUP, LNOT, IFGOTO, 0, 16,
	       C8, 1, SUB, GOTO, 0, 5, END);
	EXPECT_ERR(C32, 0x00, 0x02, 0x98, 0x10, DUP, LNOT, IFGOTO, 0, 16,
		   C8, 1, SUB, GOTO, 0, 5, END);
}

static void test_truncated_immediates(void)
{
	EXPECT_ERR(C8);
	EXPECT_ERR(C16, 1);
	EXPECT_ERR(C32, 1, 2, 3);
	EXPECT_ERR(C64, 1, 2, 3, 4, 5, 6, 7);
	EXPECT_ERR(C8, 1, TRACEQ);
	EXPECT_ERR(C8, 1, TRACE16, 0);
	EXPECT_ERR(TRACEV, 0);
}

static void test_trace_ops(void)
{
	/* trace: addr size => (consumes both) */
	EXPECT(7, C8, 7, C8, 1, C8, 2, TRACE, END);
	EXPECT_ERR(C8, 1, TRACE, END);
	EXPECT(7, C8, 7, C8, 1, C8, 2, TRACENZ, END);
	EXPECT_ERR(C8, 1, TRACENZ, END);
	/* trace_quick / trace16: addr => addr */
	EXPECT(3, C8, 3, TRACEQ, 4, END);
	EXPECT_ERR(TRACEQ, 4, C8, 3, END);
	EXPECT(3, C8, 3, TRACE16, 0, 4, END);
	EXPECT_ERR(TRACE16, 0, 4, C8, 3, END);
	/* tracev n: no stack effect */
	EXPECT(3, C8, 3, TRACEV, 0, 1, END);
	/* trace state variables and printf are not supported */
	EXPECT_ERR(GETV, 0, 1, END);
	EXPECT_ERR(C8, 1, SETV, 0, 1, END);
}

static void test_bad_opcodes(void)
{
	EXPECT_ERR(C8, 1, FLOAT, END);
	EXPECT_ERR(C8, 1, LTOD, END);
	EXPECT_ERR(C8, 1, DTOL, END);
	EXPECT_ERR(C8, 1, PRINTF, END);
	EXPECT_ERR(C8, 1, INVALID2, END);
	EXPECT_ERR(0x00, END);
	EXPECT_ERR(C8, 1, 0x35, END);
	EXPECT_ERR(C8, 1, 0xff, END);
	/* Every byte value after three pushes, followed by END bytes that
	 * serve as operands (0x27 = 39) and as the final `end`. Those that
	 * succeed are exactly the supported opcodes whose operands make
	 * sense here: refs of address 3, reg 0x2727, jumps to 0x2727 and
	 * pick 39 fail for their operands, not for their opcode. */
	static const uint8_t succeed[] = {
		ADD, SUB, MUL, DIVS, DIVU, REMS, REMU, LSH, RSHS, RSHU, TRACE,
		TRACEQ, LNOT, BAND, BOR, BXOR, BNOT, EQ, LTS, LTU, EXT, C8,
		C16, C32, C64, END, DUP, POP, ZEXT, SWAP, TRACEV, TRACENZ,
		TRACE16, ROT,
	};
	memset(&fk, 0, sizeof fk);
	for (int op = 0; op < 256; op++) {
		uint8_t code[] = {C8, 1, C8, 2, C8, 3, (uint8_t)op, END, END,
				  END, END, END, END, END, END, END};
		int64_t r;
		int want = memchr(succeed, op, sizeof succeed) != NULL;
		int got = run_bytes(code, sizeof code, &r) == 0;
		CHECK(got == want, "opcode %#x: %s", op,
		      got ? "accepted" : "rejected");
	}
}

static void test_null_args(void)
{
	int64_t r;
	struct agent_expr empty = {NULL, 0};
	CHECK(agent_expr_eval(&empty, &actx, &r) == -1, "empty expression");
}

/* ---- parsing "X<len>,<hex>" ---- */

static int parse_str(const char *s, struct agent_expr *e, const char **rest)
{
	const char *p = s;
	int rc = agent_expr_parse(&p, s + strlen(s), e);
	if (rest)
		*rest = p;
	return rc;
}

static void test_parse(void)
{
	struct agent_expr e;
	const char *rest;

	CHECK(parse_str("X3,220127", &e, &rest) == 0 && e.len == 3 &&
		      e.code[0] == 0x22 && e.code[1] == 0x01 &&
		      e.code[2] == 0x27 && *rest == 0,
	      "simple");
	agent_expr_free(&e);
	CHECK(e.code == NULL && e.len == 0, "free resets");
	agent_expr_free(&e); /* twice is harmless */

	/* upper-case hex, and stops exactly after the bytes */
	CHECK(parse_str("XA,2500000000000000FF27;cmds:0", &e, &rest) == 0 &&
		      e.len == 10 && e.code[8] == 0xff &&
		      strcmp(rest, ";cmds:0") == 0,
	      "upper case; rest '%s'", rest);
	agent_expr_free(&e);

	/* consecutive conditions, as gdb sends them: ";X..X.." */
	const char *two = "X3,220127X3,220027";
	const char *p = two, *end = two + strlen(two);
	struct agent_expr a, b;
	CHECK(agent_expr_parse(&p, end, &a) == 0 &&
		      agent_expr_parse(&p, end, &b) == 0 && p == end &&
		      a.code[1] == 1 && b.code[1] == 0,
	      "two in a row");
	agent_expr_free(&a);
	agent_expr_free(&b);

	static const char *bad[] = {
		"",              /* nothing */
		"x3,220127",     /* lower-case x */
		"Y3,220127",
		"X,220127",      /* no length */
		"X3220127",      /* no comma */
		"X3;220127",
		"X0,",           /* empty expression */
		"X3,2201",       /* too short */
		"X3,22012",      /* odd digit count */
		"X3,2201zz",     /* bad digit */
		"X3,22 127",
		"Xffffffffffffffff,00",       /* absurd length */
		"X10000000000000003,220127",  /* length overflows 64 bits */
		"Xg,00",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		e.code = (uint8_t *)1;
		p = bad[i];
		int rc = agent_expr_parse(&p, bad[i] + strlen(bad[i]), &e);
		CHECK(rc == -1 && p == bad[i] && e.code == NULL,
		      "bad[%zu] '%s' accepted (rc %d)", i, bad[i], rc);
	}
	/* `end` is honoured even when the string goes on */
	const char *s = "X3,220127";
	p = s;
	CHECK(agent_expr_parse(&p, s + 7, &e) == -1, "end ignored");
	p = s;
	CHECK(agent_expr_parse(&p, s, &e) == -1, "empty range");
}

/* ---- oracle: bytecode gdb 13 sent to gdbserver 13 ----
 *
 * Captured with `set remotelogfile` from gdb driving gdbserver on
 * tests/programs/agent_cond.c (gcc -O0 -g3 -fno-omit-frame-pointer); the
 * cond_list parts of the Z0 packets follow verbatim. Locals are addressed
 * from the CFA, which gdb compiles as rbp (gdb register 6) + 16. To
 * recapture: `set remotelogfile F`, `target remote | gdbserver - PROG`, the
 * `break f if ...` / `break g if ...` commands below in order, `continue`;
 * gdb sends every condition at one address in one Z0, as ";X..X..". */

/* Z0 at f (x at rbp-4, y at rbp-8), conditions of breakpoints
 *   1: x == 3 && y > 1
 *   4: g_count * 2 != x - 1          (g_count at 0x555555558034)
 *   5: (g_mask >> 4) == 0xf && g_neg < 0
 *                                    (g_mask 0x555555558010, g_neg ...18)
 *   7: $rdi == 4                     (rdi is gdb register 5)
 *   8: x % 3 == -y + 2 || x / -2 < -1 */
static const char z0_f[] =
	"Z0,555555555133,1;"
	"X37,26000622100222ec16080219162022031320001721003426000622100222e8"
	"16080219162022012b1420002f2100342201210036220027"
	"X27,250000555555558034191620220204162026000622100222ec160802191620"
	"2201031620130e27"
	"X39,2500005555555580101922042a200b2a20220f2a201320001c210036250000"
	"5555555580181a16402200142000312100362201210038220027"
	"X9,260005164022041327"
	"X54,26000622100222ec1608021916202203071620220026000622100222e81608"
	"0219162003162022020216201320005126000622100222ec160802191620"
	"22fe160805162022ff1608142000512200210053220127";

/* Z0 at g (p at rbp-8, u at rbp-12, c at rbp-16), conditions of
 *   2: p->x == 7 || (u / 3) % 5 == 2
 *   3: c < -1
 *   6: p->big == 0x123456789abcLL && p->y < 0 && p->tag == -2 */
static const char z0_g[] =
	"Z0,55555555514d,1;"
	"X3f,26000622100222e81608021a19162022071320003c26000622100222e41608"
	"021922032a20062a2022052a20082a2022022a201320003c220021003e220127"
	"X14,26000622100222e016080217160822ff16081427"
	"X6f,26000622100222e81608021a2208021a1640250000123456789abc13200022"
	"21004226000622100222e81608021a22040218161022001420003d210042220121"
	"0044220020004a21006c26000622100222e81608021a22060217160822fe1608"
	"1320006721006c220121006e220027";

#define RBP (STACK_BASE + 0x80)
#define PT_ADDR (DATA_BASE + 0x40) /* where our fake struct point lives */

/* Split a Z0 packet's cond_list into its expressions. */
static int parse_conds(const char *pkt, struct agent_expr *out, int max)
{
	const char *p = strchr(pkt, ';');
	const char *end = pkt + strlen(pkt);
	int n = 0;
	if (!p)
		return -1;
	p++;
	while (p < end && *p == 'X') {
		if (n == max || agent_expr_parse(&p, end, &out[n]) != 0)
			return -1;
		n++;
	}
	return p == end ? n : -1;
}

static int64_t eval_or(const struct agent_expr *e, int64_t err)
{
	int64_t r;
	return agent_expr_eval(e, &actx, &r) == 0 ? r : err;
}

static void setup_f(int32_t x, int32_t y)
{
	memset(&fk, 0, sizeof fk);
	memset(fk.stack, 0xa5, sizeof fk.stack); /* garbage around locals */
	set_reg(&fk, 6, RBP);
	set_reg(&fk, 7, RBP - 0x10);
	poke(&fk, RBP - 4, (uint32_t)x, 4);
	poke(&fk, RBP - 8, (uint32_t)y, 4);
}

static void test_oracle_f(void)
{
	struct agent_expr c[8];
	int n = parse_conds(z0_f, c, 8);
	CHECK(n == 5, "z0_f has %d conditions", n);
	if (n != 5)
		return;
	CHECK(c[0].len == 0x37 && c[1].len == 0x27 && c[2].len == 0x39 &&
		      c[3].len == 9 && c[4].len == 0x54,
	      "lengths");

	/* 1: x == 3 && y > 1 */
	static const struct { int32_t x, y; int64_t want; } b1[] = {
		{3, 6, 1}, {3, 2, 1}, {3, 1, 0}, {2, 6, 0},
		{3, -5, 0}, /* y compared signed */
		{-3, 6, 0},
	};
	for (size_t i = 0; i < sizeof b1 / sizeof b1[0]; i++) {
		setup_f(b1[i].x, b1[i].y);
		int64_t r = eval_or(&c[0], 99);
		CHECK(r == b1[i].want, "bp1 x=%d y=%d: %" PRId64, b1[i].x,
		      b1[i].y, r);
	}

	/* 4: g_count * 2 != x - 1 */
	static const struct { int32_t g, x; int64_t want; } b4[] = {
		{2, 5, 0}, {2, 4, 1}, {-3, -5, 0}, {-3, 5, 1},
		{0x40000000, -0x7fffffff, 0}, /* 32-bit wrap on both sides */
	};
	for (size_t i = 0; i < sizeof b4 / sizeof b4[0]; i++) {
		setup_f(b4[i].x, 0);
		poke(&fk, DATA_BASE + 0x34, (uint32_t)b4[i].g, 4);
		int64_t r = eval_or(&c[1], 99);
		CHECK(r == b4[i].want, "bp4 g=%d x=%d: %" PRId64, b4[i].g,
		      b4[i].x, r);
	}

	/* 5: (g_mask >> 4) == 0xf && g_neg < 0 */
	static const struct { uint32_t mask; int64_t neg, want; } b5[] = {
		{0xf0, -5, 1}, {0xf0, 5, 0}, {0x1f0, -5, 0}, {0xff, -1, 1},
		{0xf0, INT64_MIN, 1}, {0xf0, 0, 0},
	};
	for (size_t i = 0; i < sizeof b5 / sizeof b5[0]; i++) {
		setup_f(0, 0);
		poke(&fk, DATA_BASE + 0x10, b5[i].mask, 4);
		poke(&fk, DATA_BASE + 0x14, 0xdeadbeef, 4); /* neighbour */
		poke(&fk, DATA_BASE + 0x18, (uint64_t)b5[i].neg, 8);
		int64_t r = eval_or(&c[2], 99);
		CHECK(r == b5[i].want, "bp5 mask=%#x neg=%" PRId64 ": %" PRId64,
		      b5[i].mask, b5[i].neg, r);
	}

	/* 7: $rdi == 4 (the full 64-bit register) */
	setup_f(0, 0);
	set_reg(&fk, 5, 4);
	CHECK(eval_or(&c[3], 99) == 1, "bp7 rdi=4");
	set_reg(&fk, 5, 0x100000004ull);
	CHECK(eval_or(&c[3], 99) == 0, "bp7 rdi=2^32+4");
	fk.reg_ok[5] = 0;
	CHECK(eval_or(&c[3], 99) == 99, "bp7 rdi unavailable is an error");

	/* 8: x % 3 == -y + 2 || x / -2 < -1 (C's truncating division) */
	static const struct { int32_t x, y; int64_t want; } b8[] = {
		{5, 0, 1},   /* 2 == 2 */
		{4, 0, 1},   /* 1 != 2, but 4 / -2 = -2 < -1 */
		{1, 0, 0},   /* 1 != 2, 1 / -2 = 0 */
		{-7, 3, 1},  /* -7 % 3 = -1 == -1 */
		{-7, 0, 0},  /* -1 != 2, -7 / -2 = 3 */
		{3, 1, 0},   /* 0 != 1, 3 / -2 = -1 */
	};
	for (size_t i = 0; i < sizeof b8 / sizeof b8[0]; i++) {
		setup_f(b8[i].x, b8[i].y);
		int64_t r = eval_or(&c[4], 99);
		CHECK(r == b8[i].want, "bp8 x=%d y=%d: %" PRId64, b8[i].x,
		      b8[i].y, r);
	}

	/* the condition reads memory: an unreadable frame is an error */
	setup_f(3, 6);
	set_reg(&fk, 6, 0x1000);
	CHECK(eval_or(&c[0], 99) == 99, "bp1 unreadable frame");

	for (int i = 0; i < n; i++)
		agent_expr_free(&c[i]);
}

static void setup_g(uint32_t u, int8_t c, int32_t px, int16_t py,
		    int8_t tag, int64_t big)
{
	memset(&fk, 0, sizeof fk);
	memset(fk.stack, 0x5a, sizeof fk.stack);
	set_reg(&fk, 6, RBP);
	poke(&fk, RBP - 8, PT_ADDR, 8);
	poke(&fk, RBP - 12, u, 4);
	poke(&fk, RBP - 16, (uint8_t)c, 1);
	poke(&fk, PT_ADDR + 0, (uint32_t)px, 4);
	poke(&fk, PT_ADDR + 4, (uint16_t)py, 2);
	poke(&fk, PT_ADDR + 6, (uint8_t)tag, 1);
	poke(&fk, PT_ADDR + 8, (uint64_t)big, 8);
}

static void test_oracle_g(void)
{
	struct agent_expr c[4];
	int n = parse_conds(z0_g, c, 4);
	CHECK(n == 3, "z0_g has %d conditions", n);
	if (n != 3)
		return;

	/* 2: p->x == 7 || (u / 3) % 5 == 2, u unsigned */
	static const struct { int32_t px; uint32_t u; int64_t want; } b2[] = {
		{7, 0, 1}, {6, 17, 0}, {6, 21, 1}, {6, 0xffffffff, 0},
		/* unsigned: 4294967288/3 = 1431655762, % 5 = 2; signed
		 * arithmetic would give -2 */
		{6, 0xfffffff8, 1},
	};
	for (size_t i = 0; i < sizeof b2 / sizeof b2[0]; i++) {
		setup_g(b2[i].u, 0, b2[i].px, 0, 0, 0);
		int64_t r = eval_or(&c[0], 99);
		CHECK(r == b2[i].want, "bp2 p->x=%d u=%#x: %" PRId64,
		      b2[i].px, b2[i].u, r);
	}

	/* 3: c < -1, a signed char (ref8 then ext 8) */
	static const struct { int8_t c; int64_t want; } b3[] = {
		{-4, 1}, {-1, 0}, {-2, 1}, {0, 0}, {127, 0}, {-128, 1},
	};
	for (size_t i = 0; i < sizeof b3 / sizeof b3[0]; i++) {
		setup_g(0, b3[i].c, 0, 0, 0, 0);
		int64_t r = eval_or(&c[1], 99);
		CHECK(r == b3[i].want, "bp3 c=%d: %" PRId64, b3[i].c, r);
	}

	/* 6: p->big == 0x123456789abc && p->y < 0 && p->tag == -2 */
	static const struct {
		int16_t y;
		int8_t tag;
		int64_t big, want;
	} b6[] = {
		{-3, -2, 0x123456789abcll, 1},
		{-3, -3, 0x123456789abcll, 0},
		{3, -2, 0x123456789abcll, 0},
		{-32768, -2, 0x123456789abcll, 1},
		{-3, -2, 0x123456789abdll, 0},
		{-3, -2, 0x10123456789abcll, 0},
	};
	for (size_t i = 0; i < sizeof b6 / sizeof b6[0]; i++) {
		setup_g(0, 0, 7, b6[i].y, b6[i].tag, b6[i].big);
		int64_t r = eval_or(&c[2], 99);
		CHECK(r == b6[i].want, "bp6 y=%d tag=%d big=%#" PRIx64
		      ": %" PRId64, b6[i].y, b6[i].tag, (uint64_t)b6[i].big, r);
	}

	/* a dangling p is an error, not a guess */
	setup_g(0, 0, 7, -3, -2, 0x123456789abcll);
	poke(&fk, RBP - 8, 0x10, 8);
	CHECK(eval_or(&c[0], 99) == 99, "bp2 p dangling");

	for (int i = 0; i < n; i++)
		agent_expr_free(&c[i]);
}

int main(void)
{
	test_constants();
	test_arithmetic();
	test_shifts();
	test_logic_compare();
	test_extension();
	test_memory();
	test_short_read();
	test_registers();
	test_stack_ops();
	test_control_flow();
	test_truncated_immediates();
	test_trace_ops();
	test_bad_opcodes();
	test_null_args();
	test_parse();
	test_oracle_f();
	test_oracle_g();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("agent_expr: all checks passed\n");
	return 0;
}
