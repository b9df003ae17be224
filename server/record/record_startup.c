/* The start state of a recorded program, as META records: see
 * include/ptrev/record_startup.h. Read straight from /proc while the
 * program stands at its first instruction, so nothing has changed yet; the
 * reading and the vDSO patch are the ptrace layer's (ptrev/start_state.h),
 * shared with the replayer. */
#include "ptrev/record_startup.h"
#include "ptrev/start_state.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The signals the program started with ignored and blocked (inherited
 * across exec from whoever started it): a replay starts it with the same,
 * not with what ptrev replay's own starter passed on. */
static int signal_state(record_meta_fn put, void *ctx, pid_t pid)
{
	size_t len = 0;
	char *status = (char *)start_state_read_proc(pid, "status", &len);
	if (!status)
		return -1;
	int rc = -1, found = 0;
	static const char *const keys[][2] = {{"SigBlk:", "sig_blocked"},
					      {"SigIgn:", "sig_ignored"}};
	for (size_t k = 0; k < 2; k++) {
		const char *line = memmem(status, len, keys[k][0], strlen(keys[k][0]));
		unsigned long long mask;
		char hex[24];
		if (line && sscanf(line + strlen(keys[k][0]), "%llx", &mask) == 1) {
			snprintf(hex, sizeof hex, "%llx", mask);
			found += put(ctx, keys[k][1], hex) == 0;
		}
	}
	if (found == 2)
		rc = 0;
	free(status);
	return rc;
}

/* The resource limits and umask the program started with (inherited from
 * whoever started it): the stack limit decides where mmap puts things
 * (unlimited gives the legacy layout), so a replay started under other
 * limits would lay the program out elsewhere and diverge; the others and
 * the umask decide what syscalls that run in a replay do. */
static int limits_and_umask(record_meta_fn put, void *ctx, pid_t pid)
{
	int rc = 0;
	char key[32], val[48];
	for (int res = 0; res < RLIM_NLIMITS; res++) {
		struct rlimit rl;
		if (prlimit(pid, (enum __rlimit_resource)res, NULL, &rl) < 0) {
			rc = -1;
			continue;
		}
		snprintf(key, sizeof key, "rlimit_%d", res);
		snprintf(val, sizeof val, "%llx:%llx", (unsigned long long)rl.rlim_cur,
			 (unsigned long long)rl.rlim_max);
		if (put(ctx, key, val) < 0)
			rc = -1;
	}
	size_t len = 0;
	char *status = (char *)start_state_read_proc(pid, "status", &len);
	const char *line = status ? memmem(status, len, "Umask:", 6) : NULL;
	unsigned mask;
	if (line && sscanf(line + 6, "%o", &mask) == 1) {
		snprintf(val, sizeof val, "%o", mask);
		if (put(ctx, "umask", val) < 0)
			rc = -1;
	} else {
		rc = -1;
	}
	free(status);
	/* The personality (setarch: ADDR_COMPAT_LAYOUT lays memory out the
	 * legacy way, READ_IMPLIES_EXEC changes mappings), inherited too. */
	char *pers = (char *)start_state_read_proc(pid, "personality", &len);
	unsigned long p;
	if (pers && sscanf(pers, "%lx", &p) == 1) {
		snprintf(val, sizeof val, "%lx", p);
		if (put(ctx, "personality", val) < 0)
			rc = -1;
	} else {
		rc = -1;
	}
	free(pers);
	return rc;
}

int record_startup_meta_to(record_meta_fn put, void *ctx, pid_t pid)
{
	size_t len = 0, count = 0;
	uint8_t *env = start_state_read_proc(pid, "environ", &len), *auxv;
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
	auxv = start_state_read_proc(pid, "auxv", &len);
	if (!auxv)
		return -1;
	if (write_hex(put, ctx, "auxv", auxv, len) < 0)
		rc = -1;
	uint64_t at_random = start_state_auxv_value(auxv, len, AT_RANDOM);
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
	if (signal_state(put, ctx, pid) < 0)
		rc = -1;
	if (limits_and_umask(put, ctx, pid) < 0)
		rc = -1;
	return rc;
}

int startup_hide_vdso(pid_t pid)
{
	return start_state_hide_vdso(pid);
}

int record_startup_hide_vdso_to(record_meta_fn put, void *ctx, pid_t pid)
{
	if (start_state_hide_vdso(pid) < 0)
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
