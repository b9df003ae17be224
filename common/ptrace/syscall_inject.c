/* Injecting a system call into a stopped thread: borrow two code bytes at
 * the current IP for a `syscall` (0f 05), point the registers at it,
 * single-step, collect rax, then put bytes and registers back. One
 * implementation of the borrowing for both kinds of caller: a call whose
 * result is all that matters (syscall_inject), and a fork whose copy must
 * be given the borrowed state back too (syscall_inject_fork). */
#include "ptrev/syscall_inject.h"
#include "ptrev/ptrace_wait.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* What an injection borrowed from the thread. */
struct borrowed {
	struct user_regs_struct saved;  /* its registers before */
	long word;                      /* the code word at saved.rip before */
};

/* Save tid's registers and the code at its IP, write `syscall` there and
 * load nr and args. 0, or -1 with err and the thread as it was. */
static int borrow(struct borrowed *b, pid_t tid, uint64_t nr, const uint64_t args[6],
		  char *err, size_t errlen)
{
	struct user_regs_struct r;
	uint64_t patched;

	if (ptrace(PTRACE_GETREGS, tid, NULL, &b->saved) < 0) {
		snprintf(err, errlen, "inject: registers of %d: %s", (int)tid,
			 strerror(errno));
		return -1;
	}
	errno = 0;
	b->word = ptrace(PTRACE_PEEKTEXT, tid, (void *)b->saved.rip, NULL);
	if (errno) {
		snprintf(err, errlen, "inject: code at %#llx: %s",
			 (unsigned long long)b->saved.rip, strerror(errno));
		return -1;
	}
	/* Little endian: the low two bytes are the ones at rip. */
	patched = ((uint64_t)b->word & ~0xffffull) | 0x050full;
	if (ptrace(PTRACE_POKETEXT, tid, (void *)b->saved.rip, (void *)patched) < 0) {
		snprintf(err, errlen, "inject: patch at %#llx: %s",
			 (unsigned long long)b->saved.rip, strerror(errno));
		return -1;
	}
	r = b->saved;
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
		ptrace(PTRACE_POKETEXT, tid, (void *)b->saved.rip, (void *)b->word);
		return -1;
	}
	return 0;
}

/* Put the borrowed registers and code back into task tid: the thread
 * itself, or a copy its injected fork made (which inherited both). ret is
 * the outcome so far: an earlier error's message is kept. */
static int give_back(const struct borrowed *b, pid_t tid, int ret, char *err, size_t errlen)
{
	if (ptrace(PTRACE_SETREGS, tid, NULL, (void *)&b->saved) < 0 && ret == 0) {
		snprintf(err, errlen, "inject: restore registers: %s", strerror(errno));
		ret = -1;
	}
	if (ptrace(PTRACE_POKETEXT, tid, (void *)b->saved.rip, (void *)b->word) < 0 &&
	    ret == 0) {
		snprintf(err, errlen, "inject: restore code: %s", strerror(errno));
		ret = -1;
	}
	return ret;
}

int syscall_inject(pid_t tid, uint64_t nr, const uint64_t args[6],
		   int64_t *result, int *pending_sig, char *err, size_t errlen)
{
	static const uint64_t zero[6];
	struct user_regs_struct r;
	struct borrowed b;
	int st, ret = -1;

	if (!args)
		args = zero;
	*pending_sig = 0;
	if (borrow(&b, tid, nr, args, err, errlen) < 0)
		return -1;
	/* A signal that was already pending stops the thread before the
	 * syscall runs (IP unchanged): keep it for the caller, try again. */
	for (int tries = 0; tries < 16; tries++) {
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0 ||
		    ptrace_wait_task(tid, &st) < 0) {
			snprintf(err, errlen, "inject: step: %s", strerror(errno));
			return give_back(&b, tid, -1, err, errlen);
		}
		if (!WIFSTOPPED(st)) {
			snprintf(err, errlen, "inject: thread %d ended", (int)tid);
			return -1;
		}
		if (ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0) {
			snprintf(err, errlen, "inject: registers: %s", strerror(errno));
			return give_back(&b, tid, -1, err, errlen);
		}
		if (r.rip == b.saved.rip + 2) {
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
	return give_back(&b, tid, ret, err, errlen);
}

static int inject_fork(pid_t pid, uint64_t flags, pid_t *child, char *err, size_t errlen)
{
	/* clone flags: no CLONE_VM (copy-on-write memory), exit signal 0;
	 * stack 0: the same stack. */
	const uint64_t fork_args[6] = {flags};
	struct borrowed b;
	unsigned long msg = 0;
	pid_t cpid = 0;
	int st = 0, ret = -1;

	*child = 0;
	if (borrow(&b, pid, SYS_clone, fork_args, err, errlen) < 0)
		return -1;
	/* First stop: the clone event (the copy exists), then the end of the
	 * syscall in the parent. */
	if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) < 0 ||
	    ptrace_wait_task(pid, &st) < 0 || !WIFSTOPPED(st) ||
	    st >> 8 != (SIGTRAP | (PTRACE_EVENT_CLONE << 8))) {
		snprintf(err, errlen, "inject: clone did not happen (status %#x)", st);
		goto restore;
	}
	ptrace(PTRACE_GETEVENTMSG, pid, NULL, &msg);
	cpid = (pid_t)msg;
	if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) < 0 ||
	    ptrace_wait_task(pid, &st) < 0 || !WIFSTOPPED(st)) {
		snprintf(err, errlen, "inject: clone did not return");
		goto restore;
	}
	/* The copy's first stop (its SIGSTOP; it may even have come before
	 * the clone event). */
	if (cpid <= 0 || ptrace_wait_task(cpid, &st) < 0 || !WIFSTOPPED(st)) {
		snprintf(err, errlen, "inject: the copy did not stop");
		goto restore;
	}
	/* The copy has the parent's patched code and the registers of the
	 * injected call: give it what the parent had. */
	ret = give_back(&b, cpid, 0, err, errlen);
restore:
	ret = give_back(&b, pid, ret, err, errlen);
	if (ret < 0 && cpid > 0) {
		kill(cpid, SIGKILL);
		ptrace_waitpid(cpid, &st, __WALL);
	} else if (ret == 0) {
		*child = cpid;
	}
	return ret;
}

/* How far below the stack pointer the exec's strings and arrays may go
 * (red zone and alignment included): the kernel maps at least 128 KiB
 * of stack at an exec. */
#define EXEC_SCRATCH (96 * 1024)

/* The exec's arguments as one block for address base: argv's pointer
 * array, envp's, then the path's, argv's and envp's strings. NULL when
 * out of memory. */
static uint64_t *exec_block(uint64_t base, size_t size, const char *path, char *const argv[],
			    size_t nargs, char *const envp[], size_t nenv)
{
	uint64_t *ptrs = calloc(1, size);
	if (!ptrs)
		return NULL;
	char *str = (char *)(ptrs + nargs + 1 + nenv + 1);
	strcpy(str, path);
	str += strlen(path) + 1;
	for (size_t i = 0; i < nargs + nenv; i++) {
		const char *v = i < nargs ? argv[i] : envp[i - nargs];
		ptrs[i < nargs ? i : i + 1] = base + (uint64_t)(str - (char *)ptrs);
		strcpy(str, v);
		str += strlen(v) + 1;
	}
	return ptrs;
}

int syscall_inject_exec(pid_t pid, const char *path, char *const argv[], char *const envp[],
			char *err, size_t errlen)
{
	struct user_regs_struct r;
	size_t nargs = 0, nenv = 0, size = strlen(path) + 1;
	for (; argv && argv[nargs]; nargs++)
		size += strlen(argv[nargs]) + 1;
	for (; envp && envp[nenv]; nenv++)
		size += strlen(envp[nenv]) + 1;
	size_t arrays = (nargs + 1 + nenv + 1) * sizeof(uint64_t);
	size += arrays;
	if (ptrace(PTRACE_GETREGS, pid, NULL, &r) < 0) {
		snprintf(err, errlen, "inject exec: %s", strerror(errno));
		return -1;
	}
	if (128 + size + 15 > EXEC_SCRATCH) {
		snprintf(err, errlen, "inject exec: the command line does not fit on the stack");
		return -1;
	}
	/* Below the red zone, 16-byte aligned as the kernel leaves it. */
	uint64_t base = (r.rsp - 128 - size) & ~15ull;
	uint64_t *block = exec_block(base, size, path, argv, nargs, envp, nenv);
	char mem[64];
	snprintf(mem, sizeof mem, "/proc/%d/mem", (int)pid);
	int fd = block ? open(mem, O_RDWR | O_CLOEXEC) : -1;
	bool written = fd >= 0 && pwrite(fd, block, size, (off_t)base) == (ssize_t)size;
	int e = errno;
	if (fd >= 0)
		close(fd);
	free(block);
	if (!written) {
		snprintf(err, errlen, "inject exec: writing its arguments: %s",
			 block ? strerror(e) : "out of memory");
		return -1;
	}
	const uint64_t args[6] = {base + arrays, base, base + (nargs + 1) * sizeof(uint64_t)};
	struct borrowed b;
	int st = 0;
	if (borrow(&b, pid, SYS_execve, args, err, errlen) < 0)
		return -1;
	/* An exec that works stops with its SIGTRAP at the new program's
	 * entry; one that fails returns after the borrowed `syscall`. */
	if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) < 0 || ptrace_wait_task(pid, &st) < 0 ||
	    !WIFSTOPPED(st) || ptrace(PTRACE_GETREGS, pid, NULL, &r) < 0) {
		snprintf(err, errlen, "inject exec: %s", WIFSTOPPED(st) || errno ? strerror(errno)
									    : "the process ended");
		return -1;
	}
	if (r.rip == b.saved.rip + 2) {
		snprintf(err, errlen, "cannot exec %s: %s", path,
			 (int64_t)r.rax < 0 ? strerror((int)-(int64_t)r.rax) : "it did not run");
		return give_back(&b, pid, -1, err, errlen);
	}
	if (r.eflags & 0x100) { /* the step's trap flag: not the program's */
		r.eflags &= ~0x100ull;
		ptrace(PTRACE_SETREGS, pid, NULL, &r);
	}
	return 0;
}

int syscall_inject_fork(pid_t pid, pid_t *child, char *err, size_t errlen)
{
	return inject_fork(pid, 0, child, err, errlen);
}

int syscall_inject_fork_sibling(pid_t pid, pid_t *child, char *err, size_t errlen)
{
	return inject_fork(pid, CLONE_PARENT, child, err, errlen);
}
