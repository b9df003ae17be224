/* Registers of a stopped thread: the general registers through
 * PTRACE_GETREGS/SETREGS, x87/SSE/AVX state as the NT_X86_XSTATE regset. */
#include "inferior_internal.h"

#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#define RIP_OFFSET offsetof(struct user, regs.rip)

/* One of its threads, or the fork child it holds (gdb reads the child's
 * registers before it lets it go or keeps it). */
static bool known_thread(struct inferior *inf, pid_t tid)
{
	return inf->pid && !inf->exited &&
	       (inferior_thread(inf, tid) || (tid && tid == inf->fork_child));
}

int inf_get_pc(pid_t tid, uint64_t *pc)
{
	errno = 0;
	long v = ptrace(PTRACE_PEEKUSER, tid, (void *)RIP_OFFSET, NULL);
	if (v == -1 && errno)
		return -1;
	*pc = (uint64_t)v;
	return 0;
}

int inf_set_pc(pid_t tid, uint64_t pc)
{
	return ptrace(PTRACE_POKEUSER, tid, (void *)RIP_OFFSET, (void *)pc) < 0 ? -1 : 0;
}

int inferior_get_regs(struct inferior *inf, pid_t tid, struct user_regs_struct *regs)
{
	if (!known_thread(inf, tid))
		return -1;
	return ptrace(PTRACE_GETREGS, tid, NULL, regs) < 0 ? -1 : 0;
}

int inferior_set_regs(struct inferior *inf, pid_t tid, const struct user_regs_struct *regs)
{
	if (!known_thread(inf, tid))
		return -1;
	return ptrace(PTRACE_SETREGS, tid, NULL, (void *)regs) < 0 ? -1 : 0;
}

int inferior_get_xstate(struct inferior *inf, pid_t tid, void *buf, size_t *len)
{
	if (!known_thread(inf, tid))
		return -1;
	struct iovec iov = { .iov_base = buf, .iov_len = *len };
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0)
		return -1;
	*len = iov.iov_len;
	return 0;
}

int inferior_set_xstate(struct inferior *inf, pid_t tid, const void *buf, size_t len)
{
	if (!known_thread(inf, tid))
		return -1;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0 ? -1 : 0;
}
