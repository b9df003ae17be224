/* The records of gdb's changes to a program being recorded
 * (target_internal.h, "gdb_change.c"), shared by the sw and event
 * recording targets. */
#include "target_internal.h"

#include <stdlib.h>
#include <string.h>

void gdb_change_memory(pid_t tid, uint64_t addr, const void *buf, size_t len,
		       struct trace_gdb_write *g)
{
	memset(g, 0, sizeof *g);
	g->tid = tid;
	g->addr = addr;
	g->bytes = buf;
	g->len = len;
}

bool gdb_change_registers(pid_t tid, const struct amd64_regfile *rf, struct trace_gdb_write *g)
{
	size_t xlen = rf->xsave_len <= TRACE_GDB_REGS_MAX - sizeof rf->gpr ? rf->xsave_len : 0;
	uint8_t *b = malloc(sizeof rf->gpr + xlen);
	memset(g, 0, sizeof *g);
	if (!b)
		return false;
	memcpy(b, &rf->gpr, sizeof rf->gpr);
	memcpy(b + sizeof rf->gpr, rf->xsave, xlen);
	g->tid = tid;
	g->regs = true;
	g->bytes = b;
	g->len = sizeof rf->gpr + xlen;
	return true;
}

void gdb_change_free(struct trace_gdb_write *g)
{
	if (g->regs)
		free((void *)g->bytes);
	g->bytes = NULL;
}

bool gdb_change_possible(struct target *live, pid_t tid, uint64_t addr, size_t len)
{
	if (!len || len > TRACE_GDB_MEM_MAX)
		return false; /* gdb's probe for binary writes (X addr,0:) changes nothing */
	uint8_t *b = malloc(len);
	bool ok = b && target_read_memory(live, tid, addr, b, len) == (ssize_t)len;
	free(b);
	return ok;
}

bool gdb_change_same_registers(struct target *live, pid_t tid, const struct amd64_regfile *rf)
{
	struct amd64_regfile *now = malloc(sizeof *now);
	bool same = now && target_fetch_registers(live, tid, now) == TARGET_REGS_FULL;
	if (same) {
		struct user_regs_struct a = now->gpr, b = rf->gpr;
		a.orig_rax = b.orig_rax;
		same = memcmp(&a, &b, sizeof a) == 0 && now->xsave_len == rf->xsave_len &&
		       memcmp(now->xsave, rf->xsave, rf->xsave_len) == 0;
	}
	free(now);
	return same;
}
