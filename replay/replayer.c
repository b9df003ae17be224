/* The replayer's public face (include/ptrev/replayer.h): the history it
 * follows, seeking with checkpoints, reading the state. */
#include "replayer_internal.h"

#include "ptrev/materialise.h"
#include "ptrev/ptrace_handover.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>
#include <elf.h>

/* Spacing of the checkpoints taken on the way to a target: target - NEAR,
 * target - 2*NEAR, target - 4*NEAR ... so that stepping back from the
 * target re-executes at most about NEAR instructions at first, and twice
 * as many each time the steps go twice as far back. */
#define RP_NEAR 2000

static const struct trace_thread_stream *stream_of(const struct trace_data *td, pid_t tid)
{
	for (size_t i = 0; i < td->nstreams; i++)
		if (td->streams[i].tid == tid)
			return &td->streams[i];
	return NULL;
}

/* What follows from the history's instructions: where the thread stands
 * after the last one, the vDSO calls, the events' positions. */
static int indexed(struct replayer *r)
{
	uint64_t ip;
	r->end_ip_known = history_resume_ip(r->h, &ip) == 1;
	r->end_ip = r->end_ip_known ? ip : 0;
	rp_vdso_scan(r);
	return rp_index_events(r);
}

int replayer_sync(struct replayer *r)
{
	const struct trace_thread_stream *st = stream_of(r->td, r->tid);

	if (st && st->pt_len > r->fed) {
		if (history_append(r->h, st->pt + r->fed, st->pt_len - r->fed) < 0)
			return -1;
		r->fed = st->pt_len;
	}
	return indexed(r);
}

void replayer_set_events(struct replayer *r, const struct trace_data *events)
{
	r->events = events;
}

void replayer_give_start(struct replayer *r, pid_t copy)
{
	ptrace_park_kill(r->start_copy);
	r->start_copy = copy;
}

void replayer_give_checkpoints(struct replayer *r, const uint64_t *pos, const pid_t *pid,
			       size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (r->ngiven == REPLAYER_MAX_CHECKPOINTS) {
			ptrace_park_kill(pid[i]);
			continue;
		}
		r->given_pos[r->ngiven] = pos[i];
		r->given_pid[r->ngiven++] = pid[i];
	}
}

int replayer_seal(struct replayer *r)
{
	if (history_seal(r->h) < 0)
		return -1;
	return indexed(r);
}

struct replayer *replayer_new(const struct trace_data *td, char *err, size_t errlen)
{
	struct replayer *r = calloc(1, sizeof *r);
	pid_t tids[2] = {0, 0};
	size_t ntids = 0;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->td = td;
	r->base.memfd = r->cur.memfd = -1;
	r->img.code_fd = -1;
	r->vdso_first = UINT64_MAX;
	r->bad_from = UINT64_MAX;
	/* Software breakpoints only (comparisons, machines whose debug
	 * registers misbehave). */
	r->no_hw_bp = getenv("PTREV_REPLAY_INT3") != NULL;
	for (size_t i = 0; i < td->nstreams; i++)
		if (ntids < 2 && td->streams[i].tid != tids[0])
			tids[ntids++] = td->streams[i].tid;
	for (size_t i = 0; i < td->nthreads; i++)
		if (td->threads[i].tid != tids[0] && ntids < 2)
			tids[ntids++] = td->threads[i].tid;
	if (ntids == 0) {
		snprintf(err, errlen, "the recording has no thread with a trace");
		free(r);
		return NULL;
	}
	r->tid = tids[0];
	const char *backend = trace_meta(td, "backend");
	r->stepped_recording = backend && strcmp(backend, "sw") == 0;
	r->tail_from = materialise_tail_from(td);
	r->tail_run = materialise_tail_run(td);
	if (ntids > 1) {
		r->unsupported = true;
		snprintf(r->why_all, sizeof r->why_all,
			 "multi-threaded full-state replay is not supported yet");
	}
	if (trace_image_build(&r->img, td, err, errlen) < 0) {
		free(r);
		return NULL;
	}
	struct history_config cfg = {.image = r->img.image, .cache_segments = 16};
	r->h = history_new(&cfg);
	if (!r->h || replayer_sync(r) < 0) {
		snprintf(err, errlen, "out of memory");
		replayer_free(r);
		return NULL;
	}
	if (!trace_meta(td, "program")) {
		snprintf(err, errlen, "the recording does not say which program ran");
		replayer_free(r);
		return NULL;
	}
	return r;
}

/* Can the state at pos exist at all? */
int rp_reachable(struct replayer *r, uint64_t pos)
{
	uint64_t count = history_insn_count(r->h), gap;

	if (pos > count)
		return rp_fail(r, "position %llu is beyond the recording (%llu "
			       "instructions)", (unsigned long long)pos,
			       (unsigned long long)count);
	if (pos == count && !r->end_ip_known) {
		if (count == 0)
			return rp_fail(r, "the recording holds no instruction of this thread "
				       "(its recorder stopped before it wrote any)");
		if (!r->td->complete)
			return rp_fail(r, "the recording ends after instruction %llu of this "
				       "thread, before the state after it was known (its recorder "
				       "stopped early)", (unsigned long long)count);
		return rp_fail(r, "the thread ended in a syscall (exit): there is no "
			       "state after its last instruction");
	}
	if (pos > r->bad_from)
		return rp_fail(r, "%s", r->bad_why);
	if (pos > r->vdso_first)
		return rp_fail(r, "the program called into the vDSO at position %llu "
			       "(clock functions): the kernel data it read there was "
			       "not recorded, so later state cannot be reproduced "
			       "(recordings made with the vDSO hidden have no such "
			       "limit)", (unsigned long long)r->vdso_first);
	if (history_prev_event(r->h, pos, HISTORY_EV_GAP, &gap) == 1)
		return rp_fail(r, "the trace has a gap before position %llu: "
			       "instruction numbers after it cannot be reproduced",
			       (unsigned long long)gap);
	return 0;
}

/* The process to run forward: the current one when it stands between the
 * best checkpoint and pos (kept running forward: cheapest), else a fresh
 * fork of the best checkpoint; the current one is kept as a checkpoint
 * when it stood where a seek asked. */
static int pick_start(struct replayer *r, uint64_t pos)
{
	const struct rp_proc *best = rp_checkpoint_best(r, pos);

	if (r->cur.pid && r->cur.pos <= pos && (!best || r->cur.pos >= best->pos))
		return 0;
	if (r->cur.pid) {
		if (r->cur_valid)
			rp_checkpoint_add(r, &r->cur);
		else
			rp_kill(&r->cur);
	}
	best = rp_checkpoint_best(r, pos);
	if (!best)
		return rp_fail(r, "no checkpoint");
	return rp_fork(r, best, &r->cur);
}

/* A run to a position stops at every execution of its instruction's
 * address on the way (run_far_bp): a checkpoint whose instruction lies in
 * a hot loop costs a stop per iteration, hundreds of thousands over a
 * long stretch without events (seconds to a minute: most of the first
 * seek of a tail whose last stretch is a computation). A mark is kept
 * where its address recurs rarely enough for at most RP_MARK_HITS stops
 * from `from` (estimated from the distance to its previous execution,
 * which a loop repeats), else moved back to the last place tracing
 * resumed before it (right after a syscall: that address runs once per
 * syscall), else left out; the checkpoints that reverse steps need most,
 * near pos, are close together and cheap to reach anyway. Unless pos
 * itself lies in such a loop (a program stopped by gdb's Ctrl-C in a
 * computation): reaching it costs a stop per iteration whatever is on
 * the way, and the marks in the loop before it are reached with no more
 * stops than it takes; left out, every reverse-stepi from there ran the
 * whole loop again from the tail's start, a stop per iteration (a second
 * each after half a second of computation). */
#define RP_MARK_HITS 2000

static bool cheap_to_reach(struct replayer *r, uint64_t from, uint64_t m)
{
	uint64_t ip, n = m;
	if (m - from <= RP_MARK_HITS)
		return true;
	if (history_ip_at(r->h, m, &ip) < 0)
		return false;
	for (int hits = 0; hits < RP_MARK_HITS; hits++) {
		int rc = history_prev_exec_since(r->h, from, n, &ip, 1, &n);
		if (rc <= 0)
			return rc == 0;
	}
	return false;
}

static bool mark_at(struct replayer *r, uint64_t from, uint64_t *m, bool pos_hot)
{
	uint64_t e;
	if (pos_hot || cheap_to_reach(r, from, *m))
		return true;
	if (history_prev_event(r->h, *m, HISTORY_EV_ENABLED, &e) == 1 &&
	    e > from + RP_NEAR / 2 && cheap_to_reach(r, from, e)) {
		*m = e;
		return true;
	}
	return false;
}

/* On the way from cur to pos, leave checkpoints at pos - NEAR * 2^i
 * (where that is cheap: mark_at). */
static int run_with_checkpoints(struct replayer *r, uint64_t pos)
{
	uint64_t marks[64];
	int n = 0;

	for (uint64_t d = RP_NEAR; d < pos && n < 64; d *= 2) {
		uint64_t m = pos - d;
		if (m <= r->cur.pos + RP_NEAR / 2)
			break;
		marks[n++] = m;
	}
	bool pos_hot = n > 0 && !cheap_to_reach(r, r->cur.pos, pos);
	while (n-- > 0) {
		const struct rp_proc *near = rp_checkpoint_best(r, marks[n]);
		if (near && marks[n] - near->pos < RP_NEAR / 2)
			continue; /* one is close enough already */
		uint64_t m = marks[n];
		if (m <= r->cur.pos || !mark_at(r, r->cur.pos, &m, pos_hot))
			continue;
		struct rp_proc cp;
		if (rp_run_to(r, &r->cur, m) < 0 || rp_fork(r, &r->cur, &cp) < 0)
			return -1;
		rp_checkpoint_add(r, &cp);
	}
	return rp_run_to(r, &r->cur, pos);
}

/* Without an instruction counter (none in VMs, for one) a divergence
 * that only changes how often a loop runs would keep every address right
 * until the next recorded event. So before showing a position past the
 * validated stretch, a throwaway copy runs on at native speed to the next
 * event and must agree there; if not, nothing from the last agreeing event
 * on is shown. */
int rp_validate_from(struct replayer *r, struct rp_proc *from)
{
	struct rp_proc v;
	uint64_t upto = 0;

	if (rp_fork(r, from, &v) < 0)
		return -1;
	int rc = rp_validate_ahead(r, &v, &upto);
	rp_kill(&v);
	if (rc == 0) {
		if (upto > r->validated_to)
			r->validated_to = upto;
		return 0;
	}
	r->bad_from = r->validated_to;
	snprintf(r->bad_why, sizeof r->bad_why, "replay disagrees with the "
		 "recording after position %llu, the last event that agreed "
		 "(%.700s)", (unsigned long long)r->validated_to, r->why);
	rp_fail(r, "%s", r->bad_why);
	return -1;
}

static int validate(struct replayer *r)
{
	return rp_validate_from(r, &r->cur);
}

int rp_ensure_base(struct replayer *r)
{
	if (r->base.pid)
		return 0;
	if (rp_launch_base(r) < 0) {
		/* Nothing can be replayed: say so for every later seek too. */
		r->unsupported = true;
		snprintf(r->why_all, sizeof r->why_all, "%s", r->why);
		rp_kill(&r->base);
		return -1;
	}
	return 0;
}

int replayer_seek(struct replayer *r, pid_t tid, uint64_t pos, char *why, size_t whylen)
{
	struct user_regs_struct regs;
	uint64_t want;

	r->why[0] = 0;
	r->have_state = false;
	r->last_target = pos;
	if (r->unsupported) {
		snprintf(why, whylen, "%s", r->why_all);
		return -1;
	}
	if (tid != r->tid && tid != 0) {
		snprintf(why, whylen, "thread %d is not in the recording", (int)tid);
		return -1;
	}
	if (rp_reachable(r, pos) < 0) {
		/* Nothing ran: the replay process is still good for later. */
		snprintf(why, whylen, "%s", r->why);
		return -1;
	}
	if (rp_ensure_base(r) < 0)
		goto fail;
	if (r->cur_valid && r->cur.pos == pos && r->cur.pid) {
		r->have_state = true;
		return 0;
	}
	if (pick_start(r, pos) < 0)
		goto fail;
	r->cur_valid = false;
	if (run_with_checkpoints(r, pos) < 0)
		goto fail;
	if (ptrace(PTRACE_GETREGS, r->cur.pid, NULL, &regs) < 0) {
		rp_fail(r, "replay process: %s", strerror(errno));
		goto fail;
	}
	want = pos < history_insn_count(r->h) ? 0 : r->end_ip;
	if (pos < history_insn_count(r->h) && history_ip_at(r->h, pos, &want) < 0) {
		rp_fail(r, "position %llu is not in the history", (unsigned long long)pos);
		goto fail;
	}
	if (regs.rip != want) {
		rp_fail(r, "replay diverged: at position %llu the replay is at %#llx, "
			"the recording was at %#llx", (unsigned long long)pos,
			(unsigned long long)regs.rip, (unsigned long long)want);
		goto fail;
	}
	if (pos >= r->validated_to && validate(r) < 0)
		goto fail;
	r->cur_valid = true;
	r->have_state = true;
	return 0;
fail:
	if (r->cur.pid)
		rp_kill(&r->cur);
	r->cur_valid = false;
	snprintf(why, whylen, "%s", r->why[0] ? r->why : "replay failed");
	return -1;
}

int replayer_get_regs(struct replayer *r, struct user_regs_struct *regs)
{
	if (!r->have_state)
		return -1;
	return ptrace(PTRACE_GETREGS, r->cur.pid, NULL, regs) < 0 ? -1 : 0;
}

int replayer_get_xstate(struct replayer *r, void *buf, size_t *len)
{
	struct iovec iov = { buf, *len };

	if (!r->have_state)
		return -1;
	if (ptrace(PTRACE_GETREGSET, r->cur.pid, (void *)NT_X86_XSTATE, &iov) < 0)
		return -1;
	*len = iov.iov_len;
	return 0;
}

ssize_t replayer_read_mem(struct replayer *r, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	if (!r->have_state)
		return -1;
	while (done < len) {
		ssize_t n = pread(r->cur.memfd, (uint8_t *)buf + done, len - done,
				  (off_t)(addr + done));
		if (n <= 0) {
			/* Up to the end of the readable page. */
			uint64_t a = addr + done;
			uint64_t page_end = (a | 4095) + 1;
			size_t chunk = page_end - a < len - done ? page_end - a : len - done;
			n = pread(r->cur.memfd, (uint8_t *)buf + done, chunk, (off_t)a);
			if (n <= 0)
				break;
		}
		done += (size_t)n;
	}
	return done ? (ssize_t)done : -1;
}

uint64_t replayer_position(const struct replayer *r)
{
	return r->cur.pos;
}

static int by_pos(const void *a, const void *b)
{
	const struct rp_proc *x = a, *y = b;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

void replayer_checkpoints(struct replayer *r, struct strbuf *out)
{
	struct rp_proc all[REPLAYER_MAX_CHECKPOINTS + 1];
	size_t n = 0;

	if (r->base.pid)
		all[n++] = r->base;
	for (size_t i = 0; i < r->ncps; i++)
		all[n++] = r->cps[i];
	qsort(all, n, sizeof all[0], by_pos);
	for (size_t i = 0; i < n; i++)
		strbuf_printf(out, "%llu %d%s%s%s\n", (unsigned long long)all[i].pos,
			      (int)all[i].pid, all[i].pid == r->base.pid && r->base_how ? " (" : "",
			      all[i].pid == r->base.pid && r->base_how ? r->base_how : "",
			      all[i].pid == r->base.pid && r->base_how ? ")" : "");
}

const char *replayer_warning(const struct replayer *r)
{
	return r->start.warning[0] ? r->start.warning : NULL;
}

void replayer_get_stats(const struct replayer *r, struct replayer_stats *st)
{
	*st = r->stats;
	st->checkpoints = r->ncps;
}

void replayer_free(struct replayer *r)
{
	if (!r)
		return;
	rp_kill(&r->cur);
	for (size_t i = 0; i < r->ncps; i++)
		rp_kill(&r->cps[i]);
	rp_kill(&r->base);
	ptrace_park_kill(r->start_copy);
	for (size_t i = 0; i < r->ngiven; i++)
		ptrace_park_kill(r->given_pid[i]);
	history_free(r->h);
	if (r->img.image || r->img.iscache)
		trace_image_free(&r->img);
	free(r->sys);
	free(r->sig);
	free(r->tsc);
	free(r->gw);
	relaunch_free(&r->start);
	free(r);
}
