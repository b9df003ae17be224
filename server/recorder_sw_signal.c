/* sw backend: signal stops. A signal is recorded at the exact position it
 * was delivered (before instruction pos of its thread) and delivered with
 * the next single-step, which stops again at the handler's first
 * instruction: that is where the encoder's FUP + TIP.PGD (interrupt) and the
 * handler's TIP.PGE go. rdtsc/rdtscp trap with SIGSEGV (PR_SET_TSC) and are
 * emulated here, their values logged. */
#include "recorder_sw.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>
#include <x86intrin.h>

static int write_signal(struct sw_thread *t, uint64_t handler_ip)
{
	t->sig.handler_ip = handler_ip;
	t->rec->end->signals++;
	return trace_write_signal(t->rec->w, &t->sig);
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
	siginfo_t si;

	memset(&si, 0, sizeof si);
	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si) < 0 && errno == EINVAL)
		return sw_resume(t, now); /* a group-stop, not a signal: go on */
	if (sig == SIGSEGV && si.si_code == SI_KERNEL &&
	    now->rip == t->regs.rip) {
		bool is_rdtscp;
		int len = rdtsc_at(t->rec, now->rip, &is_rdtscp);
		if (len) {
			if (emulate_rdtsc(t, now, len, is_rdtscp) < 0)
				return -1;
			return sw_resume(t, now);
		}
	}
	if (sig == SIGTRAP && t->info.kind == INSN_INT && si.si_code != SI_KERNEL) {
		/* int 0x80 and friends: an ordinary step. */
		if (sw_complete_step(t, now) < 0)
			return -1;
		return sw_resume(t, now);
	}
	/* If the IP moved, the instruction completed (a syscall that raised
	 * the signal, an int3) and the signal comes before the next one; if
	 * not, it faulted or the signal arrived before it ran. */
	if (now->rip != t->regs.rip && sw_complete_step(t, now) < 0)
		return -1;
	memset(&t->sig, 0, sizeof t->sig);
	t->sig.tid = t->tid;
	t->sig.pos = t->insns;
	t->sig.signo = sig;
	memcpy(t->sig.siginfo, &si, sizeof t->sig.siginfo < sizeof si ?
	       sizeof t->sig.siginfo : sizeof si);
	t->deliver = sig;
	return sw_resume(t, now);
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
		if (write_signal(t, now->rip) < 0)
			return -1;
		return sw_resume(t, now);
	}
	/* Ignored, or no handler and harmless: the instruction ran. */
	if (write_signal(t, 0) < 0 || sw_complete_step(t, now) < 0)
		return -1;
	return sw_resume(t, now);
}

int sw_signal_fatal(struct sw_thread *t)
{
	if (!t->delivering)
		return 0;
	t->delivering = false;
	return write_signal(t, 0);
}
