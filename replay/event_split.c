/* Event replay: a point inside a long stretch, where a tail's history can
 * begin (event_replay.h, erp_take_point). A tail is made of whole
 * stretches between events, and the last one alone may run for
 * milliseconds (a program's computation before its exit: millions of
 * instructions, tens of seconds to step). Here the stretch is run
 * natively and the thread stopped wherever it is after about the wanted
 * time; that place is described as the recorder describes a thread it
 * stopped (state_digest.h), and every replay that needs it finds it again
 * the same way: with a hardware breakpoint at its PC, the first hit whose
 * state matches. Sound for the same reasons (the stretch is
 * deterministic: no syscall, signal or rdtsc in it), and better placed
 * than the recorder's points: the place is described from a replay and
 * found in replays of the same kind. Where the timer lands does not
 * matter; only that it is found again. */
#include "event_replay.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/cpu_timer.h"
#include "ptrev/ptrace_wait.h"
#include "ptrev/state_record.h"

/* Wait for the end of t's single step: 1 it ended so (regs), 0 another
 * stop came (a signal), -1. */
static int stepped(struct erp *e, struct erp_thread *t, struct user_regs_struct *regs)
{
	int ws;
	if (ptrace_wait_task(t->tid, &ws) < 0)
		return erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
	if (erp_count_stop(e) < 0)
		return -1;
	if (!WIFSTOPPED(ws) || WSTOPSIG(ws) != SIGTRAP)
		return 0;
	siginfo_t si;
	memset(&si, 0, sizeof si);
	ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si);
	if (si.si_code == SI_KERNEL || si.si_code <= 0)
		return 0;
	return erp_get_regs(e, t, regs) < 0 ? -1 : 1;
}

/* Every replay that begins at the point traps at each execution of its
 * PC from the stretch's start on (state_digest.h): where the timer
 * stopped the thread in a hot loop that is one trap every few
 * instructions, hundreds of thousands of them, seconds, worse than
 * stepping the whole stretch. So the point is moved on from there to a
 * cold PC: the thread is single-stepped WINDOW instructions, counting how
 * often each PC comes, then on (at most WINDOW more) to the first PC
 * that came at most `most` times (a PC that did not come counts once):
 * a PC that rare in the window comes about most / WINDOW of the
 * stretch's instructions, and `most` is chosen so that this is at most
 * MAX_HITS traps over the stretch so far (its instructions estimated
 * from its native run time at NATIVE_INSNS_PER_NS, a generous rate). A
 * REP string instruction is never the point: stopped between two of its
 * iterations the thread is in a state a breakpoint on the instruction
 * cannot find again (the CPU resumes it with RF set). */
#define WINDOW 4000
#define MAX_HITS 5000
#define NATIVE_INSNS_PER_NS 3

struct pc_counts {
	uint64_t pc[2 * WINDOW];
	uint32_t n[2 * WINDOW];
};

static uint32_t *count_of(struct pc_counts *c, uint64_t pc, bool add)
{
	size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 40) % (2 * WINDOW);
	while (c->n[i] && c->pc[i] != pc)
		i = (i + 1) % (2 * WINDOW);
	if (!c->n[i] && !add)
		return NULL;
	c->pc[i] = pc;
	return &c->n[i];
}

/* One instruction stepped (not a syscall's: the stretch ends there). 1
 * stepped, 0 the stretch ended (a syscall next, or a signal came: rdtsc's
 * trap is an event), -1. */
static int step(struct erp *e, struct erp_thread *t, struct user_regs_struct *regs)
{
	struct insn_info info;
	if (erp_classify(e, regs->rip, &info) < 0)
		return -1;
	if (insn_kind_enters_kernel(info.kind))
		return 0;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) < 0)
		return erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
	return stepped(e, t, regs);
}

/* Not inside a REP string instruction (see above): stepped on past it.
 * 1 (regs), 0 the stretch ended first, -1. */
static int off_rep(struct erp *e, struct erp_thread *t, struct user_regs_struct *regs)
{
	for (int i = 0; i < WINDOW; i++) {
		struct insn_info info;
		if (erp_classify(e, regs->rip, &info) < 0)
			return -1;
		if (!info.rep)
			return 1;
		int rc = step(e, t, regs);
		if (rc != 1)
			return rc;
	}
	return 0;
}

/* From regs (where the timer stopped t, about ran_ns into its stretch:
 * the time it was let run, not the wall time until the stop, which a
 * loaded machine stretches by milliseconds while the thread waits for
 * the CPU) on to a cold PC; 1 there (regs), 0 none found before the
 * stretch's end, -1. */
static int to_cold_pc(struct erp *e, struct erp_thread *t, uint64_t ran_ns,
		      struct user_regs_struct *regs, uint64_t end_pc)
{
	uint64_t before = ran_ns * NATIVE_INSNS_PER_NS + 1;
	uint64_t most = (uint64_t)MAX_HITS * WINDOW / before;
	if (most == 0)
		/* No PC is rare enough to tell in a window: the stretch is
		 * one long loop (a computation gdb's Ctrl-C stopped in). The
		 * point stays in it, where a replay finds it as it finds the
		 * recorder's points in a hot loop, by how its passes go
		 * (event_skip.c), not by a trap at each; stepping the stretch
		 * instead takes hours. */
		return off_rep(e, t, regs);
	struct pc_counts *c = calloc(1, sizeof *c);
	if (!c)
		return erp_fail(e, "out of memory");
	int rc = 1;
	for (int i = 0; i < WINDOW && rc == 1; i++) {
		(*count_of(c, regs->rip, true))++;
		rc = regs->rip == end_pc ? 0 : step(e, t, regs);
	}
	for (int i = 0; i < WINDOW && rc == 1; i++) {
		uint32_t *n = count_of(c, regs->rip, false);
		struct insn_info info;
		if (regs->rip == end_pc)
			rc = 0; /* maybe the point the stretch ends at (below) */
		else if (erp_classify(e, regs->rip, &info) < 0)
			rc = -1;
		else if ((n ? *n : 1) <= most && !info.rep)
			break;
		else if (i + 1 == WINDOW)
			rc = 0;
		else
			rc = step(e, t, regs);
	}
	free(c);
	return rc;
}

int erp_describe(struct erp *e, struct erp_thread *t, const struct user_regs_struct *regs,
		 uint64_t pos, uint64_t ran_ns, struct trace_state *out,
		 uint8_t sp[STATE_RECORD_SP_LEN])
{
	struct state_digest d;
	char why[256];
	if (state_digest_take(e->pid, t->tid, e->memfd, regs, NULL, &d, why, sizeof why) < 0)
		return erp_fail(e, "thread %d: cannot describe where it stands: %s",
				(int)t->rec_tid, why);
	state_record_fill(out, t->rec_tid, pos, regs, &d, ran_ns);
	state_record_stack(out, e->memfd, sp);
	return 1;
}

/* t's place (regs), reached t0 after the stretch began, as the point
 * where a tail begins. */
static int describe(struct erp *e, struct erp_thread *t, const struct user_regs_struct *regs,
		    uint64_t t0, struct trace_state *out, uint8_t sp[STATE_RECORD_SP_LEN])
{
	return erp_describe(e, t, regs, e->tail_from, erp_now_ns() - t0 + 1, out, sp);
}

/* The place of erp_near_state before t's STATE point next (none: 0),
 * described as a point. */
/* The STATE point t's stretch ends at, or NULL (it ends at a syscall or a
 * signal, which stops the thread by itself). */
static const struct trace_state *ends_at_state(const struct erp_thread *t)
{
	return t->next < t->nev && t->ev[t->next].kind == ERP_STATE ? t->ev[t->next].rec : NULL;
}

static int near_state(struct erp *e, struct erp_thread *t, struct trace_state *out,
		      uint8_t sp[STATE_RECORD_SP_LEN])
{
	const struct trace_state *end = ends_at_state(t);
	if (!end)
		return 0;
	uint64_t t0 = erp_now_ns();
	struct user_regs_struct regs;
	int rc = erp_near_state(e, t, end, &regs);
	if (rc <= 0)
		return rc;
	return describe(e, t, &regs, t0, out, sp);
}

int erp_take_point(struct erp *e, uint64_t after_ns, struct trace_state *out,
		   uint8_t sp[STATE_RECORD_SP_LEN])
{
	if (!e->held_at_tail || e->nthreads != 1)
		return erp_fail(e, "no thread is held where a tail begins");
	struct erp_thread *t = &e->threads[0];
	if (after_ns == 0)
		return near_state(e, t, out, sp);
	struct user_regs_struct regs;
	uint64_t t0 = erp_now_ns();
	/* Stopped by its CPU-time timer after after_ns of its own run:
	 * the tracer's stop after a wall-clock wait came hundreds of us late
	 * (python3's last stretch, 380 us long: asked for 270, the thread
	 * ran 480 and reached its syscall), and every late stop leaves more
	 * of the stretch to step. The tracer's stop is there where the
	 * kernel has no such timer, and much later as a backstop
	 * (erp_backstop_ns). */
	/* A stretch that ends at a STATE point does not stop the thread there
	 * by itself (a syscall or a signal would): its PC is watched, and a
	 * run that reaches it first (maybe the point) takes none. A point
	 * taken past it, in the next stretch, was found nowhere in this one
	 * (a live recording's present after printf: the timer stopped the
	 * thread in exit's code). */
	const struct trace_state *end = ends_at_state(t);
	uint64_t end_pc = end ? end->regs[16] : 0;
	if (end && (inf_dr_write(t->tid, 0, end_pc) < 0 ||
		    inf_dr_write(t->tid, 7, e->search_dr7 | 1) < 0))
		return erp_fail(e, "thread %d: no hardware breakpoint for its STATE point",
				(int)t->rec_tid);
	struct erp_timed tm;
	erp_timed_begin(t, &tm);
	uint64_t wall = tm.guard >= 0 ? erp_backstop_ns(after_ns) : after_ns;
	if (!t->clock_open) {
		t->clock = cpu_clock_open(t->tid);
		t->clock_open = true;
	}
	uint64_t c0 = cpu_clock_read(t->clock);
	int ws, rc = erp_run_for(e, t, wall, tm.guard, after_ns, &ws);
	uint64_t c1 = cpu_clock_read(t->clock);
	e->took_cpu_ns = c0 && c1 > c0 ? c1 - c0 : 0;
	if (end) {
		inf_dr_write(t->tid, 7, e->search_dr7);
		inf_dr_clear_dr6(t->tid);
	}
	if (erp_timed_end(e, t, &tm, rc > 0) < 0)
		return -1;
	if (rc <= 0)
		return rc;
	if (erp_get_regs(e, t, &regs) < 0)
		return -1;
	if ((rc = to_cold_pc(e, t, after_ns, &regs, end ? end_pc : UINT64_MAX)) <= 0)
		return rc;
	return describe(e, t, &regs, t0, out, sp);
}
