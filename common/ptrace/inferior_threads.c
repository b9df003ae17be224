/* The inferior's thread table and its "process gone" state: the bottom of
 * the inferior files, which every other one (life cycle, all-stop waits,
 * registers, the recorders' own event loops) reads and keeps up to date. */
#include "inferior_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct inf_thread *inferior_thread(struct inferior *inf, pid_t tid)
{
	for (size_t i = 0; i < inf->nthreads; i++)
		if (inf->threads[i].tid == tid)
			return &inf->threads[i];
	return NULL;
}

struct inf_thread *inf_add_thread(struct inferior *inf, pid_t tid)
{
	struct inf_thread *t = inferior_thread(inf, tid);
	if (t)
		return t;
	if (inf->nthreads == inf->cap_threads) {
		size_t cap = inf->cap_threads ? inf->cap_threads * 2 : 8;
		struct inf_thread *nt = realloc(inf->threads, cap * sizeof(*nt));
		if (!nt)
			return NULL;
		inf->threads = nt;
		inf->cap_threads = cap;
	}
	t = &inf->threads[inf->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

void inf_remove_thread(struct inferior *inf, pid_t tid)
{
	struct inf_thread *t = inferior_thread(inf, tid);
	if (!t)
		return;
	size_t i = (size_t)(t - inf->threads);
	memmove(&inf->threads[i], &inf->threads[i + 1], (inf->nthreads - i - 1) * sizeof(*t));
	inf->nthreads--;
}

void inf_mark_gone(struct inferior *inf)
{
	inf_vfork_child_done(inf); /* its int3s stay in the parent's memory */
	inf->exited = true;
	inf->nthreads = 0;
	inf->nbps = 0;
	memset(inf->hw, 0, sizeof(inf->hw));
	inf->dr7 = 0;
	if (inf->memfd >= 0)
		close(inf->memfd);
	inf->memfd = -1;
}
