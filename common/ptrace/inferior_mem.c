/* Inferior memory: /proc/PID/mem with pread/pwrite (one system call for any
 * length, and it writes read-only text pages the way ptrace does), falling
 * back to PTRACE_PEEKDATA/POKEDATA word by word when the file is unusable.
 * The public functions hide our int3 bytes from gdb. */
#include "inferior_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#define WORD sizeof(long)

void inf_open_memfd(struct inferior *inf)
{
	if (inf->memfd >= 0)
		close(inf->memfd);
	char mem[64];
	snprintf(mem, sizeof mem, "/proc/%d/mem", (int)inf->pid);
	inf->memfd = open(mem, O_RDWR | O_CLOEXEC); /* -1: PEEKDATA fallback */
}

/* PEEKDATA needs a stopped thread; any of ours will do, the leader first. */
static pid_t peek_tid(const struct inferior *inf)
{
	for (size_t i = 0; i < inf->nthreads; i++)
		if (!inf->threads[i].running || inf->threads[i].has_pending)
			return inf->threads[i].tid;
	return inf->pid;
}

static int peek_word(pid_t tid, uint64_t addr, long *word)
{
	errno = 0;
	long v = ptrace(PTRACE_PEEKDATA, tid, (void *)addr, NULL);
	if (v == -1 && errno)
		return -1;
	*word = v;
	return 0;
}

static ssize_t ptrace_read(struct inferior *inf, uint64_t addr, uint8_t *buf, size_t len)
{
	pid_t tid = peek_tid(inf);
	size_t done = 0;
	while (done < len) {
		uint64_t a = addr + done;
		uint64_t base = a & ~(uint64_t)(WORD - 1);
		long w;
		if (peek_word(tid, base, &w) < 0)
			break;
		size_t off = a - base, n = WORD - off;
		if (n > len - done)
			n = len - done;
		memcpy(buf + done, (uint8_t *)&w + off, n);
		done += n;
	}
	return done ? (ssize_t)done : -1;
}

static ssize_t ptrace_write(struct inferior *inf, uint64_t addr, const uint8_t *buf, size_t len)
{
	pid_t tid = peek_tid(inf);
	size_t done = 0;
	while (done < len) {
		uint64_t a = addr + done;
		uint64_t base = a & ~(uint64_t)(WORD - 1);
		size_t off = a - base, n = WORD - off;
		if (n > len - done)
			n = len - done;
		long w = 0;
		/* A partial word keeps the bytes around it. */
		if (n != WORD && peek_word(tid, base, &w) < 0)
			break;
		memcpy((uint8_t *)&w + off, buf + done, n);
		if (ptrace(PTRACE_POKEDATA, tid, (void *)base, (void *)w) < 0)
			break;
		done += n;
	}
	return done ? (ssize_t)done : -1;
}

ssize_t inf_mem_read_raw(struct inferior *inf, uint64_t addr, void *buf, size_t len)
{
	if (!inf->pid || inf->exited)
		return -1;
	if (len == 0)
		return 0;
	if (inf->memfd >= 0) {
		size_t done = 0;
		while (done < len) {
			ssize_t r = pread(inf->memfd, (uint8_t *)buf + done, len - done,
					  (off_t)(addr + done));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			done += (size_t)r;
		}
		if (done)
			return (ssize_t)done;
		/* EIO is an unmapped address: PEEKDATA would fail the same way. */
		if (errno == EIO)
			return -1;
	}
	return ptrace_read(inf, addr, buf, len);
}

ssize_t inf_mem_write_raw(struct inferior *inf, uint64_t addr, const void *buf, size_t len)
{
	if (!inf->pid || inf->exited)
		return -1;
	if (len == 0)
		return 0;
	if (inf->memfd >= 0) {
		size_t done = 0;
		while (done < len) {
			ssize_t r = pwrite(inf->memfd, (const uint8_t *)buf + done, len - done,
					   (off_t)(addr + done));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			done += (size_t)r;
		}
		if (done)
			return (ssize_t)done;
		if (errno == EIO)
			return -1;
	}
	return ptrace_write(inf, addr, buf, len);
}

/* Does breakpoint b lie within [addr, addr+len)? */
static bool bp_in(const struct sw_breakpoint *b, uint64_t addr, size_t len)
{
	return b->addr >= addr && b->addr - addr < len;
}

ssize_t inferior_read_mem(struct inferior *inf, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = inf_mem_read_raw(inf, addr, buf, len);
	if (n <= 0)
		return n;
	for (size_t i = 0; i < inf->nbps; i++)
		if (bp_in(&inf->bps[i], addr, (size_t)n))
			((uint8_t *)buf)[inf->bps[i].addr - addr] = inf->bps[i].saved;
	return n;
}

ssize_t inferior_write_mem(struct inferior *inf, uint64_t addr, const void *buf, size_t len)
{
	bool covers_bp = false;
	for (size_t i = 0; i < inf->nbps; i++)
		if (bp_in(&inf->bps[i], addr, len))
			covers_bp = true;
	if (!covers_bp)
		return inf_mem_write_raw(inf, addr, buf, len);

	/* Keep our int3 in memory; the new byte becomes the one restored when
	 * the breakpoint is removed. */
	uint8_t *copy = malloc(len);
	if (!copy)
		return -1;
	memcpy(copy, buf, len);
	for (size_t i = 0; i < inf->nbps; i++)
		if (bp_in(&inf->bps[i], addr, len))
			copy[inf->bps[i].addr - addr] = 0xcc;
	ssize_t n = inf_mem_write_raw(inf, addr, copy, len);
	free(copy);
	for (size_t i = 0; n > 0 && i < inf->nbps; i++)
		if (bp_in(&inf->bps[i], addr, (size_t)n))
			inf->bps[i].saved = ((const uint8_t *)buf)[inf->bps[i].addr - addr];
	return n;
}
