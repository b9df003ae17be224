/* A timeline's life: opened over a recording, grown with a live one,
 * closed; and the questions about threads and positions that the targets
 * ask between moves. */
#include "timeline_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/history_schedule.h"
#include "ptrev/ptrace_handover.h"

int timeline_sync(struct timeline *tl)
{
	bool was_at_end = tl_order_at_end(tl);
	if (tl_threads_sync(tl) != 0)
		return -1;
	tl_order_sync(tl, was_at_end);
	return 0;
}

struct timeline *timeline_open(const struct trace_data *td, bool saved, char *err, size_t errlen)
{
	struct timeline *tl = calloc(1, sizeof *tl);
	if (!tl) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	tl->td = td;
	tl->saved = saved;
	tl->img.code_fd = -1;
	if (trace_image_build(&tl->img, td, err, errlen) != 0)
		goto fail;
	tl->img_nmmaps = td->nmmaps;
	tl->img_ncode = td->ncode;
	tl->mem = code_memory_new(td);
	if (!tl->mem) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* Threads in creation order (THREAD records), then any other stream. */
	for (size_t i = 0; i < td->nthreads; i++)
		if (!td->threads[i].exited && !tl_thread(tl, td->threads[i].tid) &&
		    tl_add_thread(tl, td->threads[i].tid, err, errlen) != 0)
			goto fail;
	for (size_t i = 0; i < td->nstreams; i++)
		if (!tl_thread(tl, td->streams[i].tid) &&
		    tl_add_thread(tl, td->streams[i].tid, err, errlen) != 0)
			goto fail;
	if (tl->nthreads == 0) {
		snprintf(err, errlen, "the recording has no thread with a trace");
		goto fail;
	}
	if (timeline_sync(tl) != 0) {
		snprintf(err, errlen, "indexing the history failed");
		goto fail;
	}
	return tl;
fail:
	timeline_close(tl);
	return NULL;
}

void timeline_close(struct timeline *tl)
{
	if (!tl)
		return;
	tl_state_free(tl);
	ptrace_park_kill(tl->start_copy);
	materialise_copies_kill(&tl->given);
	sched_map_free(tl->sched);
	for (size_t i = 0; i < tl->nthreads; i++)
		history_free(tl->threads[i].h);
	free(tl->threads);
	code_memory_free(tl->mem);
	for (size_t i = 0; i < tl->nlater; i++)
		trace_image_free(&tl->later[i]);
	free(tl->later);
	if (tl->img.image || tl->img.iscache)
		trace_image_free(&tl->img);
	free(tl);
}

const struct trace_data *timeline_data(const struct timeline *tl)
{
	return tl->td;
}

bool timeline_saved(const struct timeline *tl)
{
	return tl->saved;
}

size_t timeline_thread_count(const struct timeline *tl)
{
	return tl->nthreads;
}

pid_t timeline_thread_tid(const struct timeline *tl, size_t i)
{
	return i < tl->nthreads ? tl->threads[i].tid : 0;
}

bool timeline_has_thread(const struct timeline *tl, pid_t tid)
{
	return tl_thread(tl, tid) != NULL;
}

pid_t timeline_thread_or_first(const struct timeline *tl, pid_t tid)
{
	return tl_thread_or_first(tl, tid)->tid;
}

size_t timeline_threads_here(const struct timeline *tl, pid_t **ids)
{
	size_t n = 0;
	*ids = malloc((tl->nthreads ? tl->nthreads : 1) * sizeof **ids);
	for (size_t i = 0; *ids && i < tl->nthreads; i++)
		if (tl_thread_exists(tl, &tl->threads[i]))
			(*ids)[n++] = tl->threads[i].tid;
	return n;
}

bool timeline_global(const struct timeline *tl)
{
	return tl->global;
}

void timeline_where(struct timeline *tl, pid_t tid, struct timeline_where *w)
{
	const struct tl_thread *t = tl_thread_or_first(tl, tid);
	memset(w, 0, sizeof *w);
	w->pos = t->pos;
	w->count = tl_count(t);
	w->at_end = tl_at_end(tl, t);
	w->global = tl->global;
	if (tl->global) {
		w->gpos = tl->gpos;
		w->gtotal = sched_map_total(tl->sched);
	}
}

bool timeline_in_past(const struct timeline *tl, pid_t tid)
{
	return tl_thread_in_past(tl_thread_or_first(tl, tid));
}

bool timeline_at_end(const struct timeline *tl, pid_t tid)
{
	return tl_at_end(tl, tl_thread_or_first(tl, tid));
}

pid_t timeline_to_end(struct timeline *tl)
{
	return tl_to_end(tl)->tid;
}

void timeline_move_to(struct timeline *tl, pid_t tid, uint64_t pos)
{
	struct tl_thread *t = tl_thread_or_first(tl, tid);
	tl_move(tl, t, pos < tl_count(t) ? pos : tl_count(t));
}

void timeline_move_global(struct timeline *tl, uint64_t g)
{
	tl_set_global(tl, g);
}

uint64_t timeline_insn_total(const struct timeline *tl)
{
	uint64_t n = 0;
	for (size_t i = 0; i < tl->nthreads; i++)
		n += tl_count(&tl->threads[i]);
	return n;
}
