/* The history target over an event recording (a saved one whose positions
 * still count events): until its history is made, gdb sees the program
 * where the recording ended, every thread with its full state, from a
 * native re-execution held there (event_end.h). The history is made by
 * re-executing the recording stepped (materialise.h), which can take a
 * while: it starts in the background as soon as the end state is shown
 * (materialise_job.h: a thread of its own, on the other CPU where there
 * is one), and the first thing that needs it (a resume either way,
 * `monitor when`'s instruction numbers) waits for it to end; gdb waits
 * for a resume's stop without a time limit. At the end of the history the
 * end state still answers, so every thread shows full state there. */
#include "target_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptrev/event_cut.h"
#include "ptrev/event_writes.h"
#include "ptrev/materialise.h"
#include "ptrev/materialise_job.h"
#include "ptrev/ptrace_handover.h"
#include "ptrev/syscall_table.h"
#include "ptrev/unrecorded_insns.h"

/* PTREV_BACKGROUND_HISTORY=0 makes the history only when first needed
 * (what the benchmark compares with), the request waiting for it;
 * =after-move starts it in the background once the first move has ended
 * (tests of what a move does before the whole history is ready: on a
 * fast machine a short recording's whole history is ready before gdb's
 * first move). */
enum background { BACKGROUND_AT_OPEN, BACKGROUND_NEVER, BACKGROUND_AFTER_MOVE };
static enum background background_when(void)
{
	const char *v = getenv("PTREV_BACKGROUND_HISTORY");
	if (v && strcmp(v, "0") == 0)
		return BACKGROUND_NEVER;
	if (v && strcmp(v, "after-move") == 0)
		return BACKGROUND_AFTER_MOVE;
	return BACKGROUND_AT_OPEN;
}

static void start_background(struct history_event *he)
{
	char why[256];
	he->job = materialise_job_start(he->ev, why, sizeof why);
	if (!he->job) /* made in the foreground when needed */
		fprintf(stderr, "ptrev: cannot make the history in the background: %s\n", why);
}

void history_event_moved(struct history_event *he)
{
	if (!he->job_held)
		return;
	he->job_held = false;
	if (!he->job && !he->made_ok)
		start_background(he);
}

/* ev's replay stopped at thread at->tid's syscall event at->event, which
 * no replay can reproduce: serve ev cut there (everything before it, with
 * full state) rather than nothing. Or it diverged as that thread went for
 * that event (at->diverged): cut at the entry of the thread's syscall
 * before, the last place where the replay met the recording, and say
 * that what came before may already differ (hint: an instruction whose
 * result the recording does not hold, "" where none is known). he->end
 * set, or -1. */
static int open_cut(struct history_event *he, const struct trace_data *ev,
		    const struct event_end_failure *at, const char *why, const char *hint)
{
	char err[256];
	uint64_t k;
	if (event_cut_where_failed(ev, at->tid, at->event, at->diverged, &he->cut, &k, err,
				   sizeof err) < 0) {
		fprintf(stderr, "ptrev: cannot end the replay before that %s: %s\n",
			at->diverged ? "place" : "syscall", err);
		return -1;
	}
	he->cut_ok = true;
	he->ev = &he->cut;
	char again[512];
	he->end = event_end_open(he->ev, NULL, again, sizeof again);
	if (!he->end) {
		fprintf(stderr, "ptrev: the replay cut there failed too: %s\n", again);
		return -1;
	}
	if (at->diverged)
		snprintf(he->cut_note, sizeof he->cut_note, "this replay ends where thread %d "
			 "enters its syscall event %llu, the last place where it met the recording: "
			 "after it, it went differently (%.300s%.200s); the recording goes on, out of "
			 "reach. Everything before has full state as re-executed, which may already "
			 "differ from the recorded run where the program used what the recording does "
			 "not hold.", (int)at->tid, (unsigned long long)k, why, hint);
	else
		snprintf(he->cut_note, sizeof he->cut_note, "this replay ends where thread %d "
			 "enters its syscall event %llu, which no replay can reproduce (%.400s); the "
			 "recording goes on after it, out of reach. Everything before has full state.",
			 (int)at->tid, (unsigned long long)k, why);
	fprintf(stderr, "ptrev: %s\n", he->cut_note);
	return 0;
}

bool history_event_take_note(struct history_event *he, char *out, size_t outlen)
{
	if (!he->cut_ok || he->cut_told)
		return false;
	he->cut_told = true;
	snprintf(out, outlen, "%s", he->cut_note);
	return true;
}

int history_event_open(struct history_event *he, const struct trace_data *ev, bool may_cut,
		       char *err, size_t errlen)
{
	memset(he, 0, sizeof *he);
	he->ev = ev;
	char why[768];
	struct event_end_failure at;
	he->end = event_end_open(ev, &at, why, sizeof why);
	/* What went differently may be long before what shows it: an
	 * instruction whose result was not recorded. */
	char hint[512] = "";
	if (!he->end && strstr(why, "diverged") && unrecorded_insns_note(ev, hint + 2, sizeof hint - 2))
		memcpy(hint, "; ", 2);
	if (!he->end && may_cut && at.tid && open_cut(he, ev, &at, why, hint) < 0)
		he->ev = ev;
	if (!he->end) {
		/* The inner reason may say that earlier positions keep their
		 * state: not in this replay, which must show the end first. */
		snprintf(err, errlen, "cannot re-execute this event recording to its end, which a "
			 "replay shows first (a recording made with --backend sw can be replayed up to "
			 "there): %s%s", why, hint);
		return -1;
	}
	/* The thread that ended the recording: the one a fatal signal killed,
	 * else the one that ran last. */
	ev = he->ev;
	for (size_t i = ev->nsignals; i-- > 0 && !he->last;)
		if (ev->signals[i].handler_ip == 0)
			he->last = ev->signals[i].tid;
	if (!he->last && ev->nsched)
		he->last = ev->sched[ev->nsched - 1].tid;
	if (!he->last && ev->nthreads)
		he->last = ev->threads[0].tid;
	enum background when = background_when();
	if (when == BACKGROUND_AT_OPEN)
		start_background(he);
	he->job_held = when == BACKGROUND_AFTER_MOVE;
	return 0;
}

void history_event_close(struct history_event *he)
{
	materialise_job_cancel(he->job);
	he->job = NULL;
	materialise_copies_kill(&he->made_copies);
	event_end_close(he->end);
	he->end = NULL;
	if (he->made_ok)
		trace_data_free(&he->made);
	he->made_ok = false;
	if (he->tail_ok)
		trace_data_free(&he->tail);
	he->tail_ok = false;
	ptrace_park_kill(he->tail_start_copy);
	he->tail_start_copy = 0;
	if (he->cut_ok)
		event_cut_free(&he->cut);
	he->cut_ok = false;
	if (he->head_ok)
		event_cut_free(&he->head);
	he->head_ok = false;
	if (he->runs_cut_ok)
		event_cut_free(&he->runs_cut);
	he->runs_cut_ok = false;
	free(he->tail_hit_owned);
	he->tail_hit_owned = NULL;
}

/* Wait for job j, saying how far it is after 2 s and then every 10 s: a
 * history of tens of millions of instructions takes minutes, and one line
 * at the start left the user to guess whether ptrev still worked. (gdb
 * shows ptrev's stderr when it started ptrev through a pipe; over TCP the
 * lines are on ptrev's own terminal.) false: gdb asked to stop first
 * (he->interrupted); j runs on. */
static bool wait_with_progress(struct history_event *he, struct materialise_job *j)
{
	double next = 2.0;
	for (;;) {
		struct materialise_job_status js;
		materialise_job_status(j, &js);
		if (js.done)
			return true;
		if (he->alive && he->alive(he->alive_ctx)) {
			he->interrupted = true;
			return false;
		}
		if (js.seconds >= next) {
			/* Events, not a percentage: how many instructions lie
			 * between them is what is being found out. */
			fprintf(stderr, "ptrev: still making the history: %llu of %llu events replayed, "
				"%.1f million instructions, %.0f s so far\n",
				(unsigned long long)js.events, (unsigned long long)js.events_total,
				(double)js.instructions / 1e6, js.seconds);
			next = js.seconds + 10.0;
		}
		struct timespec ts = {0, 100000000};
		nanosleep(&ts, NULL);
	}
}

/* The whole history: the background's (waited for), or made now. */
static int make_whole(struct history_event *he, struct materialise_stats *st, char *err,
		      size_t errlen)
{
	if (!he->job) {
		fprintf(stderr, "ptrev: making the history of this event recording (re-executing it "
			"block by block)...\n");
		/* Made by a job of its own all the same where someone waits to
		 * be told that ptrev is still at work (a monitor command's
		 * reply: gdb gives up on it after 2 s). */
		char why[256];
		he->job = he->alive ? materialise_job_start(he->ev, why, sizeof why) : NULL;
		if (!he->job)
			return materialise_to_memory(he->ev, &he->made, st, NULL, err, errlen);
	} else {
		struct materialise_job_status js;
		materialise_job_status(he->job, &js);
		if (!js.done)
			fprintf(stderr, "ptrev: making the %shistory of this event recording "
				"(re-executing it block by block; begun in the background %.1f s "
				"ago, %llu of %llu events replayed)...\n", he->tail_ok ? "whole " : "",
				js.seconds, (unsigned long long)js.events,
				(unsigned long long)js.events_total);
		else if (!js.failed)
			fprintf(stderr, "ptrev: the %shistory of this event recording was made in the "
				"background\n", he->tail_ok ? "whole " : "");
	}
	if (!wait_with_progress(he, he->job)) {
		/* It goes on in the background: the next move takes it. */
		snprintf(err, errlen, "stopped by gdb (Ctrl-C)");
		return -1;
	}
	materialise_copies_kill(&he->made_copies);
	int rc = materialise_job_finish(he->job, &he->made, st, &he->made_copies, err, errlen);
	he->job = NULL;
	return rc;
}

bool history_event_interrupted(struct history_event *he)
{
	bool was = he->interrupted;
	he->interrupted = false;
	return was;
}

/* Is the background's whole history ready? */
bool history_event_whole_ready(struct history_event *he)
{
	struct materialise_job_status js;
	if (!he->job)
		return false;
	materialise_job_status(he->job, &js);
	return js.done && !js.failed;
}

/* How much of the program's own run (its CPU time) a tail holds:
 * PTREV_TAIL_US microseconds (tests, benchmarks), else 30 us: the code
 * that runs last (formatting output, freeing) runs 3-7 instructions a ns,
 * and a tail of 100 us held 0.3-1.3 million instructions, 2-6 s to step
 * before the first reverse-stepi (sort, python3); one of 30 us, the last
 * few stretches, holds thousands. Going back further makes one four times
 * as long, each time. */
#define TAIL_BUDGET_US 30ull
static uint64_t tail_budget_ns(void)
{
	const char *v = getenv("PTREV_TAIL_US");
	return (v && *v ? strtoull(v, NULL, 10) : TAIL_BUDGET_US) * 1000ull;
}

/* PTREV_TAIL_HISTORY=0: no tail (the whole history at the first move,
 * what the tests compare with). */
static bool tail_wanted(void)
{
	const char *v = getenv("PTREV_TAIL_HISTORY");
	return !(v && strcmp(v, "0") == 0);
}

/* PTREV_RUN_PIECES=0: a multi-threaded recording's hit makes the tail
 * from its run to the end, not a piece of its run (the reference). */
static bool runs_wanted(void)
{
	const char *v = getenv("PTREV_RUN_PIECES");
	return !(v && strcmp(v, "0") == 0);
}

/* A count the tests give in the environment: true with *n where name is
 * set. */
static bool env_count(const char *name, size_t *n)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return false;
	*n = (size_t)strtoul(v, NULL, 10);
	return true;
}

/* Where a tail to make first begins (0: none). PTREV_TAIL_EVENTS=N: the
 * last N events, whole stretches (tests); else about tail_budget_ns of
 * the program's own run, *split set to how much of its first stretch to
 * leave out (event_end_tail_split; PTREV_TAIL_SPLIT=0: none, for the
 * benchmark). */
static size_t tail_from(struct history_event *he, uint64_t *split)
{
	size_t n;
	*split = 0;
	if (!tail_wanted())
		return 0;
	if (env_count("PTREV_TAIL_EVENTS", &n))
		return event_end_tail_of(he->end, n);
	size_t from = event_end_tail_from(he->end, tail_budget_ns());
	const char *sp = getenv("PTREV_TAIL_SPLIT");
	if (from && !(sp && strcmp(sp, "0") == 0))
		*split = event_end_tail_split(he->end, from, tail_budget_ns());
	return from;
}

/* Where a multi-threaded recording's tail begins: a run of its recorded
 * order (0: none). PTREV_TAIL_RUNS=N: the last N runs (tests); else
 * about tail_budget_ns of the program's own run. */
static size_t tail_run(struct history_event *he)
{
	size_t n;
	if (!tail_wanted())
		return 0;
	if (env_count("PTREV_TAIL_RUNS", &n))
		return event_end_tail_runs_of(he->end, n);
	return event_end_tail_run(he->end, tail_budget_ns());
}

/* The point inside the tail's first stretch where its history begins,
 * about split ns into the stretch (*point). Where the stretch ends at a
 * STATE point inside a loop (gdb's Ctrl-C in a computation, a live
 * recording's present), a few thousand passes before it, found by how the
 * loop's passes go: the time the stretch takes is known only to a third
 * (below), which in a loop of half a second is a tenth of a second of the
 * program's run to step. Else by time: the stretch's native time is an
 * estimate from one run (this machine's runs of one stretch differ by a
 * third), and the thread may reach its event before the timer stops it:
 * then once more at 3/4 of the time, at 1/2, at 1/4. 1 taken, 0 none (the
 * whole stretch is made). */
static int tail_point(struct history_event *he, size_t from, uint64_t split,
		      struct trace_state *point)
{
	static const unsigned quarters[] = {0, 4, 3, 2, 1};
	char err[512];
	for (size_t i = 0; i < sizeof quarters / sizeof quarters[0]; i++) {
		if (quarters[i] == 0 && !event_end_stretch_ends_at_state(he->end, from))
			continue;
		int rc = event_end_tail_point(he->end, he->ev, from, split / 4 * quarters[i], false,
					      point, he->tail_point_sp, NULL, err, sizeof err);
		if (rc > 0)
			return 1;
		if (rc < 0) {
			fprintf(stderr, "ptrev: cannot begin the tail's history inside a stretch "
				"(%s): it begins after an event\n", err);
			return 0;
		}
	}
	return 0;
}

/* A tail's history (materialise_tail_to_memory): in a job of its own
 * where someone waits to be told that ptrev is at work (he->alive: its
 * progress said, gdb's Ctrl-C stops it), else made here. 0, or -1 with
 * err (he->interrupted: gdb stopped it). */
static int tail_data(struct history_event *he, const struct trace_data *ev, size_t from,
		     const struct trace_state *point, size_t run, struct trace_data *out,
		     struct materialise_stats *st, pid_t *start_copy, char *err, size_t errlen)
{
	char why[256];
	*start_copy = 0;
	/* Its replay starts from the end's copy nearest before it (one
	 * thread), not from the program's start. */
	struct materialise_copies copies = {0};
	if (from && he->end)
		copies.from = event_end_take_copy(he->end, from, &copies.from_next);
	struct materialise_job *j =
		he->alive ? materialise_job_start_tail(ev, from, point, run, &copies, why, sizeof why)
			  : NULL;
	if (!j) {
		int rc = materialise_tail_to_memory(ev, from, point, run, out, st, NULL, &copies,
						    err, errlen);
		*start_copy = copies.start;
		return rc;
	}
	if (!wait_with_progress(he, j)) {
		materialise_job_cancel(j);
		snprintf(err, errlen, "stopped by gdb (Ctrl-C)");
		return -1;
	}
	int rc = materialise_job_finish(j, out, st, &copies, err, errlen);
	*start_copy = copies.start;
	return rc;
}

/* Make a tail's history (he->tail): from an event of a single-threaded
 * recording, from a run of a multi-threaded one's order. 0; 1 when there
 * is none to make; -1 with err. */
static int make_tail(struct history_event *he, char *err, size_t errlen)
{
	uint64_t split = 0;
	size_t from = he->tail_ok ? 0 : tail_from(he, &split);
	size_t run = he->tail_ok || from ? 0 : tail_run(he);
	struct materialise_stats st;
	struct trace_state point;
	if (from == 0 && run == 0)
		return 1;
	he->tail_split = from && split >= 4 && tail_point(he, from, split, &point);
	ptrace_park_kill(he->tail_start_copy);
	he->tail_start_copy = 0;
	if (tail_data(he, he->ev, from, he->tail_split ? &point : NULL, run, &he->tail, &st,
		      &he->tail_start_copy, err, errlen) < 0)
		return -1;
	he->tail_ok = true;
	he->tail_budget_ns = tail_budget_ns();
	he->tail_events = materialise_tail_events(he->ev, from, run);
	he->tail_seconds = (double)st.ns / 1e9;
	he->tail_insns = st.instructions;
	fprintf(stderr, "ptrev: made the history of the last %zu event%s%s first: %llu "
		"instructions in %.1f s (the whole history is made %s; going back further makes "
		"a longer tail's)\n", he->tail_events, he->tail_events == 1 ? "" : "s",
		he->tail_split ? " and of the end of the stretch before" : "",
		(unsigned long long)st.instructions, he->tail_seconds,
		he->job ? "in the background" : "when needed");
	return 0;
}

/* ---- going back past a tail's start ---- */

/* Where the current tail begins: its first event (after event from - 1),
 * and the point inside the stretch before it, or NULL. */
static size_t tail_start(const struct history_event *he, const struct trace_state **point)
{
	*point = materialise_tail_point(&he->tail);
	return materialise_tail_from(&he->tail);
}

/* The debug registers gdb's point p takes, added to pts[*n] (those
 * already there shared). 0, or -1 when they are not enough: more than
 * EVENT_SEARCH_DR with a watchpoint's, more than EVENT_SEARCH_MAX
 * breakpoints (int3s beyond the registers). x86 has no read-only watch:
 * a read watchpoint is searched for as an access one (a hit too many
 * only makes the tail longer). */
static int add_points(struct event_search_point *pts, size_t *n, const struct stop_point *p)
{
	struct dr_piece pieces[4];
	int np = 1, kind = p->type <= 1 ? DR_EXEC : p->type == 2 ? DR_WRITE : DR_ACCESS;
	if (kind == DR_EXEC)
		pieces[0] = (struct dr_piece){p->addr, 1};
	else if ((np = inf_dr_split(p->addr, p->len, pieces)) < 0)
		return -1;
	for (int i = 0; i < np; i++) {
		struct event_search_point q = {pieces[i].addr, kind, pieces[i].len};
		bool seen = false;
		for (size_t j = 0; j < *n && !seen; j++)
			seen = pts[j].addr == q.addr && pts[j].kind == q.kind && pts[j].len == q.len;
		if (seen)
			continue;
		if (*n == EVENT_SEARCH_MAX)
			return -1;
		pts[(*n)++] = q;
	}
	for (size_t j = 0; j < *n && *n > EVENT_SEARCH_DR; j++)
		if (pts[j].kind != DR_EXEC)
			return -1;
	return 0;
}

/* A recorded signal between the hit found (rc 1, in the stretch before
 * event *from; rc 0: none) and the tail's start at event cur stops gdb's
 * move first (the history reports each; gdb goes on where it does not
 * stop for it): the piece to make is the one that ends with the stretch
 * after the signal. */
static int stop_at_signal(struct history_event *he, size_t cur, int rc, size_t *from)
{
	size_t sig = event_end_last_signal(he->end, rc > 0 ? *from : 0, cur);
	if (!sig || sig >= cur)
		return rc;
	fprintf(stderr, "ptrev: going back to the signal recorded at event %zu first\n", sig - 1);
	*from = sig;
	return 1;
}

/* The same for a multi-threaded tail from run `run`: a run that delivers
 * a recorded signal after the hit's (*from) holds where gdb's move stops
 * first. A tail goes to the recording's end, so a tail from the run
 * before the signal's holds it all, and a delivery at the run's start is
 * not the tail's first position. */
static int stop_at_signal_run(struct history_event *he, size_t run, int rc, size_t *from)
{
	size_t sig = event_end_last_signal_run(he->end, rc > 0 ? *from : 0, run);
	if (!sig || (rc > 0 && sig - 1 <= *from))
		return rc;
	fprintf(stderr, "ptrev: going back to the signal recorded in run %zu of the thread order "
		"first\n", sig - 1);
	*from = sig > 1 ? sig - 2 : 0;
	he->hit_event = SIZE_MAX; /* no breakpoint's: no history of the start holds it */
	return 1;
}

static bool one_thread(const struct trace_data *ev);

bool history_event_watch_pieces(const struct history_event *he)
{
	const char *v = getenv("PTREV_WATCH_PIECES");
	return !(v && strcmp(v, "0") == 0) && he->end && one_thread(he->ev);
}

/* The ranges of stops' watchpoints in r (EVENT_SEARCH_MAX at most: no
 * more fit the debug registers): how many. Read and access watchpoints
 * too: the history reports a syscall's write to the watched bytes as an
 * access (replayer_watch_hooks.c), and gdb decides what it was. */
static size_t watched_ranges(const struct stop_set *stops, struct watched_range *r)
{
	size_t n = 0;
	for (size_t i = 0; i < stops->n && n < EVENT_SEARCH_MAX; i++)
		if (stops->v[i].type >= 2)
			r[n++] = (struct watched_range){stops->v[i].addr, stops->v[i].len};
	return n;
}

/* A write to watched memory that the debug registers do not see (a
 * syscall's, an address-space change: event_writes.h) after the hit
 * found (rc 1, in the stretch before event *from; 0: none) and before
 * the tail's start at event cur is where gdb's move may stop first: that
 * event (he->hit_write). */
static int unseen_write(struct history_event *he, const struct stop_set *stops, size_t cur,
			int rc, size_t *from)
{
	struct watched_range r[EVENT_SEARCH_MAX];
	size_t n = watched_ranges(stops, r);
	size_t w = n && history_event_watch_pieces(he)
			   ? event_last_write(he->ev, rc > 0 ? *from : 0, cur, r, n) : 0;
	if (w == 0)
		return rc;
	char what[128];
	event_write_label(he->ev, w - 1, r, n, what, sizeof what);
	fprintf(stderr, "ptrev: event %zu (%s) may write the watched memory where the debug "
		"registers do not see it: going back to it first\n", w - 1, what);
	*from = w - 1;
	he->hit_write = true;
	return 1;
}

int history_event_search_back(struct history_event *he, const struct stop_set *stops,
			      size_t *from)
{
	struct event_search_point pts[EVENT_SEARCH_MAX];
	size_t n = 0;
	char err[512];
	const struct trace_state *point;
	size_t cur = tail_start(he, &point), run = history_event_tail_run(he);
	if (!he->tail_ok || (cur == 0 && run == 0))
		return -1;
	for (size_t i = 0; i < stops->n; i++)
		if (add_points(pts, &n, &stops->v[i]) < 0)
			return -1; /* more than the debug registers hold */
	he->hit_event = 0;
	he->hit_nth = 0;
	he->hit_write = false;
	if (n == 0) /* nothing to stop at but signals: on to the program's start */
		return run ? stop_at_signal_run(he, run, 0, from) : stop_at_signal(he, cur, 0, from);
	fprintf(stderr, "ptrev: looking for the last breakpoint or watchpoint hit before the "
		"history made (a native replay)...\n");
	struct event_give_up give_up = {he->alive, he->alive_ctx};
	int rc = run ? event_end_tail_search_run(he->ev, run, pts, n, from, &he->hit_event,
						 &give_up, err, sizeof err)
		     : he->end ? event_end_tail_search_near(he->end, he->ev, cur, point, pts, n, from,
							    &he->hit_nth, &give_up, err, sizeof err)
				: event_end_tail_search(he->ev, cur, point, pts, n, from, &give_up, err,
							sizeof err);
	if (rc == -2) {
		he->interrupted = true; /* the move ends where it stands */
		return -1;
	}
	/* A tail from there must begin before this one (a later hit would be
	 * a replay that diverged): else a longer tail, not a loop. */
	if (rc > 0 && (run ? *from >= run : *from > cur || (*from == cur && !point))) {
		snprintf(err, sizeof err, "a hit found after the tail's start");
		rc = -1;
	}
	if (rc >= 0 && !run)
		rc = unseen_write(he, stops, cur, rc, from);
	size_t hit = *from;
	if (rc >= 0 && !run)
		rc = stop_at_signal(he, cur, rc, from);
	if (rc <= 0 || *from != hit)
		he->hit_write = false; /* a recorded signal's stretch */
	if (rc <= 0 || *from != hit || he->hit_write)
		he->hit_nth = 0; /* a recorded signal's stretch, a write's event: not a hit's */
	else if (rc >= 0)
		rc = stop_at_signal_run(he, run, rc, from);
	if (rc < 0)
		fprintf(stderr, "ptrev: cannot look for the breakpoint hit natively (%s)\n", err);
	else if (rc == 0)
		fprintf(stderr, "ptrev: no breakpoint or watchpoint hit before the history made\n");
	return rc;
}

/* Where the tail ends: before event end (the recording's events
 * count when it goes to the end). */
static size_t tail_end(const struct history_event *he)
{
	return he->tail_cut ? he->tail_last + 1 : materialise_event_count(he->ev);
}

size_t history_event_wider(struct history_event *he)
{
	const struct trace_state *point;
	size_t cur = tail_start(he, &point), end = tail_end(he);
	if (!he->tail_ok || cur == 0)
		return 0;
	/* Four times the native run time of the last: going back tail by
	 * tail steps what the last held again, a third of the total at most,
	 * and makes at most four times what one step back needs. */
	uint64_t held = event_end_tail_ns(he->end, cur, end);
	size_t from = event_end_tail_back(he->end, end, 4 * (held > he->tail_budget_ns
							     ? held : he->tail_budget_ns));
	/* At least the rest of a stretch the old began inside, else one
	 * stretch more. */
	size_t limit = point ? cur : cur - 1;
	if (from > limit)
		from = limit;
	return from > 1 ? from : 0;
}

size_t history_event_piece_from(struct history_event *he, size_t k)
{
	if (!history_event_cut(he))
		return k;
	/* Going back hit by hit through pieces (gdb looking for a frame of
	 * its own at a breakpoint hit often on the way, a reverse-finish
	 * without symbols: hundreds of them): each piece holds twice the
	 * native run time of the last, so that a native search is needed
	 * about once for every doubling, not once for every hit. */
	const struct trace_state *point;
	size_t cur = tail_start(he, &point);
	/* A piece that begins inside its stretch (near a hit) holds about a
	 * first tail's run of it, not the whole stretch. */
	uint64_t held = point ? he->tail_budget_ns
			      : event_end_tail_ns(he->end, cur, he->tail_last + 1);
	size_t grown = event_end_piece_back(he->end, k + 1, 2 * held);
	return grown && grown < k ? grown : k;
}

size_t history_event_tail_from(const struct history_event *he)
{
	const struct trace_state *point;
	return he->tail_ok ? tail_start(he, &point) : 0;
}

bool history_event_tail_in_stretch(const struct history_event *he)
{
	return he->tail_ok && materialise_tail_point(&he->tail) != NULL;
}

bool history_event_cut(const struct history_event *he)
{
	return he->tail_ok && !he->made_ok && he->tail_cut;
}

size_t history_event_tail_run(const struct history_event *he)
{
	return he->tail_ok ? materialise_tail_run(&he->tail) : 0;
}

size_t history_event_wider_run(struct history_event *he)
{
	size_t cur = history_event_tail_run(he);
	if (cur == 0)
		return 0;
	/* Four times the last, as history_event_wider says why; a piece's
	 * counted back from its own last run. */
	bool piece = history_event_runs_cut(he);
	uint64_t held = piece ? event_end_runs_between_ns(he->end, cur, he->runs_last + 1)
			      : event_end_runs_ns(he->end, cur);
	uint64_t budget = 4 * (held > he->tail_budget_ns ? held : he->tail_budget_ns);
	size_t run = piece ? event_end_run_back(he->end, he->runs_last, budget)
			   : event_end_tail_run(he->end, budget);
	return run < cur ? run : cur - 1;
}

static struct timeline *take_made(struct history_event *he, struct trace_data *made,
				  const struct materialise_stats *stp, pid_t copy,
				  const struct trace_data *cutview, size_t from, size_t run,
				  size_t last, struct trace_state *hit_owned, const char *why,
				  struct timeline *old, char *err, size_t errlen);

/* The tail from event from (whole stretches; start not NULL: from the
 * place start describes, inside the stretch before event from), or from
 * run `run` of a multi-threaded recording's order, to event last or the
 * end, or (hit not NULL) to the place hit describes, inside the stretch
 * before its event. */
static struct timeline *widen(struct history_event *he, size_t from,
			      const struct trace_state *start, size_t run, size_t last,
			      const struct trace_state *hit, const char *why,
			      struct timeline *old, char *err, size_t errlen)
{
	struct trace_data made, view = {0};
	struct materialise_stats st;
	struct trace_state *owned = NULL;
	if (hit)
		last = hit->pos - 1;
	bool cut = last != HISTORY_TO_END;
	/* Not at a signal, nor right after one (event_end_clear_of_signals);
	 * a piece may begin at the program's start (history_event_head). */
	if (!run && !(cut && from == 0) &&
	    (from = event_end_clear_of_signals(he->end, from)) == 0) {
		snprintf(err, errlen, "it would begin at the program's start, before a signal");
		return NULL;
	}
	/* Nor does a piece end at one or right before one: a delivery has
	 * no position of its own (the handler's first instruction comes
	 * right after the event before), so going on past such an end would
	 * start in the handler, past a breakpoint there. It ends after the
	 * signal instead. */
	while (cut && !hit && he->end && last + 1 < materialise_event_count(he->ev) &&
	       event_end_last_signal(he->end, last, last + 2))
		last++;
	if (hit ? materialise_cut_at(he->ev, hit, &view, &owned) < 0
		: cut && materialise_cut(he->ev, last, &view) < 0) {
		snprintf(err, errlen, "the recording cannot be cut at %s",
			 hit ? "the hit" : "an event");
		return NULL;
	}
	pid_t copy = 0;
	if (tail_data(he, cut ? &view : he->ev, from, start, run, &made, &st, &copy, err,
		      errlen) < 0) {
		free(owned);
		return NULL;
	}
	return take_made(he, &made, &st, copy, cut ? &view : NULL, from, run, last, owned, why,
			 old, err, errlen);
}

/* The history made by widen (or history_event_head), from event from or
 * run `run` of view (NULL: the recording, to its end), to event last:
 * the tail now, the timeline over it at its end, old closed. */
static struct timeline *take_made(struct history_event *he, struct trace_data *made,
				  const struct materialise_stats *stp, pid_t copy,
				  const struct trace_data *cutview, size_t from, size_t run,
				  size_t last, struct trace_state *hit_owned, const char *why,
				  struct timeline *old, char *err, size_t errlen)
{
	struct materialise_stats st = *stp;
	struct trace_data view = cutview ? *cutview : (struct trace_data){0};
	bool cut = cutview != NULL;
	timeline_close(old);
	ptrace_park_kill(he->tail_start_copy); /* the old tail's, if never used */
	he->tail_start_copy = 0;
	trace_data_free(&he->tail);
	he->tail = *made;
	he->tail_view = view;
	he->tail_cut = cut;
	he->tail_last = last;
	free(he->tail_hit_owned); /* the old view's, whose timeline is closed */
	he->tail_hit_owned = hit_owned;
	if (!hit_owned)
		he->tail_hit_ns = 0; /* set by the caller for a piece that ends inside */
	if (!hit_owned || !materialise_tail_point(&he->tail))
		he->tail_start_nth = 0; /* set by the caller for one that begins at a hit */
	he->tail_head = cutview == &he->head;
	he->tail_split = false;
	he->tail_events = materialise_tail_events(cut ? &view : he->ev, from, run);
	he->tail_seconds = (double)st.ns / 1e9;
	he->tail_insns = st.instructions;
	if (cutview == &he->head)
		fprintf(stderr, "ptrev: %s: made the history of its first thread only, until it "
			"makes another: %llu instructions in %.1f s\n", why,
			(unsigned long long)st.instructions, he->tail_seconds);
	else if (history_event_ends_inside(he) && materialise_tail_point(&he->tail))
		fprintf(stderr, "ptrev: %s: made the history from an earlier point to %s only, "
			"inside the stretch before event %zu: %llu instructions in %.1f s\n", why,
			he->tail_hit_ns ? "a point after the hit" : "the hit", last + 1,
			(unsigned long long)st.instructions, he->tail_seconds);
	else if (history_event_ends_inside(he))
		fprintf(stderr, "ptrev: %s: made the history from event %zu to %s only, inside the "
			"stretch before event %zu: %llu instructions in %.1f s\n", why, from,
			he->tail_hit_ns ? "a point after the hit" : "the hit", last + 1,
			(unsigned long long)st.instructions, he->tail_seconds);
	else if (cut && run)
		fprintf(stderr, "ptrev: %s: made the history of runs %zu to %zu of the thread order "
			"only: %llu instructions in %.1f s\n", why, run, he->runs_last,
			(unsigned long long)st.instructions, he->tail_seconds);
	else if (cut)
		fprintf(stderr, "ptrev: %s: made the history of events %zu to %zu only: %llu "
			"instructions in %.1f s\n", why, from, last,
			(unsigned long long)st.instructions, he->tail_seconds);
	else
		fprintf(stderr, "ptrev: %s: made the history of the last %zu events: %llu "
			"instructions in %.1f s\n", why, he->tail_events,
			(unsigned long long)st.instructions, he->tail_seconds);
	struct timeline *tl = timeline_open(&he->tail, true, err, errlen);
	if (tl) {
		timeline_set_events(tl, cut ? &he->tail_view : he->ev);
		timeline_give_start(tl, copy);
		timeline_to_end(tl);
	} else {
		ptrace_park_kill(copy);
	}
	return tl;
}

struct timeline *history_event_widen(struct history_event *he, size_t from, size_t last,
				     const char *why, struct timeline *old, char *err,
				     size_t errlen)
{
	return widen(he, from, NULL, 0, last, NULL, why, old, err, errlen);
}

struct timeline *history_event_piece_to_end(struct history_event *he, const char *why,
					    struct timeline *old, char *err, size_t errlen)
{
	const struct trace_state *point;
	size_t from = tail_start(he, &point);
	/* A multi-threaded piece: the tail from its first run. */
	return widen(he, from, point, history_event_tail_run(he), HISTORY_TO_END, NULL, why, old,
		     err, errlen);
}

bool history_event_runs_cut(const struct history_event *he)
{
	return history_event_cut(he) && he->runs_cut_ok && history_event_tail_run(he) &&
	       he->tail_view.sched == he->runs_cut.sched;
}

/* The recording cut after run `last` of its order, or the first run
 * after it, before run `limit` (and before the last: a piece never ends
 * with the recording), that ends in a syscall of its thread
 * (event_cut_after_run). A run may end otherwise (a recorded signal, a
 * thread stopped between syscalls, one that completed). 0 with *cut and
 * *at the run, -1. */
static int cut_after_run(const struct history_event *he, size_t last, size_t limit,
			 struct trace_data *cut, size_t *at)
{
	const struct trace_data *ev = he->ev;
	char why[256];
	for (size_t r = last; r + 1 < ev->nsched && r < limit; r++) {
		if (event_cut_after_run(ev, r, cut, why, sizeof why) == 0) {
			*at = r;
			return 0;
		}
	}
	return -1;
}

struct timeline *history_event_runs_piece(struct history_event *he, size_t run, size_t last,
					  size_t limit, const char *why, struct timeline *old,
					  char *err, size_t errlen)
{
	struct trace_data cut, made;
	struct materialise_stats st;
	pid_t copy = 0;
	size_t at;
	err[0] = 0;
	if (!runs_wanted())
		return NULL;
	if (run == 0 || one_thread(he->ev) || cut_after_run(he, last, limit, &cut, &at) < 0) {
		snprintf(err, errlen, "no run from run %zu on ends at a syscall before %s", last,
			 limit == SIZE_MAX ? "the recording's end" : "the history made");
		return NULL;
	}
	if (tail_data(he, &cut, 0, NULL, run, &made, &st, &copy, err, errlen) < 0) {
		event_cut_free(&cut);
		return NULL;
	}
	/* The old cut is the old timeline's until take_made closes it. */
	struct trace_data was = he->runs_cut;
	bool had = he->runs_cut_ok;
	he->runs_cut = cut;
	he->runs_cut_ok = true;
	he->runs_last = at;
	struct timeline *tl = take_made(he, &made, &st, copy, &he->runs_cut, 0, run, 0, NULL, why,
					old, err, errlen);
	if (had)
		event_cut_free(&was);
	return tl;
}

static int hit_point(struct history_event *he, size_t k, uint64_t nth,
		     const struct event_search_point *pts, size_t n, struct trace_state *out,
		     uint8_t sp[STATE_RECORD_SP_LEN], uint64_t *cpu_ns, char *err, size_t errlen);

struct timeline *history_event_write_piece(struct history_event *he, size_t from, size_t k,
					   const char *why, struct timeline *old, char *err,
					   size_t errlen)
{
	size_t last = k + 1 < materialise_event_count(he->ev) ? k + 1 : HISTORY_TO_END;
	/* Event k's stretch alone: where it ran long, from right before
	 * its syscall instruction (hit once in the stretch, at its end:
	 * one replay to learn where it is, one more to stop there). */
	if (from == k && he->end && last != HISTORY_TO_END &&
	    event_end_tail_ns(he->end, k, k + 1) > 4 * he->tail_budget_ns) {
		struct event_search_point pt = {0, DR_EXEC, 1};
		struct trace_state point;
		uint8_t sp[STATE_RECORD_SP_LEN];
		int rc = event_end_syscall_pc(he->end, he->ev, k, &pt.addr, err, errlen);
		if (rc == 0)
			rc = hit_point(he, k, 1, &pt, 1, &point, sp, NULL, err, errlen);
		if (rc > 0)
			return widen(he, k, &point, 0, last, NULL, why, old, err, errlen);
		if (he->interrupted)
			return NULL;
		fprintf(stderr, "ptrev: cannot begin the piece at the syscall (%s): it begins with "
			"its stretch\n", err[0] ? err : "no stop there");
		err[0] = 0;
	}
	return widen(he, from, NULL, 0, last, NULL, why, old, err, errlen);
}

static struct timeline *piece_from_hit(struct history_event *he, size_t k, uint64_t start_nth,
				       const struct trace_state *hit, uint64_t end_nth,
				       uint64_t hit_ns, const struct event_search_point *pts,
				       size_t n, const char *why, struct timeline *old, char *err,
				       size_t errlen);

struct timeline *history_event_widen_back(struct history_event *he, size_t from,
					  const char *why, struct timeline *old, char *err,
					  size_t errlen)
{
	if (!history_event_cut(he))
		return widen(he, from, NULL, 0, HISTORY_TO_END, NULL, why, old, err, errlen);
	const struct trace_state *point;
	size_t k = tail_start(he, &point);
	if (he->tail_start_nth > 1 && point && from <= k) {
		/* A piece that begins at a hit in its stretch: at a hit
		 * further back in it, twice as many hits before the end as it
		 * held (a reverse-stepi at the hit a reverse-continue stopped
		 * at, a reverse-next in the loop around it), not at an event
		 * before, which would step the whole stretch; from its first
		 * hit on, at from. */
		uint64_t held = he->tail_end_nth - he->tail_start_nth;
		uint64_t back = 2 * held < he->tail_start_nth - 1 ? 2 * held
								  : he->tail_start_nth - 1;
		struct timeline *tl = piece_from_hit(
			he, k, he->tail_start_nth - back,
			&he->tail_view.states[he->tail_view.nstates - 1], he->tail_end_nth,
			he->tail_hit_ns, he->tail_pts, he->tail_npts, why, old, err, errlen);
		if (tl || he->interrupted)
			return tl;
		if (err[0])
			fprintf(stderr, "ptrev: cannot begin the piece at an earlier hit (%s): it "
				"begins with its stretch\n", err);
	}

	/* materialise_cut_at copies the hit before take_made frees it. */
	const struct trace_state *hit =
		history_event_ends_inside(he) ? &he->tail_view.states[he->tail_view.nstates - 1] : NULL;
	return widen(he, from, NULL, 0, he->tail_last, hit, why, old, err, errlen);
}

/* Is ending a piece at its hit worth one more native replay (to the hit,
 * from the copy nearest before its stretch) and a trap at each hit of
 * the stretch before it? Where the stretch ran long: 20 us of the
 * program's native run is up to 100,000 instructions, a third of a
 * second to step, and the hit may lie anywhere in it (tail_work's
 * stretch of 513,390 instructions ran under 100 us and was stepped
 * whole, 1.7 s, for a hit 17 instructions in). PTREV_HIT_POINT=0:
 * never, 1: always (tests). */
#define HIT_POINT_MIN_NS 20000ull
/* PTREV_HIT_NEAR=0: a piece that ends at a hit begins with its stretch,
 * never at the hit before, and a continue past it makes the stretch of
 * the next hit whole (the benchmark's reference). */
static bool hit_near_wanted(void)
{
	const char *v = getenv("PTREV_HIT_NEAR");
	return !(v && strcmp(v, "0") == 0);
}
static bool hit_point_worth(struct history_event *he, size_t k)
{
	const char *v = getenv("PTREV_HIT_POINT");
	if (v && (strcmp(v, "0") == 0 || strcmp(v, "1") == 0))
		return v[0] == '1';
	return event_end_tail_ns(he->end, k, k + 1) >= HIT_POINT_MIN_NS;
}

/* The debug registers for stops' breakpoints and watchpoints (false:
 * more than the registers hold). A watchpoint's hit comes after its
 * instruction: a piece that ends there holds the access. A read
 * watchpoint's are access registers (x86 has no read-only ones): the
 * history made says whether the access was a read. */
static bool hit_points(const struct stop_set *stops, struct event_search_point *pts, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < stops->n; i++)
		if (add_points(pts, n, &stops->v[i]) < 0)
			return false;
	return *n > 0;
}

/* Hit nth of pts in the stretch before event k, described in *out
 * (event_end_hit_point), and (prev not NULL) hit nth - 1 on the way
 * (*prev_ok: it was): 1, 0 where the stretch has fewer (err says so), -1
 * with err (he->interrupted for gdb's Ctrl-C, err empty). */
static int hit_and_before(struct history_event *he, size_t k, uint64_t nth,
			  const struct event_search_point *pts, size_t n, struct trace_state *out,
			  uint8_t sp[STATE_RECORD_SP_LEN], uint64_t *cpu_ns,
			  struct trace_state *prev, uint8_t prev_sp[STATE_RECORD_SP_LEN],
			  uint64_t *prev_cpu_ns, bool *prev_ok, char *err, size_t errlen)
{
	struct event_give_up give_up = {he->alive, he->alive_ctx};
	int rc = event_end_hit_and_before(he->end, he->ev, k, nth, pts, n, &give_up, out, sp,
					  cpu_ns, prev, prev_sp, prev_cpu_ns, prev_ok, err, errlen);
	if (rc == -2) {
		he->interrupted = true;
		err[0] = 0;
		return -1;
	}
	return rc;
}

static int hit_point(struct history_event *he, size_t k, uint64_t nth,
		     const struct event_search_point *pts, size_t n, struct trace_state *out,
		     uint8_t sp[STATE_RECORD_SP_LEN], uint64_t *cpu_ns, char *err, size_t errlen)
{
	return hit_and_before(he, k, nth, pts, n, out, sp, cpu_ns, NULL, NULL, NULL, NULL, err,
			      errlen);
}

/* The piece from event from (start NULL), or from the place start
 * describes (hit start_nth of pts in the stretch before event from), to
 * the place hit describes (hit end_nth there, end_cpu of the thread's own
 * run into the stretch, 0: not known; or hit_ns of the native run past
 * it), made as widen makes one; he says what it is. */
static struct timeline *piece_between(struct history_event *he, size_t from,
				      const struct trace_state *start, uint64_t start_nth,
				      const struct trace_state *hit, uint64_t end_nth,
				      uint64_t end_cpu, uint64_t hit_ns,
				      const struct event_search_point *pts, size_t n,
				      const char *why, struct timeline *old, char *err,
				      size_t errlen)
{
	uint64_t was = he->tail_hit_ns;
	he->tail_hit_ns = hit_ns;
	struct timeline *tl = widen(he, from, start, 0, 0, hit, why, old, err, errlen);
	if (!tl) {
		he->tail_hit_ns = was;
		return NULL;
	}
	he->tail_start_nth = start ? start_nth : 0;
	he->tail_end_nth = end_nth;
	he->tail_end_cpu = end_cpu;
	if (pts != he->tail_pts)
		memcpy(he->tail_pts, pts, n * sizeof *pts);
	he->tail_npts = n;
	return tl;
}

/* piece_between from hit start_nth of the stretch before event k, found
 * by one more native replay and described as a STATE point, which the
 * piece's replays find again by its state, as a split tail's. NULL with
 * err (empty: gdb's Ctrl-C, he->interrupted), the piece before kept. */
static struct timeline *piece_from_hit(struct history_event *he, size_t k, uint64_t start_nth,
				       const struct trace_state *hit, uint64_t end_nth,
				       uint64_t hit_ns, const struct event_search_point *pts,
				       size_t n, const char *why, struct timeline *old, char *err,
				       size_t errlen)
{
	struct trace_state start;
	uint8_t sp[STATE_RECORD_SP_LEN];
	if (hit_point(he, k, start_nth, pts, n, &start, sp, NULL, err, errlen) <= 0)
		return NULL;
	return piece_between(he, k, &start, start_nth, hit, end_nth, he->tail_end_cpu, hit_ns, pts,
			     n, why, old, err, errlen);
}

/* A place about a first tail's run before the hit (the piece's end) in
 * the stretch before event k, hit_cpu of the thread's own run after the
 * stretch's start, or (prev not NULL) after the earlier hit prev, at
 * prev_cpu: the recording cut at the hit replayed natively to the
 * stretch's start or to prev, then on for that long less a first tail's
 * run, the place there described as a split tail's (erp_take_point: a
 * cold PC). The hit's PC is watched on the way (the stretch of the cut
 * ends there), so a run that reaches the hit first takes no point and
 * says how long it ran to it (a run's time varies, by a third here):
 * then again by that, or four times further before it (at most to
 * half of the way), at most five tries. Stopped inside a long loop,
 * the point is where the loop is left (erp_take_point's leave_loop):
 * what the piece steps before the hit is then what follows the loop.
 * 1 with *out, 0 none. */
static int point_before_hit(struct history_event *he, size_t k, const struct trace_state *hit,
			    uint64_t hit_cpu, const struct trace_state *prev, uint64_t prev_cpu,
			    struct trace_state *out, uint8_t sp[STATE_RECORD_SP_LEN])
{
	struct trace_data view = {0};
	struct trace_state *owned = NULL;
	char err[512];
	int rc = 0;
	if (materialise_cut_at(he->ev, hit, &view, &owned) < 0)
		return 0;
	uint64_t way = hit_cpu - prev_cpu, before = he->tail_budget_ns;
	for (int i = 0; i < 5 && rc == 0 && before < way; i++) {
		uint64_t ran = 0;
		rc = prev ? event_end_point_after(he->end, &view, prev, way - before, true, out, sp,
						  &ran, err, sizeof err)
			  : event_end_tail_point(he->end, &view, k, way - before, true, out, sp, &ran,
						 err, sizeof err);
		if (rc < 0)
			fprintf(stderr, "ptrev: cannot begin the piece shortly before the hit (%s)\n",
				err);
		/* It reached the hit first: this kind of run took that long
		 * to it (the hit's replay, counted otherwise, may differ by a
		 * third); the next try by that, else further back, at most to
		 * half of the way: a run stops late by what resuming the
		 * thread costs, tens of us here (a stretch of 53 us to the
		 * hit, asked to stop after 37, stopped 4,000 instructions
		 * before the hit, too close for a window to find a rare PC). */
		if (rc == 0 && ran > before && ran < way)
			way = ran;
		else if (before < way / 2)
			before = before * 4 < way / 2 ? before * 4 : way / 2;
		else
			break;
	}
	free(owned);
	return rc > 0 ? 1 : 0;
}

/* The piece from event from to hit nth of pts in the stretch before
 * event k. One of that stretch alone begins near the hit: at the hit
 * before in the stretch, where there is one, or where the way from
 * there (or from the stretch's start) ran long, about a first tail's run
 * before the hit (point_before_hit): what came before is stepped only
 * where a move goes back past it (history_event_widen_back), and a
 * reverse-continue on from an earlier hit at its start finds that hit
 * there. */
static struct timeline *to_hit(struct history_event *he, size_t from, size_t k, uint64_t nth,
			       const struct event_search_point *pts, size_t n, const char *why,
			       struct timeline *old, char *err, size_t errlen)
{
	struct trace_state hit, prev, near;
	uint8_t sp[STATE_RECORD_SP_LEN], prev_sp[STATE_RECORD_SP_LEN], near_sp[STATE_RECORD_SP_LEN];
	uint64_t hit_cpu = 0, prev_cpu = 0;
	bool begin_near = from == k && hit_near_wanted(), at_prev = false;
	/* The hit before, where the piece begins, comes on the way. */
	if (hit_and_before(he, k, nth, pts, n, &hit, sp, &hit_cpu, begin_near ? &prev : NULL,
			   prev_sp, &prev_cpu, &at_prev, err, errlen) <= 0)
		return NULL;
	if (!begin_near)
		return piece_between(he, from, NULL, 0, &hit, nth, hit_cpu, 0, pts, n, why, old, err,
				     errlen);
	if (nth > 1 && !at_prev) {
		int rc = hit_point(he, k, nth - 1, pts, n, &prev, prev_sp, &prev_cpu, err, errlen);
		if (he->interrupted)
			return NULL;
		if (rc <= 0)
			fprintf(stderr, "ptrev: cannot begin the piece at the hit before (%s): it "
				"begins with the hit's stretch\n", err);
		at_prev = rc > 0;
	}
	uint64_t start_nth = at_prev ? nth - 1 : 0;
	const struct trace_state *start = at_prev ? &prev : NULL;
	if (hit_cpu && hit_cpu > prev_cpu + 4 * he->tail_budget_ns && (!at_prev || prev_cpu)) {
		int rc = point_before_hit(he, k, &hit, hit_cpu, start, prev_cpu, &near, near_sp);
		if (rc > 0)
			start = &near;
	}
	return piece_between(he, from, start, start_nth, &hit, nth, hit_cpu, 0, pts, n, why, old,
			     err, errlen);
}

struct timeline *history_event_piece_to_hit(struct history_event *he, size_t from, size_t k,
					    const struct stop_set *stops, const char *why,
					    struct timeline *old, char *err, size_t errlen)
{
	struct event_search_point pts[EVENT_SEARCH_MAX];
	size_t n;
	err[0] = 0;
	if (!he->end || !he->hit_nth || k == 0 || !one_thread(he->ev) || !hit_point_worth(he, k) ||
	    !hit_points(stops, pts, &n))
		return NULL;
	return to_hit(he, from, k, he->hit_nth, pts, n, why, old, err, errlen);
}

/* Has ev one thread (its THREAD records all its)? */
static bool one_thread(const struct trace_data *ev)
{
	for (size_t i = 1; i < ev->nthreads; i++)
		if (ev->threads[i].tid != ev->threads[0].tid)
			return false;
	return true;
}

/* The first syscall of run r of ev's order that makes a thread or a
 * process (a clone), or its last event. */
static uint64_t first_clone(const struct trace_data *ev, const struct trace_sched_run *r)
{
	uint64_t end = r->pos + r->count - 1, k = end;
	for (size_t i = 0; i < ev->nsyscalls; i++) {
		const struct trace_syscall *sc = &ev->syscalls[i];
		const struct syscall_desc *d = syscall_desc(sc->nr);
		if (sc->tid == r->tid && sc->pos >= r->pos && sc->pos < k && d &&
		    (d->replay == SYSCALL_CLONE || d->replay == SYSCALL_FORK))
			k = sc->pos;
	}
	return k;
}

/* history_event_head for a multi-threaded recording: the one thread the
 * program starts with, up to the entry of its first clone (or the end of
 * the first run of the order), the recording cut there (event_cut.h).
 * Only that thread lives there, and stands at the cut where the history
 * ends, so every position shows what the whole history shows; a cut
 * where later runs end would leave out the syscall each other thread's
 * last run ended at (one blocked in it shown before its syscall
 * instruction, not inside it; a clone's child missing). hit_event (0:
 * none): only where that holds the stretch before the thread's event
 * hit_event (a hit found there). */
static struct timeline *head_threads(struct history_event *he, size_t hit_event,
				     struct timeline *old, char *err, size_t errlen)
{
	const struct trace_data *ev = he->ev;
	const struct trace_sched_run *r = &ev->sched[0];
	struct trace_data cut, made;
	struct materialise_stats st;
	pid_t copy = 0;
	char why[256];
	err[0] = 0;
	if (he->head_ok || ev->nsched < 2 || r->count < 2)
		return NULL; /* no such run: the whole history is as short */
	uint64_t at = first_clone(ev, r);
	if (at == 0 || at < hit_event ||
	    event_cut(ev, r->tid, at, &cut, why, sizeof why) < 0)
		return NULL;
	if (tail_data(he, &cut, 0, NULL, 0, &made, &st, &copy, err, errlen) < 0) {
		event_cut_free(&cut);
		return NULL;
	}
	he->head = cut;
	he->head_ok = true;
	he->head_at = at;
	return take_made(he, &made, &st, copy, &he->head, 0, 0, 0, NULL,
			 "going back to the program's start", old, err, errlen);
}

struct timeline *history_event_head(struct history_event *he, struct timeline *old, char *err,
				    size_t errlen)
{
	if (!one_thread(he->ev))
		return head_threads(he, 0, old, err, errlen);
	/* Four times a first tail's run, as history_event_wider says why. */
	size_t last = he->end ? event_end_head_to(he->end, 4 * he->tail_budget_ns) : SIZE_MAX;
	if (last == SIZE_MAX) {
		err[0] = 0; /* nothing to say: the whole history is as short */
		return NULL;
	}
	return widen(he, 0, NULL, 0, last, NULL, "going back to the program's start", old, err,
		     errlen);
}

/* Where history_event_longer's growth of a piece that ends at a hit (or
 * a point after it: end) begins: at the piece's start, so that steps back
 * past the hit need no more history; or, where the piece is long to
 * make again (GROW_FROM_END_INSNS stepped, half a second or more here,
 * counted so rather than timed so that a loaded machine decides the
 * same; PTREV_GROW_FROM_END=0 never, 1 always), at its end, where the
 * thread stands (he->grew_from_end): gdb steps over the breakpoint before
 * each continue, and a piece of python3's long start (365,000
 * instructions, 4 s) was made again for every one. The event of its
 * stretch, with *start and *start_nth; *why says so where it begins at
 * the end. */
#define GROW_FROM_END_INSNS 200000
#define FROM_END "going on from where the history made ends"
static size_t grow_start(struct history_event *he, const struct trace_state *end,
			 const struct trace_state **start, uint64_t *start_nth, const char **why)
{
	const char *v = getenv("PTREV_GROW_FROM_END");
	he->grew_from_end = v && (v[0] == '0' || v[0] == '1') ? v[0] == '1'
							   : he->tail_insns >= GROW_FROM_END_INSNS;
	if (he->grew_from_end) {
		*why = FROM_END;
		*start = end;
		*start_nth = he->tail_end_nth; /* the hits up to the end's (as on_inside) */
		return end->pos;
	}
	*start_nth = he->tail_start_nth;
	return tail_start(he, start);
}

/* history_event_longer's first growth of a piece that ends at hit e of
 * its stretch (gdb's step over the breakpoint before a continue, a
 * stepi there): to hit e + 1 of the same points where the thread's own
 * run reaches it within `after` of the end (a first tail's run: what
 * the thread's clock counts includes the trap at hit e, about 20 us
 * here), so that the continue after the step ends at the piece's end,
 * with no search (two native replays or more, each trapping at every
 * hit before); the start grow_start's.
 * PTREV_HIT_NEXT_US=N: within N us instead (tests: 0 never, a large N
 * always). NULL (err empty) where it is not, or cannot be. */
static struct timeline *to_next_hit(struct history_event *he, uint64_t after, const char *why,
				    struct timeline *old, char *err, size_t errlen)
{
	const struct trace_state *end = &he->tail_view.states[he->tail_view.nstates - 1];
	const struct trace_state *point;
	uint64_t start_nth;
	struct trace_state next;
	uint8_t sp[STATE_RECORD_SP_LEN];
	uint64_t cpu = 0;
	err[0] = 0;
	size_t us;
	if (env_count("PTREV_HIT_NEXT_US", &us))
		after = (uint64_t)us * 1000;
	if (!he->tail_end_nth || !he->tail_end_cpu || !he->tail_npts || !hit_near_wanted() ||
	    !after)
		return NULL;
	/* The thread's own run from the end to the next hit: both hits'
	 * clocks read in one replay (the totals of two replays differ by
	 * more than that where thousands of hits trap before: 20,000 in
	 * sqlite3's stretch, and a next hit 3,000 instructions on was
	 * never taken). */
	struct trace_state before;
	uint8_t before_sp[STATE_RECORD_SP_LEN];
	uint64_t before_cpu = 0;
	bool before_ok = false;
	int rc = hit_and_before(he, end->pos, he->tail_end_nth + 1, he->tail_pts, he->tail_npts,
				&next, sp, &cpu, &before, before_sp, &before_cpu, &before_ok, err,
				errlen);
	err[0] = 0;
	uint64_t ran = before_ok && before_cpu && cpu >= before_cpu ? cpu - before_cpu
				   : cpu > he->tail_end_cpu	       ? cpu - he->tail_end_cpu
									       : 0;
	if (rc <= 0 || !cpu || ran > after)
		return NULL;
	size_t from = grow_start(he, end, &point, &start_nth, &why);
	return piece_between(he, from, point, start_nth, &next, he->tail_end_nth + 1, cpu, 0,
			     he->tail_pts, he->tail_npts, why, old, err, errlen);
}

struct timeline *history_event_longer(struct history_event *he, bool inside,
				      struct timeline *old, char *err, size_t errlen)
{
	err[0] = 0;
	he->grew_from_end = false;
	if (!history_event_cut(he) || !he->end || history_event_whole_ready(he))
		return NULL;
	/* Four times the native run of the piece there is: going on step
	 * by step, or to a hit the debug registers cannot search for, steps
	 * it again each time, a third of the total at most. */
	const struct trace_state *point;
	const char *why = "going on past the history made, a longer piece";
	/* A multi-threaded piece of runs grows by runs, to the end of one
	 * that ends at a syscall; the first thread's (head_threads) is not
	 * grown: its cut is the first clone's entry. */
	if (!one_thread(he->ev)) {
		size_t run = history_event_tail_run(he);
		if (!history_event_runs_cut(he))
			return NULL;
		uint64_t ran = event_end_runs_between_ns(he->end, run, he->runs_last + 1);
		size_t last = event_end_run_on(he->end, he->runs_last + 1,
					       4 * (ran > he->tail_budget_ns ? ran : he->tail_budget_ns));
		return last == SIZE_MAX ? NULL
					: history_event_runs_piece(he, run, last, SIZE_MAX, why, old,
								   err, errlen);
	}
	uint64_t held = event_end_tail_ns(he->end, tail_start(he, &point), he->tail_last + 1);
	uint64_t budget = 4 * (held > he->tail_budget_ns ? held : he->tail_budget_ns);
	if (history_event_ends_inside(he) && inside) {
		/* A piece that ends at a hit grows inside the stretch first:
		 * to a point a quarter of a first tail's run further on (a
		 * step, a `next` over a few calls), then four times the last
		 * such growth each time (the rest of a long stretch is
		 * seconds to minutes to step), or, where the stretch ends
		 * before that, to its event. */
		const struct trace_state *hit = &he->tail_view.states[he->tail_view.nstates - 1];
		struct trace_state to;
		uint8_t sp[STATE_RECORD_SP_LEN];
		uint64_t was = he->tail_hit_ns;
		uint64_t after = was ? 4 * was : he->tail_budget_ns / 4 + 1000;
		struct timeline *tl =
			was ? NULL : to_next_hit(he, he->tail_budget_ns, why, old, err, errlen);
		if (tl || he->interrupted)
			return tl;
		int rc = event_end_point_after(he->end, he->ev, hit, after, false, &to, sp, NULL,
					       err, errlen);
		uint64_t start_nth;
		if (rc > 0) { /* the same hits, the end further on */
			size_t from = grow_start(he, hit, &point, &start_nth, &why);
			return piece_between(he, from, point, start_nth, &to, he->tail_end_nth,
					     he->tail_end_cpu, after, he->tail_pts, he->tail_npts,
					     why, old, err, errlen);
		}
		if (rc < 0)
			fprintf(stderr, "ptrev: cannot grow the piece inside its stretch (%s): to the "
				"stretch's end\n", err);
		err[0] = 0;
	}
	size_t last = event_end_piece_on(he->end, he->tail_last, budget);
	if (last == SIZE_MAX)
		return NULL;
	uint64_t start_nth;
	size_t from = history_event_ends_inside(he)
			      ? grow_start(he, &he->tail_view.states[he->tail_view.nstates - 1], &point,
					   &start_nth, &why)
			      : tail_start(he, &point);
	return widen(he, from, point, 0, last, NULL, why, old, err, errlen);
}

struct timeline *history_event_head_to_run(struct history_event *he, size_t run,
					   struct timeline *old, char *err, size_t errlen)
{
	err[0] = 0;
	if (!he->end || one_thread(he->ev) || run != 0)
		return NULL;
	return head_threads(he, he->hit_event, old, err, errlen);
}

bool history_event_at_start(const struct history_event *he)
{
	return he->tail_ok && !he->made_ok && history_event_tail_from(he) == 0 &&
	       history_event_tail_run(he) == 0;
}

struct timeline *history_event_widen_run(struct history_event *he, size_t run, const char *why,
					 struct timeline *old, char *err, size_t errlen)
{
	return widen(he, 0, NULL, run, HISTORY_TO_END, NULL, why, old, err, errlen);
}

/* Would the tail from run `run` of a multi-threaded recording take
 * longer than what the background has still to make of the whole
 * history? Then that is the shorter wait (and serves every move, not only
 * those after the tail's start). How much a tail holds: the larger share
 * of the program's events and of its native run, both estimates of what
 * stepping it costs (a run's kernel work counts in its native run but
 * costs nothing to step; an event may end a long stretch or a short
 * one). sort --parallel=2, continuing from its start to its first write:
 * the tail from that run, 90 M instructions, took 400 s; the whole, 30 %
 * made by then, was not done 13 minutes later. */
static bool tail_not_worth(struct history_event *he, size_t run)
{
	if (!he->job)
		return false;
	struct materialise_job_status js;
	materialise_job_status(he->job, &js);
	if (js.failed || !js.events_total)
		return false;
	size_t total = materialise_event_count(he->ev);
	uint64_t ran = event_end_runs_ns(he->end, 0);
	double held = total ? (double)materialise_tail_events(he->ev, 0, run) / (double)total : 1;
	double held_ns = ran ? (double)event_end_runs_ns(he->end, run) / (double)ran : 1;
	if (held_ns > held)
		held = held_ns;
	return held >= 1 - (double)js.events / (double)js.events_total;
}

/* Are a and b (n points each) the same points? */
static bool same_points(const struct event_search_point *a, const struct event_search_point *b,
			size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].addr != b[i].addr || a[i].kind != b[i].kind || a[i].len != b[i].len)
			return false;
	return true;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Each continue to the next hit inside a stretch costs native replays
 * (tenths of a second) where the rest of the stretch, made whole, costs
 * one stepping and no more: once the continues in one stretch have cost
 * about what stepping it whole would (its native run time this many
 * times: stepping runs about 200,000 instructions a second, a native run
 * thousands of times that), the rest of it is made whole. */
#define NEAR_STEP_FACTOR 10000ull

/* history_event_search_on from a piece that ends inside a stretch (at
 * a hit, or a point after it): the next hit of pts in the same stretch,
 * 1 with *at its event, he->on_hit the place (event_end_hit_point) and
 * he->on_nth its number there; 0 where the stretch has no more, *from
 * its next event; -1 where this is not for it to say (the recording's
 * last stretch, a failure: said on stderr; gdb's Ctrl-C). The hits
 * before the end are those the piece was made with where it ends at
 * one of them; else counted by one more native replay to the end
 * (event_end_tail_search_near; a hit at the end itself is not before
 * it: a continue from there runs its instruction first). */
static int on_in_stretch(struct history_event *he, const struct event_search_point *pts,
			 size_t n, size_t *from, size_t *at)
{
	char err[512];
	const struct trace_state *end = &he->tail_view.states[he->tail_view.nstates - 1];
	size_t k = end->pos;
	uint64_t before = he->tail_end_nth;
	int rc;
	if (!hit_near_wanted() || k + 1 >= materialise_event_count(he->ev))
		return -1;
	if (he->near_k != k) {
		he->near_k = k;
		he->near_ns = 0;
	}
	if (he->near_ns > NEAR_STEP_FACTOR * event_end_tail_ns(he->end, k, k + 1))
		return -1; /* the rest of the stretch whole (history_event_longer) */
	he->near_t0 = now_ns();
	if (n == 0) { /* nothing to stop at: on from the stretch's event */
		*from = k + 1;
		return 0;
	}
	fprintf(stderr, "ptrev: looking for the next breakpoint hit in the stretch the history "
		"made ends inside (a native replay)...\n");
	if (he->tail_hit_ns || !he->tail_end_nth || n != he->tail_npts ||
	    !same_points(pts, he->tail_pts, n)) {
		size_t stretch = 0;
		struct event_give_up give_up = {he->alive, he->alive_ctx};
		rc = event_end_tail_search_near(he->end, he->ev, k, end, pts, n, &stretch, &before,
						&give_up, err, sizeof err);
		if (rc == -2)
			he->interrupted = true;
		if (rc == 0 || stretch != k)
			before = 0;
	} else {
		rc = 0;
	}
	/* The piece to it begins where the thread stands, or, where that
	 * is a point after a hit (a piece grown past its hit: a time's
	 * place, maybe inside a hot loop, which each replay of the piece
	 * finds at a trap a pass), at the hit before it: no hit lies
	 * between, so a continue from either ends at the same hit. Both
	 * come in one replay. */
	bool at_before = before && he->tail_hit_ns;
	he->on_start_ok = false;
	if (rc >= 0)
		rc = hit_and_before(he, k, before + 1, pts, n, &he->on_hit, he->on_hit_sp,
				    &he->on_hit_cpu, at_before ? &he->on_start : NULL,
				    he->on_start_sp, NULL, &he->on_start_ok, err, sizeof err);
	if (rc > 0) {
		he->on_inside = true;
		he->on_nth = before + 1;
		memcpy(he->on_pts, pts, n * sizeof *pts);
		he->on_npts = n;
		*at = k;
		return 1;
	}
	if (rc < 0 && !he->interrupted)
		fprintf(stderr, "ptrev: cannot look for the breakpoint hit natively (%s)\n", err);
	if (rc < 0 || k + 1 >= materialise_event_count(he->ev))
		return -1;
	*from = k + 1;
	return 0;
}

/* A write to watched memory that the debug registers do not see (a
 * syscall's: event_writes.h) before the hit found going forwards (rc 1,
 * in the stretch before event *at; 0: none) comes first: 1 with *at that
 * event (he->on_write); 0 where none comes; -1 where it is the event the
 * piece ends at (from - 1), whose stretch the thread stands in: a piece
 * that begins with that stretch would begin behind it (the piece grows
 * instead). */
static int unseen_write_on(struct history_event *he, const struct stop_set *stops,
			   size_t from, int rc, size_t *at)
{
	struct watched_range r[EVENT_SEARCH_MAX];
	size_t n = watched_ranges(stops, r), count = materialise_event_count(he->ev);
	if (n == 0 || from == 0)
		return 0;
	size_t w = event_first_write(he->ev, from - 1, rc > 0 ? *at : count, r, n);
	if (w == 0)
		return 0;
	if (w - 1 < from)
		return -1;
	char what[128];
	event_write_label(he->ev, w - 1, r, n, what, sizeof what);
	fprintf(stderr, "ptrev: event %zu (%s) may write the watched memory where the debug "
		"registers do not see it: going on to it first\n", w - 1, what);
	*at = w - 1;
	he->on_write = true;
	he->on_npts = 0;
	return 1;
}

int history_event_search_on(struct history_event *he, const struct stop_set *stops, size_t *at)
{
	struct event_search_point pts[EVENT_SEARCH_MAX];
	size_t n = 0, from = he->tail_last + 1, count = materialise_event_count(he->ev);
	char err[512];
	int rc = 0;
	*at = 0;
	he->on_inside = false;
	he->on_npts = 0;
	he->on_write = false;
	bool threads = !one_thread(he->ev), runs = history_event_runs_cut(he);
	if (!history_event_cut(he) || !he->end || (threads && !he->tail_head && !runs))
		return -1;
	for (size_t i = 0; i < stops->n; i++)
		if (add_points(pts, &n, &stops->v[i]) < 0)
			return -1; /* more than the debug registers hold */
	/* A piece that ends at a hit ends inside a stretch, whose later
	 * hits a search from its next event would not see: the next one
	 * there first, else the search goes on from that event; where
	 * neither can be, the piece grows instead (history_event_longer). */
	if (history_event_ends_inside(he)) {
		int in = threads ? -1 : on_in_stretch(he, pts, n, &from, at);
		if (in != 0)
			return in;
	}
	if (n) {
		fprintf(stderr, "ptrev: looking for the next breakpoint hit after the history made (a "
			"native replay)...\n");
		struct event_give_up give_up = {he->alive, he->alive_ctx};
		rc = threads ? event_end_search_on_run(he->ev, runs ? he->runs_last : 0,
						       runs ? SIZE_MAX : he->head_at + 1, pts, n, at,
						       &give_up, err, sizeof err)
			     : event_end_search_on(he->end, he->ev, from, pts, n, at, &give_up, err,
						   sizeof err);
	}
	if (rc == -2) {
		he->interrupted = true;
		return -1;
	}
	if (rc < 0) {
		fprintf(stderr, "ptrev: cannot look for the breakpoint hit natively (%s)\n", err);
		return -1;
	}
	/* A recorded signal on the way stops gdb's move first: the tail
	 * from the piece's start holds it (history_event_widen). With
	 * threads, any in the runs after the piece up to the hit's (the
	 * first thread's included: its piece ends inside that run), and a
	 * hit in the first run: the whole history holds them. A piece of
	 * the hit's run is made (history_event_on), not the tail to the
	 * end that tail_not_worth weighs. */
	if (threads) {
		if (rc && *at == 0)
			return -1;
		if (event_end_last_signal_run(he->end, runs ? he->runs_last + 1 : 0,
					      rc ? *at + 1 : he->ev->nsched))
			return -1;
		if (rc && !runs_wanted() && tail_not_worth(he, *at)) {
			fprintf(stderr, "ptrev: the next hit comes in run %zu of %zu of the thread "
				"order: the history from there would take longer than the rest of the "
				"whole one, made in the background\n", *at, he->ev->nsched);
			return -1;
		}
		return rc;
	}
	if (event_end_last_signal(he->end, from, rc ? *at : count))
		return -1;
	he->on_from = from;
	int w = unseen_write_on(he, stops, from, rc, at);
	if (w != 0)
		return w;
	if (rc > 0) {
		/* The first hit in that stretch: a piece can end there. */
		memcpy(he->on_pts, pts, n * sizeof *pts);
		he->on_npts = n;
	}
	return rc;
}

/* Is the stretch before event at the recording's last, ending at a
 * STATE point (a live recording's present: event_engine_present)? A
 * piece that ended at a hit there would end where the present is but
 * short of the recording's end, so the move would stop there as at a hit
 * in the past, and the next go on from a tail that a forward move only
 * reports the end of ("No more reverse-execution history"), not on into
 * the live program: the stretch is made whole instead, to the end. */
static bool at_present(const struct history_event *he, size_t at)
{
	const struct trace_data *ev = he->ev;
	return at + 1 == materialise_event_count(ev) && ev->nstates &&
	       ev->states[ev->nstates - 1].pos == at;
}

struct timeline *history_event_on(struct history_event *he, size_t at, struct timeline *old,
				  char *err, size_t errlen)
{
	const char *why = at ? "going on to the next breakpoint hit (found natively)"
			     : "going on to the end (no breakpoint hit before it, found natively)";
	if (!one_thread(he->ev)) {
		/* The hit's run alone (to the first that ends at a syscall),
		 * else from there (or the last runs) to the end. */
		size_t run = at ? at : event_end_tail_run(he->end, he->tail_budget_ns);
		if (run == 0) {
			snprintf(err, errlen, "no run to begin with but the program's first");
			return NULL;
		}
		if (at) {
			struct timeline *tl =
				history_event_runs_piece(he, at, at, SIZE_MAX, why, old, err, errlen);
			if (tl || he->interrupted)
				return tl;
			if (err[0])
				fprintf(stderr, "ptrev: cannot make the history of the hit's run alone (%s): "
				"from there to the end\n", err);
		}
		return widen(he, 0, NULL, run, HISTORY_TO_END, NULL, why, old, err, errlen);
	}
	if (he->on_inside) {
		/* The next hit in the stretch the piece ends in: the piece
		 * between the two, from where the thread stands. */
		he->on_inside = false;
		const struct trace_state *end = he->on_start_ok
			? &he->on_start : &he->tail_view.states[he->tail_view.nstates - 1];
		struct timeline *tl = piece_between(he, at, end, he->on_nth - 1, &he->on_hit,
						    he->on_nth, he->on_hit_cpu, 0, he->on_pts,
						    he->on_npts, why, old, err, errlen);
		he->near_ns += now_ns() - he->near_t0;
		return tl;
	}
	if (he->on_write) {
		/* A write the registers do not see: its event's own. */
		he->on_write = false;
		return history_event_write_piece(
			he, at, at, "going on to the next write to the watched memory (found natively)",
			old, err, errlen);
	}
	if (at && he->on_npts && hit_near_wanted() && hit_point_worth(he, at) &&
	    !at_present(he, at)) {
		/* The stretch's first hit: what follows it is not stepped. */
		struct timeline *tl = to_hit(he, at, at, 1, he->on_pts, he->on_npts, why, old, err,
					     errlen);
		if (tl || he->interrupted)
			return tl;
		if (err[0])
			fprintf(stderr, "ptrev: cannot end the history at the hit (%s): it ends with "
				"the hit's stretch\n", err);
	}
	if (at)
		return widen(he, at, NULL, 0, at, NULL, why, old, err, errlen);
	/* No hit: the recording's last stretches, as the first tail's, not
	 * before the search's start. */
	size_t from = he->end ? event_end_tail_from(he->end, he->tail_budget_ns) : 0;
	if (from < he->on_from)
		from = he->on_from;
	return widen(he, from, NULL, 0, HISTORY_TO_END, NULL, why, old, err, errlen);
}

struct timeline *history_event_make(struct history_event *he, bool whole, char *err,
				    size_t errlen)
{
	struct materialise_stats st;
	const struct trace_data *td;
	int rc = 1;
	if (!he->made_ok && !whole && !history_event_whole_ready(he)) {
		rc = make_tail(he, err, errlen);
		if (rc < 0 && he->interrupted)
			return NULL;
		if (rc < 0) {
			fprintf(stderr, "ptrev: cannot make the history of the recording's tail "
				"first (%s): making the whole history\n", err);
			err[0] = 0;
		}
	}
	if (rc == 0) {
		td = &he->tail;
	} else {
		if (!he->made_ok) {
			if (make_whole(he, &st, err, errlen) != 0)
				return NULL;
			he->made_ok = true;
			materialise_say_made(&st);
		}
		td = &he->made;
	}
	struct timeline *tl = timeline_open(td, true, err, errlen);
	if (tl) {
		timeline_set_events(tl, he->ev);
		if (td == &he->tail) {
			/* The first timeline of this tail takes its copy. */
			timeline_give_start(tl, he->tail_start_copy);
			he->tail_start_copy = 0;
		} else {
			/* ...and of the whole history its checkpoints. */
			timeline_give_checkpoints(tl, &he->made_copies);
		}
		timeline_to_end(tl);
	}
	return tl;
}

const struct trace_data *history_event_data(const struct history_event *he)
{
	return he->made_ok ? &he->made : &he->tail;
}

bool history_event_tail_only(const struct history_event *he)
{
	return he->tail_ok && !he->made_ok;
}

void history_event_progress(struct history_event *he, struct strbuf *out)
{
	struct materialise_job_status js;
	if (he->made_ok) {
		strbuf_puts(out, "The history of this event recording is made.\n");
		return;
	}
	if (he->tail_ok)
		strbuf_printf(out, "The history of its last %zu event%s%s is made (in %.1f s); "
			      "going back further makes a longer tail's (a reverse-continue: from the last "
			      "breakpoint hit, found natively). ", he->tail_events,
			      he->tail_events == 1 ? "" : "s",
			      he->tail_split ? " and of the end of the stretch before" : "",
			      he->tail_seconds);
	if (!he->job) {
		strbuf_puts(out, he->tail_ok ? "The whole history is made when needed.\n"
			    : "The history of this event recording is not made yet: the first "
			      "reverse or forward command makes it.\n");
		return;
	}
	materialise_job_status(he->job, &js);
	if (!js.done)
		strbuf_printf(out, "The %shistory of this event recording is being made in the "
			      "background: %llu of %llu events replayed, %llu instructions, in %.1f s "
			      "so far.\n", he->tail_ok ? "whole " : "", (unsigned long long)js.events,
			      (unsigned long long)js.events_total,
			      (unsigned long long)js.instructions, js.seconds);
	else if (js.failed)
		strbuf_puts(out, "The history of this event recording could not be made in the "
			    "background: the first reverse or forward command says why.\n");
	else
		strbuf_printf(out, "The history of this event recording was made in the background: "
			      "%llu instructions in %.1f s; the first reverse or forward command "
			      "takes it.\n", (unsigned long long)js.instructions, js.seconds);
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
