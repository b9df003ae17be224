/* The breakpoints and watchpoints gdb has set (Z/z), and the conditions gdb
 * asked us to evaluate for them (ConditionalBreakpoints).
 *
 * gdb merges its own breakpoint locations, so a Z for a point that is
 * already set only replaces its condition list (gdb re-sends Z when a
 * condition changes) and one z removes it, as with gdbserver. */
#include <stdlib.h>
#include <string.h>

#include "ptrev/agent_expr.h"
#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

struct gdb_point {
	int type;                 /* Z type 0..4 */
	uint64_t addr;
	uint64_t kind;
	struct agent_expr *conds; /* stop if any is true (or fails) */
	size_t nconds;
};

static void free_conds(struct gdb_point *p)
{
	for (size_t i = 0; i < p->nconds; i++)
		agent_expr_free(&p->conds[i]);
	free(p->conds);
	p->conds = NULL;
	p->nconds = 0;
}

int gdb_points_copy(const struct gdb_server *s, struct gdb_point **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < s->npoints; i++) {
		struct gdb_point *grown = realloc(*out, (*nout + 1) * sizeof *grown);
		if (!grown)
			return -1;
		*out = grown;
		(*out)[(*nout)++] = (struct gdb_point){.type = s->points[i].type, .addr = s->points[i].addr,
						       .kind = s->points[i].kind};
	}
	return 0;
}

static struct gdb_point *find_point(struct gdb_server *s, int type, uint64_t addr, uint64_t kind)
{
	for (size_t i = 0; i < s->npoints; i++) {
		struct gdb_point *p = &s->points[i];
		if (p->type == type && p->addr == addr && p->kind == kind)
			return p;
	}
	return NULL;
}

void gdb_points_clear(struct gdb_server *s)
{
	for (size_t i = 0; i < s->npoints; i++)
		free_conds(&s->points[i]);
	free(s->points);
	s->points = NULL;
	s->npoints = 0;
}

/* Parse ";X..X.." condition lists after the Z fields. Returns false when
 * malformed. A trailing ";cmds:..." (target-side commands) is not offered
 * by us and so not expected. */
static bool parse_conds(const char *p, const char *end, struct agent_expr **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (p == end)
		return true;
	if (*p++ != ';')
		return false;
	while (p < end && *p == 'X') {
		struct agent_expr e;
		if (agent_expr_parse(&p, end, &e) != 0)
			goto bad;
		struct agent_expr *grown = realloc(*out, (*n + 1) * sizeof **out);
		if (!grown) {
			agent_expr_free(&e);
			goto bad;
		}
		*out = grown;
		(*out)[(*n)++] = e;
	}
	if (p == end)
		return true;
bad:
	for (size_t i = 0; i < *n; i++)
		agent_expr_free(&(*out)[i]);
	free(*out);
	*out = NULL;
	*n = 0;
	return false;
}

/* What the target is asked to insert: for Z1 the kind is the breakpoint
 * length (1 on x86); for watchpoints it is the watched length. */
static int point_len(int type, uint64_t kind)
{
	return type == 0 || type == 1 ? 1 : (int)(kind > 64 ? 65 : kind);
}

bool gdb_break_packet(struct gdb_server *s, char *pkt, size_t len)
{
	const char *p = pkt + 1, *end = pkt + len;
	uint64_t type, addr, kind;
	bool insert = pkt[0] == 'Z';
	if (!hex_parse_u64(&p, end, &type) || p >= end || *p++ != ',' ||
	    !hex_parse_u64(&p, end, &addr) || p >= end || *p++ != ',' ||
	    !hex_parse_u64(&p, end, &kind) || (p != end && *p != ';')) {
		strbuf_puts(&s->reply, "E01");
		return true;
	}
	if (type > 4)
		return false; /* unknown type: empty reply */
	if (s->g_tid && s->g_tid == target_fork_child(s->target)) {
		/* A fork child's breakpoints: ptrev took them out of its memory
		 * when it held it (gdb removes them before detaching it). */
		strbuf_puts(&s->reply, "OK");
		return true;
	}
	if (type == 3)
		return false; /* x86 has no read-only watchpoints, as gdbserver */
	struct agent_expr *conds;
	size_t nconds;
	if (!insert || !parse_conds(p, end, &conds, &nconds)) {
		conds = NULL;
		nconds = 0;
		if (insert) {
			strbuf_puts(&s->reply, "E01");
			return true;
		}
	}
	struct gdb_point *pt = find_point(s, (int)type, addr, kind);
	if (insert) {
		if (!pt) {
			int r = target_insert_point(s->target, (int)type, addr, point_len((int)type, kind));
			if (r != 0) {
				for (size_t i = 0; i < nconds; i++)
					agent_expr_free(&conds[i]);
				free(conds);
				if (r == -2)
					return false;
				strbuf_puts(&s->reply, "E01");
				return true;
			}
			struct gdb_point *grown = realloc(s->points, (s->npoints + 1) * sizeof *grown);
			if (!grown)
				abort();
			s->points = grown;
			pt = &s->points[s->npoints++];
			memset(pt, 0, sizeof *pt);
			pt->type = (int)type;
			pt->addr = addr;
			pt->kind = kind;
		}
		free_conds(pt);
		pt->conds = conds;
		pt->nconds = nconds;
		strbuf_puts(&s->reply, "OK");
		return true;
	}
	if (!pt || target_remove_point(s->target, (int)type, addr, point_len((int)type, kind)) != 0) {
		strbuf_puts(&s->reply, "E01");
		return true;
	}
	free_conds(pt);
	*pt = s->points[--s->npoints];
	strbuf_puts(&s->reply, "OK");
	return true;
}

/* ---- evaluating conditions at a stop ---- */

/* The state read while a condition is evaluated: the thread's registers
 * and memory where the target stands (live, or a past position). */
struct eval_ctx {
	struct gdb_server *s;
	pid_t tid;
	const struct amd64_regfile *rf;
};

static int read_reg_cb(void *ctx, int regnum, uint64_t *val)
{
	struct eval_ctx *e = ctx;
	uint8_t raw[64];
	int n = amd64_reg_read(gdb_layout(e->s), e->rf, regnum, raw);
	if (n < 0)
		return -1;
	uint64_t v = 0;
	for (int i = 0; i < n && i < 8; i++)
		v |= (uint64_t)raw[i] << (8 * i);
	*val = v;
	return 0;
}

static long read_mem_cb(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct eval_ctx *e = ctx;
	return (long)target_read_memory(e->s->target, e->tid, addr, buf, len);
}

static struct gdb_point *conditional_point(struct gdb_server *s, uint64_t addr)
{
	for (size_t i = 0; i < s->npoints; i++)
		if ((s->points[i].type == 0 || s->points[i].type == 1) && s->points[i].addr == addr &&
		    s->points[i].nconds > 0)
			return &s->points[i];
	return NULL;
}

/* Does the hit of thread tid at the breakpoint at pc stop? True when gdb
 * gave no condition, when one holds, and when one cannot be evaluated
 * (gdbserver stops on an error too); the state evaluated is what the
 * target shows there. */
static bool condition_holds(void *ctx, pid_t tid, uint64_t pc)
{
	struct gdb_server *s = ctx;
	struct gdb_point *pt = conditional_point(s, pc);
	if (!pt)
		return true;
	struct amd64_regfile *rf = malloc(sizeof *rf);
	if (!rf || target_fetch_registers(s->target, tid, rf) != TARGET_REGS_FULL) {
		free(rf);
		return true;
	}
	struct eval_ctx ec = {s, tid, rf};
	struct agent_ctx ac = {&ec, read_reg_cb, read_mem_cb};
	bool met = false;
	for (size_t i = 0; i < pt->nconds && !met; i++) {
		int64_t v;
		met = agent_expr_eval(&pt->conds[i], &ac, &v) != 0 || v != 0;
	}
	free(rf);
	return met;
}

void gdb_points_stop_set(struct gdb_server *s, struct stop_set *set, struct stop_point **storage)
{
	*storage = malloc((s->npoints ? s->npoints : 1) * sizeof **storage);
	for (size_t i = 0; *storage && i < s->npoints; i++) {
		const struct gdb_point *p = &s->points[i];
		(*storage)[i] = (struct stop_point){
			.type = p->type,
			.addr = p->addr,
			.len = p->type >= 2 ? (size_t)p->kind : 1,
		};
	}
	set->v = *storage;
	set->n = *storage ? s->npoints : 0;
	set->holds = condition_holds;
	set->ctx = s;
}
