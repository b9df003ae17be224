/* The start state of a recorded program, as META records: see
 * include/ptrev/record_startup.h. Read straight from /proc while the
 * program stands at its first instruction, so nothing has changed yet; the
 * reading and the vDSO patch are the ptrace layer's (ptrev/start_state.h),
 * shared with the replayer. */
#include "ptrev/record_startup.h"
#include "ptrev/start_files.h"
#include "ptrev/start_state.h"
#include "ptrev/tsc_trap.h"

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

/* What the program inherited from whoever started it, read once from
 * /proc: the signals it has ignored and blocked, its umask (status), its
 * resource limits and its personality. A replay starts it with the same,
 * not with what ptrev replay's own starter passed on: the stack limit and
 * ADDR_COMPAT_LAYOUT decide where mmap puts things (the legacy layout),
 * so a replay under others would lay the program out elsewhere and
 * diverge; the rest decide what the syscalls that run in a replay do. */
static int inherited_state(record_meta_fn put, void *ctx, pid_t pid)
{
	static const struct {
		const char *file, *field, *key;
		int base;
	} fields[] = {{"status", "SigBlk:", "sig_blocked", 16},
		      {"status", "SigIgn:", "sig_ignored", 16},
		      {"status", "Umask:", "umask", 8},
		      {"personality", "", "personality", 16}};
	int rc = 0;
	char key[32], val[48];
	size_t len = 0, plen = 0;
	char *status = (char *)start_state_read_proc(pid, "status", &len);
	char *pers = (char *)start_state_read_proc(pid, "personality", &plen);
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		bool in_status = strcmp(fields[i].file, "status") == 0;
		const char *text = in_status ? status : pers;
		size_t n = in_status ? len : plen;
		const char *at = text && *fields[i].field
				 ? memmem(text, n, fields[i].field, strlen(fields[i].field)) : text;
		char *end = NULL;
		unsigned long long v = at ? strtoull(at + strlen(fields[i].field), &end, fields[i].base)
					  : 0;
		if (!at || end == at + strlen(fields[i].field)) {
			rc = -1;
			continue;
		}
		snprintf(val, sizeof val, fields[i].base == 8 ? "%llo" : "%llx", v);
		if (put(ctx, fields[i].key, val) < 0)
			rc = -1;
	}
	free(status);
	free(pers);
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
	/* The program reads the TSC unseen where rdtsc does not trap: the
	 * replay says so where it differs (ptrev/tsc_trap.h). */
	if (!tsc_traps() && put(ctx, TSC_META_KEY, TSC_META_UNTRAPPED) < 0)
		rc = -1;
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
	if (inherited_state(put, ctx, pid) < 0)
		rc = -1;
	/* For the user only (ptrev info): a replay does not need them, so
	 * what cannot be read there is no warning about replays. */
	(void)start_files_meta(put, ctx, pid);
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
