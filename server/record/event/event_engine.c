/* The event recorder as an execution engine (include/ptrev/event_engine.h):
 * the recorder's own stop handlers, a wait that runs them until a stop for
 * gdb (event_live.c) has every thread held, and a resume that hands the
 * held threads back to the recorder. */
#include "event_rec.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrev/event_engine.h"
#include "ptrev/inferior_raw.h"
#include "ptrev/syscall_inject.h"

/* How long a wait that must not block looks for a stop. */
#define POLL_NS 10000000ull
/* How long a blocking wait sleeps before it looks at Ctrl-C again. */
#define NAP_NS 50000000ull

struct event_engine {
	struct ev_rec r;
	struct trace_data td;  /* what the writer wrote, kept */
	bool finished;
};

struct event_engine *event_engine_new(struct inferior *inf, struct trace_writer *w,
				      const struct event_record_opts *o, char *err, size_t errlen)
{
	struct event_engine *e = calloc(1, sizeof *e);
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	struct ev_rec *r = &e->r;
	ev_init(r, inf, w, o);
	r->live.on = true;
	r->live.halted = true; /* until gdb resumes the program */
	r->live.kept = &e->td;
	if (trace_writer_keep(w, &e->td) < 0) {
		snprintf(err, errlen, "out of memory");
		free(e);
		return NULL;
	}
	return e;
}

int event_engine_start(struct event_engine *e, char *err, size_t errlen)
{
	if (ev_set_up(&e->r) == 0)
		return 0;
	snprintf(err, errlen, "%s", e->r.err[0] ? e->r.err : "cannot record");
	return -1;
}

int event_engine_resume(struct event_engine *e, pid_t tid, bool step, int sig)
{
	struct ev_thread *t = ev_thread_find(&e->r, tid);
	if (!t || e->finished || e->r.proc_gone)
		return -1;
	struct inf_thread *it = inferior_thread(e->r.inf, tid);
	if (it)
		it->has_siginfo = false; /* ev_live_signal's, shown while t stood */
	t->gdb_go = true;
	t->gdb_step = step;
	t->step_started = false;
	t->gdb_resume_sig = sig;
	return 0;
}

/* The thread that has the CPU and that gdb did not resume (it asked for
 * one other thread only): its run ends where it stands, at a STATE point,
 * and the CPU goes to a thread gdb resumed. */
static int give_cpu_up(struct ev_thread *t)
{
	struct ev_rec *r = t->rec;
	struct user_regs_struct now;
	if (t->moved) {
		if (ptrace(PTRACE_GETREGS, t->tid, NULL, &now) < 0)
			return ev_fail(r, "thread %d: registers: %s", (int)t->tid, strerror(errno));
		if (ev_point_write(t, &now) < 0)
			return -1;
	}
	if (ev_run_end(t, t->events - 1) < 0)
		return -1;
	r->cpu = NULL;
	t->state = EV_T_READY;
	t->check_pending = !t->parked_sig;
	t->parked = false;
	return 0;
}

/* gdb resumes a thread that stopped with a signal, with sig (0: dropped),
 * or sends one it did not report: the recorder takes it as it took it
 * from the kernel. */
static int resume_with_signal(struct ev_thread *t, int sig)
{
	struct ev_rec *r = t->rec;
	siginfo_t si = t->gdb_si;
	bool reported = t->gdb_sig != 0;
	t->gdb_sig = 0;
	t->parked = false;
	if (!sig) {
		/* The signal an event's place was kept for (at_return) is
		 * dropped: one that comes later is not at that place. */
		t->at_return = false;
		return ev_resume(t, 0);
	}
	if (!reported || si.si_signo != sig) {
		memset(&si, 0, sizeof si);
		si.si_signo = sig;
		si.si_code = SI_USER;
		si.si_pid = r->self;
	}
	if (!reported && (t->state != EV_T_RUNNING || r->cpu != t)) {
		fprintf(stderr, "ptrev: signal %d for thread %d, which is in a syscall, is not "
			"delivered while recording\n", sig, (int)t->tid);
		return ev_resume(t, t->parked_sig);
	}
	struct user_regs_struct now;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &now) < 0)
		return ev_fail(r, "thread %d: registers: %s", (int)t->tid, strerror(errno));
	return ev_signal_stop(t, sig, &si, &now);
}

/* The first wait after gdb's resumes: the held program goes on. */
static int release(struct ev_rec *r)
{
	bool any = false;
	for (size_t i = 0; i < r->nthreads; i++)
		any |= r->threads[i]->gdb_go && r->threads[i]->state != EV_T_GONE;
	if (!r->live.halted || !any)
		return 0;
	r->live.halted = false;
	r->live.have_report = false;
	struct ev_thread *c = r->cpu;
	if (c && !c->gdb_go && c->state == EV_T_RUNNING && !c->exiting && give_cpu_up(c) < 0)
		return -1;
	for (size_t i = 0; i < r->nthreads; i++) {
		struct ev_thread *t = r->threads[i];
		if (!t->gdb_go || t->state == EV_T_GONE)
			continue;
		int rc = 0;
		if (t->gdb_sig || t->gdb_resume_sig)
			rc = resume_with_signal(t, t->gdb_resume_sig);
		else if (t->parked) {
			rc = ev_signal_take_waiting(t);
			t->parked = false;
			if (rc == 0)
				rc = ev_resume(t, t->parked_sig);
		}
		if (rc < 0)
			return -1;
	}
	return ev_dispatch(r);
}

static bool any_running(const struct ev_rec *r)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i]->state != EV_T_GONE && r->threads[i]->running)
			return true;
	return false;
}

/* gdb's Ctrl-C: the thread running its own code stops where it is (our
 * SIGSTOP); with none, the program is held at once, a thread in a syscall
 * named. */
static int interrupt_now(struct ev_rec *r)
{
	struct ev_thread *t = r->cpu;
	if (t && t->state == EV_T_RUNNING && !t->exiting && t->running && !t->delivering) {
		t->gdb_interrupt = true;
		t->stop_expected++;
		if (syscall(SYS_tgkill, r->pid, t->tid, SIGSTOP) < 0 && errno != ESRCH)
			return ev_fail(r, "cannot stop thread %d: %s", (int)t->tid, strerror(errno));
		return 0;
	}
	if (!t) {
		for (size_t i = 0; i < r->nthreads && !t; i++)
			if (r->threads[i]->state != EV_T_GONE && r->threads[i]->started)
				t = r->threads[i];
	}
	if (!t)
		return 0;
	struct stop_event ev = {.kind = STOP_SIGNAL, .tid = t->tid, .sig = SIGINT};
	return ev_live_report(r, &ev);
}

static void nap(const sigset_t *chld, uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	sigtimedwait(chld, NULL, &ts);
}

/* Every thread gdb resumed has exited while the others stay stopped
 * (scheduler-locking): nothing can happen until gdb resumes another, and
 * gdb hears so (as inferior_wait says it), not nothing forever. */
static bool resumed_all_gone(const struct ev_rec *r)
{
	bool resumed = false, alive = false;
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct ev_thread *t = r->threads[i];
		if (t->gdb_go && t->state != EV_T_GONE)
			return false;
		resumed |= t->gdb_go;
		alive |= t->state != EV_T_GONE;
	}
	return resumed && alive;
}

static void gdb_resumes_none(struct ev_rec *r)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		r->threads[i]->gdb_go = false;
		r->threads[i]->gdb_step = false;
		r->threads[i]->gdb_resume_sig = 0;
	}
}

int event_engine_wait(struct event_engine *e, struct stop_event *ev, bool block)
{
	struct ev_rec *r = &e->r;
	if (r->err[0] || e->finished)
		return -1;
	if (r->proc_gone && !r->live.have_report)
		return -1;
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	uint64_t until = ev_now_ns() + POLL_NS;
	int rc = release(r), got = 0;
	while (rc == 0) {
		if (r->live.have_report && !any_running(r)) {
			*ev = r->live.report;
			r->live.have_report = false;
			gdb_resumes_none(r);
			got = 1;
			break;
		}
		if (!r->live.have_report && !any_running(r) && resumed_all_gone(r)) {
			*ev = (struct stop_event){.kind = STOP_NO_RESUMED, .tid = r->pid};
			gdb_resumes_none(r);
			r->live.halted = true; /* the rest stay held till gdb resumes them */
			got = 1;
			break;
		}
		if (r->live.interrupt && !r->live.halted) {
			r->live.interrupt = 0;
			rc = interrupt_now(r);
			continue;
		}
		int st;
		/* This thread's tracees only: a history's background job traces
		 * its replay from a thread of its own (materialise_job.c), whose
		 * stops a wait for any child would take too. */
		pid_t tid = waitpid(-1, &st, __WALL | __WNOTHREAD | WNOHANG);
		if (tid > 0) {
			rc = ev_on_status(r, tid, st);
			continue;
		}
		if (tid < 0 && errno == ECHILD) {
			rc = ev_fail(r, "the program is gone");
			break;
		}
		if (tid < 0 && errno != EINTR) {
			rc = ev_fail(r, "waiting for the program: %s", strerror(errno));
			break;
		}
		rc = ev_state_check(r);
		if (rc == 0)
			rc = ev_exited_leader(r);
		if (rc != 0)
			break;
		int64_t next = ev_state_next_ns(r);
		uint64_t now = ev_now_ns(), ns = NAP_NS;
		if (!block && !r->live.have_report) {
			if (now >= until)
				break;
			ns = until - now;
		}
		if (next >= 0 && (uint64_t)next < ns)
			ns = (uint64_t)next;
		nap(&chld, ns ? ns : 1);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc < 0 ? -1 : got;
}

int event_engine_interrupt(struct event_engine *e)
{
	e->r.live.interrupt = 1;
	return 0;
}

const char *event_engine_error(const struct event_engine *e)
{
	return e->r.err;
}

void event_engine_stop_before_exit(struct event_engine *e, bool on)
{
	e->r.live.stop_before_exit = on;
}

/* t has the CPU and stands at a stop: a STATE point where it stands, as
 * its next event, which ends its run (so that a replay of the runs so far
 * reaches it); its run goes on after. 0/-1. */
static int point_here(struct ev_thread *t)
{
	struct ev_rec *r = t->rec;
	struct user_regs_struct now;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &now) < 0)
		return ev_fail(r, "thread %d: registers: %s", (int)t->tid, strerror(errno));
	if (ev_point_write(t, &now) < 0 || ev_run_end(t, t->events - 1) < 0)
		return -1;
	r->cpu = t;
	t->run_first = t->events;
	return 0;
}

int event_engine_present(struct event_engine *e, char *err, size_t errlen)
{
	struct ev_rec *r = &e->r;
	struct ev_thread *t = r->cpu;
	int rc = 0;
	if (t && t->state == EV_T_RUNNING && t->moved && !t->exiting && !t->running)
		rc = point_here(t);
	if (rc == 0)
		rc = ev_sched_flush(r);
	if (rc < 0)
		snprintf(err, errlen, "%s", r->err[0] ? r->err : "recording failed");
	return rc;
}

int event_engine_gdb_write(struct event_engine *e, const struct trace_gdb_write *g)
{
	struct ev_rec *r = &e->r;
	struct ev_thread *t = ev_thread_find(r, g->tid);
	if (!g->regs)
		t = r->cpu;
	if (e->finished || r->proc_gone || !t || !t->started || t->running || t->exiting ||
	    t->exit_hold_point || t->restarting || t->delivering || t->own_sig)
		return -1;
	if (t == r->cpu ? t->state != EV_T_RUNNING : t->state != EV_T_READY || t->moved)
		return -1;
	/* After a STATE point where it stands, which ends its run there:
	 * the change then comes after every event of the runs so far. */
	if (t == r->cpu && (t->moved || t->events > t->run_first) && point_here(t) < 0)
		return -1;
	/* Right after an event: none yet (the thread's first instruction)
	 * is a place no event marks. */
	if (!t->events)
		return -1;
	struct trace_gdb_write w = *g;
	w.tid = t->tid;
	w.pos = t->events;
	return trace_write_gdb_write(r->w, &w);
}

bool event_engine_at_entered_syscall(const struct event_engine *e, pid_t tid)
{
	const struct ev_thread *t = ev_thread_find((struct ev_rec *)&e->r, tid);
	return t && t->exit_hold_point;
}

bool event_engine_in_syscall(const struct event_engine *e, pid_t tid)
{
	const struct ev_thread *t = ev_thread_find((struct ev_rec *)&e->r, tid);
	return t && !t->exiting && (t->state == EV_T_SYSCALL || t->restarting);
}

const struct trace_data *event_engine_data(const struct event_engine *e)
{
	return &e->td;
}

/* rdtsc back to the program in a thread that stays (the recording ends,
 * the process goes on). */
static void untrap_rdtsc(struct ev_thread *t)
{
	uint64_t args[6] = {PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0, 0};
	int64_t res = 0;
	int pending = 0;
	char why[256];
	if (syscall_inject(t->tid, SYS_prctl, args, &res, &pending, why, sizeof why) < 0)
		fprintf(stderr, "ptrev: thread %d keeps rdtsc trapped: %s\n", (int)t->tid, why);
}

int event_engine_finish(struct event_engine *e, struct trace_end *end, bool write_end,
			char *err, size_t errlen)
{
	struct ev_rec *r = &e->r;
	int rc = 0;
	if (e->finished)
		return 0;
	if (!r->proc_gone && r->inf->pid && !r->inf->exited) {
		for (size_t i = 0; i < r->nthreads; i++) {
			struct ev_thread *t = r->threads[i];
			struct inf_thread *it = inferior_thread(r->inf, t->tid);
			if (t->state == EV_T_GONE || !t->started || t->running)
				continue;
			if (t->state != EV_T_SYSCALL)
				untrap_rdtsc(t);
			if (it) /* back to the inferior module, as it would have it */
				it->stop_expected += t->stop_expected;
		}
	}
	if (ev_sched_flush(r) < 0)
		rc = -1;
	r->end.duration_ns = ev_now_ns() - r->t0_ns;
	if (end)
		*end = r->end;
	if (write_end && trace_write_end(r->w, &r->end) < 0)
		rc = ev_fail(r, "writing the END record: %s", trace_writer_error(r->w));
	e->td.end = r->end;
	e->td.complete = true;
	trace_writer_keep(r->w, NULL);
	e->finished = true;
	r->live.on = false;
	if (rc < 0)
		snprintf(err, errlen, "%s", r->err);
	return rc;
}

void event_engine_free(struct event_engine *e)
{
	if (!e)
		return;
	if (!e->finished)
		trace_writer_keep(e->r.w, NULL);
	ev_free(&e->r);
	trace_data_free(&e->td);
	free(e);
}

int event_engine_meta(void *engine, const char *key, const char *value)
{
	struct event_engine *e = engine;
	return trace_write_meta(e->r.w, key, value);
}
