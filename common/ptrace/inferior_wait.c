/* Resuming threads and waiting for events, in gdbserver's all-stop style.
 *
 * Thread states (struct inf_thread):
 *   running && !has_pending   really running in the kernel
 *   running &&  has_pending   resumed by the caller, but an event is already
 *                             waiting: it is reported without running it
 *   !running                  stopped (with or without a pending event)
 * stop_expected counts SIGSTOPs we sent and have not yet collected; such a
 * stop is absorbed (never reported) and the thread carries on as before.
 *
 * The inferior is in its own process group and we are its parent and
 * tracer, so waitpid(-1, __WALL) sees its threads; a new thread's first
 * SIGSTOP may arrive before its creator's PTRACE_EVENT_CLONE, so an
 * unknown task stopped by SIGSTOP is taken for a new thread. */
#include "inferior_internal.h"
#include "ptrev/ptrace_wait.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The inferiors this thread has run. Several at once are the processes
 * gdb debugs together (a fork child it kept beside its parent:
 * server/gdb/gdb_procs.c): a wait for any child takes the stops of all
 * of them, so one that is another's is put in that one's stash, which its
 * own wait reads first. */
#define INF_KNOWN_MAX 64
static struct inferior *known[INF_KNOWN_MAX];
static size_t nknown;

static void remember(struct inferior *inf)
{
	for (size_t i = 0; i < nknown; i++)
		if (known[i] == inf)
			return;
	if (nknown < INF_KNOWN_MAX)
		known[nknown++] = inf;
}

void inf_forget(struct inferior *inf)
{
	for (size_t i = 0; i < nknown; i++) {
		if (known[i] == inf) {
			known[i] = known[--nknown];
			break;
		}
	}
	free(inf->stash);
	inf->stash = NULL;
	inf->nstash = 0;
}

/* The thread group of task tid (a new thread's, before its creator's
 * clone event names it), 0 when unknown. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strstr(buf, "\nTgid:");
	return p ? (pid_t)strtol(p + 6, NULL, 10) : 0;
}

/* Status st of task w, which is not inf's: stashed for the inferior whose
 * thread it is; false where none is (a new thread of inf's own). */
static bool stash_for_other(struct inferior *inf, pid_t w, int st)
{
	if (nknown < 2 || inferior_thread(inf, w))
		return false;
	pid_t tgid = -1; /* read once, where needed */
	for (size_t i = 0; i < nknown; i++) {
		struct inferior *o = known[i];
		if (o == inf || !o->pid || o->exited)
			continue;
		if (!inferior_thread(o, w)) {
			if (tgid < 0)
				tgid = tgid_of(w);
			if (tgid != o->pid)
				continue;
		}
		struct inf_stashed *grown = realloc(o->stash, (o->nstash + 1) * sizeof *grown);
		if (!grown)
			return false;
		o->stash = grown;
		o->stash[o->nstash++] = (struct inf_stashed){w, st};
		return true;
	}
	return false;
}

/* The first stashed status of tid, taken out of the stash: true. */
static bool take_stashed(struct inferior *inf, pid_t tid, int *st)
{
	for (size_t i = 0; i < inf->nstash; i++) {
		if (inf->stash[i].tid == tid) {
			*st = inf->stash[i].status;
			memmove(inf->stash + i, inf->stash + i + 1,
				(--inf->nstash - i) * sizeof *inf->stash);
			return true;
		}
	}
	return false;
}

static bool kernel_running(const struct inf_thread *t)
{
	return t->running && !t->has_pending;
}

/* Really resume a thread. ESRCH means it is dying: its exit is collected by
 * a later wait, so it counts as running. */
static int real_resume(struct inf_thread *t, bool step, int sig)
{
	t->stepping = step;
	t->has_siginfo = false;
	if (ptrace(step ? PTRACE_SINGLESTEP : PTRACE_CONT, t->tid, NULL, (void *)(long)sig) < 0 &&
	    errno != ESRCH)
		return -1;
	t->running = true;
	return 0;
}

int inferior_resume(struct inferior *inf, pid_t tid, bool step, int sig)
{
	if (!inf->pid || inf->exited)
		return -1;
	remember(inf);
	struct inf_thread *t = inferior_thread(inf, tid);
	if (!t)
		return -1;
	inf->resumed_gone = false;
	if (t->running)
		return 0;
	if (t->has_pending) {
		/* A breakpoint hit whose breakpoint is gone since: forget it. The
		 * PC was rewound, so the thread just runs the original instruction. */
		uint64_t pc;
		if (t->pending.kind == STOP_SWBREAK && inf_get_pc(tid, &pc) == 0 &&
		    !inferior_has_swbreak(inf, pc)) {
			t->has_pending = false;
			return real_resume(t, step, sig);
		}
		t->running = true;
		t->stepping = step;
		return 0;
	}
	return real_resume(t, step, sig);
}

/* Turn a signal stop into an event: which of our breakpoints, steps or
 * debug registers caused a SIGTRAP, or a plain signal. */
static void classify(struct inferior *inf, struct inf_thread *t, int sig, struct stop_event *e)
{
	memset(e, 0, sizeof(*e));
	e->tid = t->tid;
	e->sig = sig;
	e->kind = STOP_SIGNAL;
	t->has_siginfo = ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &t->siginfo) == 0;
	if (sig != SIGTRAP)
		return;
	int code = t->has_siginfo ? t->siginfo.si_code : SI_KERNEL;

	/* int3 traps report SI_KERNEL with the PC just past the int3. */
	uint64_t pc;
	if (code == SI_KERNEL && inf_get_pc(t->tid, &pc) == 0 && inf_find_swbreak(inf, pc - 1)) {
		inf_set_pc(t->tid, pc - 1);
		e->kind = STOP_SWBREAK;
		return;
	}
	if (inf_dr_hit(inf, t->tid, e))
		return;
	/* A step over a system call traps with TRAP_BRKPT and no DR6.BS, so
	 * any kernel-made trap while we step is the step; one sent by kill()
	 * (si_code <= 0), or a trap flag the program set itself, stays a
	 * signal. */
	if (t->stepping && code > 0)
		e->kind = STOP_STEP;
}

/* Process one waitpid status. Reportable events become the thread's
 * pending event; everything else is absorbed, and the thread resumed
 * again unless we are stopping all threads. */
static void handle_status(struct inferior *inf, pid_t tid, int st, bool stopping);

/* A group-stop (the whole process stopping on a stop signal) looks like a
 * signal stop, but has no siginfo: GETSIGINFO fails with EINVAL. */
static bool is_group_stop(pid_t tid, int sig)
{
	if (sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
		return false;
	siginfo_t si;
	return ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) < 0 && errno == EINVAL;
}

/* The new thread's first stop is a SIGSTOP (a clone's, or PTRACE_ATTACH's);
 * wait for it unless already seen. Returns with the thread stopped, or
 * false if it died meanwhile. */
bool inf_collect_new_thread(struct inferior *inf, pid_t ntid)
{
	if (inferior_thread(inf, ntid))
		return true; /* its SIGSTOP came before the clone event */
	struct inf_thread *nt = inf_add_thread(inf, ntid);
	if (!nt)
		return false;
	nt->stop_expected = 1;
	int st;
	if (ptrace_waitpid(ntid, &st, __WALL) < 0) {
		inf_remove_thread(inf, ntid);
		return false;
	}
	handle_status(inf, ntid, st, true);
	return inferior_thread(inf, ntid) != NULL;
}

static void handle_clone(struct inferior *inf, pid_t parent, bool stopping)
{
	unsigned long msg = 0;
	ptrace(PTRACE_GETEVENTMSG, parent, NULL, &msg);
	pid_t ntid = (pid_t)msg;
	bool alive = ntid > 0 && inf_collect_new_thread(inf, ntid);
	if (alive)
		inf_dr_apply_thread(inf, ntid); /* the kernel does not copy them */

	/* The table may have moved: look both up again. */
	struct inf_thread *p = inferior_thread(inf, parent);
	struct inf_thread *nt = alive ? inferior_thread(inf, ntid) : NULL;
	if (!p)
		return;
	if (stopping || !p->running) {
		p->running = false;
		return;
	}
	real_resume(p, p->stepping, 0);
	if (nt) {
		if (nt->has_pending)
			nt->running = true;
		else
			real_resume(nt, false, 0);
	}
}

/* An event the thread's stop is not reported for: it goes on (or stays
 * stopped while every thread is being stopped). */
static void carry_on(struct inf_thread *t, bool stopping)
{
	if (stopping || !t->running)
		t->running = false;
	else
		real_resume(t, t->stepping, 0);
}

/* The thread's stop becomes its pending event, reported when asked. */
static void report(struct inf_thread *t, struct stop_event e, bool stopping)
{
	t->pending = e;
	t->has_pending = true;
	if (stopping)
		t->running = false;
}

/* A fork, vfork or vfork-done of thread tid: the child is cleaned of the
 * breakpoints and let go, or held and the event reported where gdb asked
 * for fork events (gdb_server's D decides then). */
static void handle_fork(struct inferior *inf, pid_t tid, int event, bool stopping)
{
	unsigned long child = 0;
	bool vfork = event == PTRACE_EVENT_VFORK;
	bool reported = event == PTRACE_EVENT_FORK ? inf->report_forks : inf->report_vforks;
	if (event != PTRACE_EVENT_VFORK_DONE &&
	    ptrace(PTRACE_GETEVENTMSG, tid, NULL, &child) == 0 && child > 0) {
		/* Its first stop may have been taken for a new thread's. */
		bool seen = inferior_thread(inf, (pid_t)child) != NULL;
		if (seen)
			inf_remove_thread(inf, (pid_t)child);
		if (reported)
			inf_fork_child_hold(inf, (pid_t)child, vfork, seen, false);
		else
			inf_fork_child_release(inf, (pid_t)child, vfork, seen, false);
	}
	if (event == PTRACE_EVENT_VFORK_DONE)
		inf_vfork_done(inf);
	struct inf_thread *t = inferior_thread(inf, tid); /* the table may have moved */
	if (!t)
		return;
	if (reported && (child > 0 || event == PTRACE_EVENT_VFORK_DONE))
		report(t, (struct stop_event){
				  .kind = event == PTRACE_EVENT_VFORK_DONE ? STOP_VFORK_DONE
					  : vfork ? STOP_VFORK : STOP_FORK,
				  .tid = tid, .sig = SIGTRAP, .child = (pid_t)child}, stopping);
	else
		carry_on(t, stopping);
}

static void handle_status(struct inferior *inf, pid_t tid, int st, bool stopping)
{
	struct inf_thread *t = inferior_thread(inf, tid);
	if (!t) {
		/* A new thread whose creator's clone event is still to come. */
		if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP && (st >> 16) == 0)
			inf_add_thread(inf, tid);
		return;
	}
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (tid != inf->pid) {
			if (t->running)
				inf->resumed_gone = true;
			inf_remove_thread(inf, tid);
			return;
		}
		/* The leader reports last: the whole process is gone. */
		pid_t pid = inf->pid;
		inf->nthreads = 0;
		t = inf_add_thread(inf, pid);
		t->has_pending = true;
		t->pending = (struct stop_event){ .tid = pid };
		if (WIFEXITED(st)) {
			t->pending.kind = STOP_EXITED;
			t->pending.exit_code = WEXITSTATUS(st);
		} else {
			t->pending.kind = STOP_KILLED;
			t->pending.sig = WTERMSIG(st);
		}
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	int sig = WSTOPSIG(st), event = (st >> 16) & 0xff;
	if (event == PTRACE_EVENT_CLONE) {
		handle_clone(inf, tid, stopping);
		return;
	}
	if (event == 0 && sig == SIGSTOP && t->stop_expected > 0) {
		t->stop_expected--;
		carry_on(t, stopping);
		return;
	}
	if (event == PTRACE_EVENT_EXEC) {
		inf_after_exec(inf);
		t = inferior_thread(inf, inf->pid);
		/* Without exec events gdb sees the SIGTRAP an exec used to be. */
		if (t)
			report(t, (struct stop_event){
					  .kind = inf->report_exec ? STOP_EXEC : STOP_SIGNAL,
					  .tid = inf->pid, .sig = SIGTRAP}, stopping);
		return;
	}
	if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
	    event == PTRACE_EVENT_VFORK_DONE) {
		handle_fork(inf, tid, event, stopping);
		return;
	}
	if (event != 0) { /* an event we did not ask for: carry on */
		carry_on(t, stopping);
		return;
	}
	if (is_group_stop(tid, sig)) {
		/* The program stopped itself (SIGSTOP delivered earlier, SIGTSTP):
		 * already reported as a signal; a traced thread just goes on. */
		carry_on(t, stopping);
		return;
	}
	struct stop_event e;
	classify(inf, t, sig, &e);
	report(t, e, stopping);
}

/* Wait until a thread we sent SIGSTOP to has stopped. Polls rather than
 * blocks, so that a thread that died meanwhile cannot hang us. */
static void wait_thread_stopped(struct inferior *inf, pid_t tid)
{
	long delay_ns = 1000;
	for (int spins = 0;; spins++) {
		struct inf_thread *t = inferior_thread(inf, tid);
		if (!t || !kernel_running(t))
			return;
		int st;
		/* Its stop may have been taken by another inferior's wait. */
		pid_t w = take_stashed(inf, tid, &st) ? tid
						       : ptrace_waitpid(tid, &st, __WALL | WNOHANG);
		if (w == tid) {
			handle_status(inf, tid, st, true);
			continue;
		}
		if (w < 0) { /* not ours any more */
			if (tid == inf->pid)
				t->running = false;
			else
				inf_remove_thread(inf, tid);
			return;
		}
		if (spins < 20) {
			sched_yield();
			continue;
		}
		if (ptrace_task_dead(inf->pid, tid)) {
			t->running = false;
			return;
		}
		struct timespec ts = { 0, delay_ns };
		nanosleep(&ts, NULL);
		if (delay_ns < 1000000)
			delay_ns *= 2;
	}
}

void inf_stop_all(struct inferior *inf)
{
	for (size_t i = 0; i < inf->nthreads; i++) {
		struct inf_thread *t = &inf->threads[i];
		if (!kernel_running(t) || t->stop_expected)
			continue;
		if (syscall(SYS_tgkill, inf->pid, t->tid, SIGSTOP) == 0)
			t->stop_expected++;
	}
	/* Waiting may add threads (clone events) or remove them (exits). */
	for (;;) {
		pid_t tid = 0;
		for (size_t i = 0; i < inf->nthreads && !tid; i++)
			if (kernel_running(&inf->threads[i]))
				tid = inf->threads[i].tid;
		if (!tid)
			break;
		wait_thread_stopped(inf, tid);
	}
	for (size_t i = 0; i < inf->nthreads; i++)
		inf->threads[i].running = false;
}

/* A thread whose event can be reported now: resumed with an event already
 * waiting. The process's exit is always reportable. */
static struct inf_thread *pick_pending(struct inferior *inf)
{
	for (size_t i = 0; i < inf->nthreads; i++) {
		struct inf_thread *t = &inf->threads[i];
		if (t->has_pending && (t->pending.kind == STOP_EXITED ||
				       t->pending.kind == STOP_KILLED))
			return t;
	}
	for (size_t i = 0; i < inf->nthreads; i++)
		if (inf->threads[i].has_pending && inf->threads[i].running)
			return &inf->threads[i];
	return NULL;
}

int inferior_wait(struct inferior *inf, struct stop_event *ev, bool block)
{
	if (!inf->pid || inf->exited)
		return -1;
	remember(inf);
	for (;;) {
		if (inf->nstash) {
			/* Taken by another inferior's wait, in the order seen. */
			pid_t tid0 = inf->stash[0].tid;
			int st0;
			take_stashed(inf, tid0, &st0);
			handle_status(inf, tid0, st0, false);
			continue;
		}
		struct inf_thread *t = pick_pending(inf);
		if (t) {
			struct stop_event e = t->pending;
			t->has_pending = false;
			t->running = false;
			/* Not while stepping (as gdbserver): gdb steps over a
			 * handler its own way (a step into one stops at its
			 * first instruction, which gdb did not ask for). */
			if (e.kind == STOP_SIGNAL && e.sig > 0 && e.sig < 65 &&
			    inf->pass_signals[e.sig] && !t->stepping) {
				/* Deliver it and carry on as the caller asked. */
				real_resume(t, t->stepping, e.sig);
				continue;
			}
			if (e.kind == STOP_EXITED || e.kind == STOP_KILLED)
				inf_mark_gone(inf);
			else
				inf_stop_all(inf);
			*ev = e;
			return 1;
		}
		bool any = false;
		for (size_t i = 0; i < inf->nthreads && !any; i++)
			any = kernel_running(&inf->threads[i]);
		if (!any && inf->resumed_gone && inf->nthreads) {
			/* The threads the caller resumed have all exited and
			 * the others were left stopped (gdb's scheduler-locking):
			 * nothing will happen until they are resumed. Said
			 * once, as gdbserver says it (the N stop reply). */
			inf->resumed_gone = false;
			*ev = (struct stop_event){.kind = STOP_NO_RESUMED, .tid = inf->pid};
			return 1;
		}
		if (!any) /* nothing resumed: nothing can happen */
			return block ? -1 : 0;

		int st;
		/* __WNOTHREAD: this thread's tracees only. A thread that waits
		 * for any child also takes the stops of the other threads'
		 * tracees: a history's background job (materialise_job.c) traces
		 * its replay from a thread of its own while a process gdb kept
		 * (gdb_procs.c) runs here. */
		pid_t w = ptrace_waitpid(-1, &st, __WALL | __WNOTHREAD | (block ? 0 : WNOHANG));
		if (w == 0)
			return 0;
		if (w < 0) {
			if (errno == ECHILD) /* reaped behind our back */
				inf_mark_gone(inf);
			return -1;
		}
		if (stash_for_other(inf, w, st)) {
			/* A caller that polls several inferiors (schedule-multiple)
			 * sees that one's event before any later one of ours. */
			if (!block)
				return 0;
			continue;
		}
		handle_status(inf, w, st, false);
	}
}
