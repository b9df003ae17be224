/* The breakpoints and watchpoints gdb has set (Z/z), and the conditions gdb
 * asked us to evaluate for them (ConditionalBreakpoints).
 *
 * gdb merges its own breakpoint locations, so a Z for a point that is
 * already set only replaces its condition list (gdb re-sends Z when a
 * condition changes) and one z removes it, as with gdbserver. */
#include <stdlib.h>
#include <string.h>

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

static struct gdb_point *find_point(struct gdb_server *s, int type, uint64_t addr, uint64_t kind)
{
	for (size_t i = 0; i < s->npoints; i++) {
		struct gdb_point *p = &s->points[i];
		if (p->type == type && p->addr == addr && p->kind == kind)
			return p;
	}
	return NULL;
}

bool gdb_point_is_exec(const struct gdb_server *s, size_t i)
{
	return s->points[i].type == 0 || s->points[i].type == 1;
}

uint64_t gdb_point_addr(const struct gdb_server *s, size_t i)
{
	return s->points[i].addr;
}

int gdb_point_type(const struct gdb_server *s, size_t i)
{
	return s->points[i].type;
}

size_t gdb_point_len(const struct gdb_server *s, size_t i)
{
	return s->points[i].type >= 2 ? (size_t)s->points[i].kind : 1;
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

static int insert_point(struct gdb_server *s, int type, uint64_t addr, uint64_t kind)
{
	if (type == 0)
		return inferior_insert_swbreak(&s->inf, addr);
	/* For Z1 the kind is the breakpoint length (1 on x86); for watchpoints
	 * it is the watched length. */
	int len = type == 1 ? 1 : (int)(kind > 64 ? 65 : kind);
	return inferior_insert_hwpoint(&s->inf, type, addr, len);
}

static int remove_point(struct gdb_server *s, int type, uint64_t addr, uint64_t kind)
{
	if (type == 0)
		return inferior_remove_swbreak(&s->inf, addr);
	int len = type == 1 ? 1 : (int)(kind > 64 ? 65 : kind);
	return inferior_remove_hwpoint(&s->inf, type, addr, len);
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
	if (type == 3)
		return false; /* x86 has no read-only watchpoints, as gdbserver */
	/* Replaying a saved recording: nothing to insert into; execution
	 * breakpoints are only addresses to stop at. */
	bool replay_only = !s->have_inferior && s->hist;
	/* Watchpoints in a saved recording are searched in the history by
	 * re-execution (gdb_reverse.c); breakpoints are only addresses. */
	if (!replay_only && (!s->have_inferior || s->inf.exited)) {
		strbuf_puts(&s->reply, "E01");
		return true;
	}
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
			int r = replay_only ? 0 : insert_point(s, (int)type, addr, kind);
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
	if (!pt || (!replay_only && remove_point(s, (int)type, addr, kind) != 0)) {
		strbuf_puts(&s->reply, "E01");
		return true;
	}
	free_conds(pt);
	*pt = s->points[--s->npoints];
	strbuf_puts(&s->reply, "OK");
	return true;
}

/* ---- evaluating conditions at a stop ---- */

struct eval_ctx {
	struct gdb_server *s;
	const struct amd64_regfile *rf;
	long (*read_mem)(struct gdb_server *s, uint64_t addr, void *buf, size_t len);
};

static int read_reg_cb(void *ctx, int regnum, uint64_t *val)
{
	struct eval_ctx *e = ctx;
	uint8_t raw[64];
	int n = amd64_reg_read(e->s->layout, e->rf, regnum, raw);
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
	return e->read_mem(e->s, addr, buf, len);
}

static long live_mem(struct gdb_server *s, uint64_t addr, void *buf, size_t len)
{
	return (long)inferior_read_mem(&s->inf, addr, buf, len);
}

static struct gdb_point *conditional_point(struct gdb_server *s, uint64_t addr)
{
	for (size_t i = 0; i < s->npoints; i++)
		if ((s->points[i].type == 0 || s->points[i].type == 1) && s->points[i].addr == addr &&
		    s->points[i].nconds > 0)
			return &s->points[i];
	return NULL;
}

bool gdb_breakpoint_has_condition(struct gdb_server *s, uint64_t addr)
{
	return conditional_point(s, addr) != NULL;
}

bool gdb_conditions_hold(struct gdb_server *s, uint64_t addr, const struct amd64_regfile *rf,
			 long (*read_mem)(struct gdb_server *, uint64_t, void *, size_t))
{
	struct gdb_point *pt = conditional_point(s, addr);
	if (!pt)
		return true;
	struct eval_ctx ec = {s, rf, read_mem};
	struct agent_ctx ac = {&ec, read_reg_cb, read_mem_cb};
	bool met = false;
	for (size_t i = 0; i < pt->nconds && !met; i++) {
		int64_t v;
		met = agent_expr_eval(&pt->conds[i], &ac, &v) != 0 || v != 0;
	}
	return met;
}

bool gdb_breakpoint_condition_met(struct gdb_server *s, pid_t tid, uint64_t addr)
{
	if (!conditional_point(s, addr))
		return true;
	struct amd64_regfile *rf = malloc(sizeof *rf);
	if (!rf || !gdb_read_regfile(s, tid, rf)) {
		free(rf);
		return true; /* cannot evaluate: stop, as gdbserver does on errors */
	}
	bool met = gdb_conditions_hold(s, addr, rf, live_mem);
	free(rf);
	return met;
}
