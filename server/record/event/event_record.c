/* Event recorder: the loop (include/ptrev/event_backend.h). It sets the
 * program up (ptrace options, /proc/PID/mem, the initial mappings, rdtsc
 * trapping), gives the CPU to its first thread, then handles every stop
 * as it comes and, between stops, watches the running thread's time bounds
 * (STATE points), until the program is gone or the user stops it. */
#include "event_rec.h"

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

#include "ptrev/inferior_raw.h"
#include "ptrev/ptrace_wait.h"
#include "ptrev/sideband.h"
#include "ptrev/syscall_inject.h"
#include "ptrev/tsc_trap.h"

#define DEFAULT_SIGNAL_MS 5
#define DEFAULT_SLICE_MS 50

/* rdtsc/rdtscp trap (SIGSEGV) from now on, in this thread and every
 * thread it creates. A signal that arrives meanwhile waits, held. */
static int trap_rdtsc(struct ev_thread *t)
{
	struct ev_rec *r = t->rec;
	/* Where the machine lets rdtsc through whatever we ask (or
	 * PTREV_TSC_TRAPS=0 says so), the trap is not asked for: the
	 * recording says it was not (META rdtsc), and its replays read the
	 * TSC as the program did, on any machine. */
	if (!tsc_traps()) {
		tsc_traps_warn();
		return 0;
	}
	uint64_t args[6] = {PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0, 0};
	int64_t res = 0;
	int pending = 0;
	char why[256];
	if (syscall_inject(t->tid, SYS_prctl, args, &res, &pending, why, sizeof why) < 0)
		return ev_fail(r, "cannot trap rdtsc: %s", why);
	if (pending && t->nheld < EV_MAX_HELD) {
		siginfo_t si;
		memset(&si, 0, sizeof si);
		si.si_signo = pending;
		si.si_code = SI_USER;
		t->held[t->nheld++] = si;
		t->held_since = ev_now_ns();
	}
	if (res < 0)
		/* The program then reads the TSC itself: its values are not
		 * logged and a replay may see others. */
		fprintf(stderr, "ptrev: cannot trap rdtsc (prctl: %s); rdtsc values are not "
			"recorded\n", strerror((int)-res));
	else
		tsc_traps_warn();
	return 0;
}

int ev_set_up(struct ev_rec *r)
{
	/* vfork-done: gdb's breakpoints go back into the memory a vfork
	 * child shared, and gdb hears of it (ev_live_vfork_done). */
	if (ptrace(PTRACE_SETOPTIONS, r->pid, NULL,
		   (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_TRACESYSGOOD |
				  PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
				  PTRACE_O_TRACEVFORKDONE | PTRACE_O_TRACEEXEC |
				  PTRACE_O_EXITKILL)) < 0)
		return ev_fail(r, "cannot trace %d: %s", (int)r->pid, strerror(errno));
	if (ev_open_memfd(r) < 0)
		return -1;
	if (ev_sideband_start(r) < 0)
		return -1;
	struct ev_thread *t = ev_thread_add(r, r->pid);
	if (!t)
		return ev_fail(r, "out of memory");
	t->started = true;
	t->state = EV_T_READY;
	struct trace_thread th = {.tid = t->tid};
	if (trace_write_thread(r->w, &th) < 0)
		return ev_fail(r, "writing a THREAD record: %s", trace_writer_error(r->w));
	if (trap_rdtsc(t) < 0)
		return -1;
	ev_entry_arm(r);
	return ev_dispatch(r);
}

/* Wait for the next stop, or until the running thread's bound. */
static void wait_a_while(struct ev_rec *r, const sigset_t *chld)
{
	int64_t ns = ev_state_next_ns(r);
	struct timespec ts = {ns / 1000000000, ns % 1000000000};
	sigtimedwait(chld, NULL, ns < 0 ? NULL : &ts);
}

/* Something failed or the user stopped us: end the program, reap it. */
void ev_kill_all(struct ev_rec *r)
{
	int st;
	if (!r->proc_gone)
		kill(r->pid, SIGKILL);
	while (ptrace_waitpid(-1, &st, __WALL) > 0)
		;
	r->proc_gone = true;
}

void ev_free(struct ev_rec *r)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		mem_diff_free(r->threads[i]->watch);
		free(r->threads[i]);
	}
	free(r->threads);
	free(r->early);
	free(r->runs);
	ev_exec_free(r);
	if (r->sb)
		sideband_free(r->sb);
	if (r->memfd >= 0)
		close(r->memfd);
}

void ev_init(struct ev_rec *r, struct inferior *inf, struct trace_writer *w,
	     const struct event_record_opts *opts)
{
	memset(r, 0, sizeof *r);
	r->inf = inf;
	r->pid = inf->pid;
	r->self = getpid();
	r->memfd = -1;
	r->w = w;
	if (opts)
		r->opts = *opts;
	r->signal_ns = r->opts.signal_us ? r->opts.signal_us * 1000ull
					 : DEFAULT_SIGNAL_MS * 1000000ull;
	r->slice_ns = r->opts.slice_us ? r->opts.slice_us * 1000ull : DEFAULT_SLICE_MS * 1000000ull;
	r->t0_ns = ev_now_ns();
	r->end.status_kind = 2;
}

int event_backend_record(struct inferior *inf, struct trace_writer *w,
			 const struct event_record_opts *opts, struct trace_end *end,
			 char *err, size_t errlen)
{
	struct ev_rec r;
	ev_init(&r, inf, w, opts);

	/* SIGCHLD (a stop of the program's) wakes the loop; it is taken with
	 * sigtimedwait, never by a handler. */
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);

	int rc = ev_set_up(&r);
	while (rc == 0) {
		if (r.opts.stop && *r.opts.stop) {
			rc = -1;
			break;
		}
		/* With no bound to watch, wait for the next stop in waitpid
		 * itself: a wake-up and two syscalls fewer per stop than
		 * waiting for SIGCHLD. */
		int st;
		bool block = ev_state_next_ns(&r) < 0;
		pid_t tid = waitpid(-1, &st, __WALL | (block ? 0 : WNOHANG));
		if (tid > 0) {
			rc = ev_on_status(&r, tid, st);
			continue;
		}
		if (tid < 0 && errno == ECHILD)
			break; /* every thread is gone */
		if (tid < 0 && errno == EINTR)
			continue; /* the user's Ctrl-C or SIGTERM: see to it first */
		if (tid < 0) {
			rc = ev_fail(&r, "waiting for the program: %s", strerror(errno));
			break;
		}
		rc = ev_state_check(&r);
		if (rc == 0)
			rc = ev_exited_leader(&r);
		if (rc == 0)
			wait_a_while(&r, &chld);
	}
	if (rc == 0)
		rc = ev_sched_flush(&r);
	else
		ev_sched_flush(&r); /* what ran until here, as far as known */
	if (rc < 0 && !(r.opts.stop && *r.opts.stop))
		snprintf(err, errlen, "%s", r.err[0] ? r.err : "recording failed");
	if (rc < 0 || !r.proc_gone)
		ev_kill_all(&r);
	r.end.duration_ns = ev_now_ns() - r.t0_ns;
	ev_exec_report(&r);
	if (rc < 0)
		r.end.status_kind = 2;
	*end = r.end;
	ev_free(&r);
	sigprocmask(SIG_SETMASK, &old, NULL);
	inf_mark_gone(inf);
	inf->pid = 0;
	if (opts && opts->stop && *opts->stop)
		return 0; /* stopped by the user: the file is whole, status 2 */
	return rc < 0 ? -1 : 0;
}
