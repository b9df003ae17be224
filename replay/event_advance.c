/* Event replay: running one thread on to its next event and through it.
 * Between two events the thread runs its own code deterministically, at
 * native speed (a run to the next syscall entry or signal; a STATE point
 * found with a hardware breakpoint at its PC, the state compared at every
 * hit) or single-stepped, each completed instruction handed to the
 * observer, which is how the history is made. What it meets must be the
 * recorded event; anything else is a divergence, reported with where. */
#include "event_replay.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "ptrev/cpu_timer.h"
#include "ptrev/debugregs.h"
#include "gdb_write.h"

static bool stepping(const struct erp *e)
{
	return e->obs != NULL;
}

/* Native: on to the next syscall entry or signal. */
static int run_to_stop(struct erp *e, struct erp_thread *t, struct erp_stop *out)
{
	int ws;
	if (erp_resume(e, t, PTRACE_SYSCALL, 0, &ws) < 0)
		return -1;
	out->kind = WSTOPSIG(ws) == (SIGTRAP | 0x80) ? AT_SYSCALL : AT_SIGNAL;
	out->sig = WSTOPSIG(ws);
	memset(&out->si, 0, sizeof out->si);
	ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &out->si);
	return erp_get_regs(e, t, &out->regs);
}

/* Native: on to the STATE point, with a hardware breakpoint at its PC and
 * the state compared at every hit (the point itself may be where t
 * stands already). */
static int run_to_state(struct erp *e, struct erp_thread *t, const struct trace_state *st,
			struct erp_stop *out)
{
	uint64_t pc = st->regs[16]; /* rip */
	int ws, m;
	if (erp_get_regs(e, t, &out->regs) < 0 || (m = erp_at_state(e, t, st, &out->regs)) < 0)
		return -1;
	if (m) {
		out->kind = AT_STATE;
		return 0;
	}
	/* Standing on pc, the pass there is counted already (erp_at_state):
	 * the breakpoint is not to see it again. */
	if (out->regs.rip == pc && erp_pass_seen(e, t, &out->regs) < 0)
		return -1;
	if (erp_point_arm(e, t, pc) < 0)
		return -1;
	for (;;) {
		if (erp_resume_to_pass(e, t, pc, &ws) < 0)
			return -1;
		if (WSTOPSIG(ws) != SIGTRAP || erp_get_regs(e, t, &out->regs) < 0 ||
		    out->regs.rip != pc) {
			erp_point_disarm(e, t);
			/* Passes were let go uncounted: the point may have been
			 * one of them (event_skip.c). */
			e->skip_missed = t->skip_target != 0 || t->skip_let_go;
			return erp_fail(e, "replay diverged in thread %d before its event %zu (a STATE "
					"point at %#llx): %s", (int)t->rec_tid, t->next,
					(unsigned long long)pc,
					WSTOPSIG(ws) == (SIGTRAP | 0x80) ? "a syscall came first"
									  : "a signal came first");
		}
		if (erp_pass_seen(e, t, &out->regs) < 0)
			return -1;
		/* At each pass that is not the point, passes the registers say
		 * cannot be it may be let go (event_skip.c). */
		while ((m = erp_at_state(e, t, st, &out->regs)) == 0 &&
		       (m = erp_skip_passes(e, t, st, &out->regs)) == 1)
			;
		if (m < 0)
			return -1;
		if (m)
			break;
	}
	if (erp_point_disarm(e, t) < 0)
		return -1;
	/* Arrived by a hit, RF is set: the recorded thread had none. */
	out->regs.eflags &= ~0x10000ull;
	out->kind = AT_STATE;
	return erp_set_regs(e, t, &out->regs);
}

static const char *stop_name(const struct erp_stop *s, char *buf, size_t len)
{
	if (s->kind == AT_SYSCALL)
		snprintf(buf, len, "syscall %llu at %#llx", (unsigned long long)s->regs.orig_rax,
			 (unsigned long long)s->regs.rip - 2);
	else
		snprintf(buf, len, "signal %d at %#llx", s->sig, (unsigned long long)s->regs.rip);
	return buf;
}

static int diverged(struct erp *e, struct erp_thread *t, const char *want, const struct erp_stop *s)
{
	char got[96];
	return erp_fail(e, "replay diverged in thread %d before its event %zu (%s): %s came first",
			(int)t->rec_tid, t->next, want, stop_name(s, got, sizeof got));
}

/* On to the next stop of interest, stepped or native. */
static int to_stop(struct erp *e, struct erp_thread *t, const struct trace_state *st,
		   struct erp_stop *out)
{
	if (stepping(e)) {
		bool to_state = st || (t->next < t->nev && t->ev[t->next].kind == ERP_STATE);
		if (!to_state && e->obs->before_stretch && e->obs->before_stretch(e, t) < 0)
			return -1;
		return erp_step_to_stop(e, t, st, out);
	}
	if (!t->clock_open) {
		t->clock = cpu_clock_open(t->tid);
		t->clock_open = true;
	}
	uint64_t t0 = erp_now_ns(), c0 = cpu_clock_read(t->clock);
	int rc = st ? run_to_state(e, t, st, out) : run_to_stop(e, t, out);
	uint64_t c1 = cpu_clock_read(t->clock);
	if (t->next < t->nev) {
		t->ev[t->next].native_ns += erp_now_ns() - t0;
		if (t->clock >= 0 && c1 > c0)
			t->ev[t->next].native_cpu_ns += c1 - c0;
	}
	return rc;
}

static int event_here(struct erp *e, struct erp_thread *t)
{
	return stepping(e) ? e->obs->event(e, t, t->next) : 0;
}

/* The program is about to end (exit_group, a fatal signal in t): every
 * other thread's history ends where it stands. */
static int end_others(struct erp *e, struct erp_thread *t)
{
	for (size_t i = 0; i < e->nthreads; i++)
		if (&e->threads[i] != t && erp_end_here(e, &e->threads[i]) < 0)
			return -1;
	return 0;
}

/* The syscall of event next, t at its entry: completed. */
static int complete_syscall(struct erp *e, struct erp_thread *t, const struct user_regs_struct *entry)
{
	const struct trace_syscall *s = t->ev[t->next].rec;
	struct insn_info info;
	uint64_t ip = entry->rip - 2;
	if (stepping(e) && erp_classify(e, ip, &info) < 0)
		return -1;
	if (s->nr == SYS_exit_group && end_others(e, t) < 0)
		return -1;
	if (erp_syscall(e, t, s, entry) < 0)
		return -1;
	t->at_entry = false;
	t->presys_known = false; /* the next syscall's are its own */
	t->next++;
	if (!stepping(e))
		return 0;
	if (t->gone || e->exited) {
		t->ended = true;
		return erp_report_insn(e, t, ip, &info, 0) < 0 ? -1 : e->obs->end(e, t, 0);
	}
	struct user_regs_struct now;
	if (erp_get_regs(e, t, &now) < 0)
		return -1;
	return erp_report_insn(e, t, ip, &info, now.rip);
}

static int syscall_event(struct erp *e, struct erp_thread *t, bool to_point)
{
	struct erp_stop s;
	const struct trace_syscall *sc = t->ev[t->next].rec;
	if (to_stop(e, t, NULL, &s) < 0)
		return -1;
	if (s.kind != AT_SYSCALL || s.regs.orig_rax != sc->nr)
		return diverged(e, t, "a syscall", &s);
	if (event_here(e, t) < 0)
		return -1;
	t->at_entry = true;
	return to_point ? 0 : complete_syscall(e, t, &s.regs);
}

static int rdtsc_event(struct erp *e, struct erp_thread *t)
{
	const struct trace_rdtsc *r = t->ev[t->next].rec;
	struct erp_stop s;
	struct insn_info info;
	uint8_t b[3] = {0};
	if (to_stop(e, t, NULL, &s) < 0)
		return -1;
	uint64_t ip = s.regs.rip;
	pread(e->memfd, b, sizeof b, (off_t)ip);
	int len = b[0] == 0x0f && b[1] == 0x31 ? 2 : b[0] == 0x0f && b[1] == 0x01 && b[2] == 0xf9 ? 3 : 0;
	if (s.kind != AT_SIGNAL || s.sig != SIGSEGV || s.si.si_code != SI_KERNEL || !len ||
	    (len == 3) != r->is_rdtscp)
		return diverged(e, t, "rdtsc", &s);
	if (event_here(e, t) < 0 || (stepping(e) && erp_classify(e, ip, &info) < 0))
		return -1;
	s.regs.rax = (uint32_t)r->value;
	s.regs.rdx = r->value >> 32;
	if (r->is_rdtscp)
		s.regs.rcx = r->aux;
	s.regs.rip += (uint64_t)len;
	s.regs.eflags &= ~0x10000ull; /* the CPU clears RF after the instruction */
	if (erp_set_regs(e, t, &s.regs) < 0)
		return -1;
	t->next++;
	return stepping(e) ? erp_report_insn(e, t, ip, &info, s.regs.rip) : 0;
}

static int signal_event(struct erp *e, struct erp_thread *t, bool to_point)
{
	const struct trace_signal *g = t->ev[t->next].rec;
	struct erp_stop s;
	bool fault = false;
	switch (g->where) {
	case TRACE_SIG_SYNC:
		/* It recurs by itself: the thread's own instruction raises it. */
		if (to_stop(e, t, NULL, &s) < 0)
			return -1;
		if (s.kind != AT_SIGNAL || s.sig != g->signo)
			return diverged(e, t, "a signal of its own", &s);
		fault = true;
		break;
	case TRACE_SIG_BEFORE_SYSCALL:
		/* The thread runs on to its next syscall, whose entry is
		 * undone: the signal comes before it. */
		if (to_stop(e, t, NULL, &s) < 0)
			return -1;
		if (s.kind != AT_SYSCALL)
			return diverged(e, t, "the syscall a signal came before", &s);
		if (erp_undo_entry(e, t, &s.regs) < 0 || erp_get_regs(e, t, &s.regs) < 0)
			return -1;
		break;
	default:
		/* Right where the thread stands, after its previous event. */
		if (erp_get_regs(e, t, &s.regs) < 0)
			return -1;
		break;
	}
	if (to_point) {
		t->at_signal = true; /* stands where it is taken, not delivered */
		return 0;
	}
	if (event_here(e, t) < 0 || (stepping(e) && e->obs->interrupt(e, t, s.regs.rip) < 0))
		return -1;
	if (!g->handler_ip && end_others(e, t) < 0)
		return -1;
	if (erp_deliver(e, t, g, fault) < 0)
		return -1;
	t->next++;
	if (stepping(e) && !g->handler_ip) {
		t->ended = true;
		return e->obs->end(e, t, s.regs.rip);
	}
	return 0;
}

static int state_event(struct erp *e, struct erp_thread *t)
{
	struct erp_stop s;
	if (to_stop(e, t, t->ev[t->next].rec, &s) < 0)
		return -1;
	if (s.kind != AT_STATE)
		return diverged(e, t, "a STATE point", &s);
	if (event_here(e, t) < 0)
		return -1;
	t->next++;
	return 0;
}

/* gdb changed the program right after the event t just completed (set
 * var, call, jump): the same changes, in the same order. A change of the
 * PC is a jump the program did not make: a stepped run tells the observer
 * as it tells a signal's interruption. */
static int gdb_writes_here(struct erp *e, struct erp_thread *t)
{
	size_t lo = 0, hi = t->ngw;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->gw[mid]->pos < t->next)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < t->ngw && t->gw[i]->pos == t->next; i++) {
		const struct trace_gdb_write *g = t->gw[i];
		char why[256];
		uint64_t from;
		if (t->gone || e->exited)
			return erp_fail(e, "thread %d ended before gdb's change after its event %zu",
					(int)t->rec_tid, t->next - 1);
		if (gdb_write_apply(t->tid, e->memfd, g, &from, why, sizeof why) < 0)
			return erp_fail(e, "%s", why);
		if (from && stepping(e) && t->started && e->obs->interrupt(e, t, from) < 0)
			return -1;
	}
	return 0;
}

static int advance(struct erp *e, struct erp_thread *t, bool to_point);

int erp_advance(struct erp *e, struct erp_thread *t, bool to_point)
{
	size_t before = t->next;
	if (e->search_stop_nth && t == &e->threads[0] && t->next > e->search_stop_at) {
		e->search_passed = true;
		return erp_fail(e, "the stretch ended before the hit searched for");
	}
	if (advance(e, t, to_point) < 0) {
		erp_diverged_at(e, t);
		return -1;
	}
	return t->next > before && t->ngw ? gdb_writes_here(e, t) : 0;
}

static int advance(struct erp *e, struct erp_thread *t, bool to_point)
{
	if (t->gone || e->exited)
		return erp_fail(e, "thread %d ended before its event %zu", (int)t->rec_tid, t->next);
	if (t->at_signal)
		return erp_fail(e, "thread %d stands at its last signal", (int)t->rec_tid);
	if (t->at_entry) {
		if (to_point)
			return 0;
		if (stepping(e) && e->obs->ready && e->obs->ready(e, t) < 0)
			return -1;
		struct user_regs_struct entry;
		if (erp_get_regs(e, t, &entry) < 0)
			return -1;
		return complete_syscall(e, t, &entry);
	}
	if (t->next >= t->nev)
		return erp_fail(e, "thread %d has no event %zu", (int)t->rec_tid, t->next);
	switch (t->ev[t->next].kind) {
	case ERP_SYSCALL:
		return syscall_event(e, t, to_point);
	case ERP_RDTSC:
		return rdtsc_event(e, t);
	case ERP_SIGNAL:
		return signal_event(e, t, to_point);
	case ERP_STATE:
		return state_event(e, t);
	}
	return erp_fail(e, "unknown event");
}

int erp_near_state(struct erp *e, struct erp_thread *t, const struct trace_state *st,
		   struct user_regs_struct *regs)
{
	uint64_t pc = st->regs[16];
	int ws, m = 0;
	bool jumped = false;
	if (erp_point_arm(e, t, pc) < 0)
		return -1;
	while (!jumped) {
		if (erp_resume_to_pass(e, t, pc, &ws) < 0)
			return -1;
		if (WSTOPSIG(ws) != SIGTRAP || erp_get_regs(e, t, regs) < 0 || regs->rip != pc) {
			erp_point_disarm(e, t);
			return erp_fail(e, "replay diverged in thread %d before its event %zu (a "
					"STATE point at %#llx)", (int)t->rec_tid, t->next,
					(unsigned long long)pc);
		}
		if (erp_pass_seen(e, t, regs) < 0)
			return -1;
		if ((m = erp_at_state(e, t, st, regs)) != 0)
			break; /* the point itself (1): no place before it found */
		if ((m = erp_skip_passes(e, t, st, regs)) < 0)
			break;
		jumped = m == 1;
	}
	if (erp_point_disarm(e, t) < 0 || m < 0)
		return -1;
	if (!jumped)
		return 0;
	/* Arrived by a hit, RF is set: the place is told without it. */
	regs->eflags &= ~0x10000ull;
	return erp_set_regs(e, t, regs) < 0 ? -1 : 1;
}

/* A search's hit at the place t stands (regs), counted at this stop:
 * an instruction breakpoint there traps with the point's own (DR0),
 * before its instruction runs. */
static bool search_hit_here(const struct erp *e, const struct user_regs_struct *regs)
{
	if (!e->search_hits || e->search_hit_stop != e->stops)
		return false;
	for (size_t i = 0; i < e->nsearch; i++)
		if (e->search[i].kind == DR_EXEC && e->search[i].addr == regs->rip)
			return true;
	return false;
}

int erp_run_to_point(struct erp *e, struct erp_thread *t, const struct trace_state *st)
{
	struct erp_stop s;
	if (to_stop(e, t, st, &s) < 0)
		return -1;
	t->search_for = 0; /* the search for event next's own point starts anew */
	if (s.kind != AT_STATE)
		return diverged(e, t, "the point where its history begins", &s);
	if (search_hit_here(e, &s.regs)) {
		/* The history begins at a breakpoint (a piece that begins at
		 * a hit): going back from there never reports that place, so
		 * the hit there is not one before it. */
		e->search_hits = e->search_was_hits;
		e->search_last = e->search_was_last;
		e->search_last_run = e->search_was_last_run;
		e->search_nth = e->search_was_nth;
	}
	return 0;
}

int erp_advance_to_unrecorded(struct erp *e, struct erp_thread *t)
{
	struct erp_stop s;
	if (to_stop(e, t, NULL, &s) < 0)
		return -1;
	if (s.kind != AT_SYSCALL)
		return diverged(e, t, "the syscall the recording ended in", &s);
	t->in_unrecorded = true;
	return 0;
}

int erp_end_here(struct erp *e, struct erp_thread *t)
{
	struct user_regs_struct regs;
	if (!stepping(e) || !t->started || t->ended)
		return 0;
	t->ended = true;
	if (t->at_entry && !t->gone && !e->exited) {
		/* Cut short at the entry of a syscall (the thread order ends
		 * there): its instruction ran, the syscall did not return. As
		 * a recording that ends with the thread in a syscall: the
		 * instruction is its last, in a run of its own at the end. */
		struct insn_info info;
		if (erp_get_regs(e, t, &regs) < 0 || erp_classify(e, regs.rip - 2, &info) < 0 ||
		    erp_report_insn(e, t, regs.rip - 2, &info, 0) < 0 ||
		    e->obs->run(e, t, t->insns - 1, 1) < 0)
			return -1;
	}
	if (t->in_unrecorded && !t->gone && !e->exited) {
		/* At the entry of a syscall the log does not hold (it never
		 * returned): the instruction is not one of its history, the
		 * thread stands on it. Ending there (not "inside a syscall", ip
		 * 0, which made the PT end with an asynchronous stop at address
		 * 0) keeps the instructions before it decodable: the history
		 * lost the last block of every thread blocked in a syscall at a
		 * recording's end, so a multi-threaded program that crashed had
		 * no global order. */
		if (erp_get_regs(e, t, &regs) < 0)
			return -1;
		return e->obs->end(e, t, regs.rip - 2);
	}
	if (t->at_entry || t->in_unrecorded || t->gone || e->exited)
		return e->obs->end(e, t, 0);
	if (erp_get_regs(e, t, &regs) < 0)
		return -1;
	return e->obs->end(e, t, regs.rip);
}
