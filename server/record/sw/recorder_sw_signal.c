/* sw backend: signal stops. A signal is recorded at the exact position it
 * was delivered (before instruction pos of its thread) and delivered with
 * the next single-step, which stops again at the handler's first
 * instruction: that is where the encoder's FUP + TIP.PGD (interrupt) and the
 * handler's TIP.PGE go. rdtsc/rdtscp trap with SIGSEGV (PR_SET_TSC) and are
 * emulated here, their values logged. */
#include "recorder_sw.h"

#include "ptrev/syscall_inject.h"
#include "ptrev/tsc_trap.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

static int write_signal(struct sw_thread *t, uint64_t handler_ip)
{
	t->sig.handler_ip = handler_ip;
	t->rec->end.signals++;
	return trace_write_signal(t->rec->w, &t->sig);
}

void sw_prepare_signal(struct sw_thread *t, int sig, const siginfo_t *si)
{
	siginfo_t mk;

	if (!si) {
		/* What the kernel makes of a signal a tracer injects. */
		memset(&mk, 0, sizeof mk);
		mk.si_signo = sig;
		mk.si_code = SI_USER;
		mk.si_pid = t->rec->self;
		mk.si_uid = getuid();
		si = &mk;
	}
	memset(&t->sig, 0, sizeof t->sig);
	t->sig.tid = t->tid;
	t->sig.pos = t->insns;
	t->sig.signo = sig;
	memcpy(t->sig.siginfo, si, sizeof t->sig.siginfo < sizeof *si ?
	       sizeof t->sig.siginfo : sizeof *si);
	t->deliver = sig;
}

/* A signal for the caller: keep it undelivered and report it. */
void sw_hold_signal(struct sw_thread *t, int sig, const siginfo_t *si)
{
	sw_prepare_signal(t, sig, si);
	t->deliver = 0;
	t->held = true;
	memcpy(&t->held_si, t->sig.siginfo, sizeof t->held_si);
	sw_set_pending(t, STOP_SIGNAL, sig);
}

/* Would the kernel restart the interrupted syscall if no handler runs? */
static bool restarting(const struct user_regs_struct *now)
{
	int64_t rax = (int64_t)now->rax;
	return (int64_t)now->orig_rax >= 0 &&
	       (rax == -512 || rax == -513 || rax == -514 || rax == -516);
}

/* Is the instruction at ip rdtsc (0f 31) or rdtscp (0f 01 f9)? Returns its
 * length, 0 if neither. */
static int rdtsc_at(struct sw_rec *r, uint64_t ip, bool *is_rdtscp)
{
	uint8_t b[3] = {0};

	if (pread(r->memfd, b, sizeof b, (off_t)ip) < 2)
		return 0;
	if (b[0] == 0x0f && b[1] == 0x31) {
		*is_rdtscp = false;
		return 2;
	}
	if (b[0] == 0x0f && b[1] == 0x01 && b[2] == 0xf9) {
		*is_rdtscp = true;
		return 3;
	}
	return 0;
}

/* Execute the trapped rdtsc/rdtscp for the program: the value comes from
 * our own TSC read, goes into its registers and into the log. */
static int emulate_rdtsc(struct sw_thread *t, struct user_regs_struct *now,
			 int len, bool is_rdtscp)
{
	struct trace_rdtsc rec = {0};
	unsigned int aux = 0;
	uint64_t v = is_rdtscp ? __rdtscp(&aux) : __rdtsc();

	now->rax = (uint32_t)v;
	now->rdx = v >> 32;
	if (is_rdtscp)
		now->rcx = aux;
	now->rip += (uint64_t)len;
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, now) < 0) {
		snprintf(t->rec->err, t->rec->errlen, "rdtsc emulation in thread "
			 "%d: %s", (int)t->tid, strerror(errno));
		return -1;
	}
	rec.tid = t->tid;
	rec.pos = t->insns;
	rec.value = v;
	rec.aux = aux;
	rec.is_rdtscp = is_rdtscp;
	if (trace_write_rdtsc(t->rec->w, &rec) < 0)
		return -1;
	ptenc_set_time(t->enc, v);
	return sw_complete_step(t, now);
}

int sw_signal_stop(struct sw_thread *t, int sig, struct user_regs_struct *now)
{
	struct sw_rec *r = t->rec;
	siginfo_t si;
	bool moved;

	memset(&si, 0, sizeof si);
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) < 0 && errno == EINVAL)
		return sw_resume(t, now, false); /* a group-stop: go on */
	if (sig == SIGSEGV && si.si_code == SI_KERNEL &&
	    now->rip == t->regs.rip) {
		bool is_rdtscp;
		int len = rdtsc_at(r, now->rip, &is_rdtscp);
		if (len) {
			if (emulate_rdtsc(t, now, len, is_rdtscp) < 0)
				return -1;
			return sw_resume(t, now, true);
		}
	}
	if (sig == SIGTRAP && t->info.kind == INSN_INT && si.si_code != SI_KERNEL) {
		/* int 0x80 and friends: an ordinary step. */
		if (sw_complete_step(t, now) < 0)
			return -1;
		return sw_resume(t, now, true);
	}
	/* If the IP moved, the instruction completed (a syscall that raised
	 * the signal or was interrupted, an int3) and the signal comes before
	 * the next one; if not, it faulted or the signal arrived before it
	 * ran. */
	moved = now->rip != t->regs.rip;
	if (moved && sw_complete_step(t, now) < 0)
		return -1;
	if (sig == SIGSTOP && t->stop_expected > 0 && si.si_code == SI_TKILL &&
	    si.si_pid == r->self) {
		/* Ours, to stop the thread (all-stop): it never happened. A
		 * syscall it interrupted is restarted by the kernel. */
		t->stop_expected--;
		return sw_resume(t, now, moved && !restarting(now));
	}
	/* Reported to a step all the same (as gdbserver: inferior_wait). */
	if (sig > 0 && sig < 65 && r->inf->pass_signals[sig] && !t->stepping) {
		sw_prepare_signal(t, sig, &si);
		return sw_resume(t, now, false);
	}
	sw_hold_signal(t, sig, &si);
	return sw_resume(t, now, false);
}

/* The x86-64 kernel's rt_sigframe at the handler's rsp: return address
 * (8), its ucontext (flags 8, link 8, stack 24, sigcontext 256, mask 8)
 * and the siginfo (128); the sigcontext's fpstate pointer (at 184 in it)
 * leads to the FPU area above, whose fxsave software bytes (at 464) give
 * the XSAVE area's size. */
#define SIGFRAME_LEN 440
#define SIGFRAME_FPSTATE (8 + 40 + 184)
#define FPX_SW_BYTES 464

/* Log the frame the kernel wrote for the handler t just entered, so that a
 * replay can put exactly these bytes in place (trace_file.h). */
static int log_sigframe(struct sw_thread *t, uint64_t rsp)
{
	uint8_t head[SIGFRAME_LEN];
	uint64_t fp, end = rsp + SIGFRAME_LEN;
	struct trace_sigframe f = {0};
	uint8_t *buf;
	int rc;

	if (sw_read_mem(t->rec, rsp, head, sizeof head) != (long)sizeof head)
		return 0; /* unreadable: the replay makes its own */
	memcpy(&fp, head + SIGFRAME_FPSTATE, sizeof fp);
	if (fp >= end && fp - rsp < TRACE_SIGFRAME_MAX) {
		uint32_t sw[2] = {0, 0};
		uint64_t fp_end = fp + 512; /* fxsave only */
		if (sw_read_mem(t->rec, fp + FPX_SW_BYTES, sw, sizeof sw) == (long)sizeof sw &&
		    sw[0] == FP_XSTATE_MAGIC1 && sw[1] > 512) /* <signal.h> */
			fp_end = fp + sw[1];
		if (fp_end - rsp <= TRACE_SIGFRAME_MAX)
			end = fp_end;
	}
	buf = malloc(end - rsp);
	if (!buf || sw_read_mem(t->rec, rsp, buf, end - rsp) != (long)(end - rsp)) {
		free(buf);
		return 0;
	}
	f.tid = t->tid;
	f.pos = t->sig.pos;
	f.addr = rsp;
	f.bytes = buf;
	f.len = end - rsp;
	rc = trace_write_sigframe(t->rec->w, &f);
	free(buf);
	return rc;
}

int sw_delivered_stop(struct sw_thread *t, struct user_regs_struct *now)
{
	siginfo_t si;

	memset(&si, 0, sizeof si);
	ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si);
	t->delivering = false;
	/* The kernel reports a step into a handler with si_code SIGTRAP
	 * (ptrace_notify), unlike an ordinary step trap. */
	if (si.si_code == SIGTRAP) {
		if (ptenc_interrupt(t->enc, t->regs.rip) < 0) {
			snprintf(t->rec->err, t->rec->errlen, "encoder: %s",
				 ptenc_error(t->enc));
			return -1;
		}
		ptenc_set_time(t->enc, __rdtsc());
		if (write_signal(t, now->rip) < 0 || log_sigframe(t, now->rsp) < 0)
			return -1;
		return sw_resume(t, now, true);
	}
	/* Ignored, or no handler and harmless: the instruction ran. */
	if (write_signal(t, 0) < 0 || sw_complete_step(t, now) < 0)
		return -1;
	return sw_resume(t, now, true);
}

int sw_signal_fatal(struct sw_thread *t)
{
	if (!t->delivering)
		return 0;
	t->delivering = false;
	return write_signal(t, 0);
}

int sw_set_tsc_trapping(struct sw_thread *t, bool on)
{
	struct sw_rec *r = t->rec;
	uint64_t args[6] = { PR_SET_TSC, on ? PR_TSC_SIGSEGV : PR_TSC_ENABLE,
			     0, 0, 0, 0 };
	int64_t res = 0;
	int pending = 0;

	/* Not asked for where it does nothing (or PTREV_TSC_TRAPS=0 says so),
	 * as the event recorder does: the recording says rdtsc was not
	 * trapped (META rdtsc), and its replays then let it through too
	 * (replay/relaunch.c); a trap asked for all the same would log
	 * values that a replay, not trapping, never takes. */
	if (on && !tsc_traps()) {
		tsc_traps_warn();
		return 0;
	}
	if (syscall_inject(t->tid, SYS_prctl, args, &res, &pending, r->err,
			   r->errlen) < 0)
		return -1;
	if (pending == SIGSTOP && t->stop_expected > 0) {
		/* Ours (all-stop: it was still pending when the thread
		 * stopped for something else), which the injection's step
		 * swallowed: it never happened, nobody must wait for it. */
		t->stop_expected--;
	} else if (pending) {
		if (pending < 65 && r->inf->pass_signals[pending])
			sw_prepare_signal(t, pending, NULL);
		else
			sw_hold_signal(t, pending, NULL);
	}
	if (res < 0 && on) {
		/* Without trapping the program reads the TSC itself: the
		 * recording is still exact, only the values are not logged. */
		fprintf(stderr, "ptrev: cannot trap rdtsc (prctl: %s); rdtsc "
			"values are not recorded\n", strerror((int)-res));
	} else if (on) {
		tsc_traps_warn();
	}
	return 0;
}
