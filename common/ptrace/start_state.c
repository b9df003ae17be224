/* The start state of a process at its first instruction: its /proc files,
 * its auxv, and the vDSO patch recordings and replays share (see
 * include/ptrev/start_state.h). */
#include "ptrev/start_state.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrev/proc_maps.h"

/* The whole of /proc/PID/NAME (these files have no size). */
uint8_t *start_state_read_proc(pid_t pid, const char *name, size_t *len)
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

uint64_t start_state_auxv_value(const uint8_t *auxv, size_t len, uint64_t type)
{
	for (size_t i = 0; i + 16 <= len; i += 16) {
		uint64_t t, v;
		memcpy(&t, auxv + i, 8);
		memcpy(&v, auxv + i + 8, 8);
		if (t == type)
			return v;
		if (t == AT_NULL)
			break;
	}
	return 0;
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
	uint8_t *auxv = start_state_read_proc(pid, "auxv", &len);
	*base = auxv ? start_state_auxv_value(auxv, len, AT_SYSINFO_EHDR) : 0;
	free(auxv);
	if (!*base)
		return -1;
	FILE *f = proc_maps_open(pid);
	if (!f)
		return -1;
	*size = 0;
	struct proc_mapping m;
	while (proc_maps_next(f, &m))
		if (m.start == *base)
			*size = m.end - m.start;
	fclose(f);
	return *size ? 0 : -1;
}

/* Each clock function of the vDSO (dynamic symbols of its ELF image, read
 * from the process) gets the stub that makes its syscall. */
int start_state_hide_vdso(pid_t pid)
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
