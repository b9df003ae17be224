/* Read-only memory from a recording: CODE records first (they hold the
 * bytes that ran, e.g. the vDSO), then non-writable file mappings read
 * from the files themselves. */
#include "ptrev/code_memory.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct file_range {
	uint64_t start, end, offset;
	int fd; /* -1: could not be opened; reads fail */
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
		f->start = m->start;
		f->end = m->end;
		f->offset = m->offset;
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
				if (a < f->start || a >= f->end || f->fd < 0)
					continue;
				size_t want = f->end - a < len - done ? (size_t)(f->end - a) : len - done;
				ssize_t r = pread(f->fd, out, want, (off_t)(f->offset + (a - f->start)));
				n = r > 0 ? (size_t)r : 0;
			}
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}
