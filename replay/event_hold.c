/* The state of a multi-threaded event recording at a history position, by
 * stepping its event replay from the start to there: see event_hold.h. */
#include "event_hold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_replay.h"
#include "ptrev/materialise.h"

struct event_hold {
	struct erp e;
	uint64_t want;  /* hold before this global instruction */
	uint64_t done;  /* instructions completed, all threads */
	bool due;       /* done == want: hold before the next one */
	bool held;
	struct event_hold_anchor anchor; /* pc 0: none */
	bool anchored;  /* the thread ran natively to it */
};

/* The stepper runs a block and the branch after it (at most
 * BLOCK_MAX_INSNS + 1 instructions) natively before it reports them; this
 * close to the position, single steps, so that the replay stops exactly
 * there. */
#define CLOSE (BLOCK_MAX_INSNS + 8)

static void near(struct event_hold *h)
{
	if (h->want - h->done <= CLOSE)
		h->e.step_mode = ERP_STEP_INSN;
}

static int on_start(struct erp *e, struct erp_thread *t, uint64_t ip)
{
	(void)t;
	(void)ip;
	near((struct event_hold *)e);
	return 0;
}

static int on_insn(struct erp *e, struct erp_thread *t, uint64_t ip, const struct insn_info *info,
		   uint64_t next)
{
	struct event_hold *h = (struct event_hold *)e;
	if (!erp_insn_counts(info, ip, next))
		return 0;
	if (h->due)
		return erp_fail(e, "the re-execution of thread %d went past the position",
				(int)t->rec_tid);
	h->done++;
	near(h);
	h->due = h->done == h->want;
	return 0;
}

/* Held not right after instruction want - 1 but when the next one is
 * about to run: a signal delivered in between (the history places the
 * position at the handler's first instruction) is done by then. */
static int on_ready(struct erp *e, struct erp_thread *t)
{
	struct event_hold *h = (struct event_hold *)e;
	(void)t;
	if (!h->due)
		return 0;
	h->held = true;
	snprintf(e->why, sizeof e->why, "held");
	return -1; /* unwinds the replay, its process left as it stands */
}

/* The anchor's thread about to step the stretch that holds the anchor
 * (it stands at the stretch's first instruction: done says so, as only
 * that thread runs in it): natively to the anchor instead. */
static int on_before_stretch(struct erp *e, struct erp_thread *t)
{
	struct event_hold *h = (struct event_hold *)e;
	const struct event_hold_anchor *a = &h->anchor;
	if (!a->pc || h->anchored || t->rec_tid != a->tid || h->done != a->start)
		return 0;
	h->anchored = true;
	if (erp_run_passes(e, t, a->pc, a->passes) < 0)
		return -1;
	h->done = a->at;
	near(h);
	h->due = h->done == h->want;
	return 0;
}

static const struct erp_observer hold_observer = {
	.start = on_start,
	.insn = on_insn,
	.interrupt = erp_obs_ignore_ip,
	.event = erp_obs_ignore_event,
	.end = erp_obs_ignore_ip,
	.run = erp_obs_ignore_run,
	.ready = on_ready,
	.before_stretch = on_before_stretch,
};

/* How many runs of ev's order can run natively before gpos, and how many
 * instructions they hold (*done). A run of the event order that ran no
 * instruction has no run in made's; the others match made's in order, by
 * thread, from made's first (a tail's: materialise_tail_run; the runs
 * before it run natively, positions count from its start). Two runs are
 * kept in hand: a thread's runs in a row, one of them empty, could be
 * matched one off (a wrong count the check of every thread's PC against
 * the history would catch). */
size_t event_hold_native_prefix(const struct trace_data *ev, const struct trace_data *made,
				size_t first, uint64_t gpos, uint64_t *done)
{
	size_t j = 0, i = first, keep = 2;
	uint64_t *before = calloc(ev->nsched + 1, sizeof *before);
	uint64_t cum = 0;
	if (!before)
		return *done = 0;
	for (; i < ev->nsched; i++) {
		before[i] = cum;
		if (j < made->nsched && made->sched[j].tid == ev->sched[i].tid) {
			if (cum + made->sched[j].count > gpos)
				break; /* run i holds the position */
			cum += made->sched[j].count;
			j++;
		}
	}
	size_t n = i > first + keep ? i - keep : first;
	*done = before[n];
	free(before);
	return n;
}

struct event_hold *event_hold_at(const struct trace_data *ev, const struct trace_data *made,
				 uint64_t gpos, const struct event_hold_anchor *anchor, char *why,
				 size_t whylen)
{
	struct event_hold *h = calloc(1, sizeof *h);
	if (!h) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	/* erp_replay_from clears e alone; the observer finds h through it
	 * (e is h's first member). */
	size_t first = materialise_tail_run(made);
	size_t native = event_hold_native_prefix(ev, made, first, gpos, &h->done);
	h->want = gpos;
	h->due = gpos == h->done;
	if (anchor)
		h->anchor = *anchor;
	int rc = erp_replay_from(&h->e, ev, &hold_observer, native, first);
	if (!h->held) {
		snprintf(why, whylen, "%s", rc < 0 ? h->e.why
				   : "the re-execution ended before that position");
		event_hold_free(h);
		return NULL;
	}
	if (anchor && getenv("PTREV_HOLD_ANCHOR_SAY"))
		fprintf(stderr, "ptrev: global instruction %llu: %s\n",
			(unsigned long long)gpos,
			h->anchored ? "reached natively to its anchor" : "its anchor not used");
	return h;
}

void event_hold_free(struct event_hold *h)
{
	if (!h)
		return;
	erp_free(&h->e);
	free(h);
}

int event_hold_registers(struct event_hold *h, pid_t rec_tid, struct amd64_regfile *rf)
{
	struct erp_thread *t = erp_thread_rec(&h->e, rec_tid);
	if (erp_regfile(&h->e, t, rf) < 0)
		return -1;
	int before = 0;
	if (t->at_entry || t->in_unrecorded) {
		/* Its run ended at the entry of a syscall, which completes in
		 * its next run: the history places it before the syscall
		 * instruction. So it does one in a syscall the log does not
		 * hold (erp_end_here: it stands on the instruction), as a
		 * recording cut short leaves every thread whose syscall
		 * completes after the cut (event_cut.h), and as the whole
		 * history shows such a thread there. */
		rf->gpr.rip -= 2; /* syscall is 2 bytes */
		rf->gpr.rax = rf->gpr.orig_rax;
		rf->gpr.orig_rax = (unsigned long long)-1; /* not in a syscall */
		rf->gpr.rcx = t->presys_known ? t->presys_rcx : 0;
		rf->gpr.r11 = t->presys_known ? t->presys_r11 : 0;
		before = !t->presys_known;
	}
	return before;
}

ssize_t event_hold_read(struct event_hold *h, uint64_t addr, void *buf, size_t len)
{
	return erp_read_mem(&h->e, addr, buf, len);
}
