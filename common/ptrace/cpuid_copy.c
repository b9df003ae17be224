/* Where glibc keeps what CPUID told it, in a traced process
 * (include/ptrev/cpuid_copy.h). glibc asks CPUID once at start and keeps
 * the answers: a static executable in its own `_dl_x86_cpu_features`
 * (writable data), a dynamically linked program in ld.so's
 * `_rtld_global_ro` (read-only once relocated: RELRO, which no digest
 * hashes, so nothing is to be left out there). One of those
 * answers, leaf 1's EBX[31:24], is the APIC ID of the CPU that ran the
 * instruction, and some hypervisors pass the host's through: it changes
 * as the host moves the vCPU (a bhyve guest here: 0xf4, 0x30, 0x74 and
 * 0x53 on the same two vCPUs within an hour). CPUID does not fault under
 * ptrev (no ARCH_SET_CPUID on these machines), so a replay cannot give
 * the recorded answer back: the state digests leave the copy out
 * (state_digest.h, STATE_DIGEST_NO_CPUID_COPY). Nothing else lives in it
 * (it is read-only once the program runs). A stripped static executable
 * has no symbol to find it by: nothing is left out there. */
#include "ptrev/cpuid_copy.h"

#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrev/proc_maps.h"

/* What one file's symbol says, kept per file: a digest is taken at every
 * STATE point and compared at every pass that matches its registers. */
struct found {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	bool known, have, dyn;
	uint64_t value, size, base_vaddr;
};
#define CACHE 8
static struct found cache[CACHE];
static size_t next_slot;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The symbol `_dl_x86_cpu_features` in fd's symbol table (.symtab):
 * into f (have set when found). */
static void lookup(int fd, struct found *f)
{
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof eh, 0) != sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return;
	f->dyn = eh.e_type == ET_DYN;
	f->base_vaddr = UINT64_MAX;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != sizeof ph)
			return;
		if (ph.p_type == PT_LOAD && ph.p_vaddr < f->base_vaddr)
			f->base_vaddr = ph.p_vaddr & ~(uint64_t)4095;
	}
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh, strh;
		if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + i * sizeof sh)) != sizeof sh)
			return;
		if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum || sh.sh_entsize != sizeof(Elf64_Sym) ||
		    sh.sh_size > (64u << 20) ||
		    pread(fd, &strh, sizeof strh, (off_t)(eh.e_shoff + sh.sh_link * sizeof strh)) !=
			    sizeof strh || strh.sh_size > (64u << 20))
			continue;
		Elf64_Sym *syms = malloc(sh.sh_size);
		char *str = malloc(strh.sh_size + 1);
		if (syms && str && pread(fd, syms, sh.sh_size, (off_t)sh.sh_offset) == (ssize_t)sh.sh_size &&
		    pread(fd, str, strh.sh_size, (off_t)strh.sh_offset) == (ssize_t)strh.sh_size) {
			str[strh.sh_size] = 0;
			for (size_t k = 0; k < sh.sh_size / sizeof *syms && !f->have; k++)
				if (syms[k].st_name < strh.sh_size && syms[k].st_size &&
				    strcmp(str + syms[k].st_name, "_dl_x86_cpu_features") == 0) {
					f->have = true;
					f->value = syms[k].st_value;
					f->size = syms[k].st_size;
				}
		}
		free(syms);
		free(str);
	}
}

/* The symbol in file path (cached by the file's identity). */
static struct found symbol_of(const char *path)
{
	struct found none = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return none;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return none;
	}
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < CACHE; i++) {
		struct found *c = &cache[i];
		if (c->known && c->dev == st.st_dev && c->ino == st.st_ino &&
		    c->mtime.tv_sec == st.st_mtim.tv_sec && c->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			struct found r = *c;
			pthread_mutex_unlock(&lock);
			close(fd);
			return r;
		}
	}
	struct found f = {.dev = st.st_dev, .ino = st.st_ino, .mtime = st.st_mtim, .known = true};
	lookup(fd, &f);
	cache[next_slot] = f;
	next_slot = (next_slot + 1) % CACHE;
	pthread_mutex_unlock(&lock);
	close(fd);
	return f;
}

int cpuid_copy_ranges(pid_t pid, uint64_t range[2])
{
	char exe_link[64], exe[4096];
	snprintf(exe_link, sizeof exe_link, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(exe_link, exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	/* The executable's lowest mapping: where its first page (offset 0)
	 * is, for a static PIE's bias. */
	uint64_t exe_lo = UINT64_MAX;
	FILE *f = proc_maps_open(pid);
	struct proc_mapping m;
	while (f && proc_maps_next(f, &m))
		if (m.name[0] == '/' && strncmp(m.name, exe, sizeof m.name - 1) == 0 && m.start < exe_lo)
			exe_lo = m.start;
	if (f)
		fclose(f);
	if (exe_lo == UINT64_MAX)
		return 0;
	struct found s = symbol_of(exe_link);
	if (!s.have)
		return 0;
	range[0] = s.value + (s.dyn ? exe_lo - s.base_vaddr : 0);
	range[1] = s.size;
	return 1;
}
