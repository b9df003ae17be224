/* Appending a thread's PT, and runs of the thread schedule, to a recording
 * held in memory: what the record parser (trace_records.c) does with PT
 * and SCHED records, whether they come from a file (the reader) or from a
 * writer keeping its recording in memory (the live recorder). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/trace_file.h"
#include "trace_reader_internal.h"

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fputs("ptrev: out of memory\n", stderr);
		abort();
	}
	return q;
}

/* The stream of tid, created at the end if it is new. */
static size_t stream_index(struct trace_data *td, struct trace_pt_appender *a, pid_t tid)
{
	size_t s = a->last_stream;
	if (s < td->nstreams && td->streams[s].tid == tid)
		return s;
	for (s = 0; s < td->nstreams && td->streams[s].tid != tid; s++)
		;
	if (s == td->nstreams) {
		if (td->nstreams == a->streams_cap) {
			a->streams_cap = a->streams_cap ? 2 * a->streams_cap : 4;
			td->streams = xrealloc(td->streams, a->streams_cap * sizeof *td->streams);
			a->pt_caps = xrealloc(a->pt_caps, a->streams_cap * sizeof *a->pt_caps);
		}
		td->streams[s] = (struct trace_thread_stream){.tid = tid};
		a->pt_caps[s] = 0;
		td->nstreams++;
	}
	a->last_stream = s;
	return s;
}

void trace_append_pt(struct trace_data *td, struct trace_pt_appender *a, pid_t tid,
		     const void *data, size_t n)
{
	size_t s = stream_index(td, a, tid);
	struct trace_thread_stream *st = &td->streams[s];
	if (st->pt_len + n > a->pt_caps[s]) {
		size_t c = a->pt_caps[s] ? a->pt_caps[s] : 4096;
		while (c < st->pt_len + n)
			c *= 2;
		st->pt = xrealloc(st->pt, c);
		a->pt_caps[s] = c;
	}
	if (n)
		memcpy(st->pt + st->pt_len, data, n);
	st->pt_len += n;
}

void trace_pt_appender_free(struct trace_pt_appender *a)
{
	free(a->pt_caps);
	memset(a, 0, sizeof *a);
}

void trace_append_sched(struct trace_data *td, size_t *cap, const struct trace_sched_run *run)
{
	if (run->count == 0)
		return; /* no instructions: nothing to order */
	if (td->nsched) {
		/* A run that picks up where the same thread's last one stopped
		 * is the same stretch of execution, split only by where the
		 * recorder happened to flush (or a record boundary). */
		struct trace_sched_run *last = &td->sched[td->nsched - 1];
		if (last->tid == run->tid && last->pos + last->count == run->pos) {
			last->count += run->count;
			return;
		}
	}
	if (td->nsched == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		td->sched = xrealloc(td->sched, *cap * sizeof *td->sched);
	}
	td->sched[td->nsched++] = *run;
}
