/* Tests of the memory comparison that records a syscall the table cannot
 * describe (server/record/mem_diff.c): a stopped process's writable memory
 * (tests/programs/mem_target) copied, then bytes written into it from
 * outside must come back as
 * exactly the changed ranges (places closer than 64 bytes merged, a change
 * across a page boundary one range), nothing when nothing changed, no copy
 * past the size limit, and an error once the memory is gone. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/mem_diff.h"
#include "../check.h"

static uintptr_t buf; /* mem_target's buffer, in its memory */

static long read_child(void *ctx, uint64_t addr, void *out, size_t len)
{
	return (long)pread(*(int *)ctx, out, len, (off_t)addr);
}

static void poke(int fd, size_t off, size_t len)
{
	unsigned char ones[64];
	memset(ones, 0xa5, sizeof ones);
	CHECK(pwrite(fd, ones, len, (off_t)(buf + off)) == (ssize_t)len);
}

int main(void)
{
	const char *dir = getenv("PTREV_TEST_PROGRAMS");
	char prog[512];
	int out[2], st;
	if (!dir) {
		printf("PTREV_TEST_PROGRAMS not set\n");
		return 77;
	}
	snprintf(prog, sizeof prog, "%s/mem_target", dir);
	if (pipe(out) != 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(out[1], 1);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(prog, prog, (char *)0);
		_exit(127);
	}
	close(out[1]);
	/* The exec's SIGTRAP, then the SIGSTOP it raises after saying where
	 * its buffer is. */
	CHECK(waitpid(pid, &st, 0) == pid && WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP);
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	CHECK(waitpid(pid, &st, 0) == pid && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	FILE *f = fdopen(out[0], "r");
	void *at = NULL;
	CHECK(f && fscanf(f, "%p", &at) == 1 && at, " mem_target's buffer");
	buf = (uintptr_t)at;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0, " %s", path);

	CHECK(mem_diff_take(pid, read_child, &fd, 4096) == NULL, " the size limit");

	struct mem_diff *d = mem_diff_take(pid, read_child, &fd, 1u << 30);
	CHECK(d != NULL);
	struct sc_range *r;
	CHECK(mem_diff_changes(d, read_child, &fd, &r) == 0, " nothing changed yet");
	free(r);

	poke(fd, 100, 10);
	poke(fd, 200, 1);
	poke(fd, 230, 1);   /* 29 bytes after the last: one range */
	poke(fd, 5000, 4);
	poke(fd, 8190, 4);  /* across a page boundary */
	int n = mem_diff_changes(d, read_child, &fd, &r);
	const struct sc_range want[] = {{100, 10}, {200, 31}, {5000, 4}, {8190, 4}};
	CHECK(n == 4, " %d ranges", n);
	for (int i = 0; i < n && i < 4; i++)
		CHECK(r[i].addr == buf + want[i].addr && r[i].len == want[i].len,
		      " range %d: +%llu, %llu bytes", i, (unsigned long long)(r[i].addr - buf),
		      (unsigned long long)r[i].len);
	free(r);

	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	CHECK(mem_diff_changes(d, read_child, &fd, &r) == -1, " the process is gone");
	mem_diff_free(d);
	close(fd);
	if (f)
		fclose(f);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
