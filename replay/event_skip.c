/* Event replay: letting a hot loop's passes go by uncounted on the way to
 * a STATE point inside it.
 *
 * A replay finds a STATE point with a hardware breakpoint at its PC and a
 * comparison at every hit (event_advance.c): one trap a pass, about 25 us
 * here. The recorder stops a thread wherever it is when another has
 * waited a time slice, so a point is often in a loop of millions of
 * passes: minutes of traps. The registers and the stack words at the
 * passes tell where the loop stands (include/ptrev/pass_model.h): once
 * they say the point is many passes ahead, the thread runs natively,
 * without the breakpoint, for part of the time those passes take, is
 * stopped wherever it is, and is run on to its next pass with the
 * breakpoint; the passes it made meanwhile are read from the words
 * again. Each run is asked to last at most half of what is left at the
 * fastest rate seen (the tracer waits on another CPU and stops the
 * thread with a signal), and is cut at three quarters of it in the
 * thread's own CPU time by the kernel's task clock where there is one
 * (ptrev/cpu_timer.h: a tracer whose CPU is taken for milliseconds,
 * which happens in a VM even when idle, is late by that much). So the
 * runs close in on the point, and the last passes (what the shortest
 * run makes: tens of thousands in a tight loop, a second or two of
 * traps) are counted, compared one by one as before.
 *
 * Sound as far as the model is: a pass let go is one whose words the
 * model says differ from the point's. Where the model is wrong (a loop
 * nested in one whose counter is in memory; a run that went on longer
 * than asked, on a loaded machine, past the point) it shows: the
 * words after a run do not say a whole number of passes, or say
 * more than were left, or the pass they named is not the point, or an
 * event comes first. Then the replay fails with skip_missed set, and
 * event_replay.c replays again from the start, more carefully (runs of
 * an eighth, growing by half as fast), then counting every pass. */
#include "event_replay.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/debugregs.h"

/* Fewer passes left than this are counted (a tenth of a second of
 * traps): below it, runs of microseconds would have to stop within a
 * few hundred passes of where they were asked to. */
#define SKIP_MIN_PASSES 4096
/* No run is asked for shorter than this: a thread resumed on another
 * CPU than the tracer's is not running yet for some us, and stopped
 * sooner makes no pass. */
#define MIN_RUN_NS 5000
/* Runs in a row that barely move the thread before the rest is counted. */
#define FUTILE_RUNS 8

/* How many of the point's stack bytes the model takes. */
static size_t stack_len(const struct trace_state *st)
{
	return st->sp_len < 8 * PASS_MODEL_STACK ? st->sp_len : 8 * PASS_MODEL_STACK;
}

/* The model's words (pass_model.h): registers, then stack bytes (none:
 * zero). */
static void words(uint64_t *w, const void *regs, const void *stack, size_t n)
{
	memset(w, 0, PASS_MODEL_WORDS * sizeof *w);
	memcpy(w, regs, sizeof(struct user_regs_struct));
	if (stack)
		memcpy(w + PASS_MODEL_REGS, stack, n);
}

/* ...of t at a pass with regs: the stack read where the point's record
 * holds it (zero where that cannot be read). */
static void words_of(struct erp *e, const struct trace_state *st,
		     const struct user_regs_struct *regs, uint64_t *w)
{
	uint8_t stack[8 * PASS_MODEL_STACK];
	size_t n = stack_len(st);
	bool read = n && pread(e->memfd, stack, n, (off_t)st->sp_addr) == (ssize_t)n;
	words(w, regs, read ? stack : NULL, n);
}

static int missed(struct erp *e, struct erp_thread *t, const struct trace_state *st,
		  const char *how)
{
	e->skip_missed = true;
	return erp_fail(e, "thread %d's STATE point at %#llx (its event %zu) was looked for "
			"letting passes of a loop go uncounted, and %s",
			(int)t->rec_tid, (unsigned long long)st->regs[16], t->next, how);
}

/* From wherever t was stopped on to its next pass of pc, the breakpoint
 * armed (a late stop of the timer guard passed): 1 there (regs), 0
 * something else came first, -1. */
static int to_next_pass(struct erp *e, struct erp_thread *t, uint64_t pc, int guard,
			struct user_regs_struct *regs)
{
	int ws;
	if (inf_dr_write(t->tid, 7, e->search_dr7 | 1) < 0)
		return erp_fail(e, "thread %d: no hardware breakpoint for its STATE point",
				(int)t->rec_tid);
	do {
		if (erp_resume(e, t, PTRACE_SYSCALL, 0, &ws) < 0)
			return -1;
	} while (erp_timer_stop(t, guard, ws));
	if (WSTOPSIG(ws) != SIGTRAP)
		return 0;
	if (erp_get_regs(e, t, regs) < 0)
		return -1;
	if (regs->rip != pc)
		return 0;
	inf_dr_clear_dr6(t->tid);
	return 1;
}

/* One run without the breakpoint, then on to the next pass with it
 * (guard: t's CPU-time timer, or -1; left: passes left to the point): 0
 * it stands there (regs; the counts brought up to date), 1 no more runs
 * are worth asking for (there, or where it stood), -1. */
static int one_run(struct erp *e, struct erp_thread *t, const struct trace_state *st, int guard,
		   uint64_t *left, struct user_regs_struct *regs)
{
	/* The first run is as short as a run can be: how many passes that
	 * makes in the wall time it took says about how fast the loop goes
	 * (less than it does: the run after it is short). Then at most half
	 * of what is left at the fastest rate seen, and at most four times
	 * the run before; careful (after a miss), an eighth and twice. The
	 * timer stops the thread, in its own CPU time (which a stop and a
	 * resume take tens of us of), where the tracer is late: at twice
	 * the run and 200 us more, and at three quarters of what is left. */
	bool careful = e->skip_level == SKIP_CAREFUL, first = t->skip_rate == 0;
	uint64_t ns = 0;
	if (!first) {
		ns = (uint64_t)((double)*left / (careful ? 8 : 2) / t->skip_rate);
		uint64_t most = (careful ? 2 : 4) * t->skip_asked + MIN_RUN_NS;
		if (ns > most)
			ns = most;
		if (ns < MIN_RUN_NS)
			return 1;
	}
	uint64_t guard_ns = 2 * ns + 200000;
	if (!first && (double)guard_ns > (double)*left * 3 / 4 / t->skip_rate)
		guard_ns = (uint64_t)((double)*left * 3 / 4 / t->skip_rate);
	if (inf_dr_write(t->tid, 7, e->search_dr7) < 0)
		return erp_fail(e, "thread %d: cannot clear its hardware breakpoint",
				(int)t->rec_tid);
	int ws;
	uint64_t t0 = erp_now_ns();
	int rc = erp_run_for(e, t, ns, guard, guard_ns, &ws);
	uint64_t wall = erp_now_ns() - t0;
	if (rc < 0)
		return -1;
	if (rc == 0)
		return missed(e, t, st, WSTOPSIG(ws) == (SIGTRAP | 0x80) ? "a syscall came first"
									: "a signal came first");
	if ((rc = to_next_pass(e, t, st->regs[16], guard, regs)) <= 0)
		return rc < 0 ? -1 : missed(e, t, st, "an event came before the next pass");
	uint64_t w[PASS_MODEL_WORDS];
	words_of(e, st, regs, w);
	uint64_t n = pass_model_jump(&t->model, w);
	if (n == 0)
		return missed(e, t, st, "the registers stopped changing as they did");
	if (n > *left)
		return missed(e, t, st, "the registers say it went past the point");
	/* Passes per ns asked for: a run stops later than asked, so this
	 * is more than the loop's rate, the more so the shorter the run:
	 * the safe side. */
	double r = (double)n / (double)(ns ? ns : wall ? wall : 1);
	if (r > t->skip_rate)
		t->skip_rate = r;
	*left -= n;
	t->search_hits += n - 1; /* erp_at_state counts the pass it stands at */
	t->skip_target = t->search_hits + 1 + *left;
	t->skip_asked = ns;
	/* A run that barely moved it (the thread was not on its CPU yet
	 * when stopped: a loaded machine, or a run too short) costs about
	 * what six counted passes do; after FUTILE_RUNS of them in a row the
	 * rest is counted. One alone says little: under load the next may
	 * run. */
	t->skip_futile = !first && n < SKIP_MIN_PASSES / 4 ? t->skip_futile + 1 : 0;
	return t->skip_futile >= FUTILE_RUNS;
}

int erp_skip_passes(struct erp *e, struct erp_thread *t, const struct trace_state *st,
		    struct user_regs_struct *regs)
{
	uint64_t w[PASS_MODEL_WORDS];
	if (t->skip_jumped) {
		t->skip_jumped = false;
	} else {
		words_of(e, st, regs, w);
		pass_model_feed(&t->model, w);
	}
	if (t->skip_target && t->search_hits >= t->skip_target)
		return missed(e, t, st, "the pass the registers named is not the point");
	if (e->skip_level == SKIP_NONE)
		return 0;
	words(w, st->regs, st->sp_len ? st->sp_bytes : NULL, stack_len(st));
	uint64_t left = pass_model_left(&t->model, w);
	if (left < SKIP_MIN_PASSES)
		return 0;
	uint64_t before = left;
	struct erp_timed tm;
	erp_timed_begin(t, &tm);
	int rc = 0;
	while (rc == 0 && left >= SKIP_MIN_PASSES)
		rc = one_run(e, t, st, tm.guard, &left, regs);
	if (erp_timed_end(e, t, &tm, rc >= 0) < 0)
		rc = -1;
	if (rc < 0)
		return -1;
	if (left == before)
		return 0;
	t->skip_jumped = true;
	return 1;
}
