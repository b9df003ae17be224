/* Tests of copies that share no writable memory with what they copy
 * (common/ptrace/process_copy.c). Before forking a child, this test maps
 * an anonymous shared page, a 4 MiB shared mapping written only at its
 * end, and a System V segment; the child shares all three with it. A copy
 * of the stopped child is made, then this test changes every mapping:
 * the child sees the change, the copy must keep the bytes it was made
 * with, at the same addresses and protection, still shared (as the state
 * digest needs). A read-only shared mapping is left as it is. With a
 * plain injected fork, the copy sees the change. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/proc_maps.h"
#include "ptrev/process_copy.h"
#include "ptrev/ptrace_wait.h"
#include "../check.h"

#define BIG (4u << 20)

static long read_at(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n;
}

static uint32_t word(pid_t pid, const void *addr)
{
	uint32_t v = 0;
	CHECK(read_at(pid, (uint64_t)(uintptr_t)addr, &v, sizeof v) == sizeof v,
	      "read %d at %p: %s", (int)pid, addr, strerror(errno));
	return v;
}

/* The perms of pid's mapping at addr, or "" */
static void perms_at(pid_t pid, const void *addr, char out[5])
{
	struct proc_mapping m;
	FILE *f = proc_maps_open(pid);
	out[0] = '\0';
	while (f && proc_maps_next(f, &m))
		if (m.start <= (uintptr_t)addr && (uintptr_t)addr < m.end)
			memcpy(out, m.perms, 5);
	if (f)
		fclose(f);
}

int main(void)
{
	uint32_t *small = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			       -1, 0);
	uint8_t *big = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint32_t *ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int id = shmget(IPC_PRIVATE, 5000, IPC_CREAT | 0600);
	uint32_t *seg = id >= 0 ? shmat(id, NULL, 0) : (void *)-1;
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL); /* gone once both have detached */
	if (small == MAP_FAILED || big == MAP_FAILED || ro == MAP_FAILED || seg == (void *)-1) {
		printf("SKIP: no shared memory here (%s)\n", strerror(errno));
		return 77;
	}
	small[0] = 0x11;
	uint32_t *big_end = (uint32_t *)(big + BIG - 8);
	*big_end = 0x22;
	seg[1000] = 0x33;

	pid_t child = fork();
	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (;;)
			pause();
	}
	int st;
	CHECK(ptrace_wait_task(child, &st) == 0 && WIFSTOPPED(st));
	CHECK(ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)PTRACE_O_TRACECLONE) == 0);

	char err[256] = "";
	pid_t copy = 0;
	int rc = process_copy(child, &copy, err, sizeof err);
	CHECK(rc == 0 && copy > 0, "process_copy: %s", err);
	if (rc == 0) {
		small[0] = 0x99;
		*big_end = 0x98;
		big[0] = 0x97;
		seg[1000] = 0x96;
		CHECK(word(child, small) == 0x99 && word(child, seg + 1000) == 0x96,
		      "the child shares with this test");
		CHECK(word(copy, small) == 0x11, "copy: %#x", word(copy, small));
		CHECK(word(copy, big_end) == 0x22, "copy: %#x", word(copy, big_end));
		CHECK(word(copy, big) == 0, "copy: %#x", word(copy, big));
		CHECK(word(copy, seg + 1000) == 0x33, "copy: %#x", word(copy, seg + 1000));
		char p[5];
		perms_at(copy, small, p);
		CHECK(!strcmp(p, "rw-s"), "%s", p);
		perms_at(copy, seg, p);
		CHECK(!strcmp(p, "rw-s"), "%s", p);
		perms_at(copy, ro, p);
		CHECK(!strcmp(p, "r--s"), "%s", p);
		/* The copy's own writes stay its own too. */
		uint32_t v = 0x55;
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/mem", (int)copy);
		int fd = open(path, O_RDWR | O_CLOEXEC);
		CHECK(fd >= 0 && pwrite(fd, &v, sizeof v, (off_t)(uintptr_t)small) == sizeof v);
		if (fd >= 0)
			close(fd);
		CHECK(small[0] == 0x99 && word(copy, small) == 0x55);
		/* The copy still runs: its registers are the child's. */
		kill(copy, SIGKILL);
		ptrace_waitpid(copy, &st, __WALL);
		CHECK(WIFSIGNALED(st));
	}
	kill(child, SIGKILL);
	ptrace_waitpid(child, &st, __WALL);
	shmdt(seg);
	if (!failures)
		printf("ok\n");
	return failures != 0;
}
