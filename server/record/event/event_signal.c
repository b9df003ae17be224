/* Event recorder: signals, each delivered at a point a replay can find
 * without an instruction counter (event_backend.h):
 *  - synchronous ones (a fault, int3, ud2 of the thread's own instruction)
 *    at once: they recur by themselves;
 *  - asynchronous ones taken at a syscall's return (they interrupted it,
 *    or the thread sent them to itself) at once;
 *  - asynchronous ones that arrive while the thread runs its own code are
 *    held (the stop is suppressed) and sent again by the recorder where
 *    the thread next stops at an event: before its next syscall, or at a
 *    STATE point; their stop is then ours, and delivers the recorded
 *    siginfo.
 * Delivery is a single step with the signal, which stops at the handler's
 * first instruction: the handler's address and the frame the kernel wrote
 * go into the log. Signals that change nothing (ignored, or harmless by
 * default) pass through unrecorded, as in the sw backend; a fatal one is
 * logged (and, when it arrived in the thread's own code, the point it
 * arrived at) before it ends the program. rdtsc/rdtscp trap with SIGSEGV
 * (PR_SET_TSC) and are emulated here. */
#include "event_rec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#include "ptrev/record_events.h"

enum disposition { DISP_CAUGHT, DISP_IGNORED, DISP_STOP, DISP_FATAL };

/* What the program does with sig, from /proc (the process's handlers). */
static enum disposition disposition(struct ev_rec *r, int sig)
{
	char path[64], buf[4096];
	unsigned long long ign = 0, cgt = 0;
	snprintf(path, sizeof path, "/proc/%d/status", (int)r->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = 0;
		for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			if (!strncmp(l, "SigIgn:", 7))
				ign = strtoull(l + 7, NULL, 16);
			else if (!strncmp(l, "SigCgt:", 7))
				cgt = strtoull(l + 7, NULL, 16);
		}
	}
	unsigned long long bit = 1ull << (sig - 1);
	if (cgt & bit)
		return DISP_CAUGHT;
	if (ign & bit)
		return DISP_IGNORED;
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
		return DISP_IGNORED;
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return DISP_STOP;
	default:
		return DISP_FATAL;
	}
}

/* Raised by the thread's own instruction (the kernel's si_code > 0): it
 * happens again in a replay by itself. */
static bool synchronous(int sig, const siginfo_t *si)
{
	return si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
				   sig == SIGFPE || sig == SIGTRAP);
}

static void prepare(struct ev_thread *t, int sig, const siginfo_t *si,
		    enum trace_signal_where where)
{
	memset(&t->sig, 0, sizeof t->sig);
	t->sig.tid = t->tid;
	t->sig.pos = t->events;
	t->sig.signo = sig;
	t->sig.where = where;
	memcpy(t->sig.siginfo, si, sizeof t->sig.siginfo < sizeof *si ? sizeof t->sig.siginfo
								       : sizeof *si);
}

static int write_signal(struct ev_thread *t, uint64_t handler_ip)
{
	struct ev_rec *r = t->rec;
	t->sig.handler_ip = handler_ip;
	if (trace_write_signal(r->w, &t->sig) < 0)
		return ev_fail(r, "writing a SIGNAL record: %s", trace_writer_error(r->w));
	r->end.signals++;
	ev_event_done(t);
	return 0;
}

/* Step t with the signal: it stops at the handler's first instruction. */
static int deliver(struct ev_thread *t, int sig, const siginfo_t *si,
		   enum trace_signal_where where)
{
	prepare(t, sig, si, where);
	t->delivering = true;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, (void *)(long)sig) < 0 && errno != ESRCH)
		return ev_fail(t->rec, "cannot deliver signal %d to thread %d: %s", sig,
			       (int)t->tid, strerror(errno));
	t->running = true;
	return 0;
}

static int hold(struct ev_thread *t, const siginfo_t *si)
{
	/* A standard signal already waiting is not queued twice (the kernel
	 * would not either); real-time ones are. */
	for (size_t i = 0; si->si_signo < SIGRTMIN && i < t->nheld; i++)
		if (t->held[i].si_signo == si->si_signo)
			return ev_resume(t, 0);
	if (t->nheld == EV_MAX_HELD)
		return ev_fail(t->rec, "thread %d: more than %d signals waiting", (int)t->tid,
			       EV_MAX_HELD);
	if (!t->nheld)
		t->held_since = ev_now_ns();
	t->held[t->nheld++] = *si;
	return ev_resume(t, 0);
}

int ev_signal_stop(struct ev_thread *t, int sig, const siginfo_t *si,
		   struct user_regs_struct *now)
{
	struct ev_rec *r = t->rec;
	bool at_return = t->at_return;
	bool sync = synchronous(sig, si);
	t->at_return = false;
	switch (disposition(r, sig)) {
	case DISP_IGNORED:
	case DISP_STOP:
		return ev_resume(t, sig); /* changes nothing the log must hold */
	case DISP_FATAL:
		/* It ends the program here: where that is must be in the
		 * log, as a STATE point when nothing else marks it. */
		if (!sync && !at_return && ev_point_write(t, now) < 0)
			return -1;
		prepare(t, sig, si, sync ? TRACE_SIG_SYNC : TRACE_SIG_AFTER_EVENT);
		if (write_signal(t, 0) < 0)
			return -1;
		return ev_resume(t, sig);
	case DISP_CAUGHT:
		break;
	}
	if (sync)
		return deliver(t, sig, si, TRACE_SIG_SYNC);
	if (at_return)
		return deliver(t, sig, si, TRACE_SIG_AFTER_EVENT);
	return hold(t, si);
}

int ev_delivered_stop(struct ev_thread *t, struct user_regs_struct *now)
{
	struct ev_rec *r = t->rec;
	siginfo_t si;
	memset(&si, 0, sizeof si);
	ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si);
	if (si.si_signo != SIGTRAP) {
		/* Another signal stopped it before it reached the handler:
		 * it waits, held, and the step goes on. */
		if (t->nheld < EV_MAX_HELD) {
			if (!t->nheld)
				t->held_since = ev_now_ns();
			t->held[t->nheld++] = si;
		}
		if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) < 0 && errno != ESRCH)
			return ev_fail(r, "cannot step thread %d: %s", (int)t->tid, strerror(errno));
		t->running = true;
		return 0;
	}
	t->delivering = false;
	/* The kernel reports a step into a handler with si_code SIGTRAP
	 * (ptrace_notify); an ordinary step trap means no handler ran. */
	uint64_t handler = si.si_code == SIGTRAP ? now->rip : 0;
	uint64_t pos = t->events;
	if (write_signal(t, handler) < 0)
		return -1;
	if (handler && record_sigframe(r->w, t->tid, pos, now->rsp, ev_read_mem, r) < 0)
		return ev_fail(r, "writing a SIGFRAME record: %s", trace_writer_error(r->w));
	return ev_resume(t, 0);
}

int ev_send_held(struct ev_thread *t, enum trace_signal_where where)
{
	struct ev_rec *r = t->rec;
	t->own_si = t->held[0];
	t->own_sig = t->own_si.si_signo;
	t->own_where = where;
	memmove(t->held, t->held + 1, --t->nheld * sizeof t->held[0]);
	if (t->nheld)
		t->held_since = ev_now_ns();
	if (syscall(SYS_tgkill, r->pid, t->tid, t->own_sig) < 0)
		return ev_fail(r, "cannot send signal %d to thread %d: %s", t->own_sig,
			       (int)t->tid, strerror(errno));
	return 0;
}

int ev_signal_take_waiting(struct ev_thread *t)
{
	struct ev_rec *r = t->rec;
	if (r->cpu != t || t->state != EV_T_RUNNING || !t->started || t->exiting ||
	    t->delivering || t->own_sig || t->parked_sig || t->exit_hold_point)
		return 0;
	/* A signal that arrived while gdb held the program (gdb's `signals`
	 * test: alarm(1), a sleep, then a function called; the handler
	 * runs first) or one held since t ran its own code. */
	bool kernel = ev_other_signal_pending(t);
	if (!t->nheld && !kernel)
		return 0;
	if (t->moved) {
		struct user_regs_struct now;
		if (ptrace(PTRACE_GETREGS, t->tid, NULL, &now) < 0)
			return ev_fail(r, "thread %d: registers: %s", (int)t->tid, strerror(errno));
		if (ev_point_write(t, &now) < 0)
			return -1;
	}
	if (t->nheld)
		return ev_send_held(t, TRACE_SIG_AFTER_EVENT);
	/* Its stop comes before t runs an instruction: taken as at an
	 * event (ev_signal_stop). */
	t->at_return = true;
	return 0;
}

int ev_own_signal_stop(struct ev_thread *t)
{
	int sig = t->own_sig;
	t->own_sig = 0;
	/* The signal as it first arrived, not as we sent it again. */
	if (ptrace(PTRACE_SETSIGINFO, t->tid, NULL, &t->own_si) < 0)
		return ev_fail(t->rec, "cannot set the siginfo of signal %d: %s", sig,
			       strerror(errno));
	return deliver(t, sig, &t->own_si, t->own_where);
}

/* Is the instruction at ip rdtsc (0f 31) or rdtscp (0f 01 f9)? Its
 * length, 0 if neither. */
static int rdtsc_at(struct ev_rec *r, uint64_t ip, bool *is_rdtscp)
{
	uint8_t b[3] = {0};
	if (pread(r->memfd, b, sizeof b, (off_t)ip) < 2)
		return 0;
	*is_rdtscp = b[0] == 0x0f && b[1] == 0x01 && b[2] == 0xf9;
	if (b[0] == 0x0f && b[1] == 0x31)
		return 2;
	return *is_rdtscp ? 3 : 0;
}

int ev_rdtsc(struct ev_thread *t, struct user_regs_struct *now)
{
	struct ev_rec *r = t->rec;
	bool is_rdtscp;
	int len = rdtsc_at(r, now->rip, &is_rdtscp);
	if (!len)
		return 0;
	unsigned int aux = 0;
	uint64_t v = is_rdtscp ? __rdtscp(&aux) : __rdtsc();
	now->rax = (uint32_t)v;
	now->rdx = v >> 32;
	if (is_rdtscp)
		now->rcx = aux;
	now->rip += (uint64_t)len;
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, now) < 0)
		return ev_fail(r, "rdtsc emulation in thread %d: %s", (int)t->tid, strerror(errno));
	struct trace_rdtsc rec = {.tid = t->tid, .pos = t->events, .value = v, .aux = aux,
				  .is_rdtscp = is_rdtscp};
	if (trace_write_rdtsc(r->w, &rec) < 0)
		return ev_fail(r, "writing an RDTSC record: %s", trace_writer_error(r->w));
	ev_event_done(t);
	return ev_resume(t, 0) < 0 ? -1 : 1;
}
