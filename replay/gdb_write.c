/* gdb's changes made again in a replay process (replay/gdb_write.h). */
#include "gdb_write.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

_Static_assert(sizeof(struct user_regs_struct) == TRACE_GDB_REGS_MIN,
	       "GDB_REGS records hold struct user_regs_struct first");

int gdb_write_apply(pid_t tid, int memfd, const struct trace_gdb_write *g,
		    uint64_t *jumped_from, char *why, size_t whylen)
{
	if (jumped_from)
		*jumped_from = 0;
	if (!g->regs) {
		if (pwrite(memfd, g->bytes, g->len, (off_t)g->addr) != (ssize_t)g->len) {
			snprintf(why, whylen, "cannot make gdb's change of %zu bytes at %#llx in the "
				 "replay: %s", g->len, (unsigned long long)g->addr, strerror(errno));
			return -1;
		}
		return 0;
	}
	struct user_regs_struct regs, was;
	memcpy(&regs, g->bytes, sizeof regs);
	if (ptrace(PTRACE_GETREGS, tid, NULL, &was) < 0 ||
	    ptrace(PTRACE_SETREGS, tid, NULL, &regs) < 0) {
		snprintf(why, whylen, "cannot make gdb's change of thread %d's registers in the "
			 "replay: %s", (int)tid, strerror(errno));
		return -1;
	}
	if (jumped_from && regs.rip != was.rip)
		*jumped_from = was.rip;
	if (g->len == sizeof regs)
		return 0;
	struct iovec iov = {.iov_base = (void *)(g->bytes + sizeof regs),
			    .iov_len = g->len - sizeof regs};
	if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0) {
		snprintf(why, whylen, "cannot make gdb's change of thread %d's vector registers "
			 "in the replay: %s", (int)tid, strerror(errno));
		return -1;
	}
	return 0;
}

int gdb_write_by_pos(const void *a, const void *b)
{
	const struct trace_gdb_write *x = *(const struct trace_gdb_write *const *)a;
	const struct trace_gdb_write *y = *(const struct trace_gdb_write *const *)b;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x < y ? -1 : x > y;
}
