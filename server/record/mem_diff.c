/* The writable memory of a process copied, and compared again later
 * (include/ptrev/mem_diff.h). */
#include "ptrev/mem_diff.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/proc_maps.h"

#define PAGE 4096
/* Two changed places closer than this are one range. */
#define MERGE_GAP 64

struct region {
	uint64_t start, len;
	uint8_t *bytes;
};

struct mem_diff {
	struct region *r;
	size_t n, cap;
};

void mem_diff_free(struct mem_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->r[i].bytes);
	free(d->r);
	free(d);
}

/* Read len bytes at addr whole, or fail. */
static int read_all(sc_read_fn read_mem, void *ctx, uint64_t addr, uint8_t *buf, uint64_t len)
{
	while (len) {
		long got = read_mem(ctx, addr, buf, len);
		if (got <= 0)
			return -1;
		addr += (uint64_t)got;
		buf += got;
		len -= (uint64_t)got;
	}
	return 0;
}

static int add(struct mem_diff *d, uint64_t start, uint64_t len, sc_read_fn read_mem, void *ctx)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct region *grown = realloc(d->r, cap * sizeof *grown);
		if (!grown)
			return -1;
		d->r = grown;
		d->cap = cap;
	}
	uint8_t *bytes = malloc(len);
	if (!bytes)
		return -1;
	if (read_all(read_mem, ctx, start, bytes, len) < 0) {
		/* Not readable (a guard page made writable later, say): not
		 * compared, and so not reported either. */
		free(bytes);
		return 0;
	}
	d->r[d->n++] = (struct region){start, len, bytes};
	return 0;
}

struct mem_diff *mem_diff_take(pid_t pid, sc_read_fn read_mem, void *ctx, size_t limit)
{
	FILE *f = proc_maps_open(pid);
	if (!f)
		return NULL;
	struct mem_diff *d = calloc(1, sizeof *d);
	size_t total = 0;
	bool ok = d != NULL;
	struct proc_mapping m;
	while (ok && proc_maps_next(f, &m)) {
		/* [vvar] and [vsyscall] are not the program's to write. */
		if (m.perms[1] != 'w' || !strcmp(m.name, "[vvar]") || !strcmp(m.name, "[vsyscall]"))
			continue;
		total += m.end - m.start;
		ok = total <= limit && add(d, m.start, m.end - m.start, read_mem, ctx) == 0;
	}
	fclose(f);
	if (!ok) {
		mem_diff_free(d);
		return NULL;
	}
	return d;
}

static int push(struct sc_range **out, int *n, int *cap, uint64_t addr, uint64_t len)
{
	if (*n && (*out)[*n - 1].addr + (*out)[*n - 1].len + MERGE_GAP >= addr) {
		struct sc_range *last = &(*out)[*n - 1];
		last->len = addr + len - last->addr;
		return 0;
	}
	if (*n == *cap) {
		int c = *cap ? *cap * 2 : 16;
		struct sc_range *grown = realloc(*out, (size_t)c * sizeof *grown);
		if (!grown)
			return -1;
		*out = grown;
		*cap = c;
	}
	(*out)[(*n)++] = (struct sc_range){addr, len};
	return 0;
}

int mem_diff_changes(struct mem_diff *d, sc_read_fn read_mem, void *ctx, struct sc_range **out)
{
	uint8_t now[PAGE];
	int n = 0, cap = 0;
	*out = NULL;
	for (size_t i = 0; i < d->n; i++) {
		const struct region *r = &d->r[i];
		for (uint64_t off = 0; off < r->len; off += PAGE) {
			uint64_t len = r->len - off < PAGE ? r->len - off : PAGE;
			if (read_all(read_mem, ctx, r->start + off, now, len) < 0)
				goto fail;
			const uint8_t *was = r->bytes + off;
			if (memcmp(now, was, len) == 0)
				continue;
			/* Each run of changed bytes (push merges close ones). */
			for (uint64_t a = 0; a < len; a++) {
				if (now[a] == was[a])
					continue;
				uint64_t b = a + 1;
				while (b < len && now[b] != was[b])
					b++;
				if (push(out, &n, &cap, r->start + off + a, b - a) < 0)
					goto fail;
				a = b;
			}
		}
	}
	return n;
fail:
	free(*out);
	*out = NULL;
	return -1;
}
