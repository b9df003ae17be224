/* Finding the instructions an event recording cannot hold, for the
 * message of a replay that went differently: see unrecorded_insns.h. */
#include "ptrev/unrecorded_insns.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ptrev/trace_image.h"

size_t unrecorded_insns_count(const unsigned char *code, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i + 2 < len; i++)
		if (code[i] == 0x0f && code[i + 1] == 0xc7 && code[i + 2] >= 0xf0)
			n++;
	return n;
}

/* The count in m's bytes: from the recording's copy of its file, else
 * from the file itself (trace_image_file_source says which holds the
 * recorded build). 0 where neither can be read. */
static size_t count_in(const struct trace_data *td, const struct trace_mmap *m)
{
	const struct trace_file_copy *copy = NULL;
	char err[512];
	size_t len = m->end - m->start;
	if (trace_image_file_source(td, m, &copy, err, sizeof err) < 0)
		return 0;
	if (copy) {
		if (m->offset >= copy->len)
			return 0;
		if (len > copy->len - m->offset)
			len = copy->len - m->offset;
		return unrecorded_insns_count(copy->bytes + m->offset, len);
	}
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	off_t size = lseek(fd, 0, SEEK_END);
	size_t n = 0;
	if (size > 0 && (uint64_t)size > m->offset) {
		if (len > (uint64_t)size - m->offset)
			len = (uint64_t)size - m->offset;
		/* mmap wants a page-aligned offset: the mappings' are. */
		void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, (off_t)m->offset);
		if (p != MAP_FAILED) {
			n = unrecorded_insns_count(p, len);
			munmap(p, len);
		}
	}
	close(fd);
	return n;
}

/* Append to out (len bytes, *used of them written), cut where it is
 * full, always terminated. */
static void append(char *out, size_t len, size_t *used, const char *fmt, ...)
{
	if (*used + 1 >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(out + *used, len - *used, fmt, ap);
	va_end(ap);
	if (w > 0)
		*used = *used + (size_t)w < len ? *used + (size_t)w : len - 1;
}

size_t unrecorded_insns_note(const struct trace_data *td, char *out, size_t len)
{
	size_t used = 0;
	if (len)
		out[0] = 0;
	for (size_t i = 0; i < td->nmmaps; i++) {
		const struct trace_mmap *m = &td->mmaps[i];
		if (!(m->prot & PROT_EXEC) || !m->path[0] || m->path[0] == '[' ||
		    m->end <= m->start)
			continue;
		bool seen = false; /* each file once */
		for (size_t j = 0; j < i && !seen; j++)
			seen = (td->mmaps[j].prot & PROT_EXEC) &&
			       strcmp(td->mmaps[j].path, m->path) == 0;
		size_t n = seen ? 0 : count_in(td, m);
		if (n == 0)
			continue;
		const char *base = strrchr(m->path, '/');
		append(out, len, &used, "%s%s: %zu",
		       used ? ", " : "the program's code holds rdrand, rdseed or rdpid (",
		       base ? base + 1 : m->path, n);
	}
	if (used)
		append(out, len, &used, "), whose values this CPU gives the recorder no stop for "
			"(no CPUID faulting): a replay that runs one goes differently from the "
			"recording");
	return used;
}
