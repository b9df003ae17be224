/* GDB agent expressions: the bytecode gdb compiles a breakpoint condition to
 * and sends with a Z packet (";X<len>,<hex>" entries of its cond_list) when
 * the server advertises ConditionalBreakpoints+. The evaluator is pure: it
 * reaches the target only through the two callbacks of struct agent_ctx. */
#ifndef PTREV_AGENT_EXPR_H
#define PTREV_AGENT_EXPR_H

#include <stddef.h>
#include <stdint.h>

struct agent_expr {
	uint8_t *code;
	size_t len;
};

/* Parse one condition "X<hexlen>,<hex bytes>" at *p (as in a Z packet's
 * ";X..." list), advancing *p. Returns 0, or -1 for malformed input. */
int agent_expr_parse(const char **p, const char *end, struct agent_expr *out);
void agent_expr_free(struct agent_expr *e);

struct agent_ctx {
	void *ctx;
	/* raw value of gdb register regnum (target description numbering),
	 * little-endian, zero-extended to 64 bits; -1 if unavailable */
	int (*read_reg)(void *ctx, int regnum, uint64_t *val);
	/* read len bytes of target memory; returns bytes read or -1 */
	long (*read_mem)(void *ctx, uint64_t addr, void *buf, size_t len);
};

/* Limits that keep a hostile or buggy expression bounded. */
#define AGENT_EXPR_MAX_STACK 1024
#define AGENT_EXPR_MAX_STEPS 1000000

/* Run the bytecode; on `end` *result is the top of the stack. Returns 0, or
 * -1 on any error (bad opcode, stack under/overflow, division by zero, memory
 * read failure, jump out of range, step limit exceeded) — the server then
 * treats the condition as true, as gdbserver stops on an error. */
int agent_expr_eval(const struct agent_expr *e, const struct agent_ctx *c,
		    int64_t *result);

#endif
