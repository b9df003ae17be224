/* A materialisation run by a thread of its own (ptrev/materialise_job.h).
 * Sound beside the maker's own tracing: ptrace makes the thread that
 * starts a process its tracer, so the job's replay process answers only to
 * the job's thread; every wait in the replay names its task (never
 * waitpid(-1)), so neither thread takes the other's stops; the launch
 * changes nothing process-wide (the working directory, signal state and
 * limits are set in the child); the recording is only read. */
#include "ptrev/materialise_job.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ptrev/cpu_bind.h"
#include "ptrev/ptrace_handover.h"

struct materialise_job {
	pthread_t thread;
	const struct trace_data *ev;
	size_t from;                 /* a tail's (0: the whole history) */
	size_t from_run;             /* ...or a multi-threaded tail's run */
	struct trace_state point;    /* inside the stretch before it */
	bool has_point;
	bool keep_copies;            /* a tail's: copies (materialise_copies) */
	struct materialise_progress progress;
	atomic_bool done;
	struct timespec t0;
	/* Written by the thread, read after done (or after the join). */
	int rc;
	struct trace_data out;
	struct materialise_stats st;
	struct materialise_copies copies; /* in and out */
	char err[512];
};

static void *run(void *arg)
{
	struct materialise_job *j = arg;
	cpu_bind_thread_elsewhere(); /* else it shares the maker's CPU: fine */
	if (j->from || j->from_run) {
		j->rc = materialise_tail_to_memory(j->ev, j->from, j->has_point ? &j->point : NULL,
						   j->from_run, &j->out, &j->st, &j->progress,
						   j->keep_copies ? &j->copies : NULL, j->err,
						   sizeof j->err);
		atomic_store(&j->done, true);
		return NULL;
	}
	/* Lowest priority, for this thread and the replay process it starts
	 * (a child inherits its creator's): a replay runs on the CPU its
	 * recording ran on (relaunch.h), so this job and the session's own
	 * replays (the first move's tail, a search) share that CPU, and the
	 * session's are the ones gdb waits for. As equals, a tail was made
	 * at two thirds of its rate. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), MATERIALISE_JOB_NICE);
	/* With the copies its replay leaves on the way (checkpoints for the
	 * history's replayer). */
	j->rc = materialise_tail_to_memory(j->ev, 0, NULL, 0, &j->out, &j->st, &j->progress,
					   &j->copies, j->err, sizeof j->err);
	atomic_store(&j->done, true);
	return NULL;
}

static struct materialise_job *start(const struct trace_data *ev, size_t from,
				     const struct trace_state *point, size_t from_run,
				     struct materialise_copies *copies, char *err, size_t errlen)
{
	struct materialise_job *j = calloc(1, sizeof *j);
	if (!j) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	j->ev = ev;
	j->from = from;
	j->from_run = from_run;
	if (copies) {
		j->keep_copies = true;
		j->copies = *copies;
		copies->from = 0; /* the job's now */
	}
	if (point) {
		j->point = *point;
		j->has_point = true;
	}
	clock_gettime(CLOCK_MONOTONIC, &j->t0);
	int e = pthread_create(&j->thread, NULL, run, j);
	if (e) {
		snprintf(err, errlen, "cannot start a thread: %s", strerror(e));
		if (copies)
			copies->from = j->copies.from; /* the caller's again */
		free(j);
		return NULL;
	}
	return j;
}

struct materialise_job *materialise_job_start(const struct trace_data *ev, char *err,
					      size_t errlen)
{
	return start(ev, 0, NULL, 0, NULL, err, errlen);
}

struct materialise_job *materialise_job_start_tail(const struct trace_data *ev, size_t from,
						   const struct trace_state *point, size_t from_run,
						   struct materialise_copies *copies, char *err,
						   size_t errlen)
{
	return start(ev, from, point, from_run, copies, err, errlen);
}

void materialise_job_status(struct materialise_job *j, struct materialise_job_status *out)
{
	struct timespec now;
	memset(out, 0, sizeof *out);
	out->done = atomic_load(&j->done);
	out->failed = out->done && j->rc != 0;
	out->events = atomic_load_explicit(&j->progress.events, memory_order_relaxed);
	out->events_total = atomic_load_explicit(&j->progress.events_total, memory_order_relaxed);
	out->instructions = atomic_load_explicit(&j->progress.instructions, memory_order_relaxed);
	if (out->done && !out->failed) {
		out->instructions = j->st.instructions;
		out->seconds = (double)j->st.ns / 1e9;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	out->seconds = (double)(now.tv_sec - j->t0.tv_sec) +
		       (double)(now.tv_nsec - j->t0.tv_nsec) / 1e9;
}

int materialise_job_finish(struct materialise_job *j, struct trace_data *out,
			   struct materialise_stats *st, struct materialise_copies *copies,
			   char *err, size_t errlen)
{
	pthread_join(j->thread, NULL);
	int rc = j->rc;
	ptrace_park_kill(j->copies.from); /* never taken: the thread did not run */
	j->copies.from = 0;
	if (copies) /* what the job's replay made, all of it the caller's */
		*copies = j->copies;
	else
		materialise_copies_kill(&j->copies);
	if (rc == 0) {
		*out = j->out;
		if (st)
			*st = j->st;
	} else {
		memset(out, 0, sizeof *out);
		snprintf(err, errlen, "%s", j->err);
	}
	free(j);
	return rc;
}

void materialise_job_cancel(struct materialise_job *j)
{
	if (!j)
		return;
	atomic_store(&j->progress.stop, true);
	pthread_join(j->thread, NULL);
	materialise_copies_kill(&j->copies);
	if (j->rc == 0)
		trace_data_free(&j->out);
	free(j);
}
