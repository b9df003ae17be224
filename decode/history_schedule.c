/* The global instruction order across threads (ptrev/history_schedule.h).
 *
 * The schedule is a list of runs in global order; each run's global start is
 * the sum of the counts before it, so global lookups are a binary search
 * over one array. Per-thread lookups must not scan other threads' runs (a
 * recording can hold millions of runs), so each thread also keeps the
 * indices of its own runs. A thread's runs are contiguous in its positions
 * and come in global order, so that index list is sorted both by pos and by
 * global start and either can be binary searched. Threads are few (tens),
 * so finding a thread's entry is a linear scan of a small table. */
#include "ptrev/history_schedule.h"

#include <stdlib.h>
#include <string.h>

struct sched_entry {
	uint64_t gstart; /* global index of the run's first instruction */
	uint64_t pos;    /* the thread's position of that instruction */
	uint64_t count;
	pid_t tid;
};

struct sched_thread {
	pid_t tid;
	size_t *runs; /* indices into m->runs, in order */
	size_t nruns, cap;
};

struct sched_map {
	struct sched_entry *runs;
	size_t nruns, cap;
	struct sched_thread *threads; /* in order of first appearance */
	size_t nthreads, tcap;
	uint64_t total;
};

struct sched_map *sched_map_new(void)
{
	return calloc(1, sizeof(struct sched_map));
}

void sched_map_free(struct sched_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nthreads; i++)
		free(m->threads[i].runs);
	free(m->threads);
	free(m->runs);
	free(m);
}

/* Makes room for need elements. Doubling keeps appends amortised O(1); the
 * size checks keep a huge count from wrapping the byte size into a small
 * allocation. Returns the (possibly moved) array, or NULL with *arr and
 * *cap untouched. */
static void *grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return arr;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return NULL;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return NULL;
	void *p = realloc(arr, ncap * elem);
	if (p)
		*cap = ncap;
	return p;
}

static const struct sched_thread *find_thread(const struct sched_map *m, pid_t tid)
{
	for (size_t i = 0; i < m->nthreads; i++)
		if (m->threads[i].tid == tid)
			return &m->threads[i];
	return NULL;
}

static const struct sched_entry *thread_run(const struct sched_map *m,
					    const struct sched_thread *t, size_t i)
{
	return &m->runs[t->runs[i]];
}

int sched_map_add(struct sched_map *m, const struct trace_sched_run *run)
{
	if (!m || !run || run->count == 0)
		return -1;
	/* Positions and global indices are uint64_t; refuse a run whose end
	 * would wrap, so every sum below stays exact. */
	if (run->pos > UINT64_MAX - run->count || m->total > UINT64_MAX - run->count)
		return -1;

	const struct sched_thread *t = find_thread(m, run->tid);
	if (t) {
		const struct sched_entry *prev = thread_run(m, t, t->nruns - 1);
		if (run->pos != prev->pos + prev->count)
			return -1;
	}

	/* A run that continues the last one (the recorder split it, e.g. at a
	 * buffer flush) is one run: fewer entries, and the thread's last run
	 * is then necessarily the global last, so validity was checked above. */
	if (m->nruns > 0) {
		struct sched_entry *last = &m->runs[m->nruns - 1];
		if (last->tid == run->tid && run->pos == last->pos + last->count) {
			last->count += run->count;
			m->total += run->count;
			return 0;
		}
	}

	/* Reserve everything before changing anything so a failed allocation
	 * leaves the map as it was. */
	struct sched_entry *runs = grow(m->runs, &m->cap, m->nruns + 1, sizeof *runs);
	if (!runs)
		return -1;
	m->runs = runs;
	struct sched_thread *wt;
	if (t) {
		wt = &m->threads[t - m->threads];
	} else {
		struct sched_thread *threads =
			grow(m->threads, &m->tcap, m->nthreads + 1, sizeof *threads);
		if (!threads)
			return -1;
		m->threads = threads;
		wt = &m->threads[m->nthreads];
		memset(wt, 0, sizeof *wt);
		wt->tid = run->tid;
	}
	size_t *idx = grow(wt->runs, &wt->cap, wt->nruns + 1, sizeof *idx);
	if (!idx)
		return -1; /* a new thread's entry is not counted yet: nothing changed */
	wt->runs = idx;
	if (!t)
		m->nthreads++;

	wt->runs[wt->nruns++] = m->nruns;
	m->runs[m->nruns++] = (struct sched_entry){
		.gstart = m->total, .pos = run->pos, .count = run->count, .tid = run->tid,
	};
	m->total += run->count;
	return 0;
}

uint64_t sched_map_total(const struct sched_map *m)
{
	return m ? m->total : 0;
}

uint64_t sched_map_thread_end(const struct sched_map *m, pid_t tid)
{
	const struct sched_thread *t = m ? find_thread(m, tid) : NULL;
	if (!t)
		return 0;
	const struct sched_entry *r = thread_run(m, t, t->nruns - 1);
	return r->pos + r->count;
}

bool sched_map_thread_start(const struct sched_map *m, pid_t tid, uint64_t *pos)
{
	const struct sched_thread *t = m ? find_thread(m, tid) : NULL;
	if (!t)
		return false;
	*pos = thread_run(m, t, 0)->pos;
	return true;
}

bool sched_map_global(const struct sched_map *m, pid_t tid, uint64_t pos, uint64_t *g)
{
	const struct sched_thread *t = m ? find_thread(m, tid) : NULL;
	if (!t || pos < thread_run(m, t, 0)->pos)
		return false;
	/* The last run starting at or before pos; runs are contiguous, so pos
	 * is in it unless pos is past the thread's end. */
	size_t lo = 0, hi = t->nruns; /* answer in [lo, hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (thread_run(m, t, mid)->pos <= pos)
			lo = mid;
		else
			hi = mid;
	}
	const struct sched_entry *r = thread_run(m, t, lo);
	if (pos - r->pos >= r->count)
		return false;
	*g = r->gstart + (pos - r->pos);
	return true;
}

bool sched_map_at(const struct sched_map *m, uint64_t g, pid_t *tid, uint64_t *pos)
{
	if (!m || g >= m->total)
		return false;
	/* The last run starting at or before g; the first starts at 0. */
	size_t lo = 0, hi = m->nruns;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->runs[mid].gstart <= g)
			lo = mid;
		else
			hi = mid;
	}
	const struct sched_entry *r = &m->runs[lo];
	*tid = r->tid;
	*pos = r->pos + (g - r->gstart);
	return true;
}

uint64_t sched_map_thread_pos(const struct sched_map *m, pid_t tid, uint64_t g)
{
	const struct sched_thread *t = m ? find_thread(m, tid) : NULL;
	if (!t)
		return 0;
	/* Before its first run executes anything the thread stands where the
	 * recording first saw it. */
	if (thread_run(m, t, 0)->gstart >= g)
		return thread_run(m, t, 0)->pos;
	/* The last run that had executed at least one instruction by g; runs
	 * after it have not started, runs before it ended where it began. */
	size_t lo = 0, hi = t->nruns;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (thread_run(m, t, mid)->gstart < g)
			lo = mid;
		else
			hi = mid;
	}
	const struct sched_entry *r = thread_run(m, t, lo);
	uint64_t done = g - r->gstart;
	return r->pos + (done < r->count ? done : r->count);
}

size_t sched_map_threads(const struct sched_map *m, pid_t **out)
{
	*out = NULL;
	if (!m || m->nthreads == 0)
		return 0;
	pid_t *tids = malloc(m->nthreads * sizeof *tids);
	if (!tids)
		return 0;
	for (size_t i = 0; i < m->nthreads; i++)
		tids[i] = m->threads[i].tid;
	*out = tids;
	return m->nthreads;
}
