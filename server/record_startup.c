/* The start state of a recorded program, as META records: see
 * include/ptrev/record_startup.h. Read straight from /proc while the
 * program stands at its first instruction, so nothing has changed yet. */
#include "ptrev/record_startup.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <unistd.h>

/* The whole of /proc/PID/NAME (these files have no size). */
static uint8_t *slurp(pid_t pid, const char *name, size_t *len)
{
	char path[64];
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	ssize_t got;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	while ((got = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)got;
		if (n == cap) {
			uint8_t *grown = realloc(buf, cap * 2);
			if (!grown) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = grown;
			cap *= 2;
		}
	}
	close(fd);
	*len = n;
	return buf;
}

static int write_hex(record_meta_fn put, void *ctx, const char *key, const uint8_t *b, size_t n)
{
	char *hex = malloc(2 * n + 1);
	int rc;

	if (!hex)
		return -1;
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	hex[2 * n] = 0;
	rc = put(ctx, key, hex);
	free(hex);
	return rc;
}

int record_startup_meta_to(record_meta_fn put, void *ctx, pid_t pid)
{
	size_t len = 0, count = 0;
	uint8_t *env = slurp(pid, "environ", &len), *auxv;
	int rc = 0;
	char num[32];

	if (env) {
		/* NUL-separated; a META value cannot hold a NUL, each variable
		 * is its own record. */
		for (size_t at = 0; at < len;) {
			size_t n = strnlen((char *)env + at, len - at);
			char *var = strndup((char *)env + at, n);
			if (!var || put(ctx, "env", var) < 0)
				rc = -1;
			free(var);
			count++;
			at += n + 1;
		}
		snprintf(num, sizeof num, "%zu", count);
		if (put(ctx, "env_count", num) < 0)
			rc = -1;
		free(env);
	} else {
		rc = -1;
	}
	auxv = slurp(pid, "auxv", &len);
	if (!auxv)
		return -1;
	if (write_hex(put, ctx, "auxv", auxv, len) < 0)
		rc = -1;
	uint64_t at_random = 0;
	for (size_t i = 0; i + 16 <= len; i += 16) {
		uint64_t t, v;
		memcpy(&t, auxv + i, 8);
		memcpy(&v, auxv + i + 8, 8);
		if (t == AT_RANDOM)
			at_random = v;
	}
	free(auxv);
	char path[64];
	uint8_t bytes[16];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !at_random ||
	    pread(fd, bytes, sizeof bytes, (off_t)at_random) != (ssize_t)sizeof bytes ||
	    write_hex(put, ctx, "at_random", bytes, sizeof bytes) < 0)
		rc = -1;
	if (fd >= 0)
		close(fd);
	return rc;
}

int startup_hide_vdso(pid_t pid)
{
	char path[64];
	struct user_regs_struct regs;
	uint64_t at, word;
	int fd, rc = -1;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
		return -1;
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* The initial stack: argc, argv[] NULL, envp[] NULL, auxv pairs. */
	at = regs.rsp;
	if (pread(fd, &word, 8, (off_t)at) != 8)
		goto out;
	at += 8 * (word + 2);
	for (int i = 0; i < 100000; i++, at += 8) {
		if (pread(fd, &word, 8, (off_t)at) != 8)
			goto out;
		if (!word)
			break;
	}
	at += 8;
	for (int i = 0; i < 128; i++, at += 16) {
		if (pread(fd, &word, 8, (off_t)at) != 8 || word == AT_NULL)
			break;
		if (word == AT_SYSINFO_EHDR) {
			uint64_t ignore = AT_IGNORE;
			rc = pwrite(fd, &ignore, 8, (off_t)at) == 8 ? 0 : -1;
			break;
		}
	}
out:
	close(fd);
	return rc;
}

int record_startup_hide_vdso_to(record_meta_fn put, void *ctx, pid_t pid)
{
	if (startup_hide_vdso(pid) < 0)
		return -1;
	return put(ctx, "vdso", "hidden");
}

static int put_writer(void *ctx, const char *key, const char *value)
{
	return trace_write_meta(ctx, key, value);
}

int record_startup_meta(struct trace_writer *w, pid_t pid)
{
	return record_startup_meta_to(put_writer, w, pid);
}

int record_startup_hide_vdso(struct trace_writer *w, pid_t pid)
{
	return record_startup_hide_vdso_to(put_writer, w, pid);
}
