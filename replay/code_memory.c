/* Read-only memory from a recording: CODE records first (they hold the
 * bytes that ran, e.g. the vDSO), then non-writable file mappings read
 * from the files themselves when they still have the recorded build-id,
 * else from the recording's copies of them (FILE records). */
#include "ptrev/code_memory.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ptrev/trace_image.h"

struct file_range {
	uint64_t start, end, offset;
	int fd; /* the file; -1: not usable (then copy, or reads fail) */
	/* index in td->files + 1 of the copy that stands in, 0 for none (an
	 * index: a live recording's files[] may move as it grows) */
	size_t copy;
};

struct code_memory {
	const struct trace_data *td;
	struct file_range *files;
	size_t nfiles;
	size_t nmmaps;  /* mappings indexed (a live recording adds more) */
};

static size_t read_code_records(const struct trace_data *td, uint64_t addr, void *buf, size_t len)
{
	/* Later records win: code can be rewritten and recorded again. */
	for (size_t i = td->ncode; i-- > 0;) {
		const struct trace_code *c = &td->code[i];
		if (addr >= c->addr && addr - c->addr < c->len) {
			size_t off = (size_t)(addr - c->addr);
			size_t n = c->len - off < len ? c->len - off : len;
			memcpy(buf, c->bytes + off, n);
			return n;
		}
	}
	return 0;
}

static void close_files(struct code_memory *cm)
{
	for (size_t i = 0; i < cm->nfiles; i++)
		if (cm->files[i].fd >= 0)
			close(cm->files[i].fd);
	free(cm->files);
	cm->files = NULL;
	cm->nfiles = 0;
}

/* (Re)index the non-writable file mappings seen so far. */
static int index_files(struct code_memory *cm)
{
	const struct trace_data *td = cm->td;
	close_files(cm);
	cm->files = calloc(td->nmmaps ? td->nmmaps : 1, sizeof *cm->files);
	if (!cm->files)
		return -1;
	for (size_t i = 0; i < td->nmmaps; i++) {
		const struct trace_mmap *m = &td->mmaps[i];
		/* Only what the program could not have changed: no write
		 * permission, and a real file (not anonymous, not [vdso]). */
		if ((m->prot & PROT_WRITE) || m->path[0] != '/' || (m->flags & MAP_SHARED))
			continue;
		struct file_range *f = &cm->files[cm->nfiles++];
		const struct trace_file_copy *c = NULL;
		f->start = m->start;
		f->end = m->end;
		f->offset = m->offset;
		f->fd = -1;
		f->copy = 0;
		/* Bytes from another build of the file would be lies. */
		if (trace_image_file_source(td, m, &c, NULL, 0) < 0)
			continue;
		if (c)
			f->copy = (size_t)(c - td->files) + 1;
		else
			f->fd = open(m->path, O_RDONLY | O_CLOEXEC);
	}
	cm->nmmaps = td->nmmaps;
	return 0;
}

struct code_memory *code_memory_new(const struct trace_data *td)
{
	struct code_memory *cm = calloc(1, sizeof *cm);
	if (!cm)
		return NULL;
	cm->td = td;
	if (index_files(cm) != 0) {
		free(cm);
		return NULL;
	}
	return cm;
}

void code_memory_free(struct code_memory *cm)
{
	if (!cm)
		return;
	close_files(cm);
	free(cm);
}

size_t code_memory_read(struct code_memory *cm, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;
	if (cm->nmmaps != cm->td->nmmaps && index_files(cm) != 0)
		return 0;
	while (done < len) {
		uint8_t *out = (uint8_t *)buf + done;
		uint64_t a = addr + done;
		size_t n = read_code_records(cm->td, a, out, len - done);
		if (n == 0) {
			for (size_t i = cm->nfiles; i-- > 0 && n == 0;) {
				const struct file_range *f = &cm->files[i];
				if (a < f->start || a >= f->end || (f->fd < 0 && !f->copy))
					continue;
				size_t want = f->end - a < len - done ? (size_t)(f->end - a) : len - done;
				uint64_t at = f->offset + (a - f->start);
				if (f->copy) {
					const struct trace_file_copy *c = &cm->td->files[f->copy - 1];
					n = at < c->size ? (size_t)(c->size - at) : 0;
					if (n > want)
						n = want;
					if (n)
						memcpy(out, c->bytes + at, n);
					continue;
				}
				ssize_t r = pread(f->fd, out, want, (off_t)at);
				n = r > 0 ? (size_t)r : 0;
			}
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}
