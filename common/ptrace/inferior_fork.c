/* A fork or vfork of the traced program. Its breakpoints are int3 bytes in
 * memory, which the child gets a copy of (fork) or shares (vfork): left
 * there, the child would die of SIGTRAP at the first one it reaches. So the
 * live program's forks are traced (inferior_follow_forks); the child gets
 * the original bytes back and is let go, as gdbserver and gdb do with
 * follow-fork-mode parent and detach-on-fork on. A vfork child shares the
 * parent's memory until it execs or exits: the breakpoints are lifted
 * there, and put back when the parent's vfork is done. */
#include "inferior_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/cpu_bind.h"
#include "ptrev/ptrace_wait.h"
#include "ptrev/syscall_inject.h"

int inferior_follow_forks(struct inferior *inf, bool on)
{
	long opts = PTRACE_O_TRACECLONE | (inf->attached ? 0 : PTRACE_O_EXITKILL);
	if (on)
		opts |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE |
			PTRACE_O_TRACEEXEC;
	int rc = 0;
	for (size_t i = 0; i < inf->nthreads; i++)
		if (ptrace(PTRACE_SETOPTIONS, inf->threads[i].tid, NULL, (void *)opts) < 0 &&
		    errno != ESRCH)
			rc = -1;
	inf->follow_forks = on && rc == 0;
	return rc;
}

/* Collect a fork child's first stop unless the caller saw it already;
 * false when the child is gone. */
static bool first_stop(pid_t child, bool stop_seen)
{
	int st;
	return stop_seen || (ptrace_waitpid(child, &st, __WALL) > 0 && WIFSTOPPED(st));
}

/* The recorders trap rdtsc (PR_SET_TSC) in the program, and a fork child
 * inherits it: untraced, its first rdtsc (ld.so has one after an exec)
 * would be a SIGSEGV. */
static void untrap_tsc(pid_t child)
{
	uint64_t args[6] = {PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0, 0};
	int64_t result;
	int pending = 0;
	char err[200];
	if (syscall_inject(child, SYS_prctl, args, &result, &pending, err, sizeof err) != 0)
		fprintf(stderr, "ptrev: forked process %d keeps rdtsc trapped: %s\n", (int)child,
			err);
}

/* Collect the child's first stop and take the breakpoints out of its
 * memory; false when it is gone already. */
static bool clean_child(struct inferior *inf, pid_t child, bool vfork, bool stop_seen,
			bool untrap)
{
	if (!first_stop(child, stop_seen))
		return false;
	if (untrap)
		untrap_tsc(child);
	if (vfork) {
		/* Shared memory: out of the parent's too, until vfork-done. */
		for (size_t i = 0; i < inf->nbps; i++)
			inf_mem_write_raw(inf, inf->bps[i].addr, &inf->bps[i].saved, 1);
		inf->vfork_lifted = true;
	} else {
		inf_swbreaks_restore_in(inf, child);
	}
	return true;
}

/* The child is not ptrev's to run any more: the CPUs the program had,
 * and untraced. */
static void let_go(pid_t child)
{
	cpu_bind_release(child);
	ptrace(PTRACE_DETACH, child, NULL, NULL);
}

void ptrace_fork_child_let_go(pid_t child, bool stop_seen)
{
	if (!first_stop(child, stop_seen))
		return;
	untrap_tsc(child);
	let_go(child);
}

void inf_fork_child_release(struct inferior *inf, pid_t child, bool vfork, bool stop_seen,
			    bool untrap_tsc)
{
	if (clean_child(inf, child, vfork, stop_seen, untrap_tsc))
		let_go(child);
}

void inf_fork_child_hold(struct inferior *inf, pid_t child, bool vfork, bool stop_seen,
			 bool untrap_tsc)
{
	if (clean_child(inf, child, vfork, stop_seen, untrap_tsc)) {
		inf->fork_child = child;
		inf->fork_child_vfork = vfork;
	}
}


int inferior_detach_fork_child(struct inferior *inf)
{
	if (!inf->fork_child)
		return -1;
	let_go(inf->fork_child);
	inf->fork_child = 0;
	return 0;
}

ssize_t inferior_fork_child_mem(struct inferior *inf, uint64_t addr, void *buf, size_t len,
				bool write)
{
	char path[64];
	if (!inf->fork_child)
		return -1;
	snprintf(path, sizeof path, "/proc/%d/mem", (int)inf->fork_child);
	int fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n;
}

void inf_vfork_done(struct inferior *inf)
{
	if (!inf->vfork_lifted)
		return;
	static const uint8_t int3 = 0xcc;
	for (size_t i = 0; i < inf->nbps; i++)
		inf_mem_write_raw(inf, inf->bps[i].addr, &int3, 1);
	inf->vfork_lifted = false;
}

void inf_after_exec(struct inferior *inf)
{
	inf_vfork_child_done(inf); /* its int3s stayed in the parent's memory */
	/* One thread is left, with the process id (the kernel gave the
	 * exec'ing thread the leader's); the old program's memory, and with
	 * it every int3, is gone, and so are the debug registers. */
	for (size_t i = inf->nthreads; i-- > 0;)
		if (inf->threads[i].tid != inf->pid)
			inf_remove_thread(inf, inf->threads[i].tid);
	inf_add_thread(inf, inf->pid);
	inf->nbps = 0;
	inf->vfork_lifted = false;
	memset(inf->hw, 0, sizeof inf->hw);
	inf->dr7 = 0;
	inf_open_memfd(inf);
}
