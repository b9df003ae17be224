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
 * cannot find again (the CPU resumes it with RF set).
 * A loop longer than both windows has no such PC in them: the thread
 * then runs natively to where the loop is left (loop_exits), a PC the
 * window never saw: a store after a computation of millions of passes,
 * the piece before it began with the stretch (seconds of stepping) where
 * no point was found. For a point before a hit (leave_loop) that is done
 * as soon as the first window shows a loop: the later the better. */
#define WINDOW 4000
#define MAX_HITS 5000
#define NATIVE_INSNS_PER_NS 3
/* A PC passed this often in the first window: the thread is in a loop. */
#define LOOPING 8

/* Both windows' PCs, at most 2 * WINDOW + 1 of them: the table never
 * fills up. */
#define SLOTS (4 * WINDOW)

struct pc_counts {
	uint64_t pc[SLOTS];
	uint32_t n[SLOTS];
};

static uint32_t *count_of(struct pc_counts *c, uint64_t pc, bool add)
{
	size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 40) % SLOTS;
	while (c->n[i] && c->pc[i] != pc)
		i = (i + 1) % SLOTS;
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

/* Where the loop that the windows ran through (the PCs counted in c) is
 * left: the successors of its conditional branches that they never saw,
 * in exits. How many (0: none, or more than max), or -1. */
static int loop_exits(struct erp *e, struct pc_counts *c, uint64_t *exits, int max)
{
	int n = 0;
	for (size_t i = 0; i < SLOTS; i++) {
		struct insn_info info;
		if (!c->n[i])
			continue;
		if (erp_classify(e, c->pc[i], &info) < 0)
			return -1;
		if (info.kind != INSN_COND)
			continue;
		uint64_t next[2] = {info.target, c->pc[i] + info.len};
		for (int j = 0; j < 2; j++) {
			bool seen = count_of(c, next[j], false) != NULL;
			for (int k = 0; k < n && !seen; k++)
				seen = exits[k] == next[j];
			if (seen)
				continue;
			if (n == max)
				return 0;
			exits[n++] = next[j];
		}
	}
	return n;
}

/* In a loop the windows saw (c): on to where it is left (loop_exits,
 * run_to_exit). 1 there, 0 the stretch's end came first, 2 nothing done
 * (no exit to watch, or more than the debug registers hold), -1. */
static int leave(struct erp *e, struct erp_thread *t, struct pc_counts *c, uint64_t end_pc,
		 struct user_regs_struct *regs);

/* On natively from where t stands to the first of the n exits (a debug
 * register each, DR1-DR3: no search's points are armed; an int3 each
 * where the registers do not trap), end_pc (the STATE point the stretch
 * ends at, UINT64_MAX: none) watched in DR0 as erp_take_point does. 1 at an exit (regs; RF cleared, as a step would
 * leave it, for the place's description), 0 the stretch's end came
 * first (its STATE point's PC, its syscall, a signal), -1. */
/* The same where the debug registers do not trap: int3s (event_soft.c). */
static int run_to_exit_soft(struct erp *e, struct erp_thread *t, const uint64_t *exits, int n,
			    uint64_t end_pc, struct user_regs_struct *regs)
{
	uint64_t pcs[4];
	int np = 0, st, rc = 0;
	for (int i = 0; i < n && i < 3; i++)
		pcs[np++] = exits[i];
	if (end_pc != UINT64_MAX)
		pcs[np++] = end_pc;
	if (erp_soft_run_to(e, t, pcs, np, &st) < 0 || erp_get_regs(e, t, regs) < 0)
		return -1;
	if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && regs->rip != end_pc)
		for (int i = 0; i < n && rc == 0; i++)
			rc = regs->rip == exits[i];
	if (rc == 1) {
		regs->eflags &= ~0x10000ull;
		if (erp_set_regs(e, t, regs) < 0)
			return -1;
	}
	return rc;
}

static int run_to_exit(struct erp *e, struct erp_thread *t, const uint64_t *exits, int n,
		       uint64_t end_pc, struct user_regs_struct *regs)
{
	if (!inf_dr_traps())
		return run_to_exit_soft(e, t, exits, n, end_pc, regs);
	uint64_t dr7 = end_pc != UINT64_MAX ? 1 : 0;
	for (int i = 0; i < n; i++) {
		if (inf_dr_write(t->tid, 1 + i, exits[i]) < 0)
			return erp_fail(e, "thread %d: no hardware breakpoint for a loop's exit: %s",
					(int)t->rec_tid, inf_dr_strerror(errno));
		dr7 |= inf_dr7_slot(1 + i, DR_EXEC, 1);
	}
	int st, rc = 0;
	if ((end_pc != UINT64_MAX && inf_dr_write(t->tid, 0, end_pc) < 0) ||
	    inf_dr_write(t->tid, 7, dr7) < 0)
		return erp_fail(e, "thread %d: no hardware breakpoint for a loop's exit: %s",
				(int)t->rec_tid, inf_dr_strerror(errno));
	if (erp_resume(e, t, PTRACE_SYSCALL, 0, &st) < 0 || erp_get_regs(e, t, regs) < 0)
		rc = -1;
	else if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && regs->rip != end_pc)
		for (int i = 0; i < n && rc == 0; i++)
			rc = regs->rip == exits[i];
	inf_dr_write(t->tid, 7, e->search_dr7);
	inf_dr_clear_dr6(t->tid);
	if (rc == 1 && (regs->eflags & 0x10000)) {
		regs->eflags &= ~0x10000ull;
		if (erp_set_regs(e, t, regs) < 0)
			return -1;
	}
	return rc;
}

static int leave(struct erp *e, struct erp_thread *t, struct pc_counts *c, uint64_t end_pc,
		 struct user_regs_struct *regs)
{
	uint64_t exits[3];
	int n = e->nsearch ? 0 : loop_exits(e, c, exits, 3);
	if (n < 0)
		return -1;
	/* The loop may be left at the end's PC (a breakpoint right after
	 * it): no point between the two, the loop's PCs are the latest. */
	for (int i = 0; i < n; i++)
		if (exits[i] == end_pc)
			return 2;
	return n == 0 ? 2 : run_to_exit(e, t, exits, n, end_pc, regs);
}

/* From regs (where the timer stopped t, about ran_ns into its stretch:
 * the time it was let run, not the wall time until the stop, which a
 * loaded machine stretches by milliseconds while the thread waits for
 * the CPU) on to a cold PC; 1 there (regs), 0 none found before the
 * stretch's end, -1. */
static int to_cold_pc(struct erp *e, struct erp_thread *t, uint64_t ran_ns,
		      struct user_regs_struct *regs, uint64_t end_pc, bool leave_loop)
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
	/* For a point before a hit, the later the better: in a loop whose
	 * PCs do not hold the hit's, where the loop is left, however rare
	 * the loop's own PCs are. */
	bool left = false;
	uint32_t *here = rc == 1 ? count_of(c, regs->rip, false) : NULL;
	if (leave_loop && here && *here >= LOOPING && !count_of(c, end_pc, false)) {
		rc = leave(e, t, c, end_pc, regs);
		left = rc == 1;
		rc = rc == 2 ? 1 : rc;
	}
	for (int i = 0; i < WINDOW && rc == 1; i++) {
		/* Counted on for the loop's exits (below); a PC's first pass
		 * here is judged by the first window's count alone. */
		uint32_t *n = count_of(c, regs->rip, true);
		struct insn_info info;
		if (regs->rip == end_pc) {
			rc = 0; /* maybe the point the stretch ends at (below) */
			break;
		}
		if (erp_classify(e, regs->rip, &info) < 0) {
			rc = -1;
			break;
		}
		if ((*n ? *n : 1) <= most && !info.rep)
			break;
		if (left) {
			rc = 0; /* a REP instruction where the loop is left */
			break;
		}
		(*n)++;
		if (i + 1 < WINDOW) {
			rc = step(e, t, regs);
			continue;
		}
		/* No PC rare enough in either window: where the loop is
		 * left, for a tail too. Else the tail began with the
		 * stretch, a program's last computation stepped whole
		 * before the first move (a loop of 7 M instructions
		 * before a write: 13 s, against 2,392 instructions from
		 * its exit). */
		rc = leave(e, t, c, end_pc, regs);
		if (rc == 2)
			rc = 0;
		else if (rc == 1) {
			left = true; /* at the exit, a PC the windows never saw */
			i = -1;
		}
	}
	free(c);
	return rc;
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

int erp_take_point(struct erp *e, uint64_t after_ns, bool leave_loop, struct trace_state *out,
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
	if (end && erp_point_arm(e, t, end_pc) < 0)
		return -1;
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
	e->took_cpu_ns = t->clock >= 0 && c1 > c0 ? c1 - c0 : 0;
	if (end) {
		erp_point_disarm(e, t);
		inf_dr_clear_dr6(t->tid);
	}
	if (erp_timed_end(e, t, &tm, rc > 0) < 0)
		return -1;
	if (rc <= 0)
		return rc;
	if (erp_get_regs(e, t, &regs) < 0)
		return -1;
	if ((rc = to_cold_pc(e, t, after_ns, &regs, end ? end_pc : UINT64_MAX, leave_loop)) <= 0)
		return rc;
	return describe(e, t, &regs, t0, out, sp);
}
