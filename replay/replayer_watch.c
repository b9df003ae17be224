/* Watchpoints in the past: the latest access to a memory range before a
 * position, or the first one after it, found exactly by re-execution.
 *
 * A scan runs a throwaway copy of the replay from a known position x to y
 * with the range in the debug registers (DR0-3, DR7: write or access
 * watches, the range split into aligned 1/2/4/8-byte pieces). A data
 * breakpoint traps after the instruction that accessed, at an address
 * only: the run knows its position exactly only at its own stops
 * (breakpoint hits placed by the history, syscalls, single steps). So a
 * trap is noted at the last known position lo, and the next known position
 * hi closes the interval: the access's "position after" lies in (lo, hi].
 * Recorded syscall writes the replay puts in place itself (the kernel's
 * writes never trip a debug register) are noted the same way, exactly:
 * (s->pos, s->pos + 1]. The run does the noting through the hooks in
 * replayer_watch_hooks.c; this file arms the registers and runs the scans.
 *
 * An interval wider than one position is narrowed by bisection: scanning
 * (mid, b] (for the latest) or (a, mid] (for the first) says on which side
 * the access is; short stretches are single-stepped by the run itself, so
 * every interval there is exact. The positions are therefore exact without
 * an instruction counter, whatever the loops in between.
 *
 * Nothing here changes what the replayer shows (cur): scans run on forks
 * and are killed. Copies left on the way may become checkpoints. */
#include "replayer_internal.h"

#include "ptrev/debugregs.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Stretches this short are single-stepped by rp_run_to (RP_SHORT in
 * replayer_run.c), so one scan of them gives exact positions. */
#define WATCH_SHORT 48
/* A copy reached after this many instructions is kept as a checkpoint. */
#define WATCH_KEEP 4000

/* The range in aligned pieces, one debug register each (inf_dr_split). */
struct pieces {
	int n;
	struct dr_piece pc[4];
};

/* Watch the pieces in p's debug registers: writes (DR_WRITE) or any
 * access (DR_ACCESS), DR6 cleared. */
static int arm(struct replayer *r, struct rp_proc *p, const struct pieces *pc, bool access)
{
	uint64_t dr7 = 0;

	for (int i = 0; i < pc->n; i++) {
		if (inf_dr_write(p->pid, i, pc->pc[i].addr) < 0)
			return rp_fail(r, "cannot set a hardware watchpoint at %#llx: %s",
				       (unsigned long long)pc->pc[i].addr, inf_dr_strerror(errno));
		dr7 |= inf_dr7_slot(i, access ? DR_ACCESS : DR_WRITE, pc->pc[i].len);
	}
	if (inf_dr_write(p->pid, 6, 0) < 0 || inf_dr_write(p->pid, 7, dr7) < 0)
		return rp_fail(r, "cannot enable hardware watchpoints (debug "
			       "registers) in the replay process: %s", inf_dr_strerror(errno));
	return 0;
}

struct search {
	struct rp_watch w;
	struct pieces pc;
	bool access;
};

/* A new process standing at x (not a checkpoint: the caller's to run).
 * Starts from the latest of the checkpoints and the shown process. */
static int proc_at(struct replayer *r, uint64_t x, struct rp_proc *out)
{
	const struct rp_proc *from = rp_checkpoint_best(r, x);

	if (r->cur.pid && r->cur_valid && r->cur.pos <= x && (!from || r->cur.pos > from->pos))
		from = &r->cur;
	if (!from)
		return rp_fail(r, "no checkpoint");
	uint64_t start = from->pos;
	if (rp_fork(r, from, out) < 0)
		return -1;
	if (rp_run_to(r, out, x) < 0) {
		rp_kill(out);
		return -1;
	}
	if (x - start >= WATCH_KEEP && !rp_checkpoint_at(r, x)) {
		/* Bisection comes back here, and gdb will seek nearby. */
		struct rp_proc cp;
		if (rp_fork(r, out, &cp) == 0)
			rp_checkpoint_add(r, &cp);
	}
	return 0;
}

/* Run from x to y (x < y) watching; *found and the interval in sr->w.
 * first: stop at the first access (else the last one is kept). */
static int scan(struct replayer *r, struct search *sr, uint64_t x, uint64_t y, bool first,
		bool *found)
{
	struct rp_proc p;
	struct rp_watch *w = &sr->w;
	bool no_hw = r->no_hw_bp;
	int rc;

	*found = false;
	if (proc_at(r, x, &p) < 0)
		return -1;
	if (arm(r, &p, &sr->pc, sr->access) < 0) {
		rp_kill(&p);
		return -1;
	}
	w->active = true;
	w->stop_at_first = first;
	w->pending = w->found = w->stop = false;
	/* The debug registers are the watch's: the run's own breakpoint is
	 * an int3 meanwhile. */
	r->no_hw_bp = true;
	r->watch = w;
	rc = rp_run_to(r, &p, y);
	r->watch = NULL;
	r->no_hw_bp = no_hw;
	if (rc == 0 && w->pending) {
		/* Not closed by any later known position: cannot happen after
		 * a completed run, whose last stop is known. Say so. */
		rc = rp_fail(r, "a watchpoint trap after position %llu was not "
			     "followed by a known position", (unsigned long long)w->pending_lo);
	}
	w->active = false;
	if (rc == 0 && p.pid)
		inf_dr_write(p.pid, 7, 0);
	/* Without an instruction counter a loop that ran a different number
	 * of times keeps every address right until the next event: check
	 * there before trusting positions this far. */
	if (rc == 0 && p.pos >= r->validated_to && rp_validate_from(r, &p) < 0)
		rc = -1;
	rp_kill(&p);
	if (rc == 0)
		*found = w->found;
	return rc;
}

/* (a, b] holds the access wanted (the latest of the window when !first,
 * the first when first): narrow it to one position. */
static int narrow(struct replayer *r, struct search *sr, uint64_t a, uint64_t b, bool first,
		  uint64_t *pos)
{
	bool found;

	while (b - a > 1) {
		if (b - a <= WATCH_SHORT) {
			/* Single-stepped throughout: exact. */
			if (scan(r, sr, a, b, first, &found) < 0)
				return -1;
			if (!found || sr->w.lo < a || sr->w.hi > b || sr->w.hi - sr->w.lo >= b - a)
				return rp_fail(r, "watchpoint: re-execution of positions "
					       "%llu..%llu did not access the range again",
					       (unsigned long long)a, (unsigned long long)b);
			a = sr->w.lo;
			b = sr->w.hi;
			continue;
		}
		uint64_t mid = a + (b - a) / 2;
		if (first) {
			if (scan(r, sr, a, mid, true, &found) < 0)
				return -1;
			if (found) {
				a = sr->w.lo;
				b = sr->w.hi;
			} else {
				a = mid;
			}
		} else {
			if (scan(r, sr, mid, b, false, &found) < 0)
				return -1;
			if (found) {
				a = sr->w.lo;
				b = sr->w.hi;
			} else {
				b = mid;
			}
		}
	}
	*pos = b;
	return 0;
}

static int setup(struct replayer *r, pid_t tid, uint64_t addr, size_t len, int type,
		 struct search *sr)
{
	memset(sr, 0, sizeof *sr);
	if (r->unsupported)
		return rp_fail(r, "%s", r->why_all);
	if (tid != r->tid && tid != 0)
		return rp_fail(r, "thread %d is not in the recording", (int)tid);
	if (type != 2 && type != 3 && type != 4)
		return rp_fail(r, "watchpoint type %d: only write (2), read (3, "
			       "watched as access) and access (4) exist", type);
	if (len == 0 || addr + len < addr)
		return rp_fail(r, "empty or wrapping watch range");
	if ((sr->pc.n = inf_dr_split(addr, len, sr->pc.pc)) < 0)
		return rp_fail(r, "%zu bytes at %#llx need more than the four "
			       "hardware watchpoints", len, (unsigned long long)addr);
	sr->access = type != 2;
	sr->w.addr = addr;
	sr->w.len = len;
	sr->w.dr_mask = (1u << sr->pc.n) - 1;
	return rp_ensure_base(r);
}

int replayer_find_prev_access(struct replayer *r, pid_t tid, uint64_t before,
			      uint64_t addr, size_t len, int type, uint64_t *pos,
			      char *why, size_t whylen)
{
	struct search sr;
	bool found = false;

	r->why[0] = 0;
	if (setup(r, tid, addr, len, type, &sr) < 0)
		goto fail;
	if (before <= 1)
		return 0; /* no instruction ends before position 1 */
	if (rp_reachable(r, before - 1) < 0)
		goto fail;
	/* Windows (c, hi] from the nearest checkpoint back to the start. */
	for (uint64_t hi = before - 1; hi > 0;) {
		const struct rp_proc *cp = rp_checkpoint_best(r, hi - 1);
		uint64_t c = cp ? cp->pos : 0;
		if (scan(r, &sr, c, hi, false, &found) < 0)
			goto fail;
		if (found) {
			if (narrow(r, &sr, sr.w.lo, sr.w.hi, false, pos) < 0)
				goto fail;
			return 1;
		}
		hi = c;
	}
	return 0;
fail:
	snprintf(why, whylen, "%s", r->why[0] ? r->why : "replay failed");
	return -1;
}

int replayer_find_next_access(struct replayer *r, pid_t tid, uint64_t from,
			      uint64_t addr, size_t len, int type, uint64_t *pos,
			      char *why, size_t whylen)
{
	struct search sr;
	bool found = false;

	r->why[0] = 0;
	if (setup(r, tid, addr, len, type, &sr) < 0)
		goto fail;
	uint64_t count = history_insn_count(r->h);
	uint64_t end = r->end_ip_known ? count : count ? count - 1 : 0;
	/* Where replay cannot go (a vDSO call, a divergence found earlier),
	 * the search ends unanswered. */
	bool cut = false;
	if (end > r->vdso_first) {
		end = r->vdso_first;
		cut = true;
	}
	if (end > r->bad_from) {
		end = r->bad_from;
		cut = true;
	}
	if (from >= end) {
		if (!cut)
			return 0;
		rp_reachable(r, end + 1);
		goto fail;
	}
	if (rp_reachable(r, end) < 0)
		goto fail;
	if (scan(r, &sr, from, end, true, &found) < 0)
		goto fail;
	if (found) {
		if (narrow(r, &sr, sr.w.lo, sr.w.hi, true, pos) < 0)
			goto fail;
		return 1;
	}
	if (!cut)
		return 0;
	rp_reachable(r, end + 1);
fail:
	snprintf(why, whylen, "%s", r->why[0] ? r->why : "replay failed");
	return -1;
}
