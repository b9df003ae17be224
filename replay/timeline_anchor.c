/* Where a multi-threaded replay held at a position gets to natively
 * (event_hold.h's anchor), chosen from the history of the thread that
 * holds the position: an instruction of the stretch the position is in,
 * as late as is worth it, whose passes since the stretch's start the
 * history counts. The stretch is the part of the thread's run before the
 * position with no event in it: the history marks syscalls, signals and
 * the thread's gaps; rdtsc instructions are events too (their positions
 * are recorded). The cost weighed: a pass counted natively is two ptrace
 * stops and two code writes (event_anchor.c), some thirty instructions'
 * worth of the stepper's time; the rest is stepped. */
#include "timeline_internal.h"

#include <stdlib.h>
#include <string.h>

#include "event_hold.h"
#include "ptrev/history_schedule.h"
#include "ptrev/insn_class.h"

/* Stepping fewer instructions than this from the run's start costs less
 * than the history's scan (PTREV_HOLD_ANCHOR_MIN=N: N, 0 for the tests
 * that make every position take one; PTREV_HOLD_ANCHOR=0: none). */
#define ANCHOR_MIN 20000
/* One pass counted natively, in stepped instructions. */
#define PASS_COST 30

static uint64_t anchor_min(void)
{
	const char *v = getenv("PTREV_HOLD_ANCHOR_MIN");
	return v && *v ? strtoull(v, NULL, 10) : ANCHOR_MIN;
}

/* How often each PC came so far (and whether it can be counted to,
 * once asked: the top bits), open addressing, grown at half full. */
#define KNOWN (1ull << 63)
#define COUNTABLE (1ull << 62)
#define PASSES(v) ((v) & ~(KNOWN | COUNTABLE))

struct pc_counts {
	uint64_t *pc;
	uint64_t *n;
	size_t cap, used;
};

/* pc's slot in keys (cap a power of two): its own, or the empty one
 * where it goes. */
static size_t slot_of(const uint64_t *keys, size_t cap, uint64_t pc)
{
	size_t j = (pc * 0x9e3779b97f4a7c15ull) >> 20 & (cap - 1);
	while (keys[j] && keys[j] != pc)
		j = (j + 1) & (cap - 1);
	return j;
}

static uint64_t *count_of(struct pc_counts *c, uint64_t pc)
{
	if (2 * (c->used + 1) > c->cap) {
		struct pc_counts g = {.cap = c->cap ? 2 * c->cap : 4096, .used = c->used};
		g.pc = calloc(g.cap, sizeof *g.pc);
		g.n = calloc(g.cap, sizeof *g.n);
		if (!g.pc || !g.n) {
			free(g.pc);
			free(g.n);
			return NULL;
		}
		for (size_t i = 0; i < c->cap; i++)
			if (c->pc[i]) {
				size_t j = slot_of(g.pc, g.cap, c->pc[i]);
				g.pc[j] = c->pc[i];
				g.n[j] = c->n[i];
			}
		free(c->pc);
		free(c->n);
		*c = g;
	}
	size_t j = slot_of(c->pc, c->cap, pc);
	if (!c->pc[j]) {
		c->pc[j] = pc;
		c->used++;
	}
	return &c->n[j];
}

/* Can the instruction at pc be counted to with an int3 (not a REP string
 * instruction, which a step leaves on itself, nor a call into the
 * kernel)? */
static bool countable(struct timeline *tl, uint64_t pc)
{
	uint8_t code[16];
	struct insn_info info;
	size_t n = code_memory_read(tl->mem, pc, code, sizeof code);
	return n && insn_classify(code, n, pc, &info) == 0 && !info.rep &&
	       !insn_kind_enters_kernel(info.kind);
}

/* The first instruction of t's run that holds pos p, global gpos: the
 * global order places t's instructions r .. p at gpos - (p - r) .. gpos. */
static uint64_t run_start(const struct timeline *tl, const struct tl_thread *t, uint64_t p,
			  uint64_t gpos)
{
	uint64_t lo = 0, hi = p, g;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (sched_map_global(tl->sched, t->tid, mid, &g) && g + (p - mid) == gpos)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Where t's stretch holding p begins: after its last event before p (and
 * within its run from r). */
static uint64_t stretch_start(struct timeline *tl, const struct tl_thread *t, uint64_t r,
			      uint64_t p)
{
	uint64_t s = r, m;
	if (history_prev_event(t->h, p, HISTORY_EV_ALL, &m) == 1 && m > s)
		s = m;
	const struct trace_data *td = tl->td;
	for (size_t i = 0; i < td->nrdtsc; i++)
		if (td->rdtsc[i].tid == t->tid && td->rdtsc[i].pos >= s && td->rdtsc[i].pos < p)
			s = td->rdtsc[i].pos + 1;
	return s;
}

bool tl_hold_anchor(struct timeline *tl, uint64_t gpos, struct event_hold_anchor *a)
{
	const char *off = getenv("PTREV_HOLD_ANCHOR");
	pid_t tid;
	uint64_t p;
	if ((off && strcmp(off, "0") == 0) || !tl->global || gpos >= sched_map_total(tl->sched) ||
	    !sched_map_at(tl->sched, gpos, &tid, &p))
		return false;
	struct tl_thread *t = tl_thread(tl, tid);
	if (!t)
		return false;
	uint64_t s = stretch_start(tl, t, run_start(tl, t, p, gpos), p);
	if (p - s < anchor_min())
		return false;
	/* The cost of stopping at each place a: its passes since s counted,
	 * the rest stepped; the cheapest one that can be counted to. */
	struct pc_counts c = {0};
	uint64_t best = UINT64_MAX, best_at = 0, best_pc = 0, best_passes = 0, ip;
	for (uint64_t at = s; at <= p; at++) {
		uint64_t *n;
		if (history_ip_at(t->h, at, &ip) != 0 || !(n = count_of(&c, ip)))
			break;
		uint64_t cost = PASSES(*n) * PASS_COST + (p - at);
		if (cost < best && !(*n & KNOWN))
			*n |= KNOWN | (countable(tl, ip) ? COUNTABLE : 0);
		if (cost < best && (*n & COUNTABLE)) {
			best = cost;
			best_at = at;
			best_pc = ip;
			best_passes = PASSES(*n) + 1;
		}
		++*n;
	}
	free(c.pc);
	free(c.n);
	if (!best_pc || best_at == s)
		return false;
	*a = (struct event_hold_anchor){.tid = tid, .pc = best_pc, .passes = best_passes,
					.start = gpos - (p - s), .at = gpos - (p - best_at)};
	return true;
}
