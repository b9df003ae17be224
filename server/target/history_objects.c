/* What gdb reads of a recording besides registers and memory: the
 * auxiliary vector, the program, the shared library list and the process's
 * mappings, from what the recording kept (META, MMAP records, binaries). */
#include "target_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/hex.h"
#include "ptrev/target_xfer.h"
#include "ptrev/trace_image.h"

/* The auxv a recording kept (META "auxv", hex). */
int history_auxv(const struct trace_data *td, struct strbuf *out)
{
	const char *hex = trace_meta(td, "auxv");
	size_t n = hex ? strlen(hex) : 0;
	if (n == 0 || n % 2)
		return -ENOENT;
	uint8_t *bytes = malloc(n / 2);
	if (!bytes || !hex_decode(hex, n / 2, bytes)) {
		free(bytes);
		return -EINVAL;
	}
	strbuf_append(out, bytes, n / 2);
	free(bytes);
	return 0;
}

int history_exec_file(const struct trace_data *td, char *path, size_t pathlen, bool *is_temp,
		      struct strbuf *out)
{
	if (path[0]) {
		strbuf_puts(out, path);
		return 0;
	}
	const char *prog = trace_meta(td, "program");
	const char *cwd = trace_meta(td, "cwd");
	const char *exe = trace_meta(td, "exe");
	if (!prog || !*prog)
		return -ENOENT;
	/* /proc/self/exe names the program only from inside it (gdb would
	 * read ptrev's): the file it named. */
	if (exe && strncmp(prog, "/proc/", 6) == 0)
		prog = exe;
	char abs[4096];
	snprintf(abs, sizeof abs, "%s%s%s", prog[0] != '/' && cwd ? cwd : "",
		 prog[0] != '/' && cwd ? "/" : "", prog);
	/* The recorded build: the file itself if unchanged, else the copy the
	 * recording carries, written to a temporary file gdb then reads. */
	char err[512];
	if (trace_image_binary_path(td, abs, path, pathlen, is_temp, err, sizeof err) != 0) {
		fprintf(stderr, "ptrev: %s\n", err);
		path[0] = '\0';
		return -ENOENT;
	}
	strbuf_puts(out, path);
	return 0;
}

struct mem_ctx {
	struct target *t;
	pid_t tid;
};

static ssize_t read_mem_cb(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem_ctx *m = ctx;
	return target_read_memory(m->t, m->tid, addr, buf, len);
}

int history_libraries_svr4(struct target *t, pid_t tid, const struct trace_data *td,
			   const char *annex, struct strbuf *out)
{
	struct strbuf auxv = STRBUF_INIT;
	struct mem_ctx m = {t, tid};
	int r = history_auxv(td, &auxv);
	bool have_auxv = r == 0;
	if (have_auxv)
		r = xfer_libraries_svr4_auxv(auxv.data, auxv.len, read_mem_cb, &m, annex, out);
	strbuf_free(&auxv);
	/* -ENOENT with the auxv at hand: no DT_DEBUG, a static program.
	 * gdbserver (and the live target) answers E01, and gdb then reads
	 * _r_debug itself. Live, gdb does that at exec, while r_map is still 0.
	 * A recording is joined after start-up, where a static glibc has
	 * filled _r_debug in: gdb then takes r_brk (_dl_debug_state, in the
	 * program) for the dynamic linker's and records the program's whole
	 * .text as "dynsym resolve code"; stepping back out of a function
	 * there (reverse-finish) then sets a step-resume breakpoint at the
	 * caller's entry and runs on to the start of the history. An empty
	 * list is the truth for a static program and keeps gdb on the path it
	 * takes live. */
	if (r == -ENOENT && have_auxv) {
		strbuf_puts(out, "<library-list-svr4 version=\"1.0\"></library-list-svr4>");
		r = 0;
	}
	return r;
}

int history_maps(const struct trace_data *td, pid_t pid, const char *path, struct strbuf *out)
{
	int p, tid, used = 0;
	bool maps = (sscanf(path, "/proc/%d/task/%d/maps%n", &p, &tid, &used) == 2 ||
		     sscanf(path, "/proc/%d/maps%n", &p, &used) == 1) && path[used] == '\0';
	if (!maps || p != pid)
		return -ENOENT;
	/* The mappings as the recording last saw them. */
	for (size_t i = 0; i < td->nmmaps; i++) {
		const struct trace_mmap *m = &td->mmaps[i];
		bool unmapped = false;
		for (size_t j = 0; j < td->nmunmaps && !unmapped; j++)
			unmapped = td->munmaps[j].start <= m->start && td->munmaps[j].end >= m->end &&
				   (td->munmaps[j].tid != m->tid || td->munmaps[j].pos >= m->pos);
		if (unmapped)
			continue;
		strbuf_printf(out, "%llx-%llx %c%c%cp %08llx 00:00 0 %s\n",
			      (unsigned long long)m->start, (unsigned long long)m->end,
			      m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-', m->prot & 4 ? 'x' : '-',
			      (unsigned long long)m->offset, m->path);
	}
	return 0;
}
