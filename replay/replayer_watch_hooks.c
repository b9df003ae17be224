/* What a run does for a watch scan in progress (replayer_watch.c; struct
 * rp_watch in replayer_internal.h): the run loop calls these hooks at its
 * stops, and they note accesses to the watched range (a debug-register trap
 * seen in DR6, a recorded syscall write the replay puts in place) and close
 * each access's interval at the next known position. Without an active
 * watch every hook does nothing. Below the runs, so that running a process
 * needs nothing of the scans built on top of it. */
#include "replayer_internal.h"

#include "ptrev/debugregs.h"

#include <string.h>
#include <unistd.h>

static void note(struct rp_watch *w, uint64_t lo)
{
	if (!w->pending) {
		w->pending = true;
		w->pending_lo = lo;
	}
}

bool rp_watch_trap(struct replayer *r, struct rp_proc *p)
{
	struct rp_watch *w = r->watch;

	if (!w || !w->active)
		return false;
	if (!(inf_dr_read_dr6(p->pid) & w->dr_mask))
		return false;
	/* Breakpoint stops (int3) leave DR6 alone: clear it, so that a later
	 * int3 stop does not look like this trap again. */
	inf_dr_clear_dr6(p->pid);
	note(w, p->pos);
	return true;
}

bool rp_watch_lost_trap(struct replayer *r, struct rp_proc *p,
			const struct user_regs_struct *regs)
{
	struct rp_watch *w = r->watch;

	if (!w || !w->active || !inf_dr_lost_hit(p->pid, regs))
		return false;
	inf_dr_clear_dr6(p->pid);
	note(w, p->pos);
	return true;
}

static size_t watched_len(const struct rp_watch *w)
{
	return w->len < sizeof w->before ? w->len : sizeof w->before;
}

void rp_watch_step_begin(struct replayer *r, struct rp_proc *p)
{
	struct rp_watch *w = r->watch;

	if (!w || !w->active)
		return;
	size_t n = watched_len(w);
	w->have_before = pread(p->memfd, w->before, n, (off_t)w->addr) == (ssize_t)n;
}

void rp_watch_step_end(struct replayer *r, struct rp_proc *p)
{
	struct rp_watch *w = r->watch;
	uint8_t now[sizeof w->before];

	if (!w || !w->active || !w->have_before)
		return;
	size_t n = watched_len(w);
	w->have_before = false;
	if (pread(p->memfd, now, n, (off_t)w->addr) == (ssize_t)n && memcmp(now, w->before, n) != 0)
		note(w, p->pos);
}

void rp_watch_sys_writes(struct replayer *r, struct rp_proc *p, const struct trace_syscall *s)
{
	struct rp_watch *w = r->watch;

	if (!w || !w->active)
		return;
	for (size_t i = 0; i < s->nwrites; i++) {
		uint64_t a = s->writes[i].addr, e = a + s->writes[i].len;
		if (a < w->addr + w->len && w->addr < e && s->writes[i].len)
			note(w, p->pos);
	}
}

void rp_watch_known(struct replayer *r, uint64_t to)
{
	struct rp_watch *w = r->watch;

	if (!w || !w->active || !w->pending || to <= w->pending_lo)
		return;
	w->pending = false;
	if (!w->found || !w->stop_at_first) {
		w->lo = w->pending_lo;
		w->hi = to;
	}
	w->found = true;
	if (w->stop_at_first)
		w->stop = true;
}

bool rp_watch_stopped(const struct replayer *r)
{
	return r->watch && r->watch->active && r->watch->stop;
}
