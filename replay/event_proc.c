/* Event replay: the replay process. Its threads (each recorded thread is
 * created again at its recorded clone, under another tid, and told its
 * recorded one), waiting for one thread's next stop, the syscalls a thread
 * meets (emulated or run, replay/sys_replay.h; a clone creates the thread,
 * an exit ends it), the recorded signals delivered with their recorded
 * siginfo and frame, and the classification of the instructions a stepped
 * run executes. */
#include "event_replay.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>

#include "ptrev/cpu_bind.h"
#include "ptrev/cpu_timer.h"
#include "ptrev/debugregs.h"
#include "ptrev/ptrace_wait.h"
#include "sys_replay.h"

#define ICACHE_SIZE 4096

struct erp_icache {
	uint64_t ip[ICACHE_SIZE];
	struct insn_info info[ICACHE_SIZE];
	bool valid[ICACHE_SIZE];
};

/* The points of a search (event_search.c) in DR1-DR3 of a thread: the
 * first, armed once it stands at the program's start (an exec clears
 * them), and each new one at its clone (it has none of its creator's);
 * DR0 is left to the STATE points (event_advance.c). */
int erp_arm_search(struct erp *e, struct erp_thread *t)
{
	/* More breakpoints than the registers hold: int3s, as where the
	 * registers do not trap. */
	if (!inf_dr_traps() || e->nsearch > EVENT_SEARCH_DR)
		return erp_soft_arm_search(e);
	e->search_dr7 = 0;
	for (size_t i = 0; i < e->nsearch; i++) {
		const struct event_search_point *p = &e->search[i];
		if (inf_dr_write(t->tid, 1 + (int)i, p->addr) < 0)
			return erp_fail(e, "no debug register for a search: %s", inf_dr_strerror(errno));
		e->search_dr7 |= inf_dr7_slot(1 + (int)i, p->kind, p->kind == DR_EXEC ? 1 : p->len);
	}
	if (inf_dr_write(t->tid, 7, e->search_dr7) < 0)
		return erp_fail(e, "no debug register for a search: %s", inf_dr_strerror(errno));
	return 0;
}

/* A search's point hit t, the #DB come without DR6 bits: the DR6 the hit
 * would have had (B1-B3), 0 when the stop is not such a hit. An
 * execution point's is told by its PC (inf_dr_lost_exec_hit; B0 added
 * where the STATE point's register, armed, is at the PC too). A data
 * point's has no address to tell it: any #DB the VM got wrong while t
 * ran (inf_dr_lost_hit; a single step's own trap is not one) and no
 * execution register is at the PC counts for every data point. */
static uint64_t lost_search_hit(struct erp *e, struct erp_thread *t, bool stepped)
{
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &regs) < 0)
		return 0;
	uint64_t exec = 0, data = 0;
	for (size_t i = 0; i < e->nsearch; i++)
		if (e->search[i].kind != DR_EXEC)
			data |= 2ull << i;
		else if (e->search[i].addr == regs.rip)
			exec |= 2ull << i;
	bool state_pc = (inf_dr_read(t->tid, 7) & 1) && inf_dr_read(t->tid, 0) == regs.rip;
	if (exec)
		return inf_dr_lost_exec_hit(t->tid, regs.rip) ? exec | (state_pc ? 1 : 0) : 0;
	if (data && !state_pc &&
	    (stepped ? inf_dr_lost_exec_hit(t->tid, regs.rip) : inf_dr_lost_hit(t->tid, &regs)))
		return data;
	return 0;
}

int erp_search_hit(struct erp *e, struct erp_thread *t, int st, bool stepped)
{
	/* Where the points are int3s (event_soft.c) their hits are counted
	 * where the int3 traps. */
	if (!e->nsearch || e->search_soft || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
		return 0;
	uint64_t dr6 = inf_dr_read_dr6(t->tid);
	if (!(dr6 & 0xe) && !(dr6 = lost_search_hit(e, t, stepped)))
		return 0;
	int rc = erp_search_count(e, t, dr6);
	if (rc <= 0) {
		if (rc == 0)
			inf_dr_write(t->tid, 6, dr6 & ~0xeull);
		return rc;
	}
	inf_dr_clear_dr6(t->tid);
	return 1;
}

int erp_launch(struct erp *e)
{
	const char *v = trace_meta(e->td, "vdso");
	if (relaunch_read(&e->start, e->td, e->why, sizeof e->why) < 0 ||
	    relaunch_start(&e->start, v && strcmp(v, "hidden") == 0, &e->pid, &e->memfd, e->why,
			   sizeof e->why) < 0)
		return -1;
	/* The first thread is the one the recording starts with. */
	struct erp_thread *t = &e->threads[0];
	t->tid = e->pid;
	return e->nsearch ? erp_arm_search(e, t) : 0;
}

/* Wait until every thread of this replay is reaped. Only its own tids:
 * the server may hold other traced processes (the end state of the same
 * recording, kept stopped), and waiting for any child would wait for
 * them too. A thread stopped at a ptrace stop when the group dies is
 * woken by the kernel's SIGKILL; one already reaped answers ECHILD. */
void erp_reap(struct erp *e)
{
	int st;
	for (size_t i = 0; i < e->nthreads; i++) {
		struct erp_thread *t = &e->threads[i];
		if (!t->tid || t->tid == e->pid)
			continue;
		while (ptrace_waitpid(t->tid, &st, __WALL) > 0 && !WIFEXITED(st) && !WIFSIGNALED(st))
			;
		t->gone = true;
	}
	while (e->pid && ptrace_waitpid(e->pid, &st, __WALL) > 0 && !WIFEXITED(st) &&
	       !WIFSIGNALED(st))
		;
	for (size_t i = 0; i < e->nthreads; i++)
		e->threads[i].gone = true;
	e->exited = true;
}

void erp_kill(struct erp *e)
{
	if (e->pid && !e->exited) {
		kill(e->pid, SIGKILL);
		erp_reap(e);
	}
	e->exited = true;
	if (e->memfd >= 0)
		close(e->memfd);
	e->memfd = -1;
}

/* Sleep ns with no slack: a sleeping tracer's timer may fire up to its
 * slack late (50 us by default), more than many of the runs asked for. */
static void sleep_exactly(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
	nanosleep(&ts, NULL);
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
}

/* Has the one waiting for e given up (e->give_up)? Asked at the first
 * stop and every 256th, at most every tenth of a second: a stop costs
 * tens of us. -1 (gave_up) when it has. */
static int given_up(struct erp *e)
{
	if (!e->give_up || !e->give_up->ask || (e->stops & 255) != 1)
		return 0;
	uint64_t now = erp_now_ns();
	if (now < e->give_up_next_ns)
		return 0;
	e->give_up_next_ns = now + 100000000;
	if (!e->give_up->ask(e->give_up->ctx))
		return 0;
	e->gave_up = true;
	return erp_fail(e, "stopped by gdb (Ctrl-C)");
}

/* Wait for t's next stop, a search's hits passed on the way (t resumed
 * with req again after each): 1 (*st), -1. With a wall-clock deadline
 * (0: none), 0 where none came by then: the tracer sleeps first_ns, then
 * looks every poll_ns (t runs on another CPU, and a look costs it
 * nothing). */
static int wait_stop_by(struct erp *e, struct erp_thread *t, int req, int *st, uint64_t first_ns,
			uint64_t poll_ns, uint64_t deadline)
{
	if (deadline)
		sleep_exactly(first_ns);
	for (;;) {
		pid_t w = ptrace_waitpid(t->tid, st, __WALL | (deadline ? WNOHANG : 0));
		if (w < 0)
			return erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
		if (w == 0) {
			uint64_t now = erp_now_ns();
			if (now >= deadline)
				return 0;
			sleep_exactly(deadline - now < poll_ns ? deadline - now : poll_ns);
			continue;
		}
		if (erp_count_stop(e) < 0 || given_up(e) < 0)
			return -1;
		int passed = e->nsoft ? erp_soft_hit(e, t, req, st)
				      : erp_search_hit(e, t, *st, req == PTRACE_SINGLESTEP);
		if (passed < 0)
			return -1;
		if (!passed)
			break;
		if (ptrace(req, t->tid, NULL, NULL) < 0)
			return erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
	}
	if (WIFEXITED(*st) || WIFSIGNALED(*st)) {
		t->gone = true;
		return erp_fail(e, "the replay of thread %d ended unexpectedly after its event %zu "
				"(%s %d)", (int)t->rec_tid, t->next,
				WIFEXITED(*st) ? "exit" : "signal",
				WIFEXITED(*st) ? WEXITSTATUS(*st) : WTERMSIG(*st));
	}
	return 1;
}

static int wait_stop(struct erp *e, struct erp_thread *t, int req, int *st)
{
	return wait_stop_by(e, t, req, st, 0, 0, 0) < 0 ? -1 : 0;
}

/* erp_resume where breakpoints are int3s (event_soft.c): the STATE
 * point's (soft_pc) and the search's, in the code only while t runs. */
static int resume_soft(struct erp *e, struct erp_thread *t, int req, int sig, int *st)
{
	uint64_t skip;
	int rc = erp_soft_pass(e, t, req, sig, st, &skip);
	if (rc <= 0)
		return rc;
	if (erp_soft_put(e, skip) < 0) {
		erp_soft_take(e);
		return -1;
	}
	if (ptrace(req, t->tid, NULL, (void *)(long)sig) < 0)
		rc = erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
	else
		rc = wait_stop(e, t, req, st);
	if (erp_soft_take(e) < 0)
		return -1;
	return rc;
}

int erp_resume(struct erp *e, struct erp_thread *t, int req, int sig, int *st)
{
	if ((e->soft_pc || e->search_soft) && req != PTRACE_SINGLESTEP)
		return resume_soft(e, t, req, sig, st);
	/* A search's int3 is not in the code for a step: the hit where t
	 * stands is counted before it (not with a signal, whose handler
	 * runs first). */
	if (!sig && erp_soft_count_here(e, t) < 0)
		return -1;
	/* sig is delivered with this resume only. */
	if (ptrace(req, t->tid, NULL, (void *)(long)sig) < 0)
		return erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
	return wait_stop(e, t, req, st);
}

int erp_point_arm(struct erp *e, struct erp_thread *t, uint64_t pc)
{
	if (!inf_dr_traps()) {
		e->soft_pc = pc;
		return 0;
	}
	if (inf_dr_write(t->tid, 0, pc) < 0 || inf_dr_write(t->tid, 7, e->search_dr7 | 1) < 0)
		return erp_fail(e, "thread %d: no hardware breakpoint for its STATE point: %s",
				(int)t->rec_tid, inf_dr_strerror(errno));
	return 0;
}

int erp_point_disarm(struct erp *e, struct erp_thread *t)
{
	if (e->soft_pc) {
		e->soft_pc = 0;
		return 0;
	}
	if (inf_dr_write(t->tid, 7, e->search_dr7) < 0)
		return erp_fail(e, "thread %d: cannot clear its hardware breakpoint",
				(int)t->rec_tid);
	return 0;
}

int erp_resume_to_pass(struct erp *e, struct erp_thread *t, uint64_t pc, int *st)
{
	struct user_regs_struct regs;
	uint8_t b[2] = {0};
	if (erp_get_regs(e, t, &regs) < 0)
		return -1;
	/* Stopped there by the breakpoint (RF set), not by a signal before
	 * its pass (which the breakpoint is still to see). */
	if (regs.rip == pc && (regs.eflags & 0x10000) &&
	    !(erp_read_mem(e, pc, b, 2) == 2 && b[0] == 0x0f && b[1] == 0x05)) {
		if (erp_point_disarm(e, t) < 0 || erp_resume(e, t, PTRACE_SINGLESTEP, 0, st) < 0 ||
		    erp_point_arm(e, t, pc) < 0)
			return erp_fail(e, "thread %d: stepping off its STATE point's PC: %s",
					(int)t->rec_tid, e->why[0] ? e->why : strerror(errno));
		inf_dr_clear_dr6(t->tid);
		/* Something else came (the caller's to tell), or the next
		 * pass already (a loop of one instruction). */
		if (WSTOPSIG(*st) != SIGTRAP || erp_get_regs(e, t, &regs) < 0 || regs.rip == pc)
			return 0;
	}
	return erp_resume(e, t, PTRACE_SYSCALL, 0, st);
}

int erp_pass_seen(struct erp *e, struct erp_thread *t, struct user_regs_struct *regs)
{
	inf_dr_clear_dr6(t->tid);
	if (regs->eflags & 0x10000)
		return 0;
	regs->eflags |= 0x10000;
	return erp_set_regs(e, t, regs);
}

/* Threads that block every signal get the timer's all the same
 * (cpu_timer_let_through): before, it stayed pending, a timed run went on
 * to the tracer's much later stop, past the point it was to stop short
 * of, and the search counted every pass (minutes: hot_loop blocked). The
 * mask is back at the run's stop, before a syscall there is emulated or
 * run. */
static int timer_mask_back(struct erp *e, struct erp_thread *t, bool changed, uint64_t saved)
{
	if (!changed || t->gone || e->exited || cpu_timer_mask_back(t->tid, saved) == 0 ||
	    errno == ESRCH)
		return 0;
	return erp_fail(e, "thread %d: cannot restore its signal mask: %s", (int)t->rec_tid,
			strerror(errno));
}

static int run_for(struct erp *e, struct erp_thread *t, uint64_t ns, int guard, uint64_t guard_ns,
		   int *st)
{
	bool timed = guard >= 0 && guard_ns && cpu_timer_arm(guard, guard_ns) == 0;
	uint64_t start = erp_now_ns();
	if (ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL) < 0) {
		cpu_timer_disarm(guard);
		return erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
	}
	/* Timed, the thread's own timer stops it (in its CPU time, whatever
	 * else runs on its CPU: a run on a loaded machine still makes its
	 * passes), and the tracer looks for that stop; at ns the tracer
	 * stops it itself. Untimed, the tracer's stop at ns is all. */
	int rc = 0;
	if (timed) {
		uint64_t poll = guard_ns / 8 < 20000 ? 20000 : guard_ns / 8;
		rc = wait_stop_by(e, t, PTRACE_SYSCALL, st, guard_ns < ns ? guard_ns : ns,
				  poll < 1000000 ? poll : 1000000, start + ns);
		if (rc != 0) {
			cpu_timer_disarm(guard);
			return rc < 0 ? -1 : erp_timer_stop(t, guard, *st) ? 1 : 0;
		}
	} else {
		sleep_exactly(ns);
	}
	/* If another stop comes first, this one stays pending: the caller
	 * gives the process up then. */
	syscall(SYS_tgkill, e->pid, t->tid, SIGSTOP);
	/* The guard's stop (this run's, or a late one of an earlier run:
	 * the kernel sends it from an interrupt's aftermath) comes before
	 * it or not at all; the SIGSTOP, pending by then, follows at once
	 * when the thread is resumed, before any instruction of its. */
	for (;;) {
		if ((rc = wait_stop(e, t, PTRACE_SYSCALL, st)) < 0)
			break;
		siginfo_t si;
		memset(&si, 0, sizeof si);
		ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si);
		if (WSTOPSIG(*st) == SIGSTOP && si.si_code == SI_TKILL && si.si_pid == getpid()) {
			rc = 1;
			break;
		}
		if (!cpu_timer_is(guard, &si))
			break; /* rc 0: something else came first */
		if (ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL) < 0) {
			rc = erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
			break;
		}
	}
	cpu_timer_disarm(guard);
	return rc;
}

int erp_run_for(struct erp *e, struct erp_thread *t, uint64_t ns, int guard, uint64_t guard_ns,
		int *st)
{
	/* Where breakpoints are int3s (event_soft.c), they are in for the
	 * run, as the debug registers would be armed through it. */
	bool soft = e->search_soft || e->soft_pc;
	uint64_t skip;
	int rc = soft ? erp_soft_pass(e, t, PTRACE_SYSCALL, 0, st, &skip) : 1;
	if (rc <= 0)
		return rc;
	if (soft && erp_soft_put(e, 0) < 0) {
		erp_soft_take(e);
		return -1;
	}
	uint64_t saved = 0;
	bool changed = guard >= 0 && cpu_timer_let_through(t->tid, &saved);
	rc = run_for(e, t, ns, guard, guard_ns, st);
	if (erp_soft_take(e) < 0)
		rc = -1;
	if (timer_mask_back(e, t, changed, saved) < 0)
		return -1;
	return rc;
}

uint64_t erp_backstop_ns(uint64_t cpu_ns)
{
	return 8 * cpu_ns + 50000000;
}

void erp_timed_begin(struct erp_thread *t, struct erp_timed *tm)
{
	tm->guard = cpu_timer_open(t->tid);
	tm->aside = cpu_bind_step_aside(&tm->mine) == 0;
}

bool erp_timer_stop(const struct erp_thread *t, int guard, int ws)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	return WIFSTOPPED(ws) && WSTOPSIG(ws) == CPU_TIMER_SIGNAL &&
	       ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) == 0 && cpu_timer_is(guard, &si);
}

int erp_timed_end(struct erp *e, struct erp_thread *t, struct erp_timed *tm, bool going_on)
{
	if (tm->aside)
		cpu_bind_step_back(&tm->mine);
	tm->aside = false;
	/* Closed, the timer sends nothing more. */
	cpu_timer_close(tm->guard);
	int guard = tm->guard, ws;
	tm->guard = -1;
	if (!going_on || guard < 0 || !cpu_timer_pending(t->tid, CPU_TIMER_SIGNAL))
		return 0;
	uint64_t saved = 0;
	bool changed = cpu_timer_let_through(t->tid, &saved);
	int rc = erp_resume(e, t, PTRACE_CONT, 0, &ws);
	if (timer_mask_back(e, t, changed, saved) < 0 || rc < 0)
		return -1;
	if (!erp_timer_stop(t, guard, ws))
		return erp_fail(e, "thread %d: its CPU-time timer's signal did not come",
				(int)t->rec_tid);
	return 0;
}

/* ---- classification ---- */

int erp_classify(struct erp *e, uint64_t ip, struct insn_info *out)
{
	if (!e->icache && !(e->icache = calloc(1, sizeof *e->icache)))
		return erp_fail(e, "out of memory");
	size_t slot = (ip ^ (ip >> 12)) % ICACHE_SIZE;
	if (e->icache->valid[slot] && e->icache->ip[slot] == ip) {
		*out = e->icache->info[slot];
		return 0;
	}
	uint8_t code[16];
	ssize_t n = pread(e->memfd, code, sizeof code, (off_t)ip);
	if (n <= 0 || insn_classify(code, (size_t)n, ip, out) < 0)
		return erp_fail(e, "cannot decode the instruction at %#llx", (unsigned long long)ip);
	e->icache->ip[slot] = ip;
	e->icache->info[slot] = *out;
	e->icache->valid[slot] = true;
	return 0;
}

void erp_icache_clear(struct erp *e)
{
	if (e->icache)
		memset(e->icache->valid, 0, sizeof e->icache->valid);
	if (e->bcache)
		block_cache_invalidate(e->bcache);
}

/* ---- syscalls ---- */

/* Where a new thread's clone wants its tid written, as the kernel did in
 * the recording (CLONE_PARENT_SETTID, CLONE_CHILD_SETTID). A clone that
 * makes a process was emulated before this (sys_replay_fork). */
static int clone_tid_addresses(struct erp *e, const struct sys_replay *c,
			       const struct trace_syscall *s, uint64_t *ptid, uint64_t *ctid)
{
	uint64_t flags;
	if (!sys_replay_clone_args(c, s, &flags, ptid, ctid))
		return erp_fail(e, "clone3: cannot read its arguments");
	if (!(flags & CLONE_THREAD) || !(flags & CLONE_VM))
		return erp_fail(e, "syscall %llu at event %llu makes a new process, which cannot be "
				"replayed yet", (unsigned long long)s->nr,
				(unsigned long long)s->pos);
	return 0;
}

/* The clone runs for real: the new thread exists in the replay too, under
 * another tid; the program is told the recorded one everywhere the kernel
 * told it. */
static int do_clone(struct erp *e, struct erp_thread *t, const struct sys_replay *sc,
		    const struct trace_syscall *s, const struct user_regs_struct *entry)
{
	uint64_t ptid, ctid;
	int st;
	struct erp_thread *c = erp_thread_rec(e, (pid_t)s->result);
	if (s->result <= 0)
		return sys_replay_do(sc, s, entry);
	if (!c)
		return erp_fail(e, "thread %lld, made by the clone at event %llu of thread %d, has "
				"no events in the recording", (long long)s->result,
				(unsigned long long)s->pos, (int)t->rec_tid);
	if (clone_tid_addresses(e, sc, s, &ptid, &ctid) < 0)
		return -1;
	if (erp_resume(e, t, PTRACE_SYSCALL, 0, &st) < 0)
		return -1;
	if (st >> 16 != PTRACE_EVENT_CLONE)
		return erp_fail(e, "clone at event %llu of thread %d made no thread",
				(unsigned long long)s->pos, (int)t->rec_tid);
	unsigned long child = 0;
	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &child);
	c->tid = (pid_t)child;
	if (ptrace_wait_task(c->tid, &st) < 0 || !WIFSTOPPED(st))
		return erp_fail(e, "the new thread %d does not stop", (int)c->tid);
	if (e->nsearch && erp_arm_search(e, c) < 0)
		return -1;
	if (erp_resume(e, t, PTRACE_SYSCALL, 0, &st) < 0)
		return -1;
	if (WSTOPSIG(st) != (SIGTRAP | 0x80))
		return erp_fail(e, "clone at event %llu: no return", (unsigned long long)s->pos);
	struct user_regs_struct regs;
	if (erp_get_regs(e, t, &regs) < 0)
		return -1;
	regs.rax = (uint64_t)s->result;
	if (erp_set_regs(e, t, &regs) < 0)
		return -1;
	pid_t rec = (pid_t)s->result;
	if ((ptid && pwrite(e->memfd, &rec, sizeof rec, (off_t)ptid) != sizeof rec) ||
	    (ctid && pwrite(e->memfd, &rec, sizeof rec, (off_t)ctid) != sizeof rec))
		return erp_fail(e, "clone at event %llu: cannot write the recorded tid",
				(unsigned long long)s->pos);
	return 0;
}

/* exit ends the thread, exit_group the whole process: for real. */
static int do_exit(struct erp *e, struct erp_thread *t, const struct trace_syscall *s)
{
	int st;
	if (ptrace(PTRACE_SYSCALL, t->tid, NULL, NULL) < 0)
		return erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
	if (s->nr == SYS_exit) {
		/* Done only when the kernel has cleared the thread's tid word
		 * (CLONE_CHILD_CLEARTID), which a joining thread reads next. A
		 * leader that exits first is reported only once its whole
		 * thread group is gone: it is done when it is a zombie. */
		t->gone = true;
		if (t->tid != e->pid) {
			if (ptrace_wait_task(t->tid, &st) < 0)
				return erp_fail(e, "replay thread %d: %s", (int)t->tid, strerror(errno));
			return 0;
		}
		while (!ptrace_task_dead(e->pid, t->tid))
			usleep(100);
		return 0;
	}
	erp_reap(e);
	return 0;
}

int erp_syscall(struct erp *e, struct erp_thread *t, const struct trace_syscall *s,
		const struct user_regs_struct *entry)
{
	struct sys_replay c = {e->td, t->tid, e->memfd, false, &e->stops, e->why, sizeof e->why};
	if (sys_replay_check(&c, s, entry) < 0)
		return -1;
	if (sys_replay_is_fork(&c, s))
		return sys_replay_fork(&c, s, entry);
	if (s->nr == SYS_clone || s->nr == SYS_clone3)
		return do_clone(e, t, &c, s, entry);
	if (s->nr == SYS_exit || s->nr == SYS_exit_group)
		return do_exit(e, t, s);
	const char *why = sys_replay_unsupported(s);
	if (why) {
		char name[96];
		syscall_label(s->nr, NULL, name, sizeof name);
		erp_failed_at(e, t, s->pos);
		return erp_fail(e, "%s at event %llu of thread %d cannot be replayed yet: %s",
				name, (unsigned long long)s->pos, (int)t->rec_tid, why);
	}
	if (sys_replay_do(&c, s, entry) < 0)
		return -1;
	if (syscall_changes_maps(s->nr))
		erp_icache_clear(e); /* code may have come or gone */
	return 0;
}

int erp_undo_entry(struct erp *e, struct erp_thread *t, const struct user_regs_struct *entry)
{
	struct user_regs_struct back = *entry;
	int st;
	back.rax = entry->orig_rax;
	back.orig_rax = (unsigned long long)-1; /* the kernel skips it */
	back.rip -= 2;
	if (erp_set_regs(e, t, &back) < 0 || erp_resume(e, t, PTRACE_SYSCALL, 0, &st) < 0)
		return -1;
	if (WSTOPSIG(st) != (SIGTRAP | 0x80))
		return erp_fail(e, "thread %d: an undone syscall did not return", (int)t->rec_tid);
	return 0;
}

/* ---- signals ---- */

/* The kernel's frame for the handler of g, as recorded, in place of the
 * replay's own (parts of its XSAVE area depend on the CPU's state
 * tracking, not on the program). */
static int restore_sigframe(struct erp *e, struct erp_thread *t, const struct trace_signal *g,
			    uint64_t rsp)
{
	const struct trace_sigframe *f = erp_sigframe(e, t->rec_tid, g->pos);
	if (!f)
		return 0;
	if (f->addr != rsp)
		return erp_fail(e, "replay diverged at event %llu of thread %d: the frame of "
				"signal %d is at %#llx, at %#llx in the recording",
				(unsigned long long)g->pos, (int)t->rec_tid, g->signo,
				(unsigned long long)rsp, (unsigned long long)f->addr);
	if (pwrite(e->memfd, f->bytes, f->len, (off_t)f->addr) != (ssize_t)f->len)
		return erp_fail(e, "cannot write the recorded signal frame at %#llx",
				(unsigned long long)f->addr);
	return 0;
}

int erp_deliver(struct erp *e, struct erp_thread *t, const struct trace_signal *g, bool fault)
{
	struct user_regs_struct regs;
	int st;
	if (!fault) {
		/* Stop where signals are taken without running an instruction,
		 * then hand the recorded siginfo over. */
		if (syscall(SYS_tgkill, e->pid, t->tid, SIGSTOP) < 0 ||
		    erp_resume(e, t, PTRACE_CONT, 0, &st) < 0)
			return -1;
		if (WSTOPSIG(st) != SIGSTOP)
			return erp_fail(e, "thread %d: cannot stop it for signal %d",
					(int)t->rec_tid, g->signo);
	}
	siginfo_t si;
	memcpy(&si, g->siginfo, sizeof si < sizeof g->siginfo ? sizeof si : sizeof g->siginfo);
	si.si_signo = g->signo;
	if (ptrace(PTRACE_SETSIGINFO, t->tid, NULL, &si) < 0)
		return erp_fail(e, "cannot set the siginfo of signal %d: %s", g->signo,
				strerror(errno));
	if (!g->handler_ip) {
		/* Fatal: the program ends here, as it did. */
		if (ptrace(PTRACE_CONT, t->tid, NULL, (void *)(long)g->signo) < 0)
			return erp_fail(e, "cannot deliver signal %d: %s", g->signo, strerror(errno));
		erp_reap(e);
		return 0;
	}
	if (erp_resume(e, t, PTRACE_SINGLESTEP, g->signo, &st) < 0)
		return -1;
	if (WSTOPSIG(st) != SIGTRAP || erp_get_regs(e, t, &regs) < 0)
		return erp_fail(e, "signal %d at event %llu of thread %d: no stop in the handler",
				g->signo, (unsigned long long)g->pos, (int)t->rec_tid);
	if (regs.rip != g->handler_ip)
		return erp_fail(e, "replay diverged at event %llu of thread %d: signal %d went to "
				"%#llx, to %#llx in the recording", (unsigned long long)g->pos,
				(int)t->rec_tid, g->signo, (unsigned long long)regs.rip,
				(unsigned long long)g->handler_ip);
	return restore_sigframe(e, t, g, regs.rsp);
}
