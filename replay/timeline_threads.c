/* The recorded threads of a timeline: each one's history index over its
 * PT, its position, and the image the histories decode with, kept up with a
 * live recording as it grows. */
#include "timeline_internal.h"

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

struct tl_thread *tl_thread(const struct timeline *tl, pid_t tid)
{
	for (size_t i = 0; i < tl->nthreads; i++)
		if (tl->threads[i].tid == tid)
			return &tl->threads[i];
	return NULL;
}

struct tl_thread *tl_thread_or_first(const struct timeline *tl, pid_t tid)
{
	struct tl_thread *t = tl_thread(tl, tid);
	return t ? t : &tl->threads[0];
}

uint64_t tl_count(const struct tl_thread *t)
{
	return history_insn_count(t->h);
}

bool tl_thread_in_past(const struct tl_thread *t)
{
	return t->pos < tl_count(t);
}

bool tl_thread_pc(const struct tl_thread *t, uint64_t *pc)
{
	if (tl_thread_in_past(t))
		return history_ip_at(t->h, t->pos, pc) == 0;
	if (t->end_ip_known) {
		*pc = t->end_ip;
		return true;
	}
	return false;
}

int tl_add_thread(struct timeline *tl, pid_t tid, char *err, size_t errlen)
{
	struct tl_thread *grown = realloc(tl->threads, (tl->nthreads + 1) * sizeof *grown);
	if (!grown) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	tl->threads = grown;
	struct tl_thread *t = &tl->threads[tl->nthreads];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	struct history_config cfg = {.image = tl->img.image, .cache_segments = 8};
	t->h = history_new(&cfg);
	if (!t->h) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	tl->nthreads++;
	return 0;
}

/* New mappings since the image was built (a live recording): add their
 * code to the image the histories decode with. */
static int refresh_image(struct timeline *tl)
{
	const struct trace_data *td = tl->td;
	if (td->nmmaps == tl->img_nmmaps && td->ncode == tl->img_ncode)
		return 0;
	struct trace_image ti = {.code_fd = -1};
	char err[256];
	if (trace_image_build(&ti, td, err, sizeof err) != 0) {
		fprintf(stderr, "ptrev: history image: %s\n", err);
		trace_image_free(&ti);
		return -1;
	}
	struct trace_image *grown = realloc(tl->later, (tl->nlater + 1) * sizeof *grown);
	if (!grown) {
		trace_image_free(&ti);
		return -1;
	}
	tl->later = grown;
	tl->later[tl->nlater++] = ti;
	if (pt_image_copy(tl->img.image, ti.image) < 0)
		return -1;
	tl->img_nmmaps = td->nmmaps;
	tl->img_ncode = td->ncode;
	return 0;
}

int tl_threads_sync(struct timeline *tl)
{
	if (!tl->saved && refresh_image(tl) != 0)
		return -1;
	/* Threads the live program created since (their streams appear). */
	for (size_t i = 0; !tl->saved && i < tl->td->nstreams; i++) {
		char err[64];
		if (!tl_thread(tl, tl->td->streams[i].tid) &&
		    tl_add_thread(tl, tl->td->streams[i].tid, err, sizeof err) != 0)
			return -1;
	}
	for (size_t i = 0; i < tl->nthreads; i++) {
		struct tl_thread *t = &tl->threads[i];
		const struct trace_thread_stream *st = stream_of(tl->td, t->tid);
		if (!st || st->pt_len <= t->fed)
			continue;
		bool at_end = !tl_thread_in_past(t);
		if (history_append(t->h, st->pt + t->fed, st->pt_len - t->fed) != 0)
			return -1;
		t->fed = st->pt_len;
		/* A saved recording gets no more bytes: its last instructions
		 * count too where the recorder stopped mid-run. */
		if (tl->saved && history_seal(t->h) != 0)
			return -1;
		if (at_end)
			t->pos = tl_count(t);
		uint64_t ip;
		t->end_ip_known = history_resume_ip(t->h, &ip) == 1;
		t->end_ip = t->end_ip_known ? ip : 0;
	}
	return 0;
}
