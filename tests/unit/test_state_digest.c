/* Tests of the state digest (common/ptrace/state_digest.c): a stopped
 * thread matches its own description; a change to one register, to a
 * vector register, to the stack or to any writable memory does not; the
 * resume flag and orig_rax are not compared; the hash is FNV-1a 64; the
 * dead stack below the red zone is left out (flags); ranges the caller
 * names (skip) are left out of memory and stack, the same bytes hashed
 * elsewhere; where rdtsc does not trap (forced here: PTREV_TSC_TRAPS=0) the
 * dynamic loader's writable data is left out (flags). The traced child is
 * this program forked, stopped in a loop of its own. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <elf.h>

#include "ptrev/state_digest.h"
#include "../check.h"

static volatile unsigned long counter;
static char heap_marker[4096] = "marker";

static void child(void)
{
	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	raise(SIGSTOP);
	for (;;)
		counter++;
}

/* The start of the dynamic loader's writable mapping in pid, 0: none. */
static uint64_t loader_data(pid_t pid)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	uint64_t at = 0;
	while (f && !at && fgets(line, sizeof line, f)) {
		unsigned long long lo;
		char perms[8];
		if (sscanf(line, "%llx-%*x %7s", &lo, perms) == 2 && perms[1] == 'w' &&
		    strstr(line, "/ld-linux"))
			at = lo;
	}
	if (f)
		fclose(f);
	return at;
}

static int open_mem(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	return open(path, O_RDWR | O_CLOEXEC);
}

int main(void)
{
	char err[256];
	/* Before any digest asks the machine (tsc_traps). */
	setenv("PTREV_TSC_TRAPS", "0", 1);
	CHECK(fnv1a64(FNV64_INIT, "", 0) == 0xcbf29ce484222325ull, "empty");
	CHECK(fnv1a64(FNV64_INIT, "a", 1) == 0xaf63dc4c8601ec8cull, "\"a\"");
	CHECK(fnv1a64(FNV64_INIT, "foobar", 6) == 0x85944171f73967e8ull, "\"foobar\"");

	pid_t pid = fork();
	if (pid == 0)
		child();
	int st;
	waitpid(pid, &st, 0);
	/* Let it run into its loop, then stop it there. */
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	usleep(20000);
	kill(pid, SIGSTOP);
	waitpid(pid, &st, 0);
	CHECK(WIFSTOPPED(st), "stopped");
	int memfd = open_mem(pid);
	struct user_regs_struct regs, other;
	ptrace(PTRACE_GETREGS, pid, NULL, &regs);
	struct state_digest d, e;
	CHECK(state_digest_take(pid, pid, memfd, &regs, NULL, &d, err, sizeof err) == 0, "take: %s", err);
	CHECK(d.mem_bytes >= sizeof heap_marker && d.stack_lo <= regs.rsp - 128 &&
	      d.stack_hi > regs.rsp, "ranges: %llu bytes, stack %llx-%llx, rsp %llx",
	      (unsigned long long)d.mem_bytes, (unsigned long long)d.stack_lo,
	      (unsigned long long)d.stack_hi, (unsigned long long)regs.rsp);
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &d, err, sizeof err) == 1,
	      "itself: %s", err);
	CHECK(state_digest_take(pid, pid, memfd, &regs, NULL, &e, err, sizeof err) == 0 &&
	      !memcmp(&d, &e, sizeof d), "taken twice, the same");

	/* Flags a breakpoint sets, and orig_rax, are not part of the state. */
	other = regs;
	other.eflags |= 0x10000;
	other.orig_rax = 123;
	CHECK(state_digest_matches(pid, pid, memfd, &other, &regs, &d, err, sizeof err) == 1,
	      "RF and orig_rax compared");
	/* Any register is. */
	other = regs;
	other.r13 ^= 1;
	CHECK(state_digest_matches(pid, pid, memfd, &other, &regs, &d, err, sizeof err) == 0,
	      "r13 not compared");

	/* Writable memory anywhere: one byte of a global. */
	uint8_t b;
	uint64_t at = (uint64_t)(uintptr_t)heap_marker + 100;
	pread(memfd, &b, 1, (off_t)at);
	b ^= 0x40;
	pwrite(memfd, &b, 1, (off_t)at);
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &d, err, sizeof err) == 0,
	      "a changed byte of memory not seen");
	b ^= 0x40;
	pwrite(memfd, &b, 1, (off_t)at);
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &d, err, sizeof err) == 1,
	      "memory put back");

	/* The stack just above rsp. */
	uint64_t word;
	pread(memfd, &word, 8, (off_t)regs.rsp + 8);
	word ^= 1;
	pwrite(memfd, &word, 8, (off_t)regs.rsp + 8);
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &d, err, sizeof err) == 0,
	      "a changed stack word not seen");
	word ^= 1;
	pwrite(memfd, &word, 8, (off_t)regs.rsp + 8);

	/* The dead stack, below the red zone: what glibc's trampoline left
	 * there differs from run to run (state_digest.h). Not compared... */
	CHECK(d.flags == (STATE_DIGEST_LIVE_STACKS | STATE_DIGEST_NO_LOADER_DATA |
			  STATE_DIGEST_NO_CPUID_COPY), "flags %llx",
	      (unsigned long long)d.flags);
	uint64_t dead = (regs.rsp - 128 - 64) & ~7ull;
	pread(memfd, &word, 8, (off_t)dead);
	word ^= 1;
	CHECK(pwrite(memfd, &word, 8, (off_t)dead) == 8, "write the dead stack");
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &d, err, sizeof err) == 1,
	      "a changed byte of the dead stack compared");
	/* ...in descriptions taken before (flags 0), the whole stack was
	 * hashed: the same state does not match one of those. */
	struct state_digest whole = d;
	whole.flags = 0;
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &whole, err, sizeof err) == 0,
	      "a description without flags matched as one with");
	word ^= 1;
	pwrite(memfd, &word, 8, (off_t)dead);
	/* The red zone itself is compared. */
	uint64_t red = regs.rsp - 64;
	pread(memfd, &word, 8, (off_t)red);
	word ^= 1;
	pwrite(memfd, &word, 8, (off_t)red);
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &d, err, sizeof err) == 0,
	      "a changed red-zone word not seen");
	word ^= 1;
	pwrite(memfd, &word, 8, (off_t)red);

	/* Ranges left out (what other threads' syscalls may write): a byte
	 * of the global and a stack word inside them change nothing; one
	 * just outside still does. */
	uint64_t skip[4] = {at - 10, 20, regs.rsp + 8, 8};
	struct state_view view = {.skip = skip, .nskip = 2};
	struct state_digest s;
	CHECK(state_digest_take(pid, pid, memfd, &regs, &view, &s, err, sizeof err) == 0 &&
	      s.mem_bytes == d.mem_bytes - 28 &&
	      s.stack_lo == d.stack_lo && s.stack_hi == d.stack_hi && s.mem_hash != d.mem_hash &&
	      s.stack_hash != d.stack_hash, "take with ranges left out: %llu bytes of %llu",
	      (unsigned long long)s.mem_bytes, (unsigned long long)d.mem_bytes);
	pread(memfd, &b, 1, (off_t)at);
	b ^= 0x40;
	pwrite(memfd, &b, 1, (off_t)at);
	pread(memfd, &word, 8, (off_t)regs.rsp + 8);
	word ^= 1;
	pwrite(memfd, &word, 8, (off_t)regs.rsp + 8);
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &s, err, sizeof err) == 1,
	      "a byte inside a range left out compared");
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &d, err, sizeof err) == 0,
	      "the same bytes not seen where nothing is left out");
	b ^= 0x40;
	pwrite(memfd, &b, 1, (off_t)at);
	word ^= 1;
	pwrite(memfd, &word, 8, (off_t)regs.rsp + 8);
	uint8_t c;
	pread(memfd, &c, 1, (off_t)(at + 10));
	c ^= 1;
	pwrite(memfd, &c, 1, (off_t)(at + 10));
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &s, err, sizeof err) == 0,
	      "the byte just past a range left out not seen");
	c ^= 1;
	pwrite(memfd, &c, 1, (off_t)(at + 10));
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &s, err, sizeof err) == 1,
	      "memory put back (ranges left out)");

	/* The dynamic loader's data (relocate_time, read unseen where rdtsc
	 * does not trap): left out where the flag says, and only there. */
	uint64_t ld = loader_data(pid);
	CHECK(ld != 0, "no ld.so mapping in the child");
	if (ld) {
		pread(memfd, &b, 1, (off_t)ld);
		b ^= 0x40;
		CHECK(pwrite(memfd, &b, 1, (off_t)ld) == 1, "write ld.so's data");
		CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &d, err, sizeof err) == 1,
		      "a byte of the loader's data compared");
		struct state_digest with = d;
		with.flags &= ~(uint64_t)STATE_DIGEST_NO_LOADER_DATA;
		CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &with, err, sizeof err) == 0,
		      "a description that hashed the loader's data matched one that did not");
		b ^= 0x40;
		pwrite(memfd, &b, 1, (off_t)ld);
	}

	/* A vector register. */
	struct user_fpregs_struct fp;
	struct iovec iov = {&fp, sizeof fp};
	ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRFPREG, &iov);
	fp.xmm_space[5] ^= 0x100;
	ptrace(PTRACE_SETREGSET, pid, (void *)NT_PRFPREG, &iov);
	CHECK(state_digest_matches(pid, pid, memfd, &regs, &regs, &d, err, sizeof err) == 0,
	      "a changed xmm register not seen");

	close(memfd);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (failures)
		printf("%d check(s) failed\n", failures);
	else
		printf("state_digest: all checks passed\n");
	return failures ? 1 : 0;
}
