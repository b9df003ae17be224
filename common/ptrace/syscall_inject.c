/* Injecting a system call into a stopped thread: borrow two code bytes at
 * the current IP for a `syscall` (0f 05), point the registers at it,
 * single-step once, collect rax, then put bytes and registers back. */
#include "ptrev/syscall_inject.h"
#include "ptrev/ptrace_wait.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

int syscall_inject(pid_t tid, uint64_t nr, const uint64_t args[6],
		   int64_t *result, int *pending_sig, char *err, size_t errlen)
{
	static const uint64_t zero[6];
	struct user_regs_struct saved, r;
	long word;
	uint64_t patched;
	int st, ret = -1;

	if (!args)
		args = zero;
	*pending_sig = 0;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &saved) < 0) {
		snprintf(err, errlen, "inject: registers of %d: %s", (int)tid,
			 strerror(errno));
		return -1;
	}
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, tid, (void *)saved.rip, NULL);
	if (errno) {
		snprintf(err, errlen, "inject: code at %#llx: %s",
			 (unsigned long long)saved.rip, strerror(errno));
		return -1;
	}
	/* Little endian: the low two bytes are the ones at rip. */
	patched = ((uint64_t)word & ~0xffffull) | 0x050full;
	if (ptrace(PTRACE_POKETEXT, tid, (void *)saved.rip, (void *)patched) < 0) {
		snprintf(err, errlen, "inject: patch at %#llx: %s",
			 (unsigned long long)saved.rip, strerror(errno));
		return -1;
	}
	r = saved;
	r.rax = nr;
	r.orig_rax = (unsigned long long)-1; /* no syscall restart games */
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	if (ptrace(PTRACE_SETREGS, tid, NULL, &r) < 0) {
		snprintf(err, errlen, "inject: set registers: %s", strerror(errno));
		goto restore_code;
	}
	/* A signal that was already pending stops the thread before the
	 * syscall runs (IP unchanged): keep it for the caller, try again. */
	for (int tries = 0; tries < 16; tries++) {
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0 ||
		    ptrace_wait_task(tid, &st) < 0) {
			snprintf(err, errlen, "inject: step: %s", strerror(errno));
			goto restore_regs;
		}
		if (!WIFSTOPPED(st)) {
			snprintf(err, errlen, "inject: thread %d ended", (int)tid);
			return -1;
		}
		if (ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0) {
			snprintf(err, errlen, "inject: registers: %s", strerror(errno));
			goto restore_regs;
		}
		if (r.rip == saved.rip + 2) {
			*result = (int64_t)r.rax;
			ret = 0;
			if (WSTOPSIG(st) != SIGTRAP && !*pending_sig)
				*pending_sig = WSTOPSIG(st);
			break;
		}
		if (WSTOPSIG(st) != SIGTRAP && !*pending_sig)
			*pending_sig = WSTOPSIG(st);
	}
	if (ret < 0)
		snprintf(err, errlen, "inject: the syscall did not run");
restore_regs:
	if (ptrace(PTRACE_SETREGS, tid, NULL, &saved) < 0 && ret == 0) {
		snprintf(err, errlen, "inject: restore registers: %s", strerror(errno));
		ret = -1;
	}
restore_code:
	if (ptrace(PTRACE_POKETEXT, tid, (void *)saved.rip, (void *)word) < 0 &&
	    ret == 0) {
		snprintf(err, errlen, "inject: restore code: %s", strerror(errno));
		ret = -1;
	}
	return ret;
}
