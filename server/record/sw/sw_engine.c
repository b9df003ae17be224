/* The sw recorder driven like the inferior module (sw_engine.h): the
 * caller resumes threads, waits for one event, and every other thread is
 * then stopped at its next instruction boundary before the event is
 * returned. Threads stop at every instruction or block anyway, so stopping
 * one is simply not running it again; a thread blocked in a syscall or in
 * a native run gets a SIGSTOP that is absorbed (never recorded, never
 * reported). The per-status work is in recorder_sw_stop.c, who runs when
 * in recorder_sw_sched.c, how in recorder_sw_run.c. */
#include "recorder_sw.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrev/inferior_raw.h"
#include "ptrev/pt_encoder.h"
#include "ptrev/ptrace_wait.h"
#include "ptrev/sw_engine.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fail(struct sw_rec *r, char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", r->err[0] ? r->err : "out of memory");
}

/* Take one thread of the inferior module over, with what it had pending. */
static struct sw_thread *adopt(struct sw_rec *r, struct inf_thread *it)
{
	struct sw_thread *t = sw_thread_add(r, it->tid);

	if (!t)
		return NULL;
	t->stop_expected = it->stop_expected;
	it->stop_expected = 0;
	if (it->has_pending) {
		t->has_pending = true;
		t->pending = it->pending;
		if (it->pending.kind == STOP_SIGNAL) {
			sw_prepare_signal(t, it->pending.sig,
					  it->has_siginfo ? &it->siginfo : NULL);
			t->deliver = 0;
			t->held = true;
			memcpy(&t->held_si, t->sig.siginfo, sizeof t->held_si);
		}
		it->has_pending = false;
	} else if (it->has_siginfo && it->siginfo.si_signo > 0) {
		/* A signal reported by the inferior module and not yet
		 * delivered: the thread sits in its signal-delivery-stop. */
		sw_prepare_signal(t, it->siginfo.si_signo, &it->siginfo);
		t->deliver = 0;
		t->held = it->siginfo.si_signo != SIGTRAP;
		memcpy(&t->held_si, &it->siginfo, sizeof t->held_si);
	}
	return t;
}

/* PTREV_SW_STEPPER: insn, block (the default) or block-hw. */
static enum sw_stepper stepper_from_env(void)
{
	const char *v = getenv("PTREV_SW_STEPPER");

	if (!v || !*v || !strcmp(v, "block"))
		return SW_STEPPER_BLOCK;
	if (!strcmp(v, "insn"))
		return SW_STEPPER_INSN;
	if (!strcmp(v, "block-hw"))
		return SW_STEPPER_BLOCK_HW;
	fprintf(stderr, "ptrev: PTREV_SW_STEPPER=%s unknown (insn, block, "
		"block-hw): using block\n", v);
	return SW_STEPPER_BLOCK;
}

/* The block stepper's caches and breakpoints; without them (memory that
 * cannot be written) every instruction is single-stepped. */
static int block_stepper_new(struct sw_rec *r)
{
	char err[256];

	r->stepper = stepper_from_env();
	if (r->stepper == SW_STEPPER_INSN)
		return 0;
	r->bcache = block_cache_new(sw_read_code, r);
	if (!r->bcache) {
		snprintf(r->err, r->errlen, "out of memory");
		return -1;
	}
	r->bstep = bstep_new(r->pid, err, sizeof err);
	if (!r->bstep) {
		fprintf(stderr, "ptrev: %s: single-stepping every instruction\n", err);
		r->stepper = SW_STEPPER_INSN;
	}
	return 0;
}

/* Our debug registers off in every stopped thread: the caller is about to
 * change its points (apply_all rewrites DR7), or takes the threads back. */
static void disarm_all(struct sw_rec *r)
{
	if (!r->bstep)
		return;
	for (size_t i = 0; i < r->nthreads; i++) {
		struct sw_thread *t = r->threads[i];
		if (!t->gone && !t->inflight)
			bstep_disarm(r->bstep, t->tid, r->inf->dr7);
	}
}

struct sw_engine *sw_engine_new(struct inferior *inf, struct trace_writer *w,
				const struct sw_record_opts *o, char *err, size_t errlen)
{
	struct sw_engine *e = calloc(1, sizeof *e);
	struct sw_rec *r;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r = &e->r;
	r->t0_ns = now_ns();
	r->flushed_ns = r->t0_ns; /* the first flush 250 ms after the start */
	r->inf = inf;
	r->pid = inf->pid;
	r->self = getpid();
	r->memfd = -1;
	r->errlen = sizeof r->err;
	r->keep = !(o && o->file_only);
	r->psb_period = o && o->psb_period ? o->psb_period : PTENC_DEFAULT_PSB_PERIOD;
	r->allow_rseq = o && o->allow_rseq;
	r->stop = o ? o->stop : NULL;
	r->end.status_kind = 2;
	r->gen = 1;
	if (!inf->pid || inf->exited) {
		snprintf(err, errlen, "no process to record");
		free(e);
		return NULL;
	}
	for (size_t i = 0; i < inf->nthreads; i++) {
		if (inf->threads[i].running && !inf->threads[i].has_pending) {
			snprintf(err, errlen, "thread %d is running",
				 (int)inf->threads[i].tid);
			free(e);
			return NULL;
		}
	}
	/* Without a file the records still go through a writer, which
	 * keeps them in memory or drops them. */
	r->w = w ? w : (r->mem = trace_writer_open_memory(r->err, r->errlen));
	if (!r->w || (r->keep && trace_writer_keep(r->w, &r->td) < 0))
		goto bad;
	r->icache = calloc((size_t)1 << ICACHE_BITS, sizeof *r->icache);
	if (!r->icache || block_stepper_new(r) < 0 || sw_open_memfd(r) < 0)
		goto bad;
	r->sb = sideband_new(r->pid, r->memfd, r->w);
	if (!r->sb)
		goto bad;
	sideband_set_copy_files(r->sb, !(o && o->no_copy));
	if (r->keep && !w) {
		/* What a file would say about itself, so a recording held in
		 * memory alone describes itself too (a caller with a file
		 * writes the file's META, which is then kept as well). */
		char num[32];
		trace_write_meta(r->w, "backend", "sw");
		snprintf(num, sizeof num, "%u", r->psb_period);
		trace_write_meta(r->w, "psb_period", num);
	}
	/* Forks too: a child must not keep gdb's int3 bytes (on_stop). */
	ptrace(PTRACE_SETOPTIONS, r->pid, NULL,
	       (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK |
			      PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE));
	if (sideband_update(r->sb, 0, 0) < 0) {
		snprintf(r->err, r->errlen, "cannot read the mappings of %d",
			 (int)r->pid);
		goto bad;
	}
	for (size_t i = 0; i < inf->nthreads; i++) {
		struct sw_thread *t = adopt(r, &inf->threads[i]);
		struct trace_thread th = {0};
		if (!t || sw_set_tsc_trapping(t, true) < 0)
			goto bad;
		th.tid = t->tid;
		th.parent = i == 0 ? 0 : r->pid; /* creators of older threads: unknown */
		if (trace_write_thread(r->w, &th) < 0 || sw_thread_start(t) < 0)
			goto bad;
	}
	return e;
bad:
	fail(r, err, errlen);
	sw_engine_free(e);
	return NULL;
}

const char *sw_engine_error(const struct sw_engine *e)
{
	return e->r.err;
}

const struct trace_data *sw_engine_data(const struct sw_engine *e)
{
	return e->r.keep ? &e->r.td : NULL;
}

int sw_engine_resume(struct sw_engine *e, pid_t tid, bool step, int sig)
{
	struct sw_rec *r = &e->r;
	struct sw_thread *t = sw_thread_find(r, tid);
	struct inf_thread *it = inferior_thread(r->inf, tid);
	struct user_regs_struct now;

	if (r->proc_gone || r->failed || r->inf->exited || !t)
		return -1;
	r->inf->resumed_gone = false;
	if (t->resumed)
		return 0;
	/* gdb may have set points in the debug registers over ours (its
	 * DR7 went to every thread): before any thread runs again, even one
	 * whose pending event is dropped or passed on. */
	disarm_all(r);
	if (t->has_pending) {
		/* A breakpoint hit whose breakpoint is gone since: forget it,
		 * the thread runs the instruction. */
		bool stale = t->pending.kind == STOP_SWBREAK &&
			     !inferior_has_swbreak(r->inf, t->regs.rip);
		if (!stale) {
			t->resumed = true;
			t->stepping = step;
			if (it)
				it->running = true;
			return 0;
		}
		t->has_pending = false;
	}
	if (t->mid_step) {
		/* Stopped inside its step by a vfork event: the step goes on
		 * (the registers now are mid-syscall, not an instruction's
		 * boundary). A signal waits for the boundary. */
		t->mid_step = false;
		t->resumed = true;
		t->stepping = step;
		t->inflight = true;
		if (it)
			it->running = true;
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0 && errno != ESRCH) {
			r->failed = true;
			return -1;
		}
		return 0;
	}
	if (ptrace(PTRACE_GETREGS, tid, NULL, &now) < 0)
		return -1;
	/* gdb may have written code or registers while it was stopped. */
	sw_icache_invalidate(r);
	if (t->held) {
		int held = t->sig.signo;
		t->held = false;
		if (sig)
			sw_prepare_signal(t, sig, sig == held ? &t->held_si : NULL);
	} else if (sig) {
		sw_prepare_signal(t, sig, NULL);
	}
	t->exempt = t->reported;
	t->resumed = true;
	t->stepping = step;
	if (it) {
		it->running = true;
		it->has_siginfo = false;
	}
	if (sw_resume(t, &now, false) < 0) {
		r->failed = true;
		return -1;
	}
	return 0;
}

int sw_engine_gdb_write(struct sw_engine *e, const struct trace_gdb_write *g)
{
	struct sw_rec *r = &e->r;
	struct sw_thread *t = sw_thread_find(r, g->tid);
	struct user_regs_struct now;
	if (!t || t->gone || !t->started || t->inflight || t->mid_step || t->in_block ||
	    ptrace(PTRACE_GETREGS, t->tid, NULL, &now) < 0)
		return -1;
	struct trace_gdb_write w = *g;
	w.pos = t->insns;
	if (trace_write_gdb_write(r->w, &w) < 0)
		return -1;
	if (!g->regs)
		return 0;
	uint64_t to;
	memcpy(&to, g->bytes + offsetof(struct user_regs_struct, rip), sizeof to);
	/* A jump the program did not make: its trace is interrupted where
	 * it stood and goes on at the new PC (as after a signal). */
	return to != now.rip && ptenc_interrupt(t->enc, now.rip) < 0 ? -1 : 0;
}

void sw_engine_stop_before_exit(struct sw_engine *e, bool on)
{
	e->r.stop_before_exit = on;
}

int sw_engine_btrace_mark(struct sw_engine *e, pid_t tid, uint64_t *offset)
{
	struct sw_thread *t = sw_thread_find(&e->r, tid);
	if (!t || !t->enc || t->gone)
		return -1;
	*offset = ptenc_offset(t->enc);
	ptenc_psb_next(t->enc);
	return 0;
}

int sw_engine_interrupt(struct sw_engine *e)
{
	if (e->r.proc_gone || e->r.inf->exited)
		return -1;
	e->r.interrupt_req = 1;
	return 0;
}

/* Will this thread still report a stop? A leader that called exit() while
 * other threads live stays a zombie until they are gone. */
static bool will_report(const struct sw_rec *r, const struct sw_thread *t)
{
	if (!t->inflight || t->gone)
		return false;
	return !(t->exiting && t->tid == r->pid && t->regs.rax == SYS_exit);
}

static int collect(struct sw_rec *r, bool block)
{
	int st;
	pid_t w = ptrace_waitpid_or_stop(-1, &st, __WALL | (block ? 0 : WNOHANG), r->stop);

	if (w == 0)
		return 0;
	if (w < 0) {
		if (errno == EINTR)
			return 0;
		/* ECHILD: reaped behind our back; nothing more will come. */
		if (!r->proc_gone) {
			r->proc_gone = true;
			r->exit_ev = (struct stop_event){ .kind = STOP_KILLED,
				.tid = r->pid, .sig = SIGKILL };
			r->end.status_kind = 1;
			r->end.status = SIGKILL;
		}
		return 0;
	}
	if (sw_on_status(r, w, st) < 0) {
		r->failed = true;
		return -1;
	}
	return 1;
}

/* All-stop: every thread still stepping is collected at its next
 * instruction boundary and left there. */
static int stop_all(struct sw_rec *r)
{
	r->stopping = true;
	for (size_t i = 0; i < r->nthreads; i++) {
		struct sw_thread *t = r->threads[i];
		if (will_report(r, t) && !t->stop_expected && !t->exiting &&
		    syscall(SYS_tgkill, r->pid, t->tid, SIGSTOP) == 0)
			t->stop_expected++;
	}
	for (;;) {
		bool any = false;
		for (size_t i = 0; i < r->nthreads && !any; i++)
			any = will_report(r, r->threads[i]);
		if (!any || r->proc_gone)
			break;
		if (collect(r, true) < 0) {
			r->stopping = false;
			return -1;
		}
	}
	r->stopping = false;
	return 0;
}

/* Close every stream off at its thread's IP and hand the bytes over, so
 * that the recording holds exactly what ran so far. */
static int flush_streams(struct sw_rec *r)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		struct sw_thread *t = r->threads[i];
		if (!t->started || t->gone || t->inflight)
			continue;
		if (ptenc_interrupt(t->enc, t->regs.rip) < 0 || ptenc_flush(t->enc) < 0) {
			snprintf(r->err, r->errlen, "encoder (thread %d): %s",
				 (int)t->tid, ptenc_error(t->enc));
			return -1;
		}
	}
	return sw_sched_flush(r);
}

/* A recording survives a kill -9 of ptrev but for its last 250 ms: the
 * PT encoded so far (its complete bytes) and the thread order go to the
 * file at least that often, not only every 64 KiB of trace, which the sw
 * backend takes seconds to fill. */
static int keep_durable(struct sw_rec *r)
{
	uint64_t now = now_ns();
	if (now - r->flushed_ns < 250000000ull)
		return 0;
	r->flushed_ns = now;
	for (size_t i = 0; i < r->nthreads; i++) {
		struct sw_thread *t = r->threads[i];
		if (t->started && !t->gone && ptenc_flush(t->enc) < 0) {
			snprintf(r->err, r->errlen, "encoder (thread %d): %s", (int)t->tid,
				 ptenc_error(t->enc));
			return -1;
		}
	}
	return sw_sched_flush(r);
}

static struct sw_thread *pick_pending(struct sw_rec *r)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		struct sw_thread *t = r->threads[i];
		if (t->has_pending && t->resumed && !t->gone)
			return t;
	}
	return NULL;
}

static struct sw_thread *pick_resumed(struct sw_rec *r)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i]->resumed && !r->threads[i]->gone)
			return r->threads[i];
	return NULL;
}

static int report(struct sw_rec *r, struct sw_thread *t, struct stop_event *ev)
{
	struct inf_thread *it;

	if (stop_all(r) < 0)
		return -1;
	if (r->proc_gone) {
		/* It ended while the others stopped: that is the news. */
		r->gone_reported = true;
		*ev = r->exit_ev;
		inf_mark_gone(r->inf);
		return 1;
	}
	if (flush_streams(r) < 0) {
		r->failed = true;
		return -1;
	}
	*ev = t->pending;
	t->has_pending = false;
	t->reported = true;
	t->reported_ip = t->regs.rip;
	for (size_t i = 0; i < r->nthreads; i++)
		r->threads[i]->resumed = false;
	sw_sched_reset(r);
	for (size_t i = 0; i < r->inf->nthreads; i++)
		r->inf->threads[i].running = false;
	it = inferior_thread(r->inf, t->tid);
	if (it) {
		it->has_siginfo = ev->kind == STOP_SIGNAL && ev->sig;
		if (it->has_siginfo)
			memcpy(&it->siginfo, &t->held_si, sizeof it->siginfo);
	}
	return 1;
}

int sw_engine_wait(struct sw_engine *e, struct stop_event *ev, bool block)
{
	struct sw_rec *r = &e->r;
	uint64_t deadline = block ? 0 : now_ns() + 10000000ull;
	unsigned idle = 0;

	if (r->failed || r->gone_reported || r->inf->exited)
		return -1;
	for (;;) {
		struct sw_thread *t;
		bool any = false;

		if (r->stop && *r->stop && !r->killed && !r->proc_gone) {
			kill(r->pid, SIGKILL);
			r->killed = true;
		}
		if (r->proc_gone) {
			r->gone_reported = true;
			*ev = r->exit_ev;
			inf_mark_gone(r->inf);
			return 1;
		}
		if (r->interrupt_req) {
			r->interrupt_req = 0;
			if (stop_all(r) < 0)
				return -1;
			if (!pick_pending(r) && (t = pick_resumed(r)))
				sw_hold_signal(t, SIGINT, NULL);
			continue;
		}
		t = pick_pending(r);
		if (t && t->pending.kind == STOP_SIGNAL && t->held && !t->stepping &&
		    t->pending.sig < 65 && r->inf->pass_signals[t->pending.sig]) {
			/* Passed since it was seen: deliver and carry on. */
			t->held = false;
			t->has_pending = false;
			sw_prepare_signal(t, t->pending.sig, &t->held_si);
			if (sw_advance(t) < 0) {
				r->failed = true;
				return -1;
			}
			continue;
		}
		if (t)
			return report(r, t, ev);
		if ((t = sw_sched_dispatch(r)) && sw_advance(t) < 0) {
			r->failed = true;
			return -1;
		}
		for (size_t i = 0; i < r->nthreads && !any; i++)
			any = r->threads[i]->inflight && !r->threads[i]->gone;
		if (!any && r->inf->resumed_gone && r->live > 0) {
			/* The threads resumed have exited, the others stay
			 * stopped: as inferior_wait says it. */
			r->inf->resumed_gone = false;
			*ev = (struct stop_event){.kind = STOP_NO_RESUMED, .tid = r->pid};
			return 1;
		}
		if (!any) /* nothing resumed: nothing can happen */
			return block ? -1 : 0;
		switch (collect(r, block)) {
		case -1:
			return -1;
		case 1:
			idle = 0;
			if (keep_durable(r) < 0) {
				r->failed = true;
				return -1;
			}
			break;
		default:
			if (block)
				break;
			if (now_ns() >= deadline)
				return 0;
			/* A step takes microseconds: yield first, then doze. */
			if (++idle < 64) {
				sched_yield();
			} else {
				struct timespec ts = { 0, 50000 };
				nanosleep(&ts, NULL);
			}
		}
	}
}

int sw_engine_finish(struct sw_engine *e, struct trace_end *end, bool write_end,
		     char *err, size_t errlen)
{
	struct sw_rec *r = &e->r;
	int rc = 0;

	if (!r->proc_gone) {
		disarm_all(r);
		for (size_t i = 0; i < r->nthreads; i++) {
			struct sw_thread *t = r->threads[i];
			struct inf_thread *it = inferior_thread(r->inf, t->tid);
			if (t->gone || !t->started)
				continue;
			if (!t->inflight && ptenc_end(t->enc, t->regs.rip) < 0) {
				snprintf(r->err, r->errlen, "encoder (thread %d): %s",
					 (int)t->tid, ptenc_error(t->enc));
				rc = -1;
			}
			r->end.instructions += t->insns;
			r->end.psb_count += ptenc_stats(t->enc)->psbs;
			t->gone = true; /* its stream is over */
			if (!t->inflight && r->inf->pid && !r->inf->exited &&
			    sw_set_tsc_trapping(t, false) < 0)
				rc = -1;
			if (!it)
				continue;
			/* Back to the inferior module, as it would have it. */
			it->stop_expected += t->stop_expected;
			if (t->has_pending) {
				it->has_pending = true;
				it->pending = t->pending;
			}
			if (t->held) {
				it->has_siginfo = true;
				memcpy(&it->siginfo, &t->held_si, sizeof it->siginfo);
			}
		}
	}
	if (sw_sched_flush(r) < 0)
		rc = -1;
	r->end.duration_ns = now_ns() - r->t0_ns;
	if (end)
		*end = r->end;
	if (write_end && !r->mem && trace_write_end(r->w, &r->end) < 0)
		rc = -1;
	/* Complete in memory even when the file gets no END (yet). */
	r->td.end = r->end;
	r->td.complete = true;
	/* The caller may close its writer now: td stays ours. */
	if (!r->mem)
		trace_writer_keep(r->w, NULL);
	r->finished = true;
	if (rc < 0)
		fail(r, err, errlen);
	return rc;
}

void sw_engine_free(struct sw_engine *e)
{
	struct sw_rec *r;

	if (!e)
		return;
	r = &e->r;
	sw_threads_free(r);
	sideband_free(r->sb);
	free(r->icache);
	block_cache_free(r->bcache);
	bstep_free(r->bstep);
	free(r->early);
	free(r->runs);
	if (r->memfd >= 0)
		close(r->memfd);
	if (r->w && !r->mem && !r->finished)
		trace_writer_keep(r->w, NULL); /* still open: it outlives us */
	trace_writer_close(r->mem, NULL, 0);
	trace_data_free(&r->td);
	free(e);
}

int sw_engine_meta(void *engine, const char *key, const char *value)
{
	struct sw_engine *e = engine;
	return trace_write_meta(e->r.w, key, value);
}
