/* sw backend: `ptrev record` (sw_backend_record): the engine
 * (sw_engine.c) resumed once with every signal passed, waited on until the
 * program ends, then the file finished. The stepping itself is in the
 * engine's files: recorder_sw_stop.c (one thread's waitpid status),
 * recorder_sw_step.c, recorder_sw_sched.c, recorder_sw_signal.c. */
#include "recorder_sw.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "ptrev/inferior_raw.h"
#include "ptrev/ptrace_wait.h"
#include "ptrev/sw_engine.h"

/* Something failed: end every stream where it stands, kill the program
 * and reap it (the file stays readable). */
static void kill_everything(struct sw_rec *r)
{
	int st;

	for (size_t i = 0; i < r->nthreads; i++) {
		struct sw_thread *t = r->threads[i];
		if (!t->gone)
			sw_thread_finish(t, t->started ? t->regs.rip : 0, 0);
	}
	if (!r->proc_gone) {
		kill(r->pid, SIGKILL);
		while (ptrace_waitpid(-1, &st, __WALL) > 0)
			;
	}
	r->proc_gone = true;
}

int sw_backend_record(struct inferior *inf, struct trace_writer *w,
		      const struct sw_record_opts *opts, struct trace_end *end,
		      char *err, size_t errlen)
{
	struct sw_record_opts o = {0};
	struct sw_engine *e;
	bool saved_pass[65];
	int rc = -1, st;

	memset(end, 0, sizeof *end);
	end->status_kind = 2;
	if (opts)
		o = *opts;
	o.file_only = true;
	/* The program gets every signal as it would without us: none is an
	 * event. */
	memcpy(saved_pass, inf->pass_signals, sizeof saved_pass);
	for (int i = 1; i < 65; i++)
		inf->pass_signals[i] = true;
	e = sw_engine_new(inf, w, &o, err, errlen);
	if (!e) {
		memcpy(inf->pass_signals, saved_pass, sizeof saved_pass);
		inferior_kill(inf);
		return -1;
	}
	for (size_t i = 0; i < inf->nthreads; i++)
		sw_engine_resume(e, inf->threads[i].tid, false, 0);
	for (;;) {
		struct stop_event ev;
		int n = sw_engine_wait(e, &ev, true);
		if (n < 0)
			break;
		if (n == 1 && (ev.kind == STOP_EXITED || ev.kind == STOP_KILLED)) {
			rc = 0;
			break;
		}
		/* Nothing else is reported with every signal passed and no
		 * breakpoints; carry on regardless. */
		for (size_t i = 0; i < inf->nthreads; i++)
			sw_engine_resume(e, inf->threads[i].tid, false,
					 inf->threads[i].tid == ev.tid &&
					 ev.kind == STOP_SIGNAL ? ev.sig : 0);
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", e->r.err[0] ? e->r.err
			 : "recording failed");
		kill_everything(&e->r);
	}
	sw_engine_finish(e, end, false, NULL, 0);
	if (rc < 0 || (opts && opts->stop && *opts->stop)) {
		end->status_kind = 2;
		end->status = 0;
	}
	while (ptrace_waitpid(-1, &st, __WALL) > 0) /* reap the leftovers */
		;
	sw_engine_free(e);
	memcpy(inf->pass_signals, saved_pass, sizeof saved_pass);
	inf_mark_gone(inf);
	inf->pid = 0;
	return rc;
}
