/* The recorded binaries run from the recording's copies where the files
 * at their paths changed (include/ptrev/binary_copies.h). */
#include "ptrev/binary_copies.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrev/elf_build_id.h"
#include "ptrev/start_state.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3: executable even where memfd_noexec says not */
#endif

/* The copies put in memory files so far, one each for ptrev's life: a
 * replay maps the same library again for each piece of history it
 * makes, from several threads. */
struct held {
	char *path;
	uint8_t build_id[20];
	uint32_t build_id_len;
	bool patched; /* the program's copy with its loader's path changed */
	int fd;
};
static struct held held[64];
static size_t nheld;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

static bool write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* A memory file holding the len bytes of c, with the patch_len - 1 bytes
 * at patch_off (the program's loader name: its PT_INTERP string but the
 * NUL) written as 'q' where patch_len is not 0; made once per key (the
 * file's path, build-id, and whether it is patched). -1 where it cannot
 * be made. */
static int memfd_with(const struct trace_file_copy *c, uint64_t patch_off, uint64_t patch_len)
{
	bool patched = patch_len != 0;
	int fd = -1;
	pthread_mutex_lock(&held_lock);
	for (size_t i = 0; i < nheld && fd < 0; i++)
		if (held[i].build_id_len == c->build_id_len && held[i].patched == patched &&
		    memcmp(held[i].build_id, c->build_id, c->build_id_len) == 0 &&
		    strcmp(held[i].path, c->path) == 0)
			fd = held[i].fd;
	if (fd < 0 && nheld < sizeof held / sizeof held[0]) {
		/* Named after the file: the replay's maps then show
		 * "/memfd:ld-linux-x86-64.so.2", which proc_maps_is_loader
		 * knows as the loader, as the recording's did. */
		const char *base = strrchr(c->path, '/') ? strrchr(c->path, '/') + 1 : c->path;
		fd = memfd_create(base, MFD_CLOEXEC | MFD_EXEC);
		if (fd < 0 && errno == EINVAL)
			fd = memfd_create(base, MFD_CLOEXEC);
		uint8_t qs[200];
		memset(qs, 'q', sizeof qs);
		uint64_t off = patched ? patch_off : c->len, n = patched ? patch_len - 1 : 0;
		bool written = fd >= 0 && write_all(fd, c->bytes, off) && write_all(fd, qs, n) &&
			       write_all(fd, c->bytes + off + n, c->len - off - n);
		char *dup = written ? strdup(c->path) : NULL;
		if (fd >= 0 && !dup) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			held[nheld] = (struct held){dup, {0}, c->build_id_len, patched, fd};
			memcpy(held[nheld].build_id, c->build_id, c->build_id_len);
			nheld++;
		}
	}
	pthread_mutex_unlock(&held_lock);
	return fd;
}

static int memfd_of(const struct trace_file_copy *c)
{
	return memfd_with(c, 0, 0);
}

/* Say once per file (every replay and piece of history runs the program
 * again) that its copy runs in its place. */
static void say_once(const char *file, bool gone)
{
	static char *said[64];
	static size_t nsaid;
	bool new_one = true;
	pthread_mutex_lock(&held_lock);
	for (size_t i = 0; i < nsaid && new_one; i++)
		new_one = strcmp(said[i], file) != 0;
	if (new_one && nsaid < sizeof said / sizeof said[0])
		said[nsaid++] = strdup(file);
	pthread_mutex_unlock(&held_lock);
	if (new_one)
		fprintf(stderr, "ptrev: %s %s since the recording: the replay runs the recording's "
			"copy of it\n", file, gone ? "is gone" : "is another build");
}

/* Is the file at path the build with build-id id? 1 yes, 0 another build,
 * -1 gone (errno). */
static int same_build(const char *path, const uint8_t *id, uint32_t len)
{
	uint8_t now[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = trace_elf_build_id(fd, now, sizeof now);
	close(fd);
	return n == len && memcmp(now, id, len) == 0;
}

/* The copy of m's file as a path the replay process can open, in buf; or
 * NULL with why. */
static const char *copy_path(const struct trace_data *td, const struct trace_mmap *m,
			     const char *state, char *buf, size_t buflen, char *why, size_t whylen)
{
	uint32_t len = m->build_id_len < 20 ? m->build_id_len : 20;
	const struct trace_file_copy *c = trace_file_copy_find(td, m->path, m->build_id, len);
	int fd = c ? memfd_of(c) : -1;
	if (fd < 0) {
		snprintf(why, whylen, "%s %s since the recording, which holds no copy of it "
			 "(recorded with --no-copy, or it was not run from)", m->path, state);
		return NULL;
	}
	snprintf(buf, buflen, "/proc/%d/fd/%d", (int)getpid(), fd);
	return buf;
}

const char *binary_copy_for_map(const struct trace_data *td, const struct trace_mmap *m,
				char *buf, size_t buflen, char *why, size_t whylen)
{
	if (!m->build_id_len)
		return m->path; /* not an ELF file: nothing to tell builds apart by */
	int same = same_build(m->path, m->build_id, m->build_id_len < 20 ? m->build_id_len : 20);
	if (same == 1)
		return m->path;
	const char *copy = copy_path(td, m, same == 0 ? "is another build" : "is gone", buf, buflen,
				     why, whylen);
	if (copy)
		say_once(m->path, same < 0);
	return copy;
}

/* The recorded initial mapping holding address a: the program's file
 * (AT_ENTRY), the loader's (AT_BASE). */
static const struct trace_mmap *initial_mapping(const struct trace_data *td, uint64_t a)
{
	for (size_t i = 0; a && i < td->nmmaps; i++) {
		const struct trace_mmap *m = &td->mmaps[i];
		if (m->tid == 0 && m->path[0] == '/' && m->start <= a && a < m->end)
			return m;
	}
	return NULL;
}

/* Where the program image b (n bytes) names its loader (PT_INTERP): the
 * string's file offset, address and size with its NUL, and the address
 * of the program headers (PT_PHDR, else where the loaded segment holding
 * e_phoff puts them), which AT_PHDR gives loaded. False where b is not a
 * 64-bit ELF file naming a loader. */
static bool find_interp(const uint8_t *b, size_t n, uint64_t *off, uint64_t *vaddr,
			uint64_t *len, uint64_t *phdr)
{
	Elf64_Ehdr eh;
	if (n < sizeof eh)
		return false;
	memcpy(&eh, b, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > n ||
	    (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > n - eh.e_phoff)
		return false;
	bool found = false, have_phdr = false;
	uint64_t from_load = 0;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, b + eh.e_phoff + i * sizeof ph, sizeof ph);
		if (ph.p_type == PT_INTERP && ph.p_offset < n && ph.p_filesz > 1 &&
		    ph.p_filesz <= n - ph.p_offset && b[ph.p_offset + ph.p_filesz - 1] == 0) {
			*off = ph.p_offset;
			*vaddr = ph.p_vaddr;
			*len = ph.p_filesz;
			found = true;
		} else if (ph.p_type == PT_PHDR) {
			*phdr = ph.p_vaddr;
			have_phdr = true;
		} else if (ph.p_type == PT_LOAD && ph.p_offset <= eh.e_phoff &&
			   eh.e_phoff - ph.p_offset < ph.p_filesz) {
			from_load = ph.p_vaddr + (eh.e_phoff - ph.p_offset);
		}
	}
	if (!have_phdr)
		*phdr = from_load;
	return found;
}

/* A relative path of exactly len bytes under dir, its directories made:
 * names of up to 200 bytes joined by '/'. */
static char *same_length_path(const char *dir, size_t len)
{
	char *rel = malloc(len + 1);
	if (!rel)
		return NULL;
	memset(rel, 'p', len);
	rel[len] = '\0';
	for (size_t i = 200; i + 1 < len; i += 201)
		rel[i] = '/';
	for (size_t i = 0; i < len; i++) {
		if (rel[i] != '/')
			continue;
		char sub[4096 + 64];
		rel[i] = '\0';
		snprintf(sub, sizeof sub, "%s/%s", dir, rel);
		rel[i] = '/';
		if (mkdir(sub, 0700) < 0) {
			free(rel);
			return NULL;
		}
	}
	return rel;
}

static void exec_clear(struct binary_copy_exec *x)
{
	memset(x, 0, sizeof *x);
}

/* A link at dir/rel to memory file fd. */
static int link_in(const char *dir, const char *rel, int fd)
{
	char at[8192], to[64];
	snprintf(at, sizeof at, "%s/%s", dir, rel);
	snprintf(to, sizeof to, "/proc/%d/fd/%d", (int)getpid(), fd);
	return symlink(to, at);
}

int binary_copy_exe(const struct trace_data *td, const char *path, const char *cwd,
		    const uint8_t *auxv, size_t auxv_len, struct binary_copy_exec *x, char *why,
		    size_t whylen)
{
	exec_clear(x);
	const struct trace_mmap *m =
		initial_mapping(td, auxv ? start_state_auxv_value(auxv, auxv_len, AT_ENTRY) : 0);
	const struct trace_mmap *ld =
		initial_mapping(td, auxv ? start_state_auxv_value(auxv, auxv_len, AT_BASE) : 0);
	if (!m || !m->build_id_len)
		return 0;
	char file[8192];
	if (path[0] == '/' || !cwd)
		snprintf(file, sizeof file, "%s", path);
	else
		snprintf(file, sizeof file, "%s/%s", cwd, strncmp(path, "./", 2) ? path : path + 2);
	int same = same_build(file, m->build_id, m->build_id_len < 20 ? m->build_id_len : 20);
	int ld_same = ld && ld->build_id_len
			      ? same_build(ld->path, ld->build_id,
					   ld->build_id_len < 20 ? ld->build_id_len : 20)
			      : 1;
	if (same == 1 && ld_same == 1)
		return 0;
	uint32_t idl = m->build_id_len < 20 ? m->build_id_len : 20;
	const struct trace_file_copy *ec = trace_file_copy_find(td, m->path, m->build_id, idl);
	const struct trace_file_copy *lc = NULL;
	if (ld_same != 1) {
		uint32_t l = ld->build_id_len < 20 ? ld->build_id_len : 20;
		lc = trace_file_copy_find(td, ld->path, ld->build_id, l);
	}
	if (!ec || (ld_same != 1 && !lc)) {
		const struct trace_mmap *missing = !ec ? m : ld;
		snprintf(why, whylen, "%s %s since the recording, which holds no copy of it "
			 "(recorded with --no-copy, or it was not run from)", missing->path,
			 (!ec ? same : ld_same) == 0 ? "is another build" : "is gone");
		if ((!ec ? same : ld_same) < 0)
			return -1;
		/* Another build and no copy (--no-copy): it runs, and the
		 * replay diverges where the builds differ, which it says. */
		fprintf(stderr, "ptrev: %s; the replay runs the file there\n", why);
		return 0;
	}
	/* The loader's copy runs where its file changed: the program's copy
	 * names it (PT_INTERP) by a relative path as long as the recorded
	 * one, beside the program's link, and the recorded name is put back
	 * in memory after the exec (binary_copy_exe_fix). */
	uint64_t ioff = 0, ivaddr = 0, ilen = 0, phdr = 0;
	int fd = -1;
	if (lc) {
		if (!find_interp(ec->bytes, ec->len, &ioff, &ivaddr, &ilen, &phdr) || ilen > 200) {
			snprintf(why, whylen, "cannot run the recording's copy of the loader %s in "
				 "place of the file there", ld->path);
			return -1;
		}
		fd = memfd_with(ec, ioff, ilen);
		x->interp = malloc(ilen);
		if (x->interp)
			memcpy(x->interp, ec->bytes + ioff, ilen);
		x->interp_len = ilen;
		x->interp_vaddr = ivaddr;
		x->phdr_vaddr = phdr;
	} else {
		fd = memfd_of(ec);
	}
	int lfd = lc ? memfd_of(lc) : -1;
	const char *tmp = getenv("TMPDIR");
	char templ[4096];
	snprintf(templ, sizeof templ, "%s/ptrev-exe-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	bool made = fd >= 0 && (!lc || (lfd >= 0 && x->interp)) && mkdtemp(templ);
	int e = errno;
	if (made) {
		x->dir = strdup(templ);
		x->rel = x->dir ? same_length_path(x->dir, strlen(path)) : NULL;
		made = x->rel && link_in(x->dir, x->rel, fd) == 0;
		if (made && lc) {
			x->interp_rel = malloc(ilen);
			if (x->interp_rel) {
				memset(x->interp_rel, 'q', ilen - 1);
				x->interp_rel[ilen - 1] = 0;
			}
			made = x->interp_rel && link_in(x->dir, x->interp_rel, lfd) == 0;
		}
		e = errno;
	}
	if (!made) {
		snprintf(why, whylen, "cannot run the recording's copy of %s: %s", m->path,
			 strerror(e ? e : ENOMEM));
		binary_copy_exe_done(x);
		free(x->interp);
		x->interp = NULL;
		return -1;
	}
	if (same != 1)
		say_once(file, same < 0);
	if (lc)
		say_once(ld->path, ld_same < 0);
	return 1;
}

int binary_copy_exe_fix(const struct binary_copy_exec *x, int memfd, uint64_t at_phdr)
{
	if (!x->interp)
		return 0;
	uint64_t at = at_phdr - x->phdr_vaddr + x->interp_vaddr;
	return at_phdr && pwrite(memfd, x->interp, x->interp_len, (off_t)at) ==
				  (ssize_t)x->interp_len
		       ? 0
		       : -1;
}

void binary_copy_exe_done(struct binary_copy_exec *x)
{
	char p[8192];
	if (x->dir && x->interp_rel) {
		snprintf(p, sizeof p, "%s/%s", x->dir, x->interp_rel);
		unlink(p);
	}
	if (x->dir && x->rel) {
		/* The link, then each directory made for it, innermost first. */
		snprintf(p, sizeof p, "%s/%s", x->dir, x->rel);
		unlink(p);
		for (char *s = strrchr(x->rel, '/'); s; s = strrchr(x->rel, '/')) {
			*s = '\0';
			snprintf(p, sizeof p, "%s/%s", x->dir, x->rel);
			rmdir(p);
		}
	}
	if (x->dir)
		rmdir(x->dir);
	free(x->dir);
	free(x->rel);
	free(x->interp_rel);
	x->dir = x->rel = x->interp_rel = NULL;
}

const struct trace_file_copy *binary_copy_changed(const struct trace_data *td, const char *path)
{
	const struct trace_mmap *m = NULL;
	for (size_t i = td->nmmaps; i-- > 0 && !m;)
		if (td->mmaps[i].build_id_len && strcmp(td->mmaps[i].path, path) == 0)
			m = &td->mmaps[i];
	if (!m)
		return NULL;
	uint32_t len = m->build_id_len < 20 ? m->build_id_len : 20;
	if (same_build(path, m->build_id, len) == 1)
		return NULL;
	return trace_file_copy_find(td, path, m->build_id, len);
}
