/* Event replay, stepped: one thread on to its next stop of interest (the
 * entry of a syscall, a signal, a STATE point), every instruction it
 * completes handed to the observer, as the history is made.
 *
 * With the block stepper (the default) the thread runs each basic block
 * natively (block_cache.h) to an int3 at its end (block_step.h), and the
 * control transfer there is folded into the next run when its target is
 * known (block_successor), executed from the registers when it is a jump
 * back into its own block (block_emulate), else single-stepped: one stop
 * per dynamic branch instead of one per instruction, as the sw recorder
 * does. The int3 is safe here: a replay runs one thread at a time, and
 * nothing reads the code while it is in memory (it is lifted at the
 * stop, before anything else). A run that stops early (a fault, a
 * trapped rdtsc) stopped before the instruction at its IP, and the block
 * says which ones ran. A STATE point's PC cuts every run that would pass
 * it, so that its state is compared at each visit, as a single step
 * would. PTREV_SW_STEPPER=insn single-steps everything (both must make
 * the same history). */
#include "event_replay.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/ptrace_wait.h"
#include "ptrev/state_digest.h"

/* Thread tid's user time so far in ns (0 when it cannot be read). */
static uint64_t user_ns(pid_t pid, pid_t tid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	/* After the command name in parentheses: state (field 3) ...
	 * utime (field 14), in clock ticks. */
	const char *p = strrchr(buf, ')');
	unsigned long long ticks;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu", &ticks) != 1)
		return 0;
	long hz = sysconf(_SC_CLK_TCK);
	return ticks * (1000000000ull / (uint64_t)(hz > 0 ? hz : 100));
}

/* A replay that looks for a STATE point it never finds would run the
 * thread's loop for ever (the recorded state never comes: a divergence
 * that shows nowhere else). The recording says how long, at most, the
 * thread ran from its previous event to the point; the search gives up
 * when the replay has passed the point's PC more often than a loop of
 * two iterations per cycle at 4 GHz could have in that time, or has run
 * the thread's own code for twice that time and 0.1 s more, or (stepped)
 * has executed more instructions than that time could hold. Recordings
 * made before STATE records said how long: the whole recording's
 * duration, or a minute. -1 (with why) when it gave up. */
static int search_bounded(struct erp *e, struct erp_thread *t, const struct trace_state *st)
{
	uint64_t ran = st->ran_ns ? st->ran_ns
		     : e->td->complete ? e->td->end.duration_ns : 60000000000ull;
	if (t->search_for != t->next + 1) {
		t->search_for = t->next + 1;
		t->search_hits = 0;
		t->search_utime_ns = user_ns(e->pid, t->tid);
		t->search_insns = t->insns;
		t->search_traps = 0;
		pass_model_init(&t->model);
		t->skip_jumped = false;
		t->skip_rough = t->skip_let_go = false;
		t->skip_target = t->skip_asked = 0;
		t->skip_rate = 0;
		t->skip_futile = 0;
		t->skip_overhead = 0;
		t->skip_timed = false;
	}
	t->search_hits++;
	t->search_traps++;
	/* A point inside a hot loop costs a trap per pass (about 25 us
	 * here) that event_skip.c cannot let go: seconds to hours, with
	 * nothing to see meanwhile. Said at 2^17 traps and each doubling. */
	if (t->search_traps >= (1u << 17) && !(t->search_traps & (t->search_traps - 1)))
		fprintf(stderr, "ptrev: replay: thread %d's STATE point at %#llx (its event %zu) is "
			"not reached yet: passed its PC %llu times; the recorder stopped the thread "
			"inside a loop, and a replay finds the place by a trap at every pass since the "
			"thread's previous event (which, in the recording, ran %.1f ms before it)\n",
			(int)t->rec_tid, (unsigned long long)st->regs[16], t->next,
			(unsigned long long)t->search_hits, (double)ran / 1e6);
	bool over = t->search_hits > 8 * ran + 100000;
	/* Stepped, what it executed is counted: no more than 6 instructions
	 * a cycle at 4 GHz. */
	if (e->obs && t->insns - t->search_insns > 24 * ran + 1000000)
		over = true;
	/* Each trap costs the replay some user time of its own (the trap's
	 * way back, and whatever the tick-based accounting charges the thread
	 * for it): 100 us each is allowed for that. 1 us was too little: on
	 * a loaded machine (CI, tests in parallel) a thread that passed a
	 * hot loop's PC 5,120 times was charged more than 107 ms of user
	 * time, 21 us a pass, and the search gave up on a point it would
	 * have found. A loop that passes the PC that often is bounded by the
	 * count of passes above instead; this bound is for a thread that
	 * passes it rarely and runs its own code in between. */
	if (!over && t->search_traps % 256 == 0)
		over = user_ns(e->pid, t->tid) >
		       t->search_utime_ns + 2 * ran + t->search_traps * 100000 + 100000000;
	if (!over)
		return 0;
	/* Passes let go on an estimate may have held the point. */
	e->skip_missed = t->skip_let_go;
	return erp_fail(e, "replay diverged in thread %d before its event %zu: its STATE point "
			"at %#llx never came (passed there %llu times, and the recorded thread ran "
			"at most %.3f ms before it): the replay's state differs from the recording's "
			"where the state digest looks (include/ptrev/state_digest.h)",
			(int)t->rec_tid, t->next, (unsigned long long)st->regs[16],
			(unsigned long long)t->search_hits, (double)ran / 1e6);
}

/* Is t where the STATE record st says (state_digest.h)? 1, 0, or -1. */
/* The point's memory and registers put in place at its PC (t at regs):
 * the program's entry (server/record/event/event_entry.c), which the
 * thread passes once, after a loader that read other TSC values than the
 * recorded one's and may have left them in registers as in memory. RF,
 * the mark of a hit, stays as it is. 0, or -1. */
static int put_point_state(struct erp *e, struct erp_thread *t, const struct trace_state *st,
			   struct user_regs_struct *regs)
{
	uint64_t rf = regs->eflags & 0x10000ull;
	memcpy(regs, st->regs, sizeof *regs);
	regs->eflags = (regs->eflags & ~0x10000ull) | rf;
	if (erp_set_regs(e, t, regs) < 0)
		return -1;
	for (size_t i = 0; i < st->nmem; i++)
		if (pwrite(e->memfd, st->mem[i].bytes, st->mem[i].len, (off_t)st->mem[i].addr) !=
		    (ssize_t)st->mem[i].len)
			return erp_fail(e, "thread %d: cannot put the recorded memory at %#llx in "
					"place: %s", (int)t->rec_tid,
					(unsigned long long)st->mem[i].addr, strerror(errno));
	return 0;
}

int erp_at_state(struct erp *e, struct erp_thread *t, const struct trace_state *st,
		 struct user_regs_struct *regs)
{
	struct user_regs_struct want;
	memcpy(&want, st->regs, sizeof want);
	if (regs->rip != want.rip)
		return 0;
	if (search_bounded(e, t, st) < 0)
		return -1;
	struct state_digest d = {(st->flags & TRACE_STATE_LIVE_STACKS ? STATE_DIGEST_LIVE_STACKS : 0) |
				 (st->flags & TRACE_STATE_NO_LOADER_DATA ? STATE_DIGEST_NO_LOADER_DATA
									 : 0) |
				 (st->flags & TRACE_STATE_NO_CPUID_COPY ? STATE_DIGEST_NO_CPUID_COPY : 0),
				 st->vec_hash, st->stack_lo, st->stack_hi, st->stack_hash,
				 st->mem_bytes, st->mem_hash, st->skip, st->nskip};
	/* Registers first, without a syscall: most hits stop there. */
	struct user_regs_struct a = *regs, b = want;
	if (st->flags & TRACE_STATE_AT_SYSCALL) {
		/* Clobbered by the syscall instruction the recorder undid. */
		want.rcx = b.rcx = a.rcx;
		want.r11 = b.r11 = a.r11;
	}
	a.eflags &= ~0x10100ull;
	b.eflags &= ~0x10100ull;
	a.orig_rax = b.orig_rax = 0;
	if (st->nmem) {
		if (put_point_state(e, t, st, regs) < 0)
			return -1;
	} else if (memcmp(&a, &b, sizeof a) != 0) {
		return 0;
	}
	char why[256];
	int m = state_digest_matches(e->pid, t->tid, e->memfd, regs, &want, &d, why, sizeof why);
	if (m < 0)
		return erp_fail(e, "thread %d: %s", (int)t->rec_tid, why);
	return m;
}

/* A completed or partly completed (REP) instruction for the observer. */
int erp_report_insn(struct erp *e, struct erp_thread *t, uint64_t ip,
		    const struct insn_info *info, uint64_t next)
{
	if (e->obs->insn(e, t, ip, info, next) < 0)
		return -1;
	if (erp_insn_counts(info, ip, next))
		t->insns++;
	return 0;
}

static long read_code(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct erp *e = arg;
	return (long)pread(e->memfd, buf, len, (off_t)addr);
}

int erp_step_mode_default(void)
{
	const char *v = getenv("PTREV_SW_STEPPER");
	return v && strcmp(v, "insn") == 0 ? ERP_STEP_INSN : ERP_STEP_BLOCK;
}

/* The block stepper, made at first use; false when single steps it is. */
static bool blocks(struct erp *e)
{
	if (e->step_mode == ERP_STEP_UNSET)
		e->step_mode = erp_step_mode_default();
	if (e->step_mode != ERP_STEP_BLOCK)
		return false;
	if (!e->bcache && !(e->bcache = block_cache_new(read_code, e)))
		e->step_mode = ERP_STEP_INSN;
	char err[256];
	if (e->bcache && !e->bstep && !(e->bstep = bstep_new(e->pid, err, sizeof err)))
		e->step_mode = ERP_STEP_INSN;
	return e->step_mode == ERP_STEP_BLOCK;
}

/* Run t natively from where it stands (regs) to x->ip[n], starting with
 * the control transfer at regs->rip when fold (then x is the block it
 * goes to). Reports what ran; regs becomes the state at the stop. 1 when
 * it got there, 0 when a signal stopped it first (*ws its status), 1 with
 * nothing done when the run could not start, -1 on failure. */
static int run_block(struct erp *e, struct erp_thread *t, const struct block *x, uint32_t n,
		     const struct insn_info *fold, struct user_regs_struct *regs, int *ws)
{
	uint64_t from = regs->rip;
	if (bstep_run(e->bstep, t->tid, x->ip[n], BSTEP_INT3, -1, 0) < 0)
		return 2;
	if (ptrace_wait_task(t->tid, ws) < 0)
		return erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
	if (erp_count_stop(e) < 0)
		return -1;
	/* A search's data breakpoint (event_watch.c's reads) stops a run
	 * right after an instruction inside the block: counted, what ran is
	 * reported, and the stepping goes on from there. */
	int hit = erp_search_hit(e, t, *ws, false);
	if (hit < 0)
		return -1;
	if (WIFEXITED(*ws) || WIFSIGNALED(*ws)) {
		bstep_stopped(e->bstep, t->tid, *ws, regs);
		t->gone = true;
		return erp_fail(e, "the replay of thread %d ended unexpectedly in a native run "
				"after its event %zu", (int)t->rec_tid, t->next);
	}
	struct user_regs_struct now;
	int reached;
	if (erp_get_regs(e, t, &now) < 0 || (reached = bstep_stopped(e->bstep, t->tid, *ws, &now)) < 0)
		return erp_fail(e, "replay thread %d: registers after a run: %s", (int)t->tid,
				strerror(errno));
	if (fold) {
		if (now.rip == from) {
			*regs = now; /* stopped before the transfer */
			return 0;
		}
		if (erp_report_insn(e, t, from, fold, x->ip[0]) < 0)
			return -1;
	}
	int k = block_index_of(x, now.rip);
	if (k < 0 || (uint32_t)k > n)
		return erp_fail(e, "replay thread %d stopped at %#llx, outside its run %#llx..%#llx",
				(int)t->rec_tid, (unsigned long long)now.rip,
				(unsigned long long)x->ip[0], (unsigned long long)x->ip[n]);
	for (int i = 0; i < k; i++)
		if (erp_report_insn(e, t, x->ip[i], &x->insn[i], x->ip[i + 1]) < 0)
			return -1;
	*regs = now;
	return reached || hit ? 1 : 0;
}

/* How many of b's instructions a run may take: all, or up to the STATE
 * point's PC (pc, 0 for none) when it is one of them past the first. */
static uint32_t cut_at(const struct block *b, uint64_t pc)
{
	for (uint32_t i = 1; pc && i < b->n; i++)
		if (b->ip[i] == pc)
			return i;
	return b->n;
}

/* Standing at terminator x (regs): run it and the block it goes to in one
 * go. 1/0/-1 as run_block; 2 when it cannot fold. */
static int fold(struct erp *e, struct erp_thread *t, const struct block *x, uint64_t pc,
		struct user_regs_struct *regs, int *ws)
{
	uint64_t next;
	const struct block *sb;
	if (!block_successor(x, regs, read_code, e, &next) || next == pc ||
	    !(sb = block_cache_get(e->bcache, next)))
		return 2;
	struct block y = *sb;
	uint32_t n = cut_at(&y, pc);
	if (n == 0)
		return 2;
	/* One address twice in a run would make a stop there ambiguous; an
	 * int3 inside the transfer would change it before it runs. */
	for (uint32_t i = 0; i <= n; i++)
		if (y.ip[i] == regs->rip)
			return 2;
	if (y.ip[n] > regs->rip && y.ip[n] < regs->rip + x->insn[0].len)
		return 2;
	return run_block(e, t, &y, n, &x->insn[0], regs, ws);
}

/* A jump back into its own block, from the registers. 1 done, 0 not. */
static int emulate(struct erp *e, struct erp_thread *t, const struct block *x,
		   struct user_regs_struct *regs)
{
	struct user_regs_struct r = *regs;
	if (!block_emulate(x, &r))
		return 0;
	if (erp_set_regs(e, t, &r) < 0 || erp_report_insn(e, t, regs->rip, &x->insn[0], r.rip) < 0)
		return -1;
	*regs = r;
	return 1;
}

/* Natively as far as blocks go from regs. 1: moved on (regs is where it
 * stands now), 0: a signal stopped it (*ws), 2: single-step the next
 * instruction, -1. */
static int block_move(struct erp *e, struct erp_thread *t, uint64_t pc,
		      struct user_regs_struct *regs, int *ws)
{
	const struct block *b = block_cache_get(e->bcache, regs->rip);
	if (!b)
		return 2;
	if (b->n > 0) {
		struct block x = *b;
		return run_block(e, t, &x, cut_at(&x, pc), NULL, regs, ws);
	}
	struct block x = *b;
	if (!x.has_term || insn_kind_enters_kernel(x.insn[0].kind) || x.insn[0].kind == INSN_FAR)
		return 2;
	int rc = fold(e, t, &x, pc, regs, ws);
	if (rc != 2)
		return rc;
	rc = emulate(e, t, &x, regs);
	return rc < 0 ? -1 : rc ? 1 : 2;
}

/* Is t's next event a signal delivered before its next syscall? */
static bool signal_first(const struct erp_thread *t)
{
	if (t->next >= t->nev || t->ev[t->next].kind != ERP_SIGNAL)
		return false;
	const struct trace_signal *g = t->ev[t->next].rec;
	return g->where == TRACE_SIG_BEFORE_SYSCALL;
}

static bool syscall_insn(struct erp *e, uint64_t ip)
{
	struct insn_info info;
	return erp_classify(e, ip, &info) == 0 && info.kind == INSN_SYSCALL;
}

int erp_step_to_stop(struct erp *e, struct erp_thread *t, const struct trace_state *st,
		     struct erp_stop *out)
{
	struct insn_info info;
	uint64_t pc = st ? st->regs[16] : 0; /* rip */
	int ws;
	if (erp_get_regs(e, t, &out->regs) < 0)
		return -1;
	for (;;) {
		uint64_t ip = out->regs.rip;
		/* Not before a syscall instruction that a signal comes before:
		 * the instruction is undone, the signal delivered first. */
		if (e->obs->ready && !(signal_first(t) && syscall_insn(e, ip)) &&
		    e->obs->ready(e, t) < 0)
			return -1;
		if (st && ip == pc) {
			int m = erp_at_state(e, t, st, &out->regs);
			if (m < 0)
				return -1;
			if (m) {
				out->kind = AT_STATE;
				return 0;
			}
		}
		/* Not at a STATE point before what it puts in place (its
		 * memory, gdb's changes there): the copy would lack it. */
		erp_mid_copy(e, t);
		int moved = 2;
		if (blocks(e) && (moved = block_move(e, t, pc, &out->regs, &ws)) < 0)
			return -1;
		if (moved == 1)
			continue;
		if (moved == 2) {
			if (erp_classify(e, ip, &info) < 0)
				return -1;
			/* Never step into a syscall: stop at its entry. */
			if (info.kind == INSN_SYSCALL) {
				t->presys_rcx = out->regs.rcx;
				t->presys_r11 = out->regs.r11;
				t->presys_known = true;
			}
			if (erp_resume(e, t, info.kind == INSN_SYSCALL ? PTRACE_SYSCALL
								   : PTRACE_SINGLESTEP, 0, &ws) < 0)
				return -1;
			if (WSTOPSIG(ws) == (SIGTRAP | 0x80)) {
				out->kind = AT_SYSCALL;
				return erp_get_regs(e, t, &out->regs);
			}
		}
		siginfo_t si;
		memset(&si, 0, sizeof si);
		ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si);
		if (moved == 2 && WSTOPSIG(ws) == SIGTRAP && si.si_code != SI_KERNEL && si.si_code > 0) {
			if (erp_get_regs(e, t, &out->regs) < 0 ||
			    erp_report_insn(e, t, ip, &info, out->regs.rip) < 0)
				return -1;
			continue;
		}
		out->kind = AT_SIGNAL;
		out->sig = WSTOPSIG(ws);
		out->si = si;
		return moved == 2 ? erp_get_regs(e, t, &out->regs) : 0;
	}
}
