/* The history target over an event recording (a saved one whose positions
 * still count events): until its history is made, gdb sees the program
 * where the recording ended, every thread with its full state, from a
 * native re-execution held there (event_end.h). The history is made the
 * first time something needs it (a resume either way, `monitor when`'s
 * instruction numbers): the recording is re-executed stepped
 * (materialise.h), which can take a while; gdb waits for a resume's stop
 * without a time limit. At the end of the history the end state still
 * answers, so every thread shows full state there. */
#include "target_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/materialise.h"

int history_event_open(struct history_event *he, const struct trace_data *ev, char *err,
		       size_t errlen)
{
	memset(he, 0, sizeof *he);
	he->ev = ev;
	he->end = event_end_open(ev, err, errlen);
	if (!he->end)
		return -1;
	/* The thread that ended the recording: the one a fatal signal killed,
	 * else the one that ran last. */
	for (size_t i = ev->nsignals; i-- > 0 && !he->last;)
		if (ev->signals[i].handler_ip == 0)
			he->last = ev->signals[i].tid;
	if (!he->last && ev->nsched)
		he->last = ev->sched[ev->nsched - 1].tid;
	if (!he->last && ev->nthreads)
		he->last = ev->threads[0].tid;
	return 0;
}

void history_event_close(struct history_event *he)
{
	event_end_close(he->end);
	he->end = NULL;
	if (he->made_ok)
		trace_data_free(&he->made);
	he->made_ok = false;
}

struct timeline *history_event_make(struct history_event *he, char *err, size_t errlen)
{
	struct materialise_stats st;
	fprintf(stderr, "ptrev: making the history of this event recording (re-executing it "
		"block by block)...\n");
	if (materialise_to_memory(he->ev, &he->made, &st, err, errlen) != 0)
		return NULL;
	he->made_ok = true;
	materialise_say_made(&st);
	struct timeline *tl = timeline_open(&he->made, true, err, errlen);
	if (tl)
		timeline_to_end(tl);
	return tl;
}

pid_t history_event_thread(struct history_event *he, pid_t tid)
{
	pid_t *ids;
	size_t n = event_end_threads(he->end, &ids);
	bool found = false;
	for (size_t i = 0; i < n && !found; i++)
		found = ids[i] == tid;
	pid_t any = n ? ids[0] : tid;
	free(ids);
	return found ? tid : any;
}

int history_event_registers(struct history_event *he, pid_t tid, struct amd64_regfile *rf)
{
	switch (event_end_registers(he->end, history_event_thread(he, tid), rf)) {
	case 0:
		return TARGET_REGS_FULL;
	case 1:
		return TARGET_REGS_BEFORE_SYSCALL;
	default:
		return TARGET_REGS_NONE;
	}
}

int history_event_siginfo(struct history_event *he, pid_t tid, struct strbuf *out)
{
	for (size_t i = he->ev->nsignals; i-- > 0;) {
		const struct trace_signal *g = &he->ev->signals[i];
		if (g->tid == tid && g->handler_ip == 0) {
			strbuf_append(out, g->siginfo, sizeof g->siginfo);
			return 0;
		}
	}
	return -EINVAL;
}

int history_event_end_signal(const struct history_event *he)
{
	if (he->ev->complete && he->ev->end.status_kind == 1)
		return he->ev->end.status;
	return SIGTRAP;
}
