/* The recording target, pushed over the live one while the program is
 * recorded (serve --record / -o, or gdb's record btrace): at the present
 * the program runs under the sw recorder, every instruction into PT, and
 * the live process shows its state; at a past position the history target
 * over the recording being made answers, and the program moves through the
 * history until it reaches the present again, where gdb's record full
 * stops too, and the next resume runs it for real. */
#include "target_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/record_startup.h"
#include "ptrev/record_file.h"
#include "ptrev/record_meta.h"
#include "ptrev/recorder.h"
#include "ptrev/sw_engine.h"

struct recording_target {
	struct target base;      /* beneath: the live target */
	struct inferior *inf;    /* the live target's process */
	struct sw_engine *engine;
	struct trace_writer *writer; /* -o FILE, or NULL (memory only) */
	char *path;              /* FILE, for messages */
	struct target *past;     /* the history of what was recorded */
	struct timeline *tl;     /* past's */
	struct process_run run;  /* the program under the recorder */
	bool past_stop;          /* the last resume moved through the history */
	pid_t present_tid;       /* the thread of the last stop at the present */
	bool hold_exit;          /* target_record_opts.stop_before_exit */
};

static struct recording_target *rec(struct target *t)
{
	return (struct recording_target *)t;
}

static int exec_resume(void *ctx, pid_t tid, bool step, int sig)
{
	return sw_engine_resume(ctx, tid, step, sig);
}

static int exec_wait(void *ctx, struct stop_event *ev, bool block)
{
	int r = sw_engine_wait(ctx, ev, block);
	if (r < 0 && sw_engine_error(ctx)[0])
		fprintf(stderr, "ptrev: recording: %s\n", sw_engine_error(ctx));
	return r;
}

static const struct process_exec_ops recorder_exec = {exec_resume, exec_wait};

/* Does tid stand in the past (so that the history, not the live process,
 * shows its state)? */
static bool in_past(struct recording_target *r, pid_t tid)
{
	return r->tl && timeline_in_past(r->tl, tid);
}

static size_t recording_threads(struct target *t, pid_t **ids)
{
	struct recording_target *r = rec(t);
	if (!r->tl)
		return target_threads(t->beneath, ids);
	/* In the past, with thread switches known, the threads that existed
	 * there: not those created later, nor those that had ended. */
	if (timeline_global(r->tl) && !timeline_at_end(r->tl, 0))
		return timeline_threads_here(r->tl, ids);
	if (target_alive(t->beneath))
		return target_threads(t->beneath, ids);
	size_t n = timeline_thread_count(r->tl);
	*ids = malloc((n ? n : 1) * sizeof **ids);
	for (size_t i = 0; *ids && i < n; i++)
		(*ids)[i] = timeline_thread_tid(r->tl, i);
	return *ids ? n : 0;
}

static bool recording_can_reverse(struct target *t)
{
	return rec(t)->engine != NULL;
}

static void finish(struct recording_target *r);

static int recording_resume(struct target *t, const struct target_resume *req)
{
	struct recording_target *r = rec(t);
	if (!r->engine) /* ended early (below): the program runs on unrecorded */
		return target_alive(t->beneath) && !req->reverse ? target_resume(t->beneath, req)
								 : TARGET_REFUSED;
	/* A thread standing in the recorded past moves through the history. */
	int rc = target_resume(r->past, req);
	r->past_stop = rc == 0;
	if (rc != HISTORY_AT_PRESENT)
		return rc;
	if (!target_alive(t->beneath))
		return TARGET_REFUSED;
	target_live_mark_started(t->beneath);
	return process_run_resume(&r->run, req);
}

/* The present reached going forwards, in a thread that has ended by now:
 * it cannot be the one stopped there; the thread of the last stop at the
 * present is, where it still lives, else the first live one that the
 * recording knows. */
static void present_thread(struct recording_target *r, struct target *live,
			   struct target_stop *stop)
{
	if (r->present_tid && target_thread_exists(live, r->present_tid) &&
	    timeline_has_thread(r->tl, r->present_tid)) {
		stop->tid = r->present_tid;
		stop->have_pc = timeline_pc(r->tl, stop->tid, &stop->rip);
		return;
	}
	pid_t *ids;
	size_t n = target_threads(live, &ids);
	for (size_t i = 0; i < n; i++) {
		if (timeline_has_thread(r->tl, ids[i])) {
			stop->tid = ids[i];
			stop->have_pc = timeline_pc(r->tl, stop->tid, &stop->rip);
			break;
		}
	}
	free(ids);
}

static int recording_wait(struct target *t, struct target_stop *stop, bool block)
{
	struct recording_target *r = rec(t);
	if (!r->engine)
		return target_wait(t->beneath, stop, block);
	if (r->past_stop) {
		int got = target_wait(r->past, stop, block);
		r->past_stop = false;
		/* The present reached going forwards: a thread that has ended
		 * by now cannot be the one stopped there. */
		if (got == 1 && stop->kind == TARGET_STOP_HISTORY_END &&
		    !target_thread_exists(t->beneath, stop->tid))
			present_thread(r, t->beneath, stop);
		if (got == 1 && stop->kind == TARGET_STOP_HISTORY_END && !in_past(r, stop->tid))
			process_present_pc(t, stop);
		return got;
	}
	int got = process_run_wait(&r->run, stop, block);
	if (got == 1)
		r->present_tid = stop->tid;
	/* Index what the program did since the last stop. A history that
	 * cannot be indexed (a program that exec'd another: two programs'
	 * code at the same addresses) cannot be moved in: the recording ends
	 * here, and the program runs on unrecorded rather than every resume
	 * failing. */
	if (got == 1 && timeline_sync(r->tl) != 0) {
		fprintf(stderr, "ptrev: the recording cannot go on (its history cannot be indexed, "
			"above): it ends here; the program runs on unrecorded, without reverse "
			"execution\n");
		finish(r);
		/* The live target's own ptrace options again (the engine set
		 * its own): a later fork or exec is the live target's to see. */
		inferior_follow_forks(r->inf, true);
	}
	return got;
}

/* The sw engine runs the program only inside its waits: it cannot be
 * held from outside them, and is interrupted instead (a SIGINT it makes
 * up, never one the program gets). */
static int recording_pause(struct target *t)
{
	return rec(t)->engine ? -1 : target_pause(t->beneath);
}

static int recording_interrupt(struct target *t)
{
	return rec(t)->engine ? sw_engine_interrupt(rec(t)->engine) : target_interrupt(t->beneath);
}

static int recording_fetch_registers(struct target *t, pid_t tid, struct amd64_regfile *rf)
{
	struct recording_target *r = rec(t);
	return in_past(r, tid) ? target_fetch_registers(r->past, tid, rf)
			       : target_fetch_registers(t->beneath, tid, rf);
}

/* gdb changes the program at the present (set var, call, jump): the change
 * goes into the recording at the thread's position, for a replay to make
 * again (sw_engine_gdb_write); where it cannot be placed (the thread is
 * not between two instructions), the recording ends there. */
static void changed_by_gdb(struct recording_target *r, const struct trace_gdb_write *g)
{
	if (!r->engine || sw_engine_gdb_write(r->engine, g) == 0)
		return;
	fprintf(stderr, "ptrev: gdb changed thread %d where the recording cannot place the "
		"change: the recording ends here and the program runs on unrecorded, without "
		"reverse execution\n", (int)g->tid);
	finish(r);
	inferior_follow_forks(r->inf, true);
}

static int recording_store_registers(struct target *t, pid_t tid, const struct amd64_regfile *rf)
{
	struct recording_target *r = rec(t);
	if (in_past(r, tid))
		return -1;
	struct trace_gdb_write g;
	if (r->engine && !gdb_change_same_registers(t->beneath, tid, rf)) {
		if (!gdb_change_registers(tid, rf, &g))
			return -1;
		changed_by_gdb(r, &g);
		gdb_change_free(&g);
	}
	return target_store_registers(t->beneath, tid, rf);
}

static ssize_t recording_read_memory(struct target *t, pid_t tid, uint64_t addr, void *buf,
				     size_t len)
{
	struct recording_target *r = rec(t);
	return in_past(r, tid) ? target_read_memory(r->past, tid, addr, buf, len)
			       : target_read_memory(t->beneath, tid, addr, buf, len);
}

static ssize_t recording_write_memory(struct target *t, pid_t tid, uint64_t addr,
				      const void *buf, size_t len)
{
	struct recording_target *r = rec(t);
	if (in_past(r, tid))
		return -1;
	struct trace_gdb_write g;
	gdb_change_memory(tid, addr, buf, len, &g);
	if (r->engine && gdb_change_possible(t->beneath, tid, addr, len))
		changed_by_gdb(r, &g);
	return target_write_memory(t->beneath, tid, addr, buf, len);
}

/* The process's own objects while it lives; the recording's after. */
static struct target *object_source(struct target *t)
{
	return target_alive(t->beneath) || !rec(t)->past ? t->beneath : rec(t)->past;
}

static int recording_auxv(struct target *t, struct strbuf *out)
{
	return target_auxv(object_source(t), out);
}

static int recording_exec_file(struct target *t, struct strbuf *out)
{
	return target_exec_file(object_source(t), out);
}

static int recording_libraries_svr4(struct target *t, pid_t tid, const char *annex,
				    struct strbuf *out)
{
	return target_libraries_svr4(object_source(t), tid, annex, out);
}

static int recording_siginfo(struct target *t, pid_t tid, struct strbuf *out)
{
	/* In the past: the signal recorded where the thread stands. */
	if (in_past(rec(t), tid))
		return target_siginfo(rec(t)->past, tid, out);
	return target_siginfo(object_source(t), tid, out);
}

static int recording_btrace_pt(struct target *t, pid_t tid, const uint8_t **pt, size_t *len)
{
	*pt = NULL;
	*len = 0;
	if (!rec(t)->engine)
		return -1;
	const struct trace_data *td = sw_engine_data(rec(t)->engine);
	for (size_t i = 0; i < td->nstreams; i++) {
		if (td->streams[i].tid == tid) {
			*pt = td->streams[i].pt;
			*len = td->streams[i].pt_len;
		}
	}
	return 0;
}

static int recording_btrace_mark(struct target *t, pid_t tid, uint64_t *offset)
{
	return rec(t)->engine ? sw_engine_btrace_mark(rec(t)->engine, tid, offset) : -1;
}

/* While gdb records with btrace, the program ends as it does under gdb's
 * record btrace: not held before its exit. */
static void recording_btrace_active(struct target *t, bool on)
{
	if (rec(t)->engine)
		sw_engine_stop_before_exit(rec(t)->engine, !on && rec(t)->hold_exit);
}

static bool recording_state_unavailable(struct target *t, pid_t tid, struct strbuf *out)
{
	struct recording_target *r = rec(t);
	return in_past(r, tid) && target_state_unavailable(r->past, tid, out);
}

/* gdb's Ctrl-C reaches long work in the history (a watch search) too. */
static void recording_set_alive(struct target *t, bool (*alive)(void *ctx), void *ctx)
{
	target_set_alive(rec(t)->past, alive, ctx);
	target_set_alive(t->beneath, alive, ctx);
}

static bool recording_move_note(struct target *t, struct strbuf *out)
{
	struct recording_target *r = rec(t);
	return r->past && target_move_note(r->past, out);
}

static bool recording_monitor(struct target *t, pid_t current, const char *cmd, const char *arg,
			      struct strbuf *out)
{
	struct recording_target *r = rec(t);
	if (!r->engine)
		return target_monitor(t->beneath, current, cmd, arg, out);
	if (strcmp(cmd, "save") != 0)
		return target_monitor(r->past, current, cmd, arg, out);
	/* The recording goes on: the copy ends as if the recorder had
	 * stopped here. */
	const struct trace_data *td = sw_engine_data(r->engine);
	struct trace_end end;
	memset(&end, 0, sizeof end);
	end.status_kind = 2;
	end.instructions = timeline_insn_total(r->tl);
	end.syscalls = td->nsyscalls;
	end.signals = td->nsignals;
	history_save(td, &end, arg, out);
	return true;
}

/* Finish the recording (END record, file closed) and drop its history.
 * The live process goes on as it is. */
static void finish(struct recording_target *r)
{
	char err[256];
	if (!r->engine)
		return;
	target_free(r->past); /* its replayer replays the recording being finished */
	r->past = NULL;
	r->tl = NULL;
	struct trace_end end;
	if (sw_engine_finish(r->engine, &end, true, err, sizeof err) != 0)
		fprintf(stderr, "ptrev: finishing the recording: %s\n", err);
	if (r->writer)
		record_file_close(r->writer, r->path ? r->path : "recording",
				  "the program and the session went on");
	sw_engine_free(r->engine);
	r->engine = NULL;
	r->writer = NULL;
	free(r->path);
	r->path = NULL;
}

/* The recording ends where gdb leaves. */
static int recording_detach(struct target *t)
{
	if (!target_alive(t->beneath))
		return -1;
	finish(rec(t));
	return target_detach(t->beneath);
}

static void recording_kill(struct target *t)
{
	finish(rec(t));
	target_kill(t->beneath);
}

static void recording_destroy(struct target *t)
{
	finish(rec(t));
	free(t);
}

/* Once finished (detach, kill) the target passes everything down. Forks,
 * vforks and execs are the live target's to report (no report_forks here):
 * while recording, the engine holds a child for gdb on the live target's
 * process and reports a fork once the parent's fork returned, a vfork and
 * its end where they stop the parent, inside its step
 * (recorder_sw_stop.c), an exec once it returned (the recording goes on
 * in the new program); the live target lets the child go on gdb's D. */
static const struct target_ops recording_ops = {
	.name = "recording",
	.threads = recording_threads,
	.can_reverse = recording_can_reverse,
	.resume = recording_resume,
	.wait = recording_wait,
	.interrupt = recording_interrupt,
	.pause = recording_pause,
	.fetch_registers = recording_fetch_registers,
	.store_registers = recording_store_registers,
	.read_memory = recording_read_memory,
	.write_memory = recording_write_memory,
	.auxv = recording_auxv,
	.exec_file = recording_exec_file,
	.libraries_svr4 = recording_libraries_svr4,
	.siginfo = recording_siginfo,
	.btrace_pt = recording_btrace_pt,
	.btrace_mark = recording_btrace_mark,
	.btrace_active = recording_btrace_active,
	.monitor = recording_monitor,
	.state_unavailable = recording_state_unavailable,
	.move_note = recording_move_note,
	.set_alive = recording_set_alive,
	.detach = recording_detach,
	.kill = recording_kill,
	.destroy = recording_destroy,
};

struct target *target_record_start(struct target *t, const struct target_record_opts *o,
				   char *err, size_t errlen)
{
	if (t->ops == &recording_ops || target_is_event_recording(t))
		return t;
	if (o->backend && strcmp(o->backend, "event") == 0)
		return target_event_record_start(t, o, err, errlen);
	struct inferior *inf = target_live_inferior(t);
	if (!inf || inf->exited) {
		snprintf(err, errlen, "no process to record");
		return NULL;
	}
	struct recording_target *r = calloc(1, sizeof *r);
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->base.ops = &recording_ops;
	r->base.beneath = t;
	r->inf = inf;
	if (o->path && !(r->writer = trace_writer_open(o->path, err, errlen))) {
		free(r);
		return NULL;
	}
	/* A full disk cuts the file short, not the session: the recording in
	 * memory (what reverse execution uses) stays whole. */
	if (r->writer) {
		trace_writer_keep_going(r->writer);
		r->path = strdup(o->path);
	}
	/* At the program's first instruction only: turn the vDSO's clock
	 * functions into syscalls (before the engine copies the vDSO's code)
	 * and keep what a replay needs to start identically. Recording that
	 * starts later (record btrace) gets PC-level reverse execution only. */
	bool at_start = target_live_at_start(t);
	bool hidden = at_start && startup_hide_vdso(inf->pid) == 0;
	/* Fork events stay on: the engine, which waits for the process
	 * itself, lets a child go clean as the live target does. */
	struct sw_record_opts opts = {.psb_period = 4096, .no_copy = o->no_copy,
				      .allow_rseq = !at_start};
	r->engine = sw_engine_new(inf, r->writer, &opts, err, errlen);
	if (r->engine)
		sw_engine_stop_before_exit(r->engine, o->stop_before_exit);
	r->hold_exit = o->stop_before_exit;
	if (!r->engine) {
		if (r->writer)
			trace_writer_close(r->writer, NULL, 0);
		free(r->path);
		free(r);
		return NULL;
	}
	/* META goes to the file and into the in-memory recording (the
	 * replayer reads the program, arguments and start state from it). */
	record_write_meta_to(sw_engine_meta, r->engine, "sw", o->program ? o->program : "",
			     o->argv ? o->argv : (char *[]){NULL}, inf->pid, 4096);
	/* Said outright, so that a replay does not try to re-execute a
	 * start that was never recorded. */
	if (!at_start)
		sw_engine_meta(r->engine, "started", "mid_run");
	if (at_start &&
	    (!hidden || sw_engine_meta(r->engine, "vdso", "hidden") < 0 ||
	     record_startup_meta_to(sw_engine_meta, r->engine, inf->pid) < 0))
		fprintf(stderr, "ptrev: could not record the start state; "
			"reverse execution may not show full state\n");
	const struct trace_data *td = sw_engine_data(r->engine);
	if (!(r->tl = timeline_open(td, false, err, errlen)) ||
	    !(r->past = history_target_live(r->tl, td, inf->pid))) {
		if (!r->past)
			r->tl = NULL; /* closed by timeline_open's failure or history's */
		finish(r);
		free(r);
		return NULL;
	}
	r->run = (struct process_run){.inf = inf, .exec = &recorder_exec, .ctx = r->engine};
	return &r->base;
}

struct target *target_record_stop(struct target *t)
{
	if (t->ops != &recording_ops && !target_is_event_recording(t))
		return t;
	struct target *beneath = t->beneath;
	t->ops->destroy(t);
	return beneath;
}
