/* history_schedule: the global instruction order against brute force.
 *
 * Every schedule here is also expanded into one (tid, pos) entry per global
 * index; each query is then answered by a plain scan of that expansion and
 * compared with the map, for every global index and every thread. Covers a
 * hand-built schedule (switches, runs that merge, a thread first seen
 * mid-run), rejected runs leaving the map as it was, the empty map, a
 * seeded random schedule, and a million-run schedule for scale (no timing
 * assertions: it only has to finish and agree with itself). */
#include "ptrev/history_schedule.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void failf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("FAIL: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	/* One broken invariant tends to fail at every index: keep the log
	 * readable and stop early. */
	if (++failures > 20) {
		printf("too many failures\n");
		exit(1);
	}
}

#define CHECK(cond, ...) do { if (!(cond)) failf(__VA_ARGS__); } while (0)

/* ---- brute-force model ---- */

struct slot {
	pid_t tid;
	uint64_t pos;
};

struct model {
	struct slot *slots; /* one per global index */
	size_t total, cap;
	pid_t tids[64];     /* in order of first appearance */
	size_t ntids;
};

static void model_add(struct model *md, const struct trace_sched_run *r)
{
	if (md->total + r->count > md->cap) {
		md->cap = (md->total + r->count) * 2;
		md->slots = realloc(md->slots, md->cap * sizeof *md->slots);
		if (!md->slots) {
			printf("out of memory\n");
			exit(1);
		}
	}
	for (uint64_t i = 0; i < r->count; i++)
		md->slots[md->total++] = (struct slot){ r->tid, r->pos + i };
	size_t k;
	for (k = 0; k < md->ntids && md->tids[k] != r->tid; k++)
		;
	if (k == md->ntids)
		md->tids[md->ntids++] = r->tid;
}

/* Where tid stands once global indices < g have run, by scanning. */
static uint64_t brute_thread_pos(const struct model *md, pid_t tid, uint64_t g)
{
	for (size_t i = g; i-- > 0;)
		if (md->slots[i].tid == tid)
			return md->slots[i].pos + 1;
	for (size_t i = g; i < md->total; i++)
		if (md->slots[i].tid == tid)
			return md->slots[i].pos;
	return 0;
}

static bool brute_first(const struct model *md, pid_t tid, uint64_t *first, uint64_t *end)
{
	bool seen = false;
	for (size_t i = 0; i < md->total; i++) {
		if (md->slots[i].tid != tid)
			continue;
		if (!seen)
			*first = md->slots[i].pos;
		*end = md->slots[i].pos + 1;
		seen = true;
	}
	return seen;
}

/* Compares every query of m with the model. thread_pos is checked at every
 * g for every thread with an incremental scan (the brute function above is
 * quadratic and is used only on small schedules via check_small). */
static void check_against(const char *what, const struct sched_map *m, const struct model *md,
			  bool small)
{
	CHECK(sched_map_total(m) == md->total, "%s: total %" PRIu64 " want %zu", what,
	      sched_map_total(m), md->total);

	pid_t *tids = NULL;
	size_t n = sched_map_threads(m, &tids);
	CHECK(n == md->ntids, "%s: %zu threads want %zu", what, n, md->ntids);
	for (size_t i = 0; i < n && i < md->ntids; i++)
		CHECK(tids[i] == md->tids[i], "%s: thread %zu is %d want %d", what, i,
		      (int)tids[i], (int)md->tids[i]);
	free(tids);

	for (size_t g = 0; g < md->total; g++) {
		pid_t tid = -1;
		uint64_t pos = 0, back = 0;
		bool ok = sched_map_at(m, g, &tid, &pos);
		CHECK(ok && tid == md->slots[g].tid && pos == md->slots[g].pos,
		      "%s: at(%zu) = %d (%d, %" PRIu64 ") want (%d, %" PRIu64 ")", what, g, ok,
		      (int)tid, pos, (int)md->slots[g].tid, md->slots[g].pos);
		ok = sched_map_global(m, md->slots[g].tid, md->slots[g].pos, &back);
		CHECK(ok && back == g, "%s: global(%d, %" PRIu64 ") = %d %" PRIu64 " want %zu", what,
		      (int)md->slots[g].tid, md->slots[g].pos, ok, back, g);
	}
	pid_t tid = 7;
	uint64_t pos = 7;
	CHECK(!sched_map_at(m, md->total, &tid, &pos), "%s: at(total) answered", what);
	CHECK(!sched_map_at(m, UINT64_MAX, &tid, &pos), "%s: at(max) answered", what);

	for (size_t k = 0; k < md->ntids; k++) {
		pid_t t = md->tids[k];
		uint64_t first = 0, end = 0, got = 0;
		brute_first(md, t, &first, &end);
		CHECK(sched_map_thread_start(m, t, &got) && got == first,
		      "%s: thread_start(%d) = %" PRIu64 " want %" PRIu64, what, (int)t, got, first);
		CHECK(sched_map_thread_end(m, t) == end, "%s: thread_end(%d) = %" PRIu64
		      " want %" PRIu64, what, (int)t, sched_map_thread_end(m, t), end);
		/* Positions just outside the thread's recorded range are not held. */
		uint64_t g;
		if (first > 0)
			CHECK(!sched_map_global(m, t, first - 1, &g), "%s: global(%d, start-1) held",
			      what, (int)t);
		CHECK(!sched_map_global(m, t, end, &g), "%s: global(%d, end) held", what, (int)t);
		CHECK(!sched_map_global(m, t, UINT64_MAX, &g), "%s: global(%d, max) held", what,
		      (int)t);

		/* thread_pos at every g from 0 to total: walk the expansion once. */
		uint64_t want = first;
		for (size_t gi = 0; gi <= md->total; gi++) {
			if (gi > 0 && md->slots[gi - 1].tid == t)
				want = md->slots[gi - 1].pos + 1;
			uint64_t p = sched_map_thread_pos(m, t, gi);
			CHECK(p == want, "%s: thread_pos(%d, %zu) = %" PRIu64 " want %" PRIu64, what,
			      (int)t, gi, p, want);
			if (small)
				CHECK(p == brute_thread_pos(md, t, gi),
				      "%s: thread_pos(%d, %zu) disagrees with the scan", what, (int)t, gi);
		}
		CHECK(sched_map_thread_pos(m, t, UINT64_MAX) == end,
		      "%s: thread_pos(%d, max) not its end", what, (int)t);
	}

	/* A thread without runs. */
	uint64_t g = 0;
	CHECK(sched_map_thread_end(m, 999999) == 0, "%s: unknown thread has an end", what);
	CHECK(!sched_map_thread_start(m, 999999, &g), "%s: unknown thread has a start", what);
	CHECK(!sched_map_global(m, 999999, 0, &g), "%s: unknown thread has a global", what);
	CHECK(sched_map_thread_pos(m, 999999, md->total / 2) == 0,
	      "%s: unknown thread has a position", what);
}

static int add_both(struct sched_map *m, struct model *md, pid_t tid, uint64_t pos, uint64_t count)
{
	struct trace_sched_run r = { .tid = tid, .pos = pos, .count = count };
	int rc = sched_map_add(m, &r);
	if (rc == 0)
		model_add(md, &r);
	return rc;
}

/* A run the map must refuse; the model is left alone, so the following
 * check_against proves nothing changed. */
static void reject(struct sched_map *m, const char *why, pid_t tid, uint64_t pos, uint64_t count)
{
	struct trace_sched_run r = { .tid = tid, .pos = pos, .count = count };
	CHECK(sched_map_add(m, &r) == -1, "accepted %s (%d, %" PRIu64 ", %" PRIu64 ")", why,
	      (int)tid, pos, count);
}

static void test_empty(void)
{
	struct sched_map *m = sched_map_new();
	struct model md = { 0 };
	check_against("empty", m, &md, true);
	pid_t dummy = 0, *tids = &dummy; /* must be overwritten */
	CHECK(sched_map_threads(m, &tids) == 0 && tids == NULL, "empty: threads listed");
	CHECK(sched_map_thread_pos(m, 1, 0) == 0, "empty: thread_pos");
	/* Rejections must not create a thread or count anything either. */
	reject(m, "count 0 on an empty map", 5, 0, 0);
	reject(m, "wrapping run", 5, UINT64_MAX, 1);
	check_against("empty after rejects", m, &md, true);
	sched_map_free(m);
	sched_map_free(NULL);
}

static void test_hand_built(void)
{
	struct sched_map *m = sched_map_new();
	struct model md = { 0 };
	int rc = 0;
	rc |= add_both(m, &md, 100, 0, 3);
	rc |= add_both(m, &md, 100, 3, 2);  /* continues the last run: merged */
	rc |= add_both(m, &md, 200, 0, 4);
	rc |= add_both(m, &md, 100, 5, 1);
	rc |= add_both(m, &md, 300, 5, 3);  /* first seen mid-run, at pos 5 */
	rc |= add_both(m, &md, 300, 8, 2);  /* merged */
	rc |= add_both(m, &md, 300, 10, 1); /* merged again */
	rc |= add_both(m, &md, 200, 4, 1);
	rc |= add_both(m, &md, 100, 6, 2);
	rc |= add_both(m, &md, 300, 11, 1);
	rc |= add_both(m, &md, 200, 5, 3);
	CHECK(rc == 0, "hand-built: a valid run was refused");
	check_against("hand-built", m, &md, true);

	/* Spot values, so the model itself is checked against intent. */
	pid_t tid;
	uint64_t pos, g;
	CHECK(sched_map_total(m) == 23, "hand-built: total %" PRIu64, sched_map_total(m));
	CHECK(sched_map_at(m, 10, &tid, &pos) && tid == 300 && pos == 5, "hand-built: at(10)");
	CHECK(sched_map_global(m, 300, 5, &g) && g == 10, "hand-built: global(300, 5)");
	CHECK(sched_map_thread_pos(m, 300, 0) == 5, "hand-built: 300 before it runs");
	CHECK(sched_map_thread_pos(m, 200, 9) == 4, "hand-built: 200 after its first run");
	CHECK(sched_map_thread_pos(m, 100, 5) == 5, "hand-built: 100 after the merged run");

	/* 200 ran last (end 8), 100 ends at 8, 300 at 12. */
	reject(m, "gap", 100, 9, 1);
	reject(m, "overlap", 100, 7, 1);
	reject(m, "restart", 100, 0, 1);
	reject(m, "count 0", 200, 8, 0);
	reject(m, "count 0 of a new thread", 400, 0, 0);
	reject(m, "gap after the last run", 200, 9, 1);
	reject(m, "overlap with the last run", 200, 7, 2);
	reject(m, "wrapping run", 400, UINT64_MAX - 1, 2);
	reject(m, "total overflow", 400, 0, UINT64_MAX);
	check_against("hand-built after rejects", m, &md, true);

	/* Still usable after rejections. */
	CHECK(add_both(m, &md, 100, 8, 2) == 0, "hand-built: valid run after rejects");
	CHECK(add_both(m, &md, 400, 0, 1) == 0, "hand-built: new thread after rejects");
	check_against("hand-built extended", m, &md, true);
	free(md.slots);
	sched_map_free(m);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64*: fixed seed, so a failure reproduces. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void test_random(void)
{
	struct sched_map *m = sched_map_new();
	struct model md = { 0 };
	const pid_t tids[4] = { 4001, 4002, 4003, 4004 };
	uint64_t end[4];
	bool started[4] = { false };
	for (int i = 0; i < 4; i++)
		end[i] = (i % 2) ? rng() % 1000 : 0; /* two threads seen mid-run */
	int last = -1;
	for (int i = 0; i < 10000; i++) {
		/* Often the same thread again, so merges are common. */
		int t = (last >= 0 && rng() % 4 == 0) ? last : (int)(rng() % 4);
		uint64_t count = 1 + rng() % 12;
		if (rng() % 16 == 0) {
			uint64_t bad = end[t] + 1 + rng() % 5;
			if (started[t])
				reject(m, "random gap", tids[t], bad, count);
			if (started[t] && end[t] > 0)
				reject(m, "random overlap", tids[t], end[t] - 1, count);
			reject(m, "random count 0", tids[t], end[t], 0);
		}
		CHECK(add_both(m, &md, tids[t], end[t], count) == 0, "random: run %d refused", i);
		end[t] += count;
		started[t] = true;
		last = t;
	}
	check_against("random", m, &md, false);
	free(md.slots);
	sched_map_free(m);
}

/* A million runs over 16 threads, then random lookups that must agree with
 * each other: at(g) names (t, p); global(t, p) is g; t stands at p before g
 * and at p + 1 after it. */
static void test_scale(void)
{
	struct sched_map *m = sched_map_new();
	enum { NT = 16, NRUNS = 1000000, NLOOK = 100000 };
	uint64_t end[NT] = { 0 };
	int last = -1;
	for (int i = 0; i < NRUNS; i++) {
		int t = (int)(rng() % NT);
		if (t == last)
			t = (t + 1) % NT; /* keep the runs distinct: no merging here */
		struct trace_sched_run r = { .tid = 10 + t, .pos = end[t], .count = 1 + rng() % 100 };
		if (sched_map_add(m, &r) != 0) {
			failf("scale: run %d refused", i);
			break;
		}
		end[t] += r.count;
		last = t;
	}
	uint64_t total = sched_map_total(m);
	uint64_t sum = 0;
	for (int t = 0; t < NT; t++) {
		sum += end[t];
		CHECK(sched_map_thread_end(m, 10 + t) == end[t], "scale: thread %d end", t);
	}
	CHECK(total == sum, "scale: total %" PRIu64 " want %" PRIu64, total, sum);
	for (int i = 0; i < NLOOK && total > 0; i++) {
		uint64_t g = rng() % total, pos = 0, back = 0;
		pid_t tid = 0;
		if (!sched_map_at(m, g, &tid, &pos)) {
			failf("scale: at(%" PRIu64 ") unanswered", g);
			continue;
		}
		CHECK(sched_map_global(m, tid, pos, &back) && back == g,
		      "scale: global(at(%" PRIu64 ")) = %" PRIu64, g, back);
		CHECK(sched_map_thread_pos(m, tid, g) == pos, "scale: thread_pos before %" PRIu64, g);
		CHECK(sched_map_thread_pos(m, tid, g + 1) == pos + 1,
		      "scale: thread_pos after %" PRIu64, g);
	}
	sched_map_free(m);
}

int main(void)
{
	test_empty();
	test_hand_built();
	test_random();
	test_scale();
	if (failures) {
		printf("%d check(s) failed\n", failures);
		return 1;
	}
	printf("history_schedule: all checks passed\n");
	return 0;
}
