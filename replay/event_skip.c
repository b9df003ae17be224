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
 * fastest rate seen. Where the kernel has a task clock (ptrev/cpu_timer.h)
 * a run is measured in the thread's own CPU time, and its timer stops
 * it: a run then makes the passes asked for however loaded the machine
 * (in wall time, with its CPU shared, runs of tens of us made no pass
 * and a CI run counted 700,000 passes one by one). Elsewhere the tracer,
 * waiting on another CPU, stops it after that much wall time. So the
 * runs close in on the point, and the last passes (what the shortest
 * run makes: tens of thousands in a tight loop, half a second of
 * traps) are counted, compared one by one as before.
 *
 * A resume costs the thread CPU time in the kernel before it runs its
 * first instruction, which its timer counts: about 10 us in this VM,
 * where a run timed at 10 us made one pass of a loop that makes a
 * thousand in 10 us, and a rate taken from it made the next run go past
 * the point. Measured once (a resume that runs nothing, both ways: more
 * than the part before the first instruction), it is added to every
 * timed run and left out of the rate, which is so at least the loop's
 * (the safe side). The first timed run makes tens of thousands of
 * passes: a point fewer passes ahead is counted to.
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/cpu_timer.h"
#include "ptrev/debugregs.h"

/* Fewer passes left than this are counted (a tenth of a second of
 * traps): below it, runs of microseconds would have to stop within a
 * few hundred passes of where they were asked to. */
#define SKIP_MIN_PASSES 4096
/* No run is asked for shorter than this: a thread resumed on another
 * CPU than the tracer's is not running yet for some us, and stopped
 * sooner makes no pass. */
#define MIN_RUN_NS 5000
/* ...and timed, of the loop's own run on top of the overhead: what the
 * overhead's measurement gets wrong (some us) is small beside it. */
#define MIN_TIMED_RUN_NS 10000
/* Runs in a row that barely move the thread before the rest is counted. */
#define FUTILE_RUNS 8
/* The first timed run (10 us of the loop, and what it costs the thread
 * to be resumed and stopped beyond what the measured overhead says) may
 * make tens of thousands of passes of a tight loop: with fewer left than
 * this the passes are counted. (Untimed runs, the tracer's stop after a
 * wall-clock wait, made 1 pass in 5 us and 27,000 in 25: the thread's
 * resume takes 10-20 us, and a rate taken from them went past points.) */
#define FIRST_TIMED_RUN_PASSES 65536
/* Where the overhead cannot be measured (the clock cannot be read). */
#define DEFAULT_OVERHEAD_NS 20000

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

/* ...of the point itself. */
static void point_words(const struct trace_state *st, uint64_t *w)
{
	words(w, st->regs, st->sp_len ? st->sp_bytes : NULL, stack_len(st));
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
	if (erp_point_arm(e, t, pc) < 0)
		return -1;
	if (erp_resume_to_pass(e, t, pc, &ws) < 0)
		return -1;
	while (erp_timer_stop(t, guard, ws))
		if (erp_resume(e, t, PTRACE_SYSCALL, 0, &ws) < 0)
			return -1;
	if (WSTOPSIG(ws) != SIGTRAP)
		return 0;
	if (erp_get_regs(e, t, regs) < 0)
		return -1;
	if (regs->rip != pc)
		return 0;
	return erp_pass_seen(e, t, regs) < 0 ? -1 : 1;
}

/* The CPU time t spends being resumed and stopped when it runs nothing
 * (resumed with a SIGSTOP pending, taken before its first instruction):
 * the smaller of two measurements, at least what a run spends before its
 * first instruction. Timed runs only: t's clock is open. 0, or -1. */
static int measure_overhead(struct erp *e, struct erp_thread *t, const struct trace_state *st,
			    int guard)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 2; i++) {
		uint64_t c0 = cpu_clock_read(t->clock);
		syscall(SYS_tgkill, e->pid, t->tid, SIGSTOP);
		int ws;
		do {
			if (erp_resume(e, t, PTRACE_SYSCALL, 0, &ws) < 0)
				return -1;
		} while (erp_timer_stop(t, guard, ws));
		uint64_t c1 = cpu_clock_read(t->clock);
		if (!WIFSTOPPED(ws) || WSTOPSIG(ws) != SIGSTOP)
			return missed(e, t, st, "a signal came first");
		if (t->clock >= 0 && c1 > c0 && c1 - c0 < best)
			best = c1 - c0;
	}
	t->skip_overhead = best == UINT64_MAX ? DEFAULT_OVERHEAD_NS : best;
	return 0;
}

/* The loop's run to ask for next (ns; timed: on top of the overhead;
 * untimed, the first: 1, stopped at once), or 0: none is worth asking
 * for, the rest is counted. */
static uint64_t run_to_ask(const struct erp *e, const struct erp_thread *t, uint64_t left)
{
	bool careful = e->skip_level == SKIP_CAREFUL;
	uint64_t least = t->skip_timed ? MIN_TIMED_RUN_NS : MIN_RUN_NS;
	/* The first run is as short as a run can be: how many passes that
	 * makes says about how fast the loop goes. */
	if (t->skip_rate == 0)
		return t->skip_timed ? least : 1;
	/* What a resume and a stop cost the thread varies from run to run
	 * by about as much as the measured overhead (about 15 us in this
	 * VM, and a run's own up to 35 us more under load): a run asked for
	 * less loop than that may make twice the passes asked, and went
	 * past points on a loaded machine. The rest is counted. */
	if (t->skip_timed && least < t->skip_overhead)
		least = t->skip_overhead;
	/* Then at most half of what is left at the fastest rate seen, and
	 * at most four times the run before; careful (after a miss), an
	 * eighth and twice. */
	uint64_t ns = (uint64_t)((double)left / (careful ? 8 : t->skip_rough ? 4 : 2) / t->skip_rate);
	uint64_t most = (careful ? 2 : 4) * t->skip_asked + MIN_RUN_NS;
	if (ns > most)
		ns = most;
	return ns < least ? 0 : ns;
}

/* One run without the breakpoint, then on to the next pass with it
 * (guard: t's CPU-time timer, or -1; ns: the run, run_to_ask; left:
 * passes left to the point): 0 it stands there (regs; the counts brought
 * up to date), 1 no more runs are worth asking for (there), -1. */
static int one_run(struct erp *e, struct erp_thread *t, const struct trace_state *st, int guard,
		   uint64_t ns, uint64_t *left, struct user_regs_struct *regs)
{
	bool first = t->skip_rate == 0, timed = t->skip_timed;
	uint64_t cpu, wall;
	if (timed) {
		cpu = t->skip_overhead + ns;
		wall = erp_backstop_ns(cpu);
	} else {
		/* The tracer stops it after ns (the first run at once); the
		 * timer, where the tracer is late, at twice the run and 200
		 * us more, and at three quarters of what is left. */
		if (first)
			ns = 0;
		wall = ns;
		cpu = 0;
		if (guard >= 0) {
			cpu = 2 * ns + 200000;
			if (!first && (double)cpu > (double)*left * 3 / 4 / t->skip_rate)
				cpu = (uint64_t)((double)*left * 3 / 4 / t->skip_rate);
		}
	}
	if (erp_point_disarm(e, t) < 0)
		return -1;
	int ws;
	uint64_t t0 = erp_now_ns();
	int rc = erp_run_for(e, t, wall, guard, cpu, &ws);
	uint64_t took = erp_now_ns() - t0;
	if (rc < 0)
		return -1;
	if (rc == 0)
		return missed(e, t, st, WSTOPSIG(ws) == (SIGTRAP | 0x80) ? "a syscall came first"
									: "a signal came first");
	if ((rc = to_next_pass(e, t, st->regs[16], guard, regs)) <= 0)
		return rc < 0 ? -1 : missed(e, t, st, "an event came before the next pass");
	uint64_t w[PASS_MODEL_WORDS], target[PASS_MODEL_WORDS];
	words_of(e, st, regs, w);
	t->skip_let_go = true;
	uint64_t n;
	if (t->skip_rough) {
		/* An estimate: the point is ahead while every rising lane is
		 * below its value there; the passes left estimated again. */
		point_words(st, target);
		n = pass_model_rough_jump(&t->model, w, target);
		if (n == 0)
			return missed(e, t, st, "the registers say it may have gone past the point");
		uint64_t now = pass_model_rough_left(&t->model, target);
		if (now == 0)
			return missed(e, t, st, "the registers say it may have gone past the point");
		*left = now + n; /* n taken off below */
	} else {
		n = pass_model_jump(&t->model, w);
		if (n == 0)
			return missed(e, t, st, "the registers stopped changing as they did");
		if (n > *left)
			return missed(e, t, st, "the registers say it went past the point");
	}
	/* Passes per ns of the loop's run: timed, at least the loop's rate
	 * (the overhead left out is at least what the run spent before
	 * its first instruction); untimed, a run stops later than asked, so
	 * this is more than the loop's rate, the more so the shorter the
	 * run: the safe side. The first untimed run's, per ns it took, is
	 * less, and the run after it is short. */
	double r = (double)n / (double)(ns ? ns : took ? took : 1);
	if (r > t->skip_rate)
		t->skip_rate = r;
	*left -= n;
	t->search_hits += n - 1; /* erp_at_state counts the pass it stands at */
	/* Counted, the pass the point is at is known (an estimate: not). */
	t->skip_target = t->skip_rough ? 0 : t->search_hits + 1 + *left;
	t->skip_asked = ns;
	/* A run that barely moved it (untimed: the thread was not on its
	 * CPU yet when stopped, on a loaded machine, or a run too short)
	 * costs about what six counted passes do; after FUTILE_RUNS of them
	 * in a row the rest is counted. One alone says little: under load
	 * the next may run. */
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
	point_words(st, w);
	if (t->skip_let_go && t->skip_rough && pass_model_rough_passed(&t->model, w))
		return missed(e, t, st, "the registers say it went past the point");
	if (e->skip_level == SKIP_NONE)
		return 0;
	uint64_t left = pass_model_left(&t->model, w);
	/* Passes that do not step evenly (the PC in a function called now
	 * and then): an estimate from the lanes that rise at every pass.
	 * Runs then stop short of it by more: a quarter, not a half. */
	t->skip_rough = left == 0;
	if (left == 0)
		left = pass_model_rough_left(&t->model, w);
	/* Timed (where the thread's CPU clock can be read), a point closer
	 * than the first run may go is counted to. */
	bool first = t->skip_rate == 0;
	if (left < SKIP_MIN_PASSES || (first && t->clock >= 0 &&
	     left < (e->skip_from ? e->skip_from : FIRST_TIMED_RUN_PASSES)) ||
	    (!first && !run_to_ask(e, t, left)))
		return 0;
	uint64_t before = left, ns;
	struct erp_timed tm;
	erp_timed_begin(t, &tm);
	int rc = 0;
	/* Timed runs where the thread's CPU clock can be read and its timer
	 * made. */
	if (first) {
		t->skip_timed = tm.guard >= 0 && t->clock >= 0;
		if (t->skip_timed && !t->skip_overhead)
			rc = measure_overhead(e, t, st, tm.guard);
	}
	while (rc == 0 && left >= SKIP_MIN_PASSES && (ns = run_to_ask(e, t, left)))
		rc = one_run(e, t, st, tm.guard, ns, &left, regs);
	if (erp_timed_end(e, t, &tm, rc >= 0) < 0)
		rc = -1;
	if (rc < 0)
		return -1;
	if (left == before)
		return 0;
	t->skip_jumped = true;
	return 1;
}
