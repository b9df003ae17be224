/* Building and keeping up the per-thread histories the server replays. */
#include "ptrev/gdb_history.h"
#include "ptrev/history_schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct trace_thread_stream *stream_of(const struct trace_data *td, pid_t tid)
{
	for (size_t i = 0; i < td->nstreams; i++)
		if (td->streams[i].tid == tid)
			return &td->streams[i];
	return NULL;
}

static int add_thread(struct gdb_history *gh, pid_t tid, char *err, size_t errlen)
{
	struct gdb_hist_thread *grown =
		realloc(gh->threads, (gh->nthreads + 1) * sizeof *grown);
	if (!grown) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	gh->threads = grown;
	struct gdb_hist_thread *t = &gh->threads[gh->nthreads];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	struct history_config cfg = {.image = gh->img.image, .cache_segments = 8};
	t->h = history_new(&cfg);
	if (!t->h) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	gh->nthreads++;
	return 0;
}

/* New mappings since the image was built (a live recording): add their
 * code to the image the histories decode with. */
static int refresh_image(struct gdb_history *gh)
{
	const struct trace_data *td = gh->td;
	if (td->nmmaps == gh->img_nmmaps && td->ncode == gh->img_ncode)
		return 0;
	struct trace_image ti = {.code_fd = -1};
	char err[256];
	if (trace_image_build(&ti, td, err, sizeof err) != 0) {
		fprintf(stderr, "ptrev: history image: %s\n", err);
		trace_image_free(&ti);
		return -1;
	}
	struct trace_image *grown = realloc(gh->later, (gh->nlater + 1) * sizeof *grown);
	if (!grown) {
		trace_image_free(&ti);
		return -1;
	}
	gh->later = grown;
	gh->later[gh->nlater++] = ti;
	if (pt_image_copy(gh->img.image, ti.image) < 0)
		return -1;
	gh->img_nmmaps = td->nmmaps;
	gh->img_ncode = td->ncode;
	return 0;
}

int gdb_history_sync(struct gdb_history *gh)
{
	if (!gh->saved && refresh_image(gh) != 0)
		return -1;
	bool was_at_end = gdb_history_sched_at_end(gh);
	/* Threads the live program created since (their streams appear). */
	for (size_t i = 0; !gh->saved && i < gh->td->nstreams; i++) {
		char err[64];
		if (!gdb_history_thread(gh, gh->td->streams[i].tid) &&
		    add_thread(gh, gh->td->streams[i].tid, err, sizeof err) != 0)
			return -1;
	}
	for (size_t i = 0; i < gh->nthreads; i++) {
		struct gdb_hist_thread *t = &gh->threads[i];
		const struct trace_thread_stream *st = stream_of(gh->td, t->tid);
		if (!st || st->pt_len <= t->fed)
			continue;
		bool at_end = !gdb_history_in_past(t);
		if (history_append(t->h, st->pt + t->fed, st->pt_len - t->fed) != 0)
			return -1;
		t->fed = st->pt_len;
		if (at_end)
			t->pos = history_insn_count(t->h);
		uint64_t ip;
		t->end_ip_known = history_resume_ip(t->h, &ip) == 1;
		t->end_ip = t->end_ip_known ? ip : 0;
	}
	gdb_history_sched_sync(gh, was_at_end);
	return 0;
}

int gdb_history_open(struct gdb_history *gh, const struct trace_data *td, bool saved,
		     char *err, size_t errlen)
{
	memset(gh, 0, sizeof *gh);
	gh->td = td;
	gh->saved = saved;
	gh->img.code_fd = -1;
	if (trace_image_build(&gh->img, td, err, errlen) != 0)
		return -1;
	gh->img_nmmaps = td->nmmaps;
	gh->img_ncode = td->ncode;
	gh->mem = code_memory_new(td);
	if (!gh->mem) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* Threads in creation order (THREAD records), then any other stream. */
	for (size_t i = 0; i < td->nthreads; i++)
		if (!td->threads[i].exited && !gdb_history_thread(gh, td->threads[i].tid) &&
		    add_thread(gh, td->threads[i].tid, err, errlen) != 0)
			return -1;
	for (size_t i = 0; i < td->nstreams; i++)
		if (!gdb_history_thread(gh, td->streams[i].tid) &&
		    add_thread(gh, td->streams[i].tid, err, errlen) != 0)
			return -1;
	if (gh->nthreads == 0) {
		snprintf(err, errlen, "the recording has no thread with a trace");
		return -1;
	}
	return gdb_history_sync(gh);
}

void gdb_history_close(struct gdb_history *gh)
{
	sched_map_free(gh->sched);
	for (size_t i = 0; i < gh->nthreads; i++)
		history_free(gh->threads[i].h);
	free(gh->threads);
	code_memory_free(gh->mem);
	for (size_t i = 0; i < gh->nlater; i++)
		trace_image_free(&gh->later[i]);
	free(gh->later);
	if (gh->img.image || gh->img.iscache)
		trace_image_free(&gh->img);
	memset(gh, 0, sizeof *gh);
}

struct gdb_hist_thread *gdb_history_thread(struct gdb_history *gh, pid_t tid)
{
	for (size_t i = 0; i < gh->nthreads; i++)
		if (gh->threads[i].tid == tid)
			return &gh->threads[i];
	return NULL;
}

bool gdb_history_in_past(const struct gdb_hist_thread *t)
{
	return t->pos < history_insn_count(t->h);
}

bool gdb_history_pc(struct gdb_hist_thread *t, uint64_t *pc)
{
	if (gdb_history_in_past(t))
		return history_ip_at(t->h, t->pos, pc) == 0;
	if (t->end_ip_known) {
		*pc = t->end_ip;
		return true;
	}
	return false;
}

bool gdb_history_pc_of(struct gdb_history *gh, struct gdb_hist_thread *t, uint64_t *pc)
{
	return gdb_history_pc(t, pc) || gdb_history_end_pc(gh, t, pc);
}
