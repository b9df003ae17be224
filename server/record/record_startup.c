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

/* The vDSO's functions and the syscalls that do their work. */
static const struct {
	const char *name;
	int nr;
} vdso_calls[] = {
	{"__vdso_clock_gettime", 228}, {"clock_gettime", 228},
	{"__vdso_gettimeofday", 96},   {"gettimeofday", 96},
	{"__vdso_time", 201},          {"time", 201},
	{"__vdso_getcpu", 309},        {"getcpu", 309},
	{"__vdso_clock_getres", 229},  {"clock_getres", 229},
};

/* Where the vDSO is mapped (AT_SYSINFO_EHDR) and how big it is. */
static int vdso_range(pid_t pid, uint64_t *base, size_t *size)
{
	size_t len;
	uint8_t *auxv = slurp(pid, "auxv", &len);
	*base = 0;
	for (size_t i = 0; auxv && i + 16 <= len; i += 16) {
		uint64_t t, v;
		memcpy(&t, auxv + i, 8);
		memcpy(&v, auxv + i + 8, 8);
		if (t == AT_SYSINFO_EHDR)
			*base = v;
	}
	free(auxv);
	if (!*base)
		return -1;
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	*size = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == *base)
			*size = hi - lo;
	}
	fclose(f);
	return *size ? 0 : -1;
}

/* Rewrite each clock function of the vDSO into `mov $NR, %eax; syscall;
 * ret`, as rr does: the program still sees the vDSO (its layout, its libc
 * set-up, its stack contents stay exactly as in a normal run) but every
 * clock read becomes a syscall the recorder logs and a replay reproduces,
 * instead of a read of kernel data no log sees. */
int startup_hide_vdso(pid_t pid)
{
	uint64_t base;
	size_t size;
	if (vdso_range(pid, &base, &size) != 0 || size > (1u << 20))
		return -1;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	uint8_t *img = malloc(size);
	int rc = -1, patched = 0;
	if (!img || pread(fd, img, size, (off_t)base) != (ssize_t)size)
		goto out;
	Elf64_Ehdr eh;
	memcpy(&eh, img, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_shoff == 0 ||
	    eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size)
		goto out;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh, strh;
		memcpy(&sh, img + eh.e_shoff + i * sizeof sh, sizeof sh);
		if (sh.sh_type != SHT_DYNSYM || sh.sh_link >= eh.e_shnum)
			continue;
		memcpy(&strh, img + eh.e_shoff + sh.sh_link * sizeof strh, sizeof strh);
		if (sh.sh_offset + sh.sh_size > size || strh.sh_offset + strh.sh_size > size)
			goto out;
		for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
			Elf64_Sym sym;
			memcpy(&sym, img + sh.sh_offset + k * sizeof sym, sizeof sym);
			if (sym.st_name >= strh.sh_size || sym.st_value == 0 ||
			    sym.st_value + 8 > size || ELF64_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			const char *name = (const char *)img + strh.sh_offset + sym.st_name;
			for (size_t c = 0; c < sizeof vdso_calls / sizeof vdso_calls[0]; c++) {
				if (strncmp(name, vdso_calls[c].name, strh.sh_size - sym.st_name) != 0)
					continue;
				uint8_t stub[8] = {0xb8, 0, 0, 0, 0, 0x0f, 0x05, 0xc3};
				memcpy(stub + 1, &vdso_calls[c].nr, 4);
				if (pwrite(fd, stub, sizeof stub, (off_t)(base + sym.st_value)) != sizeof stub)
					goto out;
				patched++;
			}
		}
	}
	rc = patched ? 0 : -1;
out:
	free(img);
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
