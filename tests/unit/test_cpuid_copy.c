/* Tests of common/ptrace/cpuid_copy.c: where glibc keeps CPUID's answers.
 * In a dynamically linked process (this program, forked and stopped) it
 * is ld.so's _rtld_global_ro, read-only once relocated, which no digest
 * hashes: none is told; in a static executable
 * (hot_loop_static, from PTREV_TEST_PROGRAMS, stopped at its exec) its own
 * _dl_x86_cpu_features, inside its writable mappings, and a state digest
 * (state_digest.h) leaves it out: a byte changed there still matches,
 * while a description that hashed it does not. */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/cpuid_copy.h"
#include "ptrev/proc_maps.h"
#include "ptrev/state_digest.h"
#include "../check.h"

static int open_mem(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* Is [a, a+len) inside one writable mapping of pid? */
static bool in_writable(pid_t pid, uint64_t a, uint64_t len)
{
	FILE *f = proc_maps_open(pid);
	struct proc_mapping m;
	bool in = false;
	while (f && !in && proc_maps_next(f, &m))
		in = m.perms[1] == 'w' && m.start <= a && a + len <= m.end;
	if (f)
		fclose(f);
	return in;
}

static void dynamic(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	uint64_t r[2];
	uint64_t ro = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "_rtld_global_ro");
	CHECK(ro != 0 && !in_writable(pid, ro, 1), "ld.so's copy (%llx) is read-only",
	      (unsigned long long)ro);
	CHECK(cpuid_copy_ranges(pid, r) == 0, "a range told in a dynamically linked process");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

static void static_exe(const char *prog)
{
	pid_t pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFSTOPPED(st), "%s stopped at its exec", prog);
	uint64_t r[2];
	int k = cpuid_copy_ranges(pid, r);
	CHECK(k == 1 && r[1] >= 64 && in_writable(pid, r[0], r[1]),
	      "the static executable's copy: %d range(s), %llx+%llu", k, (unsigned long long)r[0],
	      (unsigned long long)r[1]);
	if (k == 1) {
		char err[256];
		int memfd = open_mem(pid);
		struct user_regs_struct regs;
		struct state_digest d;
		ptrace(PTRACE_GETREGS, pid, NULL, &regs);
		CHECK(state_digest_take(pid, pid, memfd, &regs, NULL, &d, err, sizeof err) == 0 &&
		      (d.flags & STATE_DIGEST_NO_CPUID_COPY), "take: %s", err);
		uint8_t b;
		uint64_t at = r[0] + 0x1b; /* leaf 1's EBX[31:24] in glibc 2.36's layout */
		pread(memfd, &b, 1, (off_t)at);
		b ^= 0x80;
		CHECK(pwrite(memfd, &b, 1, (off_t)at) == 1, "write the copy");
		CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &d, err, sizeof err) == 1,
		      "a changed byte of the CPUID copy compared");
		struct state_digest with = d;
		with.flags &= ~(uint64_t)STATE_DIGEST_NO_CPUID_COPY;
		CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &with, err, sizeof err) == 0,
		      "a description that hashed the copy matched one that did not");
		close(memfd);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

int main(void)
{
	const char *dir = getenv("PTREV_TEST_PROGRAMS");
	char prog[4096];
	dynamic();
	snprintf(prog, sizeof prog, "%s/hot_loop_static", dir ? dir : "tests/programs");
	if (access(prog, X_OK) == 0)
		static_exe(prog);
	else
		printf("(no %s: the static case not checked)\n", prog);
	if (failures)
		printf("%d check(s) failed\n", failures);
	else
		printf("cpuid_copy: all checks passed\n");
	return failures ? 1 : 0;
}
