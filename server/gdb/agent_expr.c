/* Evaluator for GDB agent expressions used as breakpoint conditions.
 *
 * The bytecode is a stack machine (GDB manual, appendix "Agent
 * Expressions"): one opcode byte, then big-endian immediates; jump targets
 * are absolute offsets from the start of the expression. Every value is held
 * as a uint64_t so that wrapping arithmetic is well defined in C; signedness
 * only matters for the few operations that say so. The evaluator trusts
 * nothing in the bytecode: every pop, immediate and jump is bounds-checked
 * and a step limit stops loops, because a malicious or buggy client must not
 * crash or hang the server. Tracepoint-only operations that merely collect
 * data are no-ops here (they still consume their operands); floating point,
 * trace state variables and printf are errors, which the server treats as
 * "condition true", as gdbserver does when evaluation fails. */
#include "ptrev/agent_expr.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/hex.h"

/* Opcode values, fixed by gdb's agent expression definition. */
enum agent_op {
	AX_FLOAT = 0x01,
	AX_ADD = 0x02,
	AX_SUB = 0x03,
	AX_MUL = 0x04,
	AX_DIV_SIGNED = 0x05,
	AX_DIV_UNSIGNED = 0x06,
	AX_REM_SIGNED = 0x07,
	AX_REM_UNSIGNED = 0x08,
	AX_LSH = 0x09,
	AX_RSH_SIGNED = 0x0a,
	AX_RSH_UNSIGNED = 0x0b,
	AX_TRACE = 0x0c,
	AX_TRACE_QUICK = 0x0d,
	AX_LOG_NOT = 0x0e,
	AX_BIT_AND = 0x0f,
	AX_BIT_OR = 0x10,
	AX_BIT_XOR = 0x11,
	AX_BIT_NOT = 0x12,
	AX_EQUAL = 0x13,
	AX_LESS_SIGNED = 0x14,
	AX_LESS_UNSIGNED = 0x15,
	AX_EXT = 0x16,
	AX_REF8 = 0x17,
	AX_REF16 = 0x18,
	AX_REF32 = 0x19,
	AX_REF64 = 0x1a,
	AX_REF_FLOAT = 0x1b,
	AX_REF_DOUBLE = 0x1c,
	AX_REF_LONG_DOUBLE = 0x1d,
	AX_L_TO_D = 0x1e,
	AX_D_TO_L = 0x1f,
	AX_IF_GOTO = 0x20,
	AX_GOTO = 0x21,
	AX_CONST8 = 0x22,
	AX_CONST16 = 0x23,
	AX_CONST32 = 0x24,
	AX_CONST64 = 0x25,
	AX_REG = 0x26,
	AX_END = 0x27,
	AX_DUP = 0x28,
	AX_POP = 0x29,
	AX_ZERO_EXT = 0x2a,
	AX_SWAP = 0x2b,
	AX_GETV = 0x2c,
	AX_SETV = 0x2d,
	AX_TRACEV = 0x2e,
	AX_TRACENZ = 0x2f,
	AX_TRACE16 = 0x30,
	/* 0x31 is a placeholder in gdb's table, never a valid opcode. */
	AX_PICK = 0x32,
	AX_ROT = 0x33,
	AX_PRINTF = 0x34,
};

int agent_expr_parse(const char **p, const char *end, struct agent_expr *out)
{
	const char *s = *p;
	uint64_t len;

	out->code = NULL;
	out->len = 0;
	if (s >= end || *s != 'X')
		return -1;
	s++;
	if (!hex_parse_u64(&s, end, &len) || len == 0)
		return -1;
	if (s >= end || *s != ',')
		return -1;
	s++;
	/* Compare against what is there before multiplying, so a huge length
	 * can neither overflow nor drive a large allocation. */
	if (len > (uint64_t)(end - s) / 2)
		return -1;
	uint8_t *code = malloc(len);
	if (!code)
		return -1;
	if (!hex_decode(s, len, code)) {
		free(code);
		return -1;
	}
	out->code = code;
	out->len = len;
	*p = s + 2 * len;
	return 0;
}

void agent_expr_free(struct agent_expr *e)
{
	free(e->code);
	e->code = NULL;
	e->len = 0;
}

struct machine {
	const uint8_t *code;
	size_t len;
	size_t pc;
	size_t sp; /* number of values on the stack */
	uint64_t stack[AGENT_EXPR_MAX_STACK];
};

static bool push(struct machine *m, uint64_t v)
{
	if (m->sp >= AGENT_EXPR_MAX_STACK)
		return false;
	m->stack[m->sp++] = v;
	return true;
}

static bool pop(struct machine *m, uint64_t *v)
{
	if (m->sp == 0)
		return false;
	*v = m->stack[--m->sp];
	return true;
}

/* Read an n-byte big-endian immediate operand at pc, advancing past it. */
static bool imm(struct machine *m, unsigned n, uint64_t *v)
{
	if (m->len - m->pc < n)
		return false;
	uint64_t x = 0;
	for (unsigned i = 0; i < n; i++)
		x = x << 8 | m->code[m->pc + i];
	m->pc += n;
	*v = x;
	return true;
}

/* Two's-complement reinterpretations, written so that no conversion is
 * implementation-defined and no arithmetic can overflow. */
static bool is_neg(uint64_t v)
{
	return v >> 63;
}

static uint64_t neg(uint64_t v)
{
	return ~v + 1;
}

static uint64_t magnitude(uint64_t v)
{
	return is_neg(v) ? neg(v) : v;
}

static int64_t to_signed(uint64_t v)
{
	if (!is_neg(v))
		return (int64_t)v;
	/* -(2^64 - v), computed without overflowing int64_t */
	return -(int64_t)(neg(v) - 1) - 1;
}

/* Signed division truncates toward zero as in C; INT64_MIN / -1 wraps to
 * INT64_MIN (and its remainder is 0) instead of trapping. The remainder
 * takes the sign of the dividend. */
static uint64_t div_signed(uint64_t a, uint64_t b)
{
	uint64_t q = magnitude(a) / magnitude(b);
	return is_neg(a) != is_neg(b) ? neg(q) : q;
}

static uint64_t rem_signed(uint64_t a, uint64_t b)
{
	uint64_t r = magnitude(a) % magnitude(b);
	return is_neg(a) ? neg(r) : r;
}

/* Shift counts of 64 or more (including "negative" ones) give the
 * mathematical result of shifting all bits out, where C would be undefined. */
static uint64_t lsh(uint64_t a, uint64_t n)
{
	return n >= 64 ? 0 : a << n;
}

static uint64_t rsh_unsigned(uint64_t a, uint64_t n)
{
	return n >= 64 ? 0 : a >> n;
}

static uint64_t rsh_signed(uint64_t a, uint64_t n)
{
	uint64_t fill = is_neg(a) ? ~(uint64_t)0 : 0;
	if (n >= 64)
		return fill;
	if (n == 0)
		return a;
	return a >> n | fill << (64 - n);
}

static bool less_signed(uint64_t a, uint64_t b)
{
	/* Flipping the sign bit maps signed order onto unsigned order. */
	uint64_t bias = (uint64_t)1 << 63;
	return (a ^ bias) < (b ^ bias);
}

/* Keep the low n bits; ext also copies bit n-1 into the bits above. */
static uint64_t zero_ext(uint64_t v, unsigned n)
{
	return n >= 64 ? v : v & (((uint64_t)1 << n) - 1);
}

static uint64_t sign_ext(uint64_t v, unsigned n)
{
	if (n >= 64)
		return v;
	uint64_t sign = (uint64_t)1 << (n - 1);
	v = zero_ext(v, n);
	return (v ^ sign) - sign;
}

/* Fetch n bytes at addr, little-endian as amd64 stores them. A short read
 * is a failure: a partial value would be a wrong value. */
static bool ref(const struct agent_ctx *c, uint64_t addr, unsigned n,
		uint64_t *v)
{
	uint8_t buf[8];
	if (!c->read_mem || c->read_mem(c->ctx, addr, buf, n) != (long)n)
		return false;
	uint64_t x = 0;
	for (unsigned i = n; i-- > 0;)
		x = x << 8 | buf[i];
	*v = x;
	return true;
}

static bool jump(struct machine *m, uint64_t target)
{
	if (target >= m->len)
		return false;
	m->pc = target;
	return true;
}

/* Apply a two-operand arithmetic/logic opcode: a b => a OP b. */
static bool binary(struct machine *m, uint8_t op)
{
	uint64_t a, b, r;
	if (!pop(m, &b) || !pop(m, &a))
		return false;
	switch (op) {
	case AX_ADD: r = a + b; break;
	case AX_SUB: r = a - b; break;
	case AX_MUL: r = a * b; break;
	case AX_DIV_SIGNED:
		if (b == 0)
			return false;
		r = div_signed(a, b);
		break;
	case AX_DIV_UNSIGNED:
		if (b == 0)
			return false;
		r = a / b;
		break;
	case AX_REM_SIGNED:
		if (b == 0)
			return false;
		r = rem_signed(a, b);
		break;
	case AX_REM_UNSIGNED:
		if (b == 0)
			return false;
		r = a % b;
		break;
	case AX_LSH: r = lsh(a, b); break;
	case AX_RSH_SIGNED: r = rsh_signed(a, b); break;
	case AX_RSH_UNSIGNED: r = rsh_unsigned(a, b); break;
	case AX_BIT_AND: r = a & b; break;
	case AX_BIT_OR: r = a | b; break;
	case AX_BIT_XOR: r = a ^ b; break;
	case AX_EQUAL: r = a == b; break;
	case AX_LESS_SIGNED: r = less_signed(a, b); break;
	case AX_LESS_UNSIGNED: r = a < b; break;
	default: return false;
	}
	return push(m, r);
}

/* Execute one instruction at m->pc. Returns 1 to continue, 0 when `end`
 * was reached, -1 on error. */
static int step(struct machine *m, const struct agent_ctx *c)
{
	uint8_t op = m->code[m->pc++];
	uint64_t a, b, x, n;

	switch (op) {
	case AX_ADD: case AX_SUB: case AX_MUL:
	case AX_DIV_SIGNED: case AX_DIV_UNSIGNED:
	case AX_REM_SIGNED: case AX_REM_UNSIGNED:
	case AX_LSH: case AX_RSH_SIGNED: case AX_RSH_UNSIGNED:
	case AX_BIT_AND: case AX_BIT_OR: case AX_BIT_XOR:
	case AX_EQUAL: case AX_LESS_SIGNED: case AX_LESS_UNSIGNED:
		return binary(m, op) ? 1 : -1;

	case AX_LOG_NOT:
		if (!pop(m, &a))
			return -1;
		return push(m, a == 0) ? 1 : -1;
	case AX_BIT_NOT:
		if (!pop(m, &a))
			return -1;
		return push(m, ~a) ? 1 : -1;

	case AX_EXT:
	case AX_ZERO_EXT:
		if (!imm(m, 1, &n) || !pop(m, &a))
			return -1;
		if (op == AX_EXT) {
			if (n == 0) /* no sign bit to extend */
				return -1;
			a = sign_ext(a, (unsigned)n);
		} else {
			a = zero_ext(a, (unsigned)n);
		}
		return push(m, a) ? 1 : -1;

	case AX_REF8: case AX_REF16: case AX_REF32: case AX_REF64: {
		unsigned size = 1u << (op - AX_REF8);
		if (!pop(m, &a) || !ref(c, a, size, &x))
			return -1;
		return push(m, x) ? 1 : -1;
	}

	case AX_CONST8: case AX_CONST16: case AX_CONST32: case AX_CONST64:
		/* pushed without sign extension; gdb emits `ext` after a
		 * negative constant */
		if (!imm(m, 1u << (op - AX_CONST8), &x))
			return -1;
		return push(m, x) ? 1 : -1;

	case AX_REG:
		if (!imm(m, 2, &n) || !c->read_reg ||
		    c->read_reg(c->ctx, (int)n, &x) < 0)
			return -1;
		return push(m, x) ? 1 : -1;

	case AX_IF_GOTO:
		if (!imm(m, 2, &n) || !pop(m, &a))
			return -1;
		if (a != 0 && !jump(m, n))
			return -1;
		return 1;
	case AX_GOTO:
		if (!imm(m, 2, &n) || !jump(m, n))
			return -1;
		return 1;

	case AX_END:
		return 0;

	case AX_DUP:
		if (!pop(m, &a) || !push(m, a) || !push(m, a))
			return -1;
		return 1;
	case AX_POP:
		return pop(m, &a) ? 1 : -1;
	case AX_SWAP:
		if (!pop(m, &b) || !pop(m, &a) || !push(m, b) || !push(m, a))
			return -1;
		return 1;
	case AX_ROT: {
		/* a b c => c a b: the top goes third, the rest move up */
		uint64_t top;
		if (!pop(m, &top) || !pop(m, &b) || !pop(m, &a))
			return -1;
		push(m, top);
		push(m, a);
		push(m, b);
		return 1;
	}
	case AX_PICK:
		/* pick 0 is dup; pick n copies the item n below the top */
		if (!imm(m, 1, &n) || n >= m->sp)
			return -1;
		return push(m, m->stack[m->sp - 1 - n]) ? 1 : -1;

	/* Tracepoint data collection: nothing to collect for a condition,
	 * but the stack effect is kept so the rest of the expression sees
	 * what gdb meant it to see. */
	case AX_TRACE:
	case AX_TRACENZ: /* addr size => */
		if (!pop(m, &b) || !pop(m, &a))
			return -1;
		return 1;
	case AX_TRACE_QUICK: /* addr => addr */
		if (!imm(m, 1, &n) || m->sp == 0)
			return -1;
		return 1;
	case AX_TRACE16: /* addr => addr */
		if (!imm(m, 2, &n) || m->sp == 0)
			return -1;
		return 1;
	case AX_TRACEV: /* => */
		return imm(m, 2, &n) ? 1 : -1;

	/* Trace state variables exist only with tracepoint support, which
	 * this server does not offer; floating point and printf are not
	 * supported either. Anything else is not an opcode. */
	case AX_GETV: case AX_SETV:
	case AX_FLOAT:
	case AX_REF_FLOAT: case AX_REF_DOUBLE: case AX_REF_LONG_DOUBLE:
	case AX_L_TO_D: case AX_D_TO_L:
	case AX_PRINTF:
	default:
		return -1;
	}
}

int agent_expr_eval(const struct agent_expr *e, const struct agent_ctx *c,
		    int64_t *result)
{
	if (!e || !e->code || !c)
		return -1;
	/* 8 KiB of stack: small enough for the C stack of any thread here. */
	struct machine m;
	m.code = e->code;
	m.len = e->len;
	m.pc = 0;
	m.sp = 0;

	for (long steps = 0; steps < AGENT_EXPR_MAX_STEPS; steps++) {
		if (m.pc >= m.len) /* ran off the end without `end` */
			return -1;
		int r = step(&m, c);
		if (r < 0)
			return -1;
		if (r == 0) {
			/* An expression that leaves nothing to test is
			 * malformed; gdb never produces one. */
			if (m.sp == 0)
				return -1;
			*result = to_signed(m.stack[m.sp - 1]);
			return 0;
		}
	}
	return -1;
}
