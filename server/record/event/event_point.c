/* Event recorder: a STATE record of where a thread stands right now, by
 * its registers and the digests of state_digest.h: the place a replay
 * finds again as the first time after the thread's previous event that it
 * stands there in that state.
 *
 * The other threads' syscalls that a replay completes only when those
 * threads run next (sys_unseen) may have written their memory already
 * here or not (a read on a pipe returns as soon as this thread writes to
 * it): what they may write is left out of the digests, and the replay
 * leaves out the same. Threads inside a syscall are not stopped, so their
 * stack pointers are told from their entries (a replay has them stopped
 * there). */
#include "event_rec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "ptrev/state_record.h"
#include "ptrev/syscall_table.h"

/* Add [addr, addr+len) to the ranges left out: 0, or -1 (out of memory). */
static int skip_add(uint64_t **skip, size_t *nskip, size_t *cap, uint64_t addr, uint64_t len)
{
	if (*nskip >= TRACE_STATE_MAX_SKIP)
		return 0;
	if (*nskip == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		uint64_t *g = realloc(*skip, 2 * *cap * sizeof *g);
		if (!g)
			return -1;
		*skip = g;
	}
	(*skip)[2 * *nskip] = addr;
	(*skip)[2 * *nskip + 1] = len;
	(*nskip)++;
	return 0;
}

/* The view of the other threads (state_digest.h): malloc'd arrays in v,
 * freed by view_free. */
static int view_take(struct ev_rec *r, const struct ev_thread *t, struct state_view *v)
{
	pid_t *tids = calloc(r->nthreads + 1, sizeof *tids);
	uint64_t *rsps = calloc(r->nthreads + 1, sizeof *rsps);
	uint64_t *skip = NULL;
	size_t nskip = 0, cap = 0;
	if (!tids || !rsps)
		goto oom;
	memset(v, 0, sizeof *v);
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct ev_thread *o = r->threads[i];
		if (o == t || o->state == EV_T_GONE)
			continue;
		if (o->state == EV_T_SYSCALL) {
			tids[v->n] = o->tid;
			rsps[v->n++] = o->entry.rsp;
		}
		if (!o->sys_unseen)
			continue;
		uint64_t args[6];
		syscall_args(&o->entry, args);
		struct sc_range w[64];
		int n = syscall_may_write(o->entry_nr, args, ev_read_mem, r, w, 64);
		for (int k = 0; k < n; k++)
			if (skip_add(&skip, &nskip, &cap, w[k].addr, w[k].len) < 0)
				goto oom;
	}
	v->tids = tids;
	v->rsps = rsps;
	v->skip = skip;
	v->nskip = nskip;
	return 0;
oom:
	free(tids);
	free(rsps);
	free(skip);
	return ev_fail(r, "out of memory describing a STATE point");
}

static void view_free(struct state_view *v)
{
	free((void *)v->tids);
	free((void *)v->rsps);
	free((void *)v->skip);
}

int ev_point_write(struct ev_thread *t, const struct user_regs_struct *now)
{
	return ev_point_write_mem(t, now, NULL, 0);
}

int ev_point_write_mem(struct ev_thread *t, const struct user_regs_struct *now,
		       const struct trace_mem_write *mem, size_t nmem)
{
	struct ev_rec *r = t->rec;
	struct state_digest d;
	struct state_view v;
	char why[256];
	if (view_take(r, t, &v) < 0)
		return -1;
	if (state_digest_take(r->pid, t->tid, r->memfd, now, &v, &d, why, sizeof why) < 0) {
		view_free(&v);
		return ev_fail(r, "thread %d: cannot describe where it stands: %s", (int)t->tid, why);
	}
	struct trace_state st;
	/* Since its previous event: the replay's bound on looking for it. */
	state_record_fill(&st, t->tid, t->events, now, &d, ev_now_ns() - t->event_ns + 1);
	if (t->exit_hold_point)
		st.flags |= TRACE_STATE_AT_SYSCALL;
	uint8_t sp[STATE_RECORD_SP_LEN];
	state_record_stack(&st, r->memfd, sp);
	st.mem = mem;
	st.nmem = nmem;
	int rc = trace_write_state(r->w, &st);
	view_free(&v);
	if (rc < 0)
		return ev_fail(r, "writing a STATE record: %s", trace_writer_error(r->w));
	ev_event_done(t);
	return 0;
}
