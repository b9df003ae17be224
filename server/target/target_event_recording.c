/* The event recording target, pushed over the live one by `serve --record
 * --backend event`: at the present the program runs natively under the
 * event recorder (event_engine.h) and the live process shows its state; a
 * history of what was recorded is made only when gdb goes back (the
 * recording so far replayed from its end, as `ptrev replay` makes it,
 * target_history.c), and dropped when the program runs on, since the
 * recording then grows. Going forwards through that history reaches the
 * present, where the next resume runs the program for real again, as with
 * the sw recording target (target_recording.c). */
#include "target_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/cpu_bind.h"
#include "ptrev/event_engine.h"
#include "ptrev/record_file.h"
#include "ptrev/record_meta.h"
#include "ptrev/record_startup.h"
#include "ptrev/timeline.h"

struct event_recording_target {
	struct target base;      /* beneath: the live target */
	struct inferior *inf;
	struct event_engine *engine;
	struct trace_writer *writer; /* -o FILE, or one in memory only */
	char *path;              /* FILE, or NULL */
	struct target *past;     /* the history up to the present, or NULL */
	char past_err[512];      /* why there is none, when it could not be made */
	bool past_refused;       /* a move was refused for it: erec_move_note says why */
	struct process_run run;
	bool past_stop;          /* the last resume moved through the history */
	bool (*alive)(void *ctx); /* target_set_alive's, for past's long work */
	void *alive_ctx;
};

static struct event_recording_target *erec(struct target *t)
{
	return (struct event_recording_target *)t;
}

static int exec_resume(void *ctx, pid_t tid, bool step, int sig)
{
	return event_engine_resume(ctx, tid, step, sig);
}

static int exec_wait(void *ctx, struct stop_event *ev, bool block)
{
	int r = event_engine_wait(ctx, ev, block);
	if (r < 0 && event_engine_error(ctx)[0])
		fprintf(stderr, "ptrev: recording: %s\n", event_engine_error(ctx));
	return r;
}

static const struct process_exec_ops engine_exec = {exec_resume, exec_wait};

/* The history up to the present, made when first asked for. */
static struct target *past(struct event_recording_target *r)
{
	char *err = r->past_err;
	if (r->past || !r->engine)
		return r->past;
	if (event_engine_present(r->engine, err, sizeof r->past_err) < 0 ||
	    !(r->past = target_history_new_event(event_engine_data(r->engine), false, err,
						 sizeof r->past_err)))
		fprintf(stderr, "ptrev: no history of the recording here: %s\n", err);
	else
		target_set_alive(r->past, r->alive, r->alive_ctx);
	return r->past;
}

/* The program runs on: the history no longer ends at the present. */
static void drop_past(struct event_recording_target *r)
{
	target_free(r->past);
	r->past = NULL;
	r->past_stop = false;
}

static bool in_past(struct event_recording_target *r, pid_t tid)
{
	return r->past && history_target_in_past(r->past, tid);
}

static size_t erec_threads(struct target *t, pid_t **ids)
{
	struct event_recording_target *r = erec(t);
	struct timeline *tl = r->past ? history_target_timeline(r->past) : NULL;
	if (tl && timeline_global(tl) &&
	    (!timeline_at_end(tl, 0) || history_target_in_past(r->past, 0)))
		return timeline_threads_here(tl, ids);
	return target_threads(t->beneath, ids);
}

static bool erec_can_reverse(struct target *t)
{
	return erec(t)->engine != NULL;
}

static int erec_resume(struct target *t, const struct target_resume *req)
{
	struct event_recording_target *r = erec(t);
	if (!r->engine)
		return target_alive(t->beneath) && !req->reverse ? target_resume(t->beneath, req)
								 : TARGET_REFUSED;
	pid_t tid = req->reverse_tid > 0 ? req->reverse_tid : req->current;
	if (req->reverse || in_past(r, tid)) {
		struct target *p = past(r);
		if (!p) {
			r->past_refused = r->past_err[0] != 0;
			return TARGET_REFUSED;
		}
		int rc = target_resume(p, req);
		r->past_stop = rc == 0;
		if (rc != HISTORY_AT_PRESENT)
			return rc;
	}
	if (!target_alive(t->beneath))
		return TARGET_REFUSED;
	drop_past(r);
	target_live_mark_started(t->beneath);
	return process_run_resume(&r->run, req);
}

static int erec_wait(struct target *t, struct target_stop *stop, bool block)
{
	struct event_recording_target *r = erec(t);
	if (!r->engine)
		return target_wait(t->beneath, stop, block);
	if (r->past_stop) {
		r->past_stop = false;
		int got = target_wait(r->past, stop, block);
		if (got == 1 && stop->kind == TARGET_STOP_HISTORY_END && !in_past(r, stop->tid))
			process_present_pc(t, stop);
		return got;
	}
	int got = process_run_wait(&r->run, stop, block);
	if (got == 1 && stop->have_pc && r->engine && event_engine_in_syscall(r->engine, stop->tid))
		stop->rip -= 2; /* as erec_fetch_registers shows it */
	return got;
}

static int erec_pause(struct target *t)
{
	return erec(t)->engine ? -1 : target_pause(t->beneath);
}

static int erec_interrupt(struct target *t)
{
	struct event_recording_target *r = erec(t);
	return r->engine ? event_engine_interrupt(r->engine) : target_interrupt(t->beneath);
}

static int erec_fetch_registers(struct target *t, pid_t tid, struct amd64_regfile *rf)
{
	struct event_recording_target *r = erec(t);
	if (in_past(r, tid))
		return target_fetch_registers(r->past, tid, rf);
	int known = target_fetch_registers(t->beneath, tid, rf);
	if (known != TARGET_REGS_FULL || !r->engine)
		return known;
	/* Inside a syscall the log does not hold yet: shown where its
	 * history ends, before the syscall instruction, which it runs (again)
	 * when it goes on. */
	if (event_engine_in_syscall(r->engine, tid)) {
		rf->gpr.rip -= 2;
		rf->gpr.rax = rf->gpr.orig_rax;
		return TARGET_REGS_BEFORE_SYSCALL;
	}
	/* Held before the end on a syscall it entered: rcx and r11 are not
	 * the program's. */
	if (event_engine_at_entered_syscall(r->engine, tid))
		return TARGET_REGS_BEFORE_SYSCALL;
	return known;
}

static void finish(struct event_recording_target *r);

/* gdb changes the program at the present (set var, call, jump): the change
 * goes into the log where the program stands, for a replay to make again
 * (event_engine_gdb_write). Where it cannot be placed (the thread gdb
 * changes is inside a syscall, or none runs its own code), the recording
 * ends there and the program runs on unrecorded. */
static void changed_by_gdb(struct event_recording_target *r, struct trace_gdb_write *g,
			   const char *what)
{
	if (!r->engine)
		return;
	if (event_engine_gdb_write(r->engine, g) == 0) {
		drop_past(r); /* its end is no longer the present */
		return;
	}
	fprintf(stderr, "ptrev: gdb changed the program's %s where the recording cannot place "
		"the change (thread %d is inside a system call, or no thread runs the program's "
		"own code there): "
		"the recording ends here and the program runs on unrecorded, without reverse "
		"execution\n", what, (int)g->tid);
	finish(r);
	/* The live target's own ptrace options again: a later fork or exec
	 * is its to see. */
	inferior_follow_forks(r->inf, true);
}

/* Does writing rf into tid change what the program sees (gdb_change.c)?
 * Inside a syscall, orig_rax matters too. */
static bool changes_program(struct event_recording_target *r, pid_t tid,
			    const struct amd64_regfile *rf)
{
	return event_engine_in_syscall(r->engine, tid) ||
	       event_engine_at_entered_syscall(r->engine, tid) ||
	       !gdb_change_same_registers(r->base.beneath, tid, rf);
}

static int erec_store_registers(struct target *t, pid_t tid, const struct amd64_regfile *rf)
{
	struct event_recording_target *r = erec(t);
	if (in_past(r, tid))
		return -1;
	if (r->engine && changes_program(r, tid, rf)) {
		struct trace_gdb_write g;
		if (!gdb_change_registers(tid, rf, &g))
			return -1;
		changed_by_gdb(r, &g, "registers");
		gdb_change_free(&g);
	}
	return target_store_registers(t->beneath, tid, rf);
}

static ssize_t erec_read_memory(struct target *t, pid_t tid, uint64_t addr, void *buf,
				size_t len)
{
	struct event_recording_target *r = erec(t);
	return in_past(r, tid) ? target_read_memory(r->past, tid, addr, buf, len)
			       : target_read_memory(t->beneath, tid, addr, buf, len);
}

static ssize_t erec_write_memory(struct target *t, pid_t tid, uint64_t addr, const void *buf,
				 size_t len)
{
	struct event_recording_target *r = erec(t);
	if (in_past(r, tid))
		return -1;
	struct trace_gdb_write g;
	gdb_change_memory(tid, addr, buf, len, &g);
	if (gdb_change_possible(t->beneath, tid, addr, len))
		changed_by_gdb(r, &g, "memory");
	return target_write_memory(t->beneath, tid, addr, buf, len);
}

static int erec_siginfo(struct target *t, pid_t tid, struct strbuf *out)
{
	struct event_recording_target *r = erec(t);
	return in_past(r, tid) ? target_siginfo(r->past, tid, out)
			       : target_siginfo(t->beneath, tid, out);
}

static bool erec_state_unavailable(struct target *t, pid_t tid, struct strbuf *out)
{
	struct event_recording_target *r = erec(t);
	return in_past(r, tid) && target_state_unavailable(r->past, tid, out);
}

/* gdb's Ctrl-C reaches long work in the history (making it, a watch
 * search) too. */
static void erec_set_alive(struct target *t, bool (*alive)(void *ctx), void *ctx)
{
	struct event_recording_target *r = erec(t);
	r->alive = alive;
	r->alive_ctx = ctx;
	target_set_alive(r->past, alive, ctx);
	target_set_alive(t->beneath, alive, ctx);
}

static bool erec_move_note(struct target *t, struct strbuf *out)
{
	struct event_recording_target *r = erec(t);
	if (r->past_refused) {
		/* gdb shows the refusal as "Remote failure reply: E01" alone:
		 * its reason, on ptrev's stderr, is not gdb's over TCP. */
		r->past_refused = false;
		strbuf_printf(out, "no history of the recording here: %s", r->past_err);
		return true;
	}
	return r->past && target_move_note(r->past, out);
}

static bool erec_monitor(struct target *t, pid_t current, const char *cmd, const char *arg,
			 struct strbuf *out)
{
	struct event_recording_target *r = erec(t);
	bool history = !strcmp(cmd, "when") || !strcmp(cmd, "history") || !strcmp(cmd, "save");
	if (!r->engine && history) {
		/* Ended by changed_by_gdb: not the live target's "no recording". */
		strbuf_puts(out, "No recording: it ended where gdb changed the program (set var, "
			    "call, jump) while a thread was inside a system call, where the "
			    "recording cannot place the change.\n");
		return true;
	}
	if (!r->engine)
		return target_monitor(t->beneath, current, cmd, arg, out);
	if (strcmp(cmd, "save") == 0) {
		/* The recording goes on: the copy ends as if the recorder had
		 * stopped here. */
		char err[512];
		if (event_engine_present(r->engine, err, sizeof err) < 0) {
			strbuf_printf(out, "Could not save the recording: %s\n", err);
			return true;
		}
		const struct trace_data *td = event_engine_data(r->engine);
		struct trace_end end;
		memset(&end, 0, sizeof end);
		end.status_kind = 2;
		end.syscalls = td->nsyscalls;
		end.signals = td->nsignals;
		history_save(td, &end, arg, out);
		return true;
	}
	struct target *p = past(r);
	if (!p && (!strcmp(cmd, "when") || !strcmp(cmd, "history"))) {
		strbuf_printf(out, "No history of the recording here: %s\n", r->past_err);
		return true;
	}
	if (p && target_monitor(p, current, cmd, arg, out))
		return true;
	return target_monitor(t->beneath, current, cmd, arg, out);
}

/* Finish the recording (END written, file closed) and drop its history.
 * The live process goes on as it is. */
static void finish(struct event_recording_target *r)
{
	char err[512];
	if (!r->engine)
		return;
	drop_past(r);
	if (event_engine_finish(r->engine, NULL, true, err, sizeof err) != 0)
		fprintf(stderr, "ptrev: finishing the recording: %s\n", err);
	event_engine_free(r->engine);
	r->engine = NULL;
	if (r->path)
		record_file_close(r->writer, r->path, "the program and the session went on");
	else
		trace_writer_close(r->writer, NULL, 0);
	r->writer = NULL;
	free(r->path);
	r->path = NULL;
}

static int erec_detach(struct target *t)
{
	if (!target_alive(t->beneath))
		return -1;
	finish(erec(t));
	return target_detach(t->beneath);
}

static void erec_kill(struct target *t)
{
	finish(erec(t));
	target_kill(t->beneath);
}

static void erec_destroy(struct target *t)
{
	finish(erec(t));
	free(t);
}

static const struct target_ops event_recording_ops = {
	.name = "event recording",
	.threads = erec_threads,
	.can_reverse = erec_can_reverse,
	.resume = erec_resume,
	.wait = erec_wait,
	.interrupt = erec_interrupt,
	.pause = erec_pause,
	.fetch_registers = erec_fetch_registers,
	.store_registers = erec_store_registers,
	.read_memory = erec_read_memory,
	.write_memory = erec_write_memory,
	/* auxv, exec file, libraries: the live target's, beneath. */
	.siginfo = erec_siginfo,
	.monitor = erec_monitor,
	.state_unavailable = erec_state_unavailable,
	.move_note = erec_move_note,
	.set_alive = erec_set_alive,
	.detach = erec_detach,
	.kill = erec_kill,
	.destroy = erec_destroy,
};

bool target_is_event_recording(const struct target *t)
{
	return t->ops == &event_recording_ops;
}

struct target *target_event_record_start(struct target *t, const struct target_record_opts *o,
					 char *err, size_t errlen)
{
	struct inferior *inf = target_live_inferior(t);
	if (!inf || inf->exited) {
		snprintf(err, errlen, "no process to record");
		return NULL;
	}
	if (!target_live_at_start(t)) {
		snprintf(err, errlen, "the event backend records a program from its first "
			 "instruction only; use --backend sw");
		return NULL;
	}
	struct event_recording_target *r = calloc(1, sizeof *r);
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->base.ops = &event_recording_ops;
	r->base.beneath = t;
	r->inf = inf;
	r->writer = o->path ? trace_writer_open(o->path, err, errlen)
			    : trace_writer_open_memory(err, errlen);
	if (!r->writer) {
		free(r);
		return NULL;
	}
	if (o->path) {
		/* A full disk cuts the file short, not the session. */
		trace_writer_keep_going(r->writer);
		r->path = strdup(o->path);
	}
	/* The bounds of STATE points, as `ptrev record` reads them (tests
	 * keep histories short with small ones). */
	struct event_record_opts eo = {.no_copy = o->no_copy, .psb_period = 4096,
				       .signal_us = o->signal_us, .slice_us = o->slice_us};
	r->engine = event_engine_new(inf, r->writer, &eo, err, errlen);
	if (!r->engine) {
		trace_writer_close(r->writer, NULL, 0);
		free(r->path);
		free(r);
		return NULL;
	}
	event_engine_stop_before_exit(r->engine, o->stop_before_exit);
	/* One CPU for ptrev and the program, as `ptrev record` has it: each
	 * stop is cheaper, and a replay runs where the recording ran (META
	 * cpu_index), since a program keeps what CPUID told it there
	 * (ptrev/cpu_bind.h). */
	cpu_bind_tracer_and(inf->pid);
	/* META and the start state first, into the file and the memory copy
	 * (a replay reads the program, its arguments and start from them). */
	record_write_meta_to(event_engine_meta, r->engine, "event",
			     o->program ? o->program : "",
			     o->argv ? o->argv : (char *[]){NULL}, inf->pid, 4096);
	if (record_startup_hide_vdso(r->writer, inf->pid) < 0 ||
	    record_startup_meta(r->writer, inf->pid) < 0)
		fprintf(stderr, "ptrev: could not record the start state; "
			"reverse execution may not show full state\n");
	if (event_engine_start(r->engine, err, errlen) < 0) {
		finish(r);
		free(r);
		return NULL;
	}
	r->run = (struct process_run){.inf = inf, .exec = &engine_exec, .ctx = r->engine};
	return &r->base;
}
