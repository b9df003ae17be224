/* Event replay: the replay process's registers and memory, read and
 * written by the tracer (a stopped thread's), and the clock its runs are
 * timed by. The bottom of replay/event_*.c: every other file uses these. */
#include "event_replay.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int erp_get_regs(struct erp *e, struct erp_thread *t, struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, regs) < 0)
		return erp_fail(e, "replay thread %d: registers: %s", (int)t->tid, strerror(errno));
	return 0;
}

int erp_regfile(struct erp *e, struct erp_thread *t, struct amd64_regfile *rf)
{
	memset(rf, 0, sizeof *rf);
	if (!t || !t->tid || t->gone || e->exited ||
	    ptrace(PTRACE_GETREGS, t->tid, NULL, &rf->gpr) < 0)
		return -1;
	struct iovec iov = {rf->xsave, sizeof rf->xsave};
	if (ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov) < 0)
		return -1;
	rf->xsave_len = iov.iov_len;
	rf->xcr0 = amd64_xcr0_from_xsave(rf->xsave, rf->xsave_len);
	return 0;
}

ssize_t erp_read_mem(struct erp *e, uint64_t addr, void *buf, size_t len)
{
	if (e->exited || e->memfd < 0)
		return -1;
	ssize_t n = pread(e->memfd, buf, len, (off_t)addr);
	return n > 0 ? n : -1;
}

int erp_set_regs(struct erp *e, struct erp_thread *t, const struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, regs) < 0)
		return erp_fail(e, "replay thread %d: set registers: %s", (int)t->tid,
				strerror(errno));
	return 0;
}

int erp_put_code_byte(struct erp *e, uint64_t pc, uint8_t b)
{
	if (pwrite(e->memfd, &b, 1, (off_t)pc) != 1)
		return erp_fail(e, "cannot write the code at %#llx of the replay",
				(unsigned long long)pc);
	return 0;
}

uint64_t erp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
