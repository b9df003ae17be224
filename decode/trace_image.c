/* The code a recording ran, as one libipt image: every executable mapping
 * the sideband ever showed, from its file (checked against the recorded
 * build-id), from the recording's copy of that file when the file is gone
 * or another build, or from the recorded code bytes (vDSO, anonymous code,
 * files that changed while recording).
 *
 * One image serves the whole recording. That is only right while no two
 * code mappings ever occupied the same addresses with different contents
 * (exec of another program, munmap + mmap of other code, JIT rewriting), so
 * such overlaps are refused with an error rather than decoded with the
 * wrong code. Building one image per time range is the way to lift that. */
#include "trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Keep sections mapped once used, as raw_decode.c does and for the same
 * reason: the default (0) maps and unmaps at every section switch. */
static const uint64_t iscache_limit = 256ull << 20;

enum region_kind {
	REG_FILE,	/* a mapped file: its bytes at start..end */
	REG_CODE,	/* recorded code bytes */
	REG_UNBACKED,	/* anonymous or [special] mapping: only CODE fills it */
};

struct region {
	uint64_t start, end;
	enum region_kind kind;
	const struct trace_mmap *map;	/* REG_FILE, REG_UNBACKED */
	const struct trace_code *code;	/* REG_CODE */
	int covered;			/* REG_FILE wholly given by CODE */
	uint64_t code_off;		/* REG_CODE: offset in the memfd */
	const struct trace_file_copy *copy; /* REG_FILE: the recorded copy
					 * stands in for the file */
};

/* While building: recorded bytes (CODE records, copies of files) go into
 * one memfd, which libipt then maps like a file. */
struct image_build {
	struct trace_image *ti;
	const struct trace_data *td;
	uint64_t fd_len;		/* bytes in ti->code_fd so far */
	uint64_t *copy_off;		/* per td->files[]: offset, or ~0 */
	char fd_path[64];		/* /proc/self/fd/N of ti->code_fd */
};

static void errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int trace_mmap_is_file(const struct trace_mmap *m)
{
	return m->path[0] == '/';
}

/* ---- build-ids ---------------------------------------------------------- */

/* Looks for an NT_GNU_BUILD_ID note in @data. */
static size_t note_build_id(Elf_Data *data, uint8_t *id, size_t max)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nhdr;

	while (data && off < data->d_size &&
	       (off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off))) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    !memcmp(name, "GNU", 4) && nhdr.n_descsz > 0) {
			size_t n = nhdr.n_descsz < max ? nhdr.n_descsz : max;

			memcpy(id, (const uint8_t *)data->d_buf + desc_off, n);
			return nhdr.n_descsz;
		}
	}
	return 0;
}

size_t trace_elf_build_id(int fd, uint8_t *id, size_t max)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t phnum = 0, i, len = 0;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return 0;
	}
	/* The notes the loader sees (program headers) first: they survive
	 * strip; section headers for objects without them. */
	if (elf_getphdrnum(elf, &phnum) == 0) {
		for (i = 0; i < phnum && !len; i++) {
			GElf_Phdr ph;
			Elf_Data *data;

			if (!gelf_getphdr(elf, (int)i, &ph) ||
			    ph.p_type != PT_NOTE)
				continue;
			data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
						    ph.p_filesz, ELF_T_NHDR);
			len = note_build_id(data, id, max);
		}
	}
	while (!len && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			len = note_build_id(elf_getdata(scn, NULL), id, max);
	}
	elf_end(elf);
	return len;
}

static void hex_string(const uint8_t *b, size_t n, char *out, size_t outlen)
{
	size_t i;

	if (!n) {
		snprintf(out, outlen, "none");
		return;
	}
	for (i = 0; i < n && 2 * i + 2 < outlen; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* ---- the list of code regions ------------------------------------------ */

static int by_start(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int same_file_mapping(const struct trace_mmap *a,
			     const struct trace_mmap *b)
{
	/* The same file at the same load bias shows the same bytes at every
	 * address both cover. */
	return !strcmp(a->path, b->path) &&
	       a->start - a->offset == b->start - b->offset &&
	       a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id,
		       a->build_id_len < sizeof(a->build_id) ?
		       a->build_id_len : sizeof(a->build_id));
}

/* Every executable mapping and every CODE record, sorted by address, with
 * exact repeats of a file mapping (re-reported maps) left out. */
static struct region *collect(const struct trace_data *td, size_t *count)
{
	struct region *r = calloc(td->nmmaps + td->ncode + 1, sizeof(*r));
	size_t n = 0, i, k;

	if (!r)
		return NULL;
	for (i = 0; i < td->nmmaps; i++) {
		const struct trace_mmap *m = &td->mmaps[i];
		int repeat = 0;

		if (!(m->prot & PROT_EXEC) || m->end <= m->start)
			continue;
		for (k = 0; k < n && !repeat; k++)
			repeat = r[k].map && r[k].start == m->start &&
				 r[k].end == m->end &&
				 !strcmp(r[k].map->path, m->path) &&
				 same_file_mapping(r[k].map, m);
		if (repeat)
			continue;
		r[n].start = m->start;
		r[n].end = m->end;
		r[n].kind = trace_mmap_is_file(m) ? REG_FILE : REG_UNBACKED;
		r[n].map = m;
		n++;
	}
	for (i = 0; i < td->ncode; i++) {
		const struct trace_code *c = &td->code[i];

		if (!c->len || c->addr + c->len < c->addr)
			continue;
		r[n].start = c->addr;
		r[n].end = c->addr + c->len;
		r[n].kind = REG_CODE;
		r[n].code = c;
		n++;
	}
	qsort(r, n, sizeof(*r), by_start);
	*count = n;
	return r;
}

/* Marks the file regions that the CODE regions cover entirely: their file
 * is not needed (and may have changed: that is why the code was kept). */
static void mark_covered(struct region *r, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		uint64_t upto = r[i].start;
		int progress = 1;

		if (r[i].kind != REG_FILE)
			continue;
		/* CODE regions are sorted by start: sweep until a gap. */
		while (progress && upto < r[i].end) {
			progress = 0;
			for (k = 0; k < n; k++) {
				if (r[k].kind == REG_CODE &&
				    r[k].start <= upto && r[k].end > upto) {
					upto = r[k].end;
					progress = 1;
				}
			}
		}
		r[i].covered = upto >= r[i].end;
	}
}

static const char *region_name(const struct region *r)
{
	if (r->kind == REG_CODE)
		return "recorded code";
	return r->map->path[0] ? r->map->path : "anonymous mapping";
}

/* Reads @len bytes of the file region @f at @offset into @buf; 0 or -1. */
static int read_file_bytes(const struct region *f, uint64_t offset,
			   uint8_t *buf, size_t len)
{
	int fd;
	ssize_t got;

	if (f->copy) {
		if (offset > f->copy->size || len > f->copy->size - offset)
			return -1;
		memcpy(buf, f->copy->bytes + offset, len);
		return 0;
	}
	fd = open(f->map->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	got = pread(fd, buf, len, (off_t)offset);
	close(fd);
	return got == (ssize_t)len ? 0 : -1;
}

/* Do @a and @b (which overlap) show the same bytes where they overlap? */
static int compatible(const struct region *a, const struct region *b)
{
	uint64_t lo = a->start > b->start ? a->start : b->start;
	uint64_t hi = a->end < b->end ? a->end : b->end;

	if (a->kind == REG_CODE && b->kind == REG_CODE)
		return !memcmp(a->code->bytes + (lo - a->start),
			       b->code->bytes + (lo - b->start), hi - lo);
	if (a->kind == REG_FILE && b->kind == REG_FILE)
		return same_file_mapping(a->map, b->map);
	if (a->kind == REG_UNBACKED || b->kind == REG_UNBACKED) {
		/* Anonymous code is given only by CODE records; next to a
		 * file at the same addresses, which was there when is
		 * unknown. */
		return a->kind != REG_FILE && b->kind != REG_FILE;
	}
	{
		/* A file and recorded code. A file wholly covered by code is
		 * not used; otherwise the code must equal the file's bytes. */
		const struct region *f = a->kind == REG_FILE ? a : b;
		const struct region *c = a->kind == REG_CODE ? a : b;
		uint8_t *buf;
		int same;

		if (f->covered)
			return 1;
		buf = malloc(hi - lo);
		if (!buf)
			return 0;
		same = !read_file_bytes(f, f->map->offset + (lo - f->start),
					buf, hi - lo) &&
		       !memcmp(buf, c->code->bytes + (lo - c->start), hi - lo);
		free(buf);
		return same;
	}
}

static int check_overlaps(const struct region *r, size_t n, char *err,
			  size_t errlen)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		for (k = i + 1; k < n && r[k].start < r[i].end; k++) {
			if (compatible(&r[i], &r[k]))
				continue;
			errf(err, errlen, "overlapping code mappings over time "
			     "are not supported yet (%s at 0x%" PRIx64
			     "-0x%" PRIx64 ", %s at 0x%" PRIx64 "-0x%" PRIx64
			     ")", region_name(&r[i]), r[i].start, r[i].end,
			     region_name(&r[k]), r[k].start, r[k].end);
			return -1;
		}
	}
	return 0;
}

/* ---- adding sections ----------------------------------------------------- */

static int add_section(struct trace_image *ti, const char *path,
		       uint64_t offset, uint64_t size, uint64_t vaddr,
		       const char *what, char *err, size_t errlen)
{
	int isid = pt_iscache_add_file(ti->iscache, path, offset, size, vaddr);
	int rc = isid;

	if (isid >= 0)
		rc = pt_image_add_cached(ti->image, ti->iscache, isid, NULL);
	if (rc < 0) {
		errf(err, errlen, "%s: cannot add its code at 0x%" PRIx64
		     ": %s", what, vaddr, pt_errstr(pt_errcode(rc)));
		return -1;
	}
	return 0;
}

/* The file at m->path is the one recorded: 0, or -1 with why not. */
static int check_file(const struct trace_mmap *m, char *err, size_t errlen)
{
	uint8_t id[sizeof(m->build_id)];
	size_t id_len, rec_len;
	struct stat st;
	int fd;

	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errf(err, errlen, "%s: cannot open (code mapped at 0x%" PRIx64
		     "-0x%" PRIx64 "): %s", m->path, m->start, m->end,
		     strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		errf(err, errlen, "%s: not a regular file (code mapped at 0x%"
		     PRIx64 ")", m->path, m->start);
		close(fd);
		return -1;
	}
	rec_len = m->build_id_len < sizeof(m->build_id) ? m->build_id_len :
		  sizeof(m->build_id);
	if (rec_len) {
		char was[2 * sizeof(id) + 1], now[2 * sizeof(id) + 1];

		id_len = trace_elf_build_id(fd, id, sizeof(id));
		if (id_len != m->build_id_len ||
		    memcmp(id, m->build_id, rec_len)) {
			hex_string(m->build_id, rec_len, was, sizeof(was));
			hex_string(id, id_len < sizeof(id) ? id_len :
				   sizeof(id), now, sizeof(now));
			errf(err, errlen, "%s changed since recording "
			     "(build-id %s recorded, %s now)", m->path, was,
			     now);
			close(fd);
			return -1;
		}
	}
	close(fd);
	if ((uint64_t)st.st_size <= m->offset) {
		errf(err, errlen, "%s changed since recording (it ends before "
		     "offset 0x%" PRIx64 ", mapped at 0x%" PRIx64 ")", m->path,
		     m->offset, m->start);
		return -1;
	}
	return 0;
}

int trace_image_file_source(const struct trace_data *td,
			    const struct trace_mmap *m,
			    const struct trace_file_copy **copy,
			    char *err, size_t errlen)
{
	uint32_t rec_len = m->build_id_len < sizeof(m->build_id) ?
			   m->build_id_len : (uint32_t)sizeof(m->build_id);
	const struct trace_file_copy *c =
		trace_file_copy_find(td, m->path, m->build_id, rec_len);
	char why[512];

	if (c && c->size <= m->offset)
		c = NULL; /* it cannot hold this mapping */
	*copy = NULL;
	/* Without a build-id a file cannot be told from another build of
	 * it: the copy, when there is one, is certain. */
	if (c && !rec_len) {
		*copy = c;
		return 0;
	}
	if (check_file(m, why, sizeof(why)) == 0)
		return 0;
	if (c) {
		*copy = c;
		return 0;
	}
	errf(err, errlen, "%s; the recording has no copy of it%s", why,
	     td->nfiles ? "" : " (recorded with --no-copy)");
	return -1;
}

int trace_image_binary_path(const struct trace_data *td, const char *path,
			    char *out, size_t outlen, bool *is_temp,
			    char *err, size_t errlen)
{
	const struct trace_mmap *m = NULL;
	const struct trace_file_copy *c = NULL;
	const char *dir = getenv("TMPDIR");
	size_t i, done = 0;
	int fd;

	*is_temp = false;
	for (i = 0; i < td->nmmaps && !m; i++)
		if ((td->mmaps[i].prot & PROT_EXEC) &&
		    !strcmp(td->mmaps[i].path, path))
			m = &td->mmaps[i];
	if (m && trace_image_file_source(td, m, &c, err, errlen) < 0)
		return -1;
	if (!c) {
		snprintf(out, outlen, "%s", path);
		return 0;
	}
	snprintf(out, outlen, "%s/ptrev-binary-XXXXXX",
		 dir && *dir ? dir : "/tmp");
	fd = mkstemp(out);
	if (fd < 0) {
		errf(err, errlen, "%s: cannot make a copy of %s: %s", out,
		     path, strerror(errno));
		return -1;
	}
	while (done < c->size) {
		ssize_t k = write(fd, c->bytes + done, c->size - done);

		if (k <= 0) {
			errf(err, errlen, "%s: writing the copy of %s: %s", out,
			     path, k < 0 ? strerror(errno) : "short write");
			close(fd);
			unlink(out);
			return -1;
		}
		done += (size_t)k;
	}
	if (fchmod(fd, 0700) < 0) { /* gdb or a re-execution may run it */
		errf(err, errlen, "%s: %s", out, strerror(errno));
		close(fd);
		unlink(out);
		return -1;
	}
	close(fd);
	*is_temp = true;
	return 0;
}

/* Appends @len bytes to the memfd of recorded bytes; their offset in
 * *@off. 0 or -1. */
static int hold_bytes(struct image_build *b, const void *bytes, uint64_t len,
		      uint64_t *off, char *err, size_t errlen)
{
	struct trace_image *ti = b->ti;
	const uint8_t *p = bytes;
	uint64_t done = 0;

	if (ti->code_fd < 0) {
		ti->code_fd = memfd_create("ptrev-code", MFD_CLOEXEC);
		if (ti->code_fd < 0) {
			errf(err, errlen, "cannot hold the recorded code: %s",
			     strerror(errno));
			return -1;
		}
		snprintf(b->fd_path, sizeof(b->fd_path), "/proc/self/fd/%d",
			 ti->code_fd);
	}
	while (done < len) {
		ssize_t k = pwrite(ti->code_fd, p + done, len - done,
				   (off_t)(b->fd_len + done));

		if (k <= 0) {
			errf(err, errlen, "cannot hold the recorded code: %s",
			     k < 0 ? strerror(errno) : "short write");
			return -1;
		}
		done += (uint64_t)k;
	}
	*off = b->fd_len;
	b->fd_len += len;
	return 0;
}

/* Decides where a file mapping's code comes from: the file when it is the
 * recorded one, else the recording's copy of it (held in the memfd once).
 * Every byte goes into the memfd before any section is made of it: libipt
 * refuses a section whose file changed size after it was added. */
static int resolve_file(struct image_build *b, struct region *r, char *err,
			size_t errlen)
{
	const struct trace_file_copy *c;
	size_t k;

	if (trace_image_file_source(b->td, r->map, &c, err, errlen) < 0)
		return -1;
	r->copy = c;
	if (!c)
		return 0;
	k = (size_t)(c - b->td->files);
	if (b->copy_off[k] == UINT64_MAX &&
	    hold_bytes(b, c->bytes, c->size, &b->copy_off[k], err, errlen) < 0)
		return -1;
	return 0;
}

/* Adds a resolved file mapping's code as a section. */
static int add_file(struct image_build *b, const struct region *r, char *err,
		    size_t errlen)
{
	const struct trace_mmap *m = r->map;
	const struct trace_file_copy *c = r->copy;
	uint64_t size = m->end - m->start, file_size;
	struct stat st;

	if (!c) {
		if (stat(m->path, &st) < 0) {
			errf(err, errlen, "%s: %s", m->path, strerror(errno));
			return -1;
		}
		file_size = (uint64_t)st.st_size;
	} else {
		file_size = c->size;
	}
	/* The last page of a mapping may reach past the end of the file. */
	if (size > file_size - m->offset)
		size = file_size - m->offset;
	if (!c)
		return add_section(b->ti, m->path, m->offset, size, m->start,
				   m->path, err, errlen);
	return add_section(b->ti, b->fd_path,
			   b->copy_off[c - b->td->files] + m->offset, size,
			   m->start, m->path, err, errlen);
}

/* CODE bytes go into the memfd too: every instruction comes from an image
 * section (ptxed's --check wants a section id) and the section cache
 * serves them like any other. */
static int hold_code(struct image_build *b, struct region *r, size_t n,
		     char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].kind == REG_CODE &&
		    hold_bytes(b, r[i].code->bytes, r[i].code->len,
			       &r[i].code_off, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int add_code(struct image_build *b, const struct region *r, size_t n,
		    char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (r[i].kind == REG_CODE &&
		    add_section(b->ti, b->fd_path, r[i].code_off,
				r[i].code->len, r[i].start, "recorded code",
				err, errlen) < 0)
			return -1;
	}
	return 0;
}

int trace_image_build(struct trace_image *ti, const struct trace_data *td,
		      char *err, size_t errlen)
{
	struct image_build b = { .ti = ti, .td = td };
	struct region *r;
	size_t n = 0, i;
	int rc = -1;

	ti->code_fd = -1;
	ti->iscache = pt_iscache_alloc(NULL);
	ti->image = pt_image_alloc(NULL);
	r = collect(td, &n);
	b.copy_off = malloc((td->nfiles + 1) * sizeof(*b.copy_off));
	if (!ti->iscache || !ti->image || !r || !b.copy_off) {
		errf(err, errlen, "out of memory");
		goto out;
	}
	pt_iscache_set_limit(ti->iscache, iscache_limit);
	for (i = 0; i < td->nfiles; i++)
		b.copy_off[i] = UINT64_MAX;

	mark_covered(r, n);
	/* Files first: a missing or changed file without a copy is reported
	 * as such, not as a conflict with the code that overlaps it. */
	for (i = 0; i < n; i++) {
		if (r[i].kind == REG_FILE && !r[i].covered &&
		    resolve_file(&b, &r[i], err, errlen) < 0)
			goto out;
	}
	if (check_overlaps(r, n, err, errlen) < 0 ||
	    hold_code(&b, r, n, err, errlen) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (r[i].kind == REG_FILE && !r[i].covered &&
		    add_file(&b, &r[i], err, errlen) < 0)
			goto out;
	}
	/* Recorded code last: where it overlaps a file, it is what ran. */
	if (add_code(&b, r, n, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	free(r);
	free(b.copy_off);
	if (rc < 0)
		trace_image_free(ti);
	return rc;
}

void trace_image_free(struct trace_image *ti)
{
	pt_image_free(ti->image);
	pt_iscache_free(ti->iscache);
	if (ti->code_fd >= 0)
		close(ti->code_fd);
	ti->image = NULL;
	ti->iscache = NULL;
	ti->code_fd = -1;
}
