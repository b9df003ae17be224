/* Write watchpoints in a multi-threaded event recording's history, by
 * stepping its event replay and comparing the watched bytes: see
 * event_watch.h. */
#include "event_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_hold.h"
#include "event_replay.h"
#include "ptrev/block_cache.h"
#include "ptrev/debugregs.h"
#include "ptrev/materialise.h"

/* A block and the branch after it run natively before the stepper stops
 * (at most BLOCK_MAX_INSNS + 1 instructions): this close to a bound of
 * the range scanned, single steps, so that a stop comes exactly there. */
#define CLOSE (BLOCK_MAX_INSNS + 8)

/* What a scan looks for: len bytes at addr changed (a write watch), or
 * (reads too) a hit of the debug registers set to pts. */
struct watched {
	uint64_t addr;
	size_t len;
	bool by_value;
	struct event_search_point pts[EVENT_SEARCH_MAX];
	size_t npts;
};

struct watch_scan {
	struct erp e;         /* first: the observer finds the scan through it */
	uint64_t lo, hi;      /* the range scanned: instructions lo .. hi - 1 */
	bool back;            /* the last change in it, else the first */
	bool exact;           /* single steps throughout the range */
	const struct watched *wd;
	uint64_t hits;        /* the debug registers' hits as of stop_done */
	uint8_t *seen, *now;  /* wd->len bytes each: as of stop_done, and now */
	bool have_seen;
	uint64_t done;        /* instructions completed, all threads */
	uint64_t stop_done;   /* done at the stepper's last stop */
	int mode;             /* the stepper's own mode, outside the bounds */
	bool found;           /* a change between two stops: */
	uint64_t f_lo, f_hi;  /*   the instructions between them */
	bool over;            /* the range is scanned: the replay ends */
	/* Asking whether to give up (stopped: it did), saying how far it
	 * is: shared by the scans of one search. */
	struct watch_progress *progress;
};

struct watch_progress {
	const struct event_give_up *give_up;
	uint64_t started, next_ask, next_say;
	uint64_t stepped;     /* instructions stepped by the earlier scans */
	bool stopped;
};

/* Gdb's Ctrl-C is asked about every tenth of a second, progress said every
 * 10 s: a search far back steps as much as making that history did. */
static int keep_on(struct watch_scan *w)
{
	struct watch_progress *p = w->progress;
	uint64_t now = erp_now_ns();
	if (now < p->next_ask)
		return 0;
	p->next_ask = now + 100000000ull;
	if (p->give_up && p->give_up->ask && p->give_up->ask(p->give_up->ctx)) {
		p->stopped = true;
		return erp_fail(&w->e, "stopped by gdb (Ctrl-C)");
	}
	if (now >= p->next_say) {
		p->next_say = now + 10000000000ull;
		fprintf(stderr, "ptrev: still looking for the watched access: %.1f million "
			"instructions re-executed, %.0f s so far\n",
			(double)(p->stepped + w->done) / 1e6, (double)(now - p->started) / 1e9);
	}
	return 0;
}

/* Single steps near the range's bounds (and all through it, exact). */
static void choose_mode(struct watch_scan *w)
{
	bool in = w->done >= w->lo && w->done < w->hi;
	bool near = (w->done < w->lo && w->lo - w->done <= CLOSE) ||
		    (w->done < w->hi && w->hi - w->done <= CLOSE);
	w->e.step_mode = near || (in && w->exact) ? ERP_STEP_INSN : w->mode;
}

static int on_start(struct erp *e, struct erp_thread *t, uint64_t ip)
{
	(void)t;
	(void)ip;
	choose_mode((struct watch_scan *)e);
	return 0;
}

static int on_insn(struct erp *e, struct erp_thread *t, uint64_t ip, const struct insn_info *info,
		   uint64_t next)
{
	struct watch_scan *w = (struct watch_scan *)e;
	(void)t;
	if (!erp_insn_counts(info, ip, next))
		return 0;
	w->done++;
	choose_mode(w);
	return 0;
}

/* At every stop of the stepper (t about to complete an instruction: what
 * ran since the last stop is done, a syscall's completion or a signal's
 * delivery too): the bytes compared with the last stop's. */
static int on_ready(struct erp *e, struct erp_thread *t)
{
	struct watch_scan *w = (struct watch_scan *)e;
	uint8_t *now = w->now;
	(void)t;
	if (keep_on(w) < 0)
		return -1;
	if (w->done < w->lo)
		return 0;
	if (erp_read_mem(e, w->wd->addr, now, w->wd->len) != (ssize_t)w->wd->len)
		return erp_fail(e, "cannot read the watched bytes at %#llx",
				(unsigned long long)w->wd->addr);
	bool access = e->search_hits != w->hits ||
		      (w->wd->by_value && w->have_seen && memcmp(now, w->seen, w->wd->len) != 0);
	if (w->have_seen && w->stop_done >= w->lo && w->done <= w->hi && access) {
		w->found = true;
		w->f_lo = w->stop_done;
		w->f_hi = w->done;
	}
	w->now = w->seen;
	w->seen = now;
	w->hits = e->search_hits;
	w->have_seen = true;
	w->stop_done = w->done;
	if (w->done >= w->hi || (w->found && !w->back)) {
		w->over = true;
		snprintf(e->why, sizeof e->why, "scanned");
		return -1; /* unwinds the replay */
	}
	return 0;
}

static const struct erp_observer scan_observer = {
	.start = on_start,
	.insn = on_insn,
	.interrupt = erp_obs_ignore_ip,
	.event = erp_obs_ignore_event,
	.end = erp_obs_ignore_ip,
	.run = erp_obs_ignore_run,
	.ready = on_ready,
};

/* One re-execution that scans instructions lo .. hi - 1 of made. 1 with
 * the access's instructions (*f_lo .. *f_hi - 1), 0, -1. */
static int scan(const struct trace_data *ev, const struct trace_data *made, uint64_t lo,
		uint64_t hi, bool back, bool exact, const struct watched *wd,
		struct watch_progress *progress, uint64_t *f_lo, uint64_t *f_hi, char *why,
		size_t whylen)
{
	struct watch_scan *w = calloc(1, sizeof *w);
	if (w && (!(w->seen = malloc(wd->len)) || !(w->now = malloc(wd->len)))) {
		free(w->seen);
		free(w);
		w = NULL;
	}
	if (!w) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	size_t first = materialise_tail_run(made);
	size_t native = event_hold_native_prefix(ev, made, first, lo, &w->done);
	w->lo = lo;
	w->hi = hi;
	w->back = back;
	w->exact = exact;
	w->wd = wd;
	w->progress = progress;
	w->stop_done = w->done;
	w->mode = erp_step_mode_default();
	int rc = erp_replay_from_searching(&w->e, ev, &scan_observer, native, first, wd->pts,
					   wd->npts);
	progress->stepped += w->done;
	if (rc < 0 && !w->over) {
		snprintf(why, whylen, "%s", w->e.why);
		rc = progress->stopped ? -2 : -1;
	} else {
		/* Over, or the program ended first (nothing after its last
		 * stop is compared). */
		rc = w->found ? 1 : 0;
		*f_lo = w->f_lo;
		*f_hi = w->f_hi;
	}
	erp_free(&w->e);
	free(w->seen);
	free(w->now);
	free(w);
	return rc;
}

static uint64_t history_length(const struct trace_data *made)
{
	uint64_t n = 0;
	for (size_t i = 0; i < made->nsched; i++)
		n += made->sched[i].count;
	return n;
}

/* Where the range a search scans first begins, going back from gpos:
 * the last 2^16 instructions, then each time four times as many before
 * those, so that a change near gpos costs little and one far back a few
 * scans. */
#define FIRST_WINDOW (1ull << 16)

/* What a watch of type (2 write, 3 read, 4 access) looks for: a write, by
 * the change of value gdb reports it for; reads by the debug registers
 * (x86 has no read-only breakpoint: an access one, as gdb's own x86
 * watchpoints do; gdb drops a read watchpoint's hit where the value
 * changed). 0, or -1 with why. */
static int what_to_watch(int type, uint64_t addr, size_t len, struct watched *wd, char *why,
			 size_t whylen)
{
	memset(wd, 0, sizeof *wd);
	wd->addr = addr;
	wd->len = len;
	wd->by_value = type != 3;
	if (len == 0 || len > EVENT_WATCH_MAX_LEN) {
		snprintf(why, whylen, "a watch of %zu bytes (1 to %d here)", len,
			 EVENT_WATCH_MAX_LEN);
		return -1;
	}
	if (type == 2)
		return 0;
	/* Reads are seen only by the debug registers (pts), and a CI dry run
	 * on this VM, which loses some hits' DR6, missed one: not checked. */
	snprintf(why, whylen, "a read or access watchpoint is not checked in the history of "
		 "several threads (its hits are lost on this machine; a write watchpoint is)");
	return -1;
}

int event_watch_find(const struct trace_data *ev, const struct trace_data *made, uint64_t gpos,
		     bool back, int type, uint64_t addr, size_t len, uint64_t *after,
		     uint64_t *insns, const struct event_give_up *give_up, char *why,
		     size_t whylen)
{
	uint64_t lo, hi, f_lo = 0, f_hi = 0, total = history_length(made);
	uint64_t now = erp_now_ns();
	struct watch_progress progress = {.give_up = give_up, .started = now,
					  .next_say = now + 10000000000ull};
	struct watched wd;
	int rc = 0;
	if (what_to_watch(type, addr, len, &wd, why, whylen) < 0)
		return -1;
	if (back) {
		for (hi = gpos, lo = gpos; rc == 0 && hi > 0; hi = lo) {
			uint64_t width = hi == gpos ? FIRST_WINDOW : 4 * (gpos - hi);
			lo = hi > width ? hi - width : 0;
			rc = scan(ev, made, lo, hi, true, false, &wd, &progress, &f_lo, &f_hi, why,
				  whylen);
		}
	} else if (gpos < total) {
		rc = scan(ev, made, gpos, total, false, false, &wd, &progress, &f_lo, &f_hi, why,
			  whylen);
	}
	/* The stops around a change may be a block and its branch apart:
	 * single steps across them tell which instruction it was. */
	if (rc == 1 && f_hi - f_lo > 1 &&
	    (rc = scan(ev, made, f_lo, f_hi, back, true, &wd, &progress, &f_lo, &f_hi, why,
		       whylen)) == 0) {
		snprintf(why, whylen, "the access to the watched bytes between instructions %llu "
			 "and %llu was not seen again when stepped", (unsigned long long)f_lo,
			 (unsigned long long)f_hi);
		return -1;
	}
	if (rc == 1) {
		*after = f_hi;
		*insns = f_hi - f_lo;
	}
	return rc;
}
