/* Mappings sideband: /proc/PID/maps parsed into TRACE_REC_MMAP records with
 * the file's GNU build-id, kept as the last known map so that each update
 * writes only the differences, plus copies of executable bytes no file
 * holds. */
#include "ptrev/sideband.h"
#include "ptrev/proc_maps.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct map_entry {
	uint64_t start, end, offset, inode;
	uint32_t prot, flags;
	char *path;
};

struct map_list {
	struct map_entry *e;
	size_t n, cap;
};

struct buildid_cache {
	char *path;
	uint64_t inode;
	uint8_t id[20];
	uint32_t len;
};

#define BUILDID_CACHE 16

/* A file already copied into the recording (FILE records). */
struct copied_file {
	char *path;
	uint8_t id[20];
	uint32_t len;
};

struct sideband {
	pid_t pid;
	int memfd;
	struct trace_writer *w; /* a file, memory, or both (trace_writer_keep) */
	struct map_list cur;
	struct buildid_cache bc[BUILDID_CACHE];
	unsigned bc_next;
	bool copy_files;
	struct copied_file *copied;
	size_t ncopied, copied_cap;
};

static void list_clear(struct map_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->e[i].path);
	l->n = 0;
}

static int list_add(struct map_list *l, const struct map_entry *m)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct map_entry *ne = realloc(l->e, cap * sizeof *ne);
		if (!ne)
			return -1;
		l->e = ne;
		l->cap = cap;
	}
	l->e[l->n] = *m;
	l->e[l->n].path = strdup(m->path ? m->path : "");
	if (!l->e[l->n].path)
		return -1;
	l->n++;
	return 0;
}

static int read_maps(pid_t pid, struct map_list *out)
{
	char fn[64], line[4096 + 256];
	FILE *f;

	snprintf(fn, sizeof fn, "/proc/%d/maps", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		struct map_entry m = {0};
		unsigned long long lo, hi, off, ino;
		char perm[8];
		int pathat = 0;
		size_t len;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %llu %n", &lo, &hi,
			   perm, &off, &ino, &pathat) < 5)
			continue;
		m.start = lo;
		m.end = hi;
		m.offset = off;
		m.inode = ino;
		m.prot = (uint32_t)proc_maps_prot(perm);
		m.flags = perm[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		m.path = pathat ? line + pathat : "";
		len = strlen(m.path);
		if (len >= 4096)
			m.path[4095] = 0;
		if (list_add(out, &m) < 0) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

static bool same_map(const struct map_entry *a, const struct map_entry *b)
{
	return a->start == b->start && a->end == b->end &&
	       a->offset == b->offset && a->prot == b->prot &&
	       a->flags == b->flags && a->inode == b->inode &&
	       strcmp(a->path, b->path) == 0;
}

/* The GNU build-id from the notes of an ELF file (PT_NOTE segments). */
static uint32_t read_build_id(const char *path, uint8_t id[20])
{
	Elf64_Ehdr eh;
	uint32_t found = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
		goto out;
	for (unsigned i = 0; i < eh.e_phnum && !found; i++) {
		Elf64_Phdr ph;
		uint8_t notes[4096];
		size_t len, at = 0;

		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) !=
		    (ssize_t)sizeof ph || ph.p_type != PT_NOTE)
			continue;
		len = ph.p_filesz < sizeof notes ? ph.p_filesz : sizeof notes;
		if (pread(fd, notes, len, (off_t)ph.p_offset) != (ssize_t)len)
			continue;
		while (at + sizeof(Elf64_Nhdr) <= len) {
			Elf64_Nhdr nh;
			size_t name_at, desc_at, next;

			memcpy(&nh, notes + at, sizeof nh);
			name_at = at + sizeof nh;
			desc_at = name_at + ((nh.n_namesz + 3u) & ~3u);
			next = desc_at + ((nh.n_descsz + 3u) & ~3u);
			if (next > len || desc_at > len)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp(notes + name_at, "GNU", 4) == 0 &&
			    nh.n_descsz > 0 && nh.n_descsz <= 20) {
				memcpy(id, notes + desc_at, nh.n_descsz);
				found = nh.n_descsz;
				break;
			}
			at = next;
		}
	}
out:
	close(fd);
	return found;
}

static uint32_t build_id(struct sideband *sb, const struct map_entry *m,
			 uint8_t id[20])
{
	struct buildid_cache *c;

	if (m->path[0] != '/' || !m->inode)
		return 0;
	for (unsigned i = 0; i < BUILDID_CACHE; i++) {
		c = &sb->bc[i];
		if (c->path && c->inode == m->inode && strcmp(c->path, m->path) == 0) {
			memcpy(id, c->id, c->len);
			return c->len;
		}
	}
	c = &sb->bc[sb->bc_next++ % BUILDID_CACHE];
	free(c->path);
	c->path = strdup(m->path);
	c->inode = m->inode;
	c->len = read_build_id(m->path, c->id);
	memcpy(id, c->id, c->len);
	return c->len;
}

/* Would a decoder find this mapping's bytes in its file? Only if the file
 * is still the one mapped (same inode) and not deleted. */
static bool backed_by_file(const struct map_entry *m)
{
	struct stat st;
	size_t len = strlen(m->path);
	static const char deleted[] = " (deleted)";

	if (m->path[0] != '/' || !m->inode)
		return false;
	if (len > sizeof deleted - 1 &&
	    strcmp(m->path + len - (sizeof deleted - 1), deleted) == 0)
		return false;
	return stat(m->path, &st) == 0 && (uint64_t)st.st_ino == m->inode;
}

static int write_code(struct sideband *sb, const struct map_entry *m)
{
	size_t chunk = 1u << 20;
	uint8_t *buf = malloc(chunk);
	int rc = 0;

	if (!buf)
		return -1;
	for (uint64_t a = m->start; a < m->end; a += chunk) {
		size_t n = m->end - a < chunk ? m->end - a : chunk;
		ssize_t got = pread(sb->memfd, buf, n, (off_t)a);
		struct trace_code c;

		/* [vsyscall] and PROT_NONE-ish pages are not readable: the
		 * decoder cannot need what the program cannot execute. */
		if (got <= 0)
			break;
		c.addr = a;
		c.bytes = buf;
		c.len = (size_t)got;
		if (trace_write_code(sb->w, &c) < 0) {
			rc = -1;
			break;
		}
		if ((size_t)got < n)
			break;
	}
	free(buf);
	return rc;
}

static bool already_copied(const struct sideband *sb, const char *path,
			   const uint8_t *id, uint32_t len)
{
	for (size_t i = 0; i < sb->ncopied; i++) {
		const struct copied_file *c = &sb->copied[i];
		if (c->len == len && memcmp(c->id, id, len) == 0 &&
		    strcmp(c->path, path) == 0)
			return true;
	}
	return false;
}

static int remember_copied(struct sideband *sb, const char *path,
			   const uint8_t *id, uint32_t len)
{
	if (sb->ncopied == sb->copied_cap) {
		size_t cap = sb->copied_cap ? sb->copied_cap * 2 : 8;
		struct copied_file *n = realloc(sb->copied, cap * sizeof *n);
		if (!n)
			return -1;
		sb->copied = n;
		sb->copied_cap = cap;
	}
	struct copied_file *c = &sb->copied[sb->ncopied];
	c->path = strdup(path);
	if (!c->path)
		return -1;
	memcpy(c->id, id, len);
	c->len = len;
	sb->ncopied++;
	return 0;
}

/* Copy the whole file behind an executable mapping into the recording,
 * the first time this path + build-id is seen, so that the recording
 * decodes after the file is gone or rebuilt. Only when the file at the
 * path is still the one mapped (same inode): otherwise its bytes are not
 * what ran, and the CODE records (see backed_by_file) hold them instead. */
static int copy_file(struct sideband *sb, const struct map_entry *m,
		     const struct trace_mmap *rec)
{
	struct stat st;
	int fd, rc = 0;

	if (!sb->copy_files || !(m->prot & PROT_EXEC) || !backed_by_file(m) ||
	    already_copied(sb, m->path, rec->build_id, rec->build_id_len))
		return 0;
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_ino != m->inode) {
		close(fd);
		return 0;
	}
	struct trace_file_copy f = {
		.path = m->path,
		.build_id_len = rec->build_id_len,
		.size = (uint64_t)st.st_size,
	};
	memcpy(f.build_id, rec->build_id, rec->build_id_len);
	void *bytes = NULL;
	if (f.size) {
		bytes = mmap(NULL, (size_t)f.size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (bytes == MAP_FAILED) {
			close(fd);
			return 0; /* a decoder will say the file is missing */
		}
	}
	close(fd);
	f.bytes = bytes;
	f.len = f.size;
	if (trace_write_file(sb->w, &f) < 0)
		rc = -1;
	if (bytes)
		munmap(bytes, (size_t)f.size);
	if (rc == 0 && remember_copied(sb, m->path, rec->build_id, rec->build_id_len) < 0)
		rc = -1;
	return rc;
}

static int write_mmap(struct sideband *sb, const struct map_entry *m,
		      pid_t tid, uint64_t pos)
{
	static __thread struct trace_mmap rec; /* 4 KiB of path: not on the stack */

	memset(&rec, 0, sizeof rec);
	rec.tid = tid;
	rec.pos = pos;
	rec.start = m->start;
	rec.end = m->end;
	rec.offset = m->offset;
	rec.prot = m->prot;
	rec.flags = m->flags;
	snprintf(rec.path, sizeof rec.path, "%s", m->path);
	rec.build_id_len = build_id(sb, m, rec.build_id);
	if (trace_write_mmap(sb->w, &rec) < 0)
		return -1;
	if (copy_file(sb, m, &rec) < 0)
		return -1;
	if ((m->prot & PROT_EXEC) && !backed_by_file(m))
		return write_code(sb, m);
	return 0;
}

struct sideband *sideband_new(pid_t pid, int memfd, struct trace_writer *w)
{
	struct sideband *sb = calloc(1, sizeof *sb);
	if (!sb)
		return NULL;
	sb->pid = pid;
	sb->memfd = memfd;
	sb->w = w;
	sb->copy_files = true;
	return sb;
}

void sideband_set_copy_files(struct sideband *sb, bool on)
{
	sb->copy_files = on;
}

void sideband_set_memfd(struct sideband *sb, int memfd)
{
	sb->memfd = memfd;
}

void sideband_free(struct sideband *sb)
{
	if (!sb)
		return;
	list_clear(&sb->cur);
	free(sb->cur.e);
	for (unsigned i = 0; i < BUILDID_CACHE; i++)
		free(sb->bc[i].path);
	for (size_t i = 0; i < sb->ncopied; i++)
		free(sb->copied[i].path);
	free(sb->copied);
	free(sb);
}

static bool in_list(const struct map_list *l, const struct map_entry *m)
{
	/* Both lists are sorted by address: a binary search finds the
	 * candidate with the same start. */
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (l->e[mid].start < m->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && same_map(&l->e[lo], m);
}

int sideband_update(struct sideband *sb, pid_t tid, uint64_t pos)
{
	struct map_list nw = {0};
	int changes = 0, rc = 0;

	if (read_maps(sb->pid, &nw) < 0) {
		list_clear(&nw);
		free(nw.e);
		return -1;
	}
	/* Removals first, so that a reader applying records in order ends
	 * with exactly the new map. */
	for (size_t i = 0; i < sb->cur.n && rc == 0; i++) {
		const struct map_entry *m = &sb->cur.e[i];
		if (!in_list(&nw, m)) {
			struct trace_munmap u = { tid, pos, m->start, m->end };
			rc = trace_write_munmap(sb->w, &u);
			changes++;
		}
	}
	for (size_t i = 0; i < nw.n && rc == 0; i++) {
		if (!in_list(&sb->cur, &nw.e[i])) {
			rc = write_mmap(sb, &nw.e[i], tid, pos);
			changes++;
		}
	}
	list_clear(&sb->cur);
	free(sb->cur.e);
	sb->cur = nw;
	return rc < 0 ? -1 : changes;
}
