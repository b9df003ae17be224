/* The history of an event recording, made by re-executing it stepped
 * (include/ptrev/materialise.h). The event replay (event_replay.h) hands
 * every instruction, interruption, event and run to the observer here,
 * which encodes each thread's instructions with the sw backend's PT
 * encoder and notes every event's instruction position; then the
 * recording is written again with positions in instructions. */
#include "ptrev/materialise.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/pt_encoder.h"
#include "ptrev/ptrace_handover.h"
#include "event_replay.h"

/* The whole history's copies for its replayer (struct materialise_copies'
 * cps): one every this many instructions stepped, thinned to
 * MATERIALISE_CHECKPOINTS as it goes on (erp_mid_copy), so the newest
 * lies within this many of the end: a copy costs about a millisecond, a
 * stop a pass of a loop costs 60 us from the copy to a position. */
#define MATERIALISE_CHECKPOINT_EVERY 16384
_Static_assert(ERP_MID_COPIES_MAX <= MATERIALISE_CHECKPOINTS,
	       "the copies the replay keeps are all taken");

struct mat_thread {
	struct ptenc *enc; /* NULL: not in this history (ended before it) */
	uint64_t *pos;     /* instruction position of each event */
	uint64_t end_pos;  /* instructions when it ended */
	size_t from;       /* its first event in this history (a tail's
	                      start: the events before are left out) */
};

struct mat {
	struct mat_thread *threads; /* parallel to the replay's */
	size_t nthreads;
	uint32_t psb_period;
	struct trace_sched_run *runs;
	size_t nruns, cap;
	/* Runs other threads made during the current run (their last
	 * instruction, reported when the program ended in it): they follow
	 * it, in the order the instructions were reported. */
	struct trace_sched_run *later;
	size_t nlater, later_cap;
	struct materialise_progress *progress; /* NULL: nobody asks */
	size_t from;       /* a tail: the one thread's first event in it
	                      (its history starts after event from - 1) */
	const struct trace_state *point; /* ...or at this point before it */
	size_t run;        /* a tail from this run of the recorded order */
	uint64_t unreported;                   /* instructions since it was told */
};

/* The instructions made so far, for progress (events and every 2^16
 * instructions: a loop may run long between events). */
static void tell_instructions(struct erp *e, struct mat *m)
{
	uint64_t insns = 0;
	for (size_t i = 0; i < e->nthreads; i++)
		insns += e->threads[i].insns;
	atomic_store_explicit(&m->progress->instructions, insns, memory_order_relaxed);
	m->unreported = 0;
}

static struct mat_thread *mt(struct erp *e, struct erp_thread *t)
{
	struct mat *m = e->obs->ctx;
	return &m->threads[t - e->threads];
}

static int enc_fail(struct erp *e, struct erp_thread *t)
{
	return erp_fail(e, "encoder (thread %d): %s", (int)t->rec_tid, ptenc_error(mt(e, t)->enc));
}

static int on_start(struct erp *e, struct erp_thread *t, uint64_t ip)
{
	struct mat *m = e->obs->ctx;
	if (m->nthreads < e->nthreads) {
		/* The replay knows all its threads from the start (its index). */
		struct mat_thread *grown = realloc(m->threads, e->nthreads * sizeof *grown);
		if (!grown)
			return erp_fail(e, "out of memory");
		memset(grown + m->nthreads, 0, (e->nthreads - m->nthreads) * sizeof *grown);
		m->threads = grown;
		m->nthreads = e->nthreads;
	}
	struct mat_thread *x = mt(e, t);
	struct ptenc_config cfg = {.psb_period = m->psb_period};
	x->enc = ptenc_new(&cfg);
	x->pos = calloc(t->nev ? t->nev : 1, sizeof *x->pos);
	x->from = t->next;
	if (!x->enc || !x->pos)
		return erp_fail(e, "out of memory");
	return ptenc_begin(x->enc, ip, 0) < 0 ? enc_fail(e, t) : 0;
}

static int on_insn(struct erp *e, struct erp_thread *t, uint64_t ip, const struct insn_info *info,
		   uint64_t next)
{
	struct mat *m = e->obs->ctx;
	if (m->progress && ++m->unreported >= 65536)
		tell_instructions(e, m);
	return ptenc_step(mt(e, t)->enc, ip, info, next) < 0 ? enc_fail(e, t) : 0;
}

static int on_interrupt(struct erp *e, struct erp_thread *t, uint64_t ip)
{
	return ptenc_interrupt(mt(e, t)->enc, ip) < 0 ? enc_fail(e, t) : 0;
}

static int on_event(struct erp *e, struct erp_thread *t, size_t k)
{
	struct mat *m = e->obs->ctx;
	mt(e, t)->pos[k] = t->insns;
	if (m->progress) {
		atomic_fetch_add_explicit(&m->progress->events, 1, memory_order_relaxed);
		tell_instructions(e, m);
	}
	return 0;
}

static int on_end(struct erp *e, struct erp_thread *t, uint64_t ip)
{
	struct mat_thread *x = mt(e, t);
	x->end_pos = t->insns;
	return ptenc_end(x->enc, ip) < 0 ? enc_fail(e, t) : 0;
}

/* Append run to the array *v (*n used of *cap). */
static int push_run(struct erp *e, struct trace_sched_run **v, size_t *n, size_t *cap,
		    struct trace_sched_run run)
{
	if (*n == *cap) {
		size_t grow = *cap ? 2 * *cap : 64;
		struct trace_sched_run *grown = realloc(*v, grow * sizeof *grown);
		if (!grown)
			return erp_fail(e, "out of memory");
		*v = grown;
		*cap = grow;
	}
	(*v)[(*n)++] = run;
	return 0;
}

static int on_run(struct erp *e, struct erp_thread *t, uint64_t first, uint64_t count)
{
	struct mat *m = e->obs->ctx;
	struct trace_sched_run run = {t->rec_tid, first, count};
	if (e->running && e->running != t)
		return count ? push_run(e, &m->later, &m->nlater, &m->later_cap, run) : 0;
	if (count && push_run(e, &m->runs, &m->nruns, &m->cap, run) < 0)
		return -1;
	for (size_t i = 0; i < m->nlater; i++)
		if (push_run(e, &m->runs, &m->nruns, &m->cap, m->later[i]) < 0)
			return -1;
	m->nlater = 0;
	return 0;
}

void materialise_say_made(const struct materialise_stats *st)
{
	fprintf(stderr, "ptrev: history made: %llu instructions in %.1f s\n",
		(unsigned long long)st->instructions, (double)st->ns / 1e9);
	if (st->cut_short)
		fprintf(stderr, "ptrev: the recording's thread order ends before its program did "
			"(a recorder stopped early): its history ends there\n");
}

bool materialise_needed(const struct trace_data *td)
{
	const char *b = trace_meta(td, "backend");
	return b && strcmp(b, "event") == 0 && !trace_meta(td, "materialised");
}

/* ---- writing the result ---- */

struct conv {
	struct erp *e;
	struct mat *m;
};

/* The thread's state in the history made, NULL when it has none (it
 * ended before a tail's start, or never ran). */
static const struct mat_thread *made_thread(const struct conv *c, pid_t tid)
{
	struct erp_thread *t = erp_thread_rec(c->e, tid);
	size_t i = t ? (size_t)(t - c->e->threads) : c->m->nthreads;
	return i < c->m->nthreads && c->m->threads[i].enc ? &c->m->threads[i] : NULL;
}

/* tid's first event in the history made: the events before it are not
 * (all of them where the thread has no history here). */
static size_t first_event(const struct conv *c, pid_t tid)
{
	const struct mat_thread *x = made_thread(c, tid);
	return x ? x->from : SIZE_MAX;
}

/* The instruction position of event k of thread tid. */
static uint64_t at_event(const struct conv *c, pid_t tid, uint64_t k)
{
	struct erp_thread *t = erp_thread_rec(c->e, tid);
	if (!t)
		return 0;
	size_t i = (size_t)(t - c->e->threads);
	if (i >= c->m->nthreads)
		return 0; /* never ran */
	struct mat_thread *x = &c->m->threads[i];
	if (!x->pos || k >= t->nev)
		return x->end_pos;
	return x->pos[k];
}

/* The position after n events of tid (a mapping changed by the syscall
 * that was event n - 1: after its instruction). */
static uint64_t after_events(const struct conv *c, pid_t tid, uint64_t n)
{
	struct erp_thread *t = erp_thread_rec(c->e, tid);
	if (!t || n <= first_event(c, tid))
		return 0; /* before the history began: there from its start */
	uint64_t p = at_event(c, tid, n - 1);
	bool insn = n - 1 < t->nev &&
		    (t->ev[n - 1].kind == ERP_SYSCALL || t->ev[n - 1].kind == ERP_RDTSC);
	return p + (insn ? 1 : 0);
}

/* Did the replay get to event k of tid (its order may end before the
 * events do: a recorder stopped before it wrote the rest)? Only what it
 * got to is in the history; a syscall it stands at the entry of counts
 * (its instruction ran, as in a recording that ends in it). */
static bool happened(const struct conv *c, pid_t tid, uint64_t k)
{
	struct erp_thread *t = erp_thread_rec(c->e, tid);
	return t && t->tid && (k < t->next || (k == t->next && t->at_entry));
}

/* ...and is it in the history (not before a tail's start)? */
static bool reached(const struct conv *c, pid_t tid, uint64_t k)
{
	return k >= first_event(c, tid) && happened(c, tid, k);
}

static bool created(const struct conv *c, pid_t tid)
{
	struct erp_thread *t = erp_thread_rec(c->e, tid);
	return t && t->tid;
}

/* Did the replay get to the program's end (not only to the end of its
 * thread order)? */
static bool all_done(const struct erp *e)
{
	if (e->exited)
		return true;
	for (size_t i = 0; i < e->nthreads; i++)
		if (!e->threads[i].gone)
			return false;
	return true;
}

static int write_all(const struct conv *c, const struct trace_data *ev, struct trace_writer *w)
{
	int r = 0;
	for (size_t i = 0; i < ev->nmeta && r == 0; i++)
		r = trace_write_meta(w, ev->meta_keys[i], ev->meta_values[i]);
	if (r == 0)
		r = trace_write_meta(w, "materialised", "1");
	if (r == 0 && c->m->from) {
		char from[32];
		snprintf(from, sizeof from, "%zu", c->m->from);
		r = trace_write_meta(w, "history_from", from);
	}
	if (r == 0 && c->m->run) {
		char run[32];
		snprintf(run, sizeof run, "%zu", c->m->run);
		r = trace_write_meta(w, "history_from_run", run);
	}
	if (r == 0 && c->m->point)
		r = trace_write_state(w, c->m->point);
	for (size_t i = 0; i < ev->nthreads && r == 0; i++) {
		struct trace_thread th = ev->threads[i];
		if (!created(c, th.tid) || (th.exited && !erp_thread_rec(c->e, th.tid)->gone))
			continue;
		/* A multi-threaded tail: a thread that ended before it has no
		 * history here; one created before it is there from its start,
		 * as the program's first thread is. */
		if (c->m->run && !made_thread(c, th.tid))
			continue;
		if (th.parent && c->m->run && th.pos < first_event(c, th.parent)) {
			th.parent = 0;
			th.pos = 0;
		}
		if (th.exited) {
			struct erp_thread *t = erp_thread_rec(c->e, th.tid);
			size_t k = t ? (size_t)(t - c->e->threads) : c->m->nthreads;
			th.pos = k < c->m->nthreads ? c->m->threads[k].end_pos : 0;
		} else if (th.parent) {
			th.pos = at_event(c, th.parent, th.pos);
		}
		r = trace_write_thread(w, &th);
	}
	for (size_t i = 0; i < ev->nfiles && r == 0; i++)
		r = trace_write_file(w, &ev->files[i]);
	for (size_t i = 0; i < ev->nmmaps && r == 0; i++) {
		struct trace_mmap mm = ev->mmaps[i];
		if (mm.tid && mm.pos && !happened(c, mm.tid, mm.pos - 1))
			continue;
		mm.pos = mm.tid ? after_events(c, mm.tid, mm.pos) : 0;
		r = trace_write_mmap(w, &mm);
	}
	for (size_t i = 0; i < ev->nmunmaps && r == 0; i++) {
		struct trace_munmap mu = ev->munmaps[i];
		if (mu.tid && mu.pos && !happened(c, mu.tid, mu.pos - 1))
			continue;
		mu.pos = mu.tid ? after_events(c, mu.tid, mu.pos) : 0;
		r = trace_write_munmap(w, &mu);
	}
	for (size_t i = 0; i < ev->ncode && r == 0; i++)
		r = trace_write_code(w, &ev->code[i]);
	for (size_t i = 0; i < ev->nsyscalls && r == 0; i++) {
		struct trace_syscall s = ev->syscalls[i];
		if (!reached(c, s.tid, s.pos))
			continue;
		s.pos = at_event(c, s.tid, s.pos);
		r = trace_write_syscall(w, &s);
	}
	for (size_t i = 0; i < ev->nsignals && r == 0; i++) {
		struct trace_signal g = ev->signals[i];
		if (!reached(c, g.tid, g.pos))
			continue;
		g.pos = at_event(c, g.tid, g.pos);
		g.where = TRACE_SIG_AT_POS;
		r = trace_write_signal(w, &g);
	}
	for (size_t i = 0; i < ev->nsigframes && r == 0; i++) {
		struct trace_sigframe f = ev->sigframes[i];
		if (!reached(c, f.tid, f.pos))
			continue;
		f.pos = at_event(c, f.tid, f.pos);
		r = trace_write_sigframe(w, &f);
	}
	for (size_t i = 0; i < ev->nrdtsc && r == 0; i++) {
		struct trace_rdtsc t = ev->rdtsc[i];
		if (!reached(c, t.tid, t.pos))
			continue;
		t.pos = at_event(c, t.tid, t.pos);
		r = trace_write_rdtsc(w, &t);
	}
	for (size_t i = 0; i < ev->ngdb_writes && r == 0; i++) {
		/* Made after event pos - 1, where the replay completed it and
		 * inside this history (one made before a tail's start is in
		 * the state it starts from). */
		struct trace_gdb_write g = ev->gdb_writes[i];
		struct erp_thread *t = erp_thread_rec(c->e, g.tid);
		if (!t || !g.pos || g.pos <= first_event(c, g.tid) || g.pos - 1 >= t->next)
			continue;
		g.pos = after_events(c, g.tid, g.pos);
		r = trace_write_gdb_write(w, &g);
	}
	for (size_t i = 0; i < ev->nstates && r == 0; i++) {
		/* A point with memory (STATE_MEM, the program's entry): the
		 * history's replays, which go by instruction positions and
		 * know no points, put its registers and memory in place where
		 * it stands, as they make gdb's changes (erp_at_state does
		 * the same in the replays by events). */
		const struct trace_state *st = &ev->states[i];
		if (!st->nmem || !reached(c, st->tid, st->pos))
			continue;
		uint64_t pos = at_event(c, st->tid, st->pos);
		struct trace_gdb_write g = {.tid = st->tid, .pos = pos, .regs = true,
					    .bytes = (const uint8_t *)st->regs, .len = sizeof st->regs};
		r = trace_write_gdb_write(w, &g);
		for (size_t k = 0; k < st->nmem && r == 0; k++) {
			g = (struct trace_gdb_write){.tid = st->tid, .pos = pos,
						     .addr = st->mem[k].addr,
						     .bytes = st->mem[k].bytes, .len = st->mem[k].len};
			r = trace_write_gdb_write(w, &g);
		}
	}
	for (size_t i = 0; i < c->m->nthreads && r == 0; i++) {
		size_t len = 0;
		struct ptenc *enc = c->m->threads[i].enc;
		const uint8_t *pt = enc ? ptenc_data(enc, &len) : NULL;
		if (len)
			r = trace_write_pt(w, c->e->threads[i].rec_tid, pt, len);
	}
	if (r == 0)
		r = trace_write_schedule(w, c->m->runs, c->m->nruns);
	if (r == 0 && ev->complete && all_done(c->e)) {
		struct trace_end end = ev->end;
		end.instructions = end.psb_count = 0;
		for (size_t i = 0; i < c->m->nthreads; i++) {
			end.instructions += c->m->threads[i].end_pos;
			if (c->m->threads[i].enc)
				end.psb_count += ptenc_stats(c->m->threads[i].enc)->psbs;
		}
		r = trace_write_end(w, &end);
	}
	return r;
}

size_t materialise_event_count(const struct trace_data *ev)
{
	return ev->nsyscalls + ev->nsignals + ev->nrdtsc + ev->nstates;
}

size_t materialise_tail_events(const struct trace_data *ev, size_t from, size_t run)
{
	size_t n = run ? 0 : materialise_event_count(ev) - from;
	for (size_t i = run; run && i < ev->nsched; i++)
		n += ev->sched[i].count;
	return n;
}

/* PTREV_HISTORY_CHECKPOINTS=0: none (the tests' oracle, the benchmark's
 * reference). */
static bool checkpoints_wanted(void)
{
	const char *v = getenv("PTREV_HISTORY_CHECKPOINTS");
	return !(v && strcmp(v, "0") == 0);
}

/* Did ev's program run one thread only (its THREAD records may name it
 * more than once)? Only such a history's replayer takes checkpoints. */
static bool one_thread(const struct trace_data *ev)
{
	for (size_t i = 1; i < ev->nthreads; i++)
		if (ev->threads[i].tid != ev->threads[0].tid)
			return false;
	return ev->nthreads > 0;
}

/* The history from the one thread's event `from` on (0: all of it), or
 * from point in the stretch before it; or (run set) from that run of the
 * recorded order on. */
static int make(const struct trace_data *ev, size_t from, const struct trace_state *point,
		size_t run, struct trace_writer *w,
		struct materialise_stats *st, struct materialise_progress *progress,
		struct materialise_copies *copies, char *err, size_t errlen)
{
	uint64_t t0 = erp_now_ns();
	struct mat m = {.progress = progress, .from = from, .point = point, .run = run};
	if (progress)
		atomic_store(&progress->events_total, materialise_tail_events(ev, from, run));
	const char *psb = trace_meta(ev, "psb_period");
	m.psb_period = psb ? (uint32_t)strtoul(psb, NULL, 10) : PTENC_DEFAULT_PSB_PERIOD;
	struct erp_observer obs = {.start = on_start, .insn = on_insn, .interrupt = on_interrupt,
				   .event = on_event, .end = on_end, .run = on_run, .ctx = &m};
	if (copies && !from && !run && one_thread(ev) && checkpoints_wanted())
		obs.copy_every = MATERIALISE_CHECKPOINT_EVERY;
	struct erp e;
	const atomic_bool *stop = progress ? &progress->stop : NULL;
	struct erp_copy resume = {0};
	if (copies) {
		resume = (struct erp_copy){.pid = copies->from, .next = copies->from_next};
		copies->from = 0;
		copies->start = 0;
	}
	int rc = from || run ? erp_replay_tail(&e, ev, &obs, from, point, run, stop,
					       copies != NULL, resume)
			     : erp_replay_all(&e, ev, &obs, false, stop);
	if (rc < 0)
		snprintf(err, errlen, "%s", e.why);
	if (rc == 0 && write_all(&(struct conv){&e, &m}, ev, w) < 0) {
		snprintf(err, errlen, "writing the history: %s",
			 trace_writer_error(w) ? trace_writer_error(w) : "failed");
		rc = -1;
	}
	if (st) {
		memset(st, 0, sizeof *st);
		for (size_t i = 0; i < e.nthreads; i++)
			st->instructions += e.threads[i].insns;
		st->stops = e.stops;
		/* A recording being made (a live one, no END yet) ends where
		 * its program stands: not short of anything. */
		st->cut_short = rc == 0 && !all_done(&e) && ev->complete;
		st->ns = erp_now_ns() - t0;
		st->resumed_at = e.resumed_at;
		if (rc < 0)
			st->failed_at = e.failed_at;
	}
	if (rc == 0 && copies) {
		copies->start = erp_take_start_copy(&e);
		copies->ncps = erp_take_mid_copies(&e, copies->cp_pos, copies->cp_pid,
						   MATERIALISE_CHECKPOINTS);
	}
	erp_free(&e);
	for (size_t i = 0; i < m.nthreads; i++) {
		ptenc_free(m.threads[i].enc);
		free(m.threads[i].pos);
	}
	free(m.threads);
	free(m.runs);
	free(m.later);
	return rc;
}

int materialise(const struct trace_data *ev, struct trace_writer *w,
		struct materialise_stats *st, struct materialise_progress *progress, char *err,
		size_t errlen)
{
	return make(ev, 0, NULL, 0, w, st, progress, NULL, err, errlen);
}

void materialise_copies_kill(struct materialise_copies *copies)
{
	ptrace_park_kill(copies->from);
	ptrace_park_kill(copies->start);
	for (size_t i = 0; i < copies->ncps; i++)
		ptrace_park_kill(copies->cp_pid[i]);
	copies->from = copies->start = 0;
	copies->ncps = 0;
}

static int to_memory(const struct trace_data *ev, size_t from, const struct trace_state *point,
		     size_t run, struct trace_data *out,
		     struct materialise_stats *st, struct materialise_progress *progress,
		     struct materialise_copies *copies, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	struct trace_writer *w = trace_writer_open_memory(err, errlen);
	int rc = !w || trace_writer_keep(w, out) < 0
			 ? -1
			 : make(ev, from, point, run, w, st, progress, copies, err, errlen);
	if (copies && copies->from) { /* make() never ran: the copy is not needed */
		ptrace_park_kill(copies->from);
		copies->from = 0;
	}
	if (!w)
		return -1;
	if (rc < 0 && !err[0])
		snprintf(err, errlen, "out of memory");
	trace_writer_keep(w, NULL);
	trace_writer_close(w, NULL, 0);
	if (rc < 0)
		trace_data_free(out);
	return rc;
}

int materialise_to_memory(const struct trace_data *ev, struct trace_data *out,
			  struct materialise_stats *st, struct materialise_progress *progress,
			  char *err, size_t errlen)
{
	return to_memory(ev, 0, NULL, 0, out, st, progress, NULL, err, errlen);
}

int materialise_tail_to_memory(const struct trace_data *ev, size_t from,
			       const struct trace_state *point, size_t run,
			       struct trace_data *out, struct materialise_stats *st,
			       struct materialise_progress *progress,
			       struct materialise_copies *copies, char *err, size_t errlen)
{
	return to_memory(ev, from, point, run, out, st, progress, copies, err, errlen);
}

/* How many of n records of stride size (pos at offset off) come at or
 * before event last; -1 when their positions are out of order. */
static long upto(const void *v, size_t n, size_t size, size_t off, uint64_t last)
{
	uint64_t prev = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t pos;
		memcpy(&pos, (const char *)v + i * size + off, sizeof pos);
		if (pos < prev)
			return -1;
		prev = pos;
		if (pos <= last)
			k = i + 1;
	}
	return (long)k;
}

int materialise_cut(const struct trace_data *ev, size_t last, struct trace_data *view)
{
	/* One thread (its THREAD records: its start, its end). */
	for (size_t i = 0; i < ev->nthreads; i++)
		if (ev->threads[i].tid != ev->threads[0].tid)
			return -1;
	*view = *ev;
	long s = upto(ev->syscalls, ev->nsyscalls, sizeof *ev->syscalls,
		      offsetof(struct trace_syscall, pos), last);
	long g = upto(ev->signals, ev->nsignals, sizeof *ev->signals,
		      offsetof(struct trace_signal, pos), last);
	long r = upto(ev->rdtsc, ev->nrdtsc, sizeof *ev->rdtsc, offsetof(struct trace_rdtsc, pos),
		      last);
	long t = upto(ev->states, ev->nstates, sizeof *ev->states,
		      offsetof(struct trace_state, pos), last);
	long f = upto(ev->sigframes, ev->nsigframes, sizeof *ev->sigframes,
		      offsetof(struct trace_sigframe, pos), last);
	/* gdb's changes right after event last too: the state there. */
	long w = upto(ev->gdb_writes, ev->ngdb_writes, sizeof *ev->gdb_writes,
		      offsetof(struct trace_gdb_write, pos), last + 1);
	if (s < 0 || g < 0 || r < 0 || t < 0 || f < 0 || w < 0)
		return -1;
	view->ngdb_writes = (size_t)w;
	view->nsyscalls = (size_t)s;
	view->nsignals = (size_t)g;
	view->nrdtsc = (size_t)r;
	view->nstates = (size_t)t;
	view->nsigframes = (size_t)f;
	/* One thread's events are its one run (event_replay.c); as a
	 * recording cut short, its last event is where the replay stops. */
	view->nsched = 0;
	view->sched = NULL;
	view->complete = false;
	memset(&view->end, 0, sizeof view->end);
	return 0;
}

int materialise_cut_at(const struct trace_data *ev, const struct trace_state *st,
		       struct trace_data *view, struct trace_state **owned)
{
	*owned = NULL;
	if (st->pos == 0 || materialise_cut(ev, st->pos - 1, view) < 0)
		return -1;
	/* One block: the records, then st's skip ranges and stack bytes. */
	size_t recs = (view->nstates + 1) * sizeof(struct trace_state);
	size_t skip = 2 * st->nskip * sizeof(uint64_t);
	struct trace_state *v = malloc(recs + skip + st->sp_len);
	if (!v)
		return -1;
	if (view->nstates)
		memcpy(v, view->states, view->nstates * sizeof *v);
	struct trace_state *last = &v[view->nstates];
	*last = *st;
	char *tail = (char *)v + recs;
	if (skip) {
		memcpy(tail, st->skip, skip);
		last->skip = (const uint64_t *)(void *)tail;
	}
	if (st->sp_len) {
		memcpy(tail + skip, st->sp_bytes, st->sp_len);
		last->sp_bytes = (const uint8_t *)tail + skip;
	}
	view->states = v;
	view->nstates++;
	*owned = v;
	return 0;
}

size_t materialise_tail_from(const struct trace_data *td)
{
	const char *v = trace_meta(td, "history_from");
	return v ? (size_t)strtoull(v, NULL, 10) : 0;
}

size_t materialise_tail_run(const struct trace_data *td)
{
	const char *v = trace_meta(td, "history_from_run");
	return v ? (size_t)strtoull(v, NULL, 10) : 0;
}

const struct trace_state *materialise_tail_point(const struct trace_data *td)
{
	return materialise_tail_from(td) && td->nstates == 1 ? &td->states[0] : NULL;
}
