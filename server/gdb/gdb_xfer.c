/* qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH — build the object, send a slice. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_history.h"
#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"
#include "ptrev/target_xfer.h"
#include "ptrev/trace_image.h"

static ssize_t read_mem_cb(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct gdb_server *s = ctx;
	return inferior_read_mem(&s->inf, addr, buf, len);
}

static ssize_t replay_mem_cb(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return gdb_replay_read_mem(ctx, addr, buf, len);
}

/* The auxv a recording kept (META "auxv", hex), for a saved recording. */
static int recorded_auxv(struct gdb_server *s, struct strbuf *out)
{
	const char *hex = trace_meta(s->hist->td, "auxv");
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

/* The layout is known once a thread's XSAVE area has been read; without a
 * process (fuzzing) fall back to plain SSE. */
static const struct amd64_layout *layout_of(struct gdb_server *s)
{
	struct amd64_regfile *rf;
	if (!s->layout && s->have_inferior && !s->inf.exited && s->inf.nthreads &&
	    (rf = malloc(sizeof *rf)) != NULL) {
		gdb_read_regfile(s, s->inf.threads[0].tid, rf);
		free(rf);
	}
	if (!gdb_layout(s))
		s->layout = amd64_layout_for(0x3);
	return s->layout;
}

/* Builds the object; returns 0, a negative errno, or 1 for an unknown one. */
static int build_object(struct gdb_server *s, const char *object, const char *annex,
			struct strbuf *obj)
{
	bool live = s->have_inferior && !s->inf.exited;
	if (strcmp(object, "features") == 0) {
		if (strcmp(annex, "target.xml") != 0)
			return -ENOENT;
		strbuf_puts(obj, amd64_tdesc_xml(layout_of(s)));
		return 0;
	}
	if (strcmp(object, "threads") == 0) {
		gdb_threads_xml(s, obj);
		return 0;
	}
	if (strcmp(object, "auxv") == 0) {
		if (live)
			return xfer_auxv(s->inf.pid, obj);
		return s->hist ? recorded_auxv(s, obj) : -ESRCH;
	}
	if (strcmp(object, "exec-file") == 0) {
		if (live)
			return xfer_exec_file(s->inf.pid, obj);
		return s->hist ? gdb_recorded_program(s, obj) : -ESRCH;
	}
	if (strcmp(object, "libraries-svr4") == 0) {
		if (live)
			return xfer_libraries_svr4(s->inf.pid, read_mem_cb, s, annex, obj);
		struct strbuf auxv = STRBUF_INIT;
		int r = s->hist ? recorded_auxv(s, &auxv) : -ESRCH;
		bool have_auxv = r == 0;
		if (have_auxv)
			r = xfer_libraries_svr4_auxv(auxv.data, auxv.len, replay_mem_cb, s, annex, obj);
		strbuf_free(&auxv);
		/* -ENOENT with the auxv at hand: no DT_DEBUG, a static program.
		 * gdbserver (and the live branch above) answers E01, and gdb then
		 * reads _r_debug itself. Live, gdb does that at exec, while
		 * r_map is still 0. A recording is joined after start-up, where
		 * a static glibc has filled _r_debug in: gdb then takes r_brk
		 * (_dl_debug_state, in the program) for the dynamic linker's and
		 * records the program's whole .text as "dynsym resolve code";
		 * stepping back out of a function there (reverse-finish) then
		 * sets a step-resume breakpoint at the caller's entry and runs
		 * on to the start of the history. An empty list is the truth for
		 * a static program and keeps gdb on the path it takes live. */
		if (r == -ENOENT && have_auxv) {
			strbuf_puts(obj, "<library-list-svr4 version=\"1.0\"></library-list-svr4>");
			r = 0;
		}
		return r;
	}
	if (strcmp(object, "btrace") == 0) {
		int r = gdb_btrace_xml(s, annex, obj);
		return r == 0 ? 0 : r == -2 ? -EOPNOTSUPP : -EINVAL;
	}
	if (strcmp(object, "btrace-conf") == 0)
		return gdb_btrace_conf_xml(s, obj) == 0 ? 0 : -EINVAL;
	if (strcmp(object, "siginfo") == 0 && !live && s->hist)
		return gdb_recorded_siginfo(s, obj);
	if (strcmp(object, "siginfo") == 0) {
		struct inf_thread *t = live ? inferior_thread(&s->inf, s->g_tid) : NULL;
		if (!t || !t->has_siginfo)
			return -EINVAL;
		strbuf_append(obj, &t->siginfo, sizeof t->siginfo);
		return 0;
	}
	return 1;
}

/* $_siginfo in a recording: the signal recorded at the thread's position,
 * or the fatal one when the thread stands at the end (a crash). */
int gdb_recorded_siginfo(struct gdb_server *s, struct strbuf *out)
{
	struct gdb_hist_thread *t = gdb_replay_thread(s);
	if (!t)
		return -EINVAL;
	const struct trace_data *td = s->hist->td;
	/* At the end: past the last instruction, or on it when the thread
	 * ended inside that syscall (no PC after it: the replay stands there). */
	uint64_t count = history_insn_count(t->h);
	bool at_end = !gdb_history_in_past(t) || (!t->end_ip_known && t->pos + 1 == count);
	for (size_t i = td->nsignals; i-- > 0;) {
		const struct trace_signal *g = &td->signals[i];
		if (g->tid != t->tid)
			continue;
		if (g->pos == t->pos || (at_end && g->handler_ip == 0)) {
			strbuf_append(out, g->siginfo, sizeof g->siginfo);
			return 0;
		}
	}
	return -EINVAL;
}

/* A saved recording's program, made absolute with the recorded cwd. */
int gdb_recorded_program(struct gdb_server *s, struct strbuf *out)
{
	if (s->exec_path[0]) {
		strbuf_puts(out, s->exec_path);
		return 0;
	}
	const char *prog = trace_meta(s->hist->td, "program");
	const char *cwd = trace_meta(s->hist->td, "cwd");
	if (!prog || !*prog)
		return -ENOENT;
	char abs[4096];
	snprintf(abs, sizeof abs, "%s%s%s", prog[0] != '/' && cwd ? cwd : "",
		 prog[0] != '/' && cwd ? "/" : "", prog);
	/* The recorded build: the file itself if unchanged, else the copy the
	 * recording carries, written to a temporary file gdb then reads. */
	char err[512];
	bool is_temp = false;
	if (trace_image_binary_path(s->hist->td, abs, s->exec_path, sizeof s->exec_path,
				    &is_temp, err, sizeof err) != 0) {
		fprintf(stderr, "ptrev: %s\n", err);
		s->exec_path[0] = '\0';
		return -ENOENT;
	}
	s->exec_path_is_temp = is_temp;
	strbuf_puts(out, s->exec_path);
	return 0;
}

bool gdb_xfer_packet(struct gdb_server *s, char *pkt, size_t len)
{
	(void)len;
	/* Split "qXfer:object:read:annex:offset,length" in place. */
	char *object = pkt + 6;
	char *op = strchr(object, ':');
	if (!op)
		return false;
	*op++ = '\0';
	char *annex = strchr(op, ':');
	if (!annex)
		return false;
	*annex++ = '\0';
	if (strcmp(op, "read") != 0)
		return false; /* no writable objects */
	char *range = strrchr(annex, ':');
	if (!range) {
		strbuf_puts(&s->reply, "E00");
		return true;
	}
	*range++ = '\0';
	uint64_t offset, length;
	const char *p = range, *end = range + strlen(range);
	if (!hex_parse_u64(&p, end, &offset) || *p++ != ',' ||
	    !hex_parse_u64(&p, end, &length) || p != end) {
		strbuf_puts(&s->reply, "E00");
		return true;
	}
	struct strbuf obj = STRBUF_INIT;
	int r = build_object(s, object, annex, &obj);
	if (r == 1) {
		strbuf_free(&obj);
		return false;
	}
	if (r < 0) {
		strbuf_free(&obj);
		strbuf_puts(&s->reply, "E01");
		return true;
	}
	/* Escaping can double the data: keep the reply within PacketSize. */
	uint64_t max = (RSP_MAX_PACKET - 8) / 2;
	if (length > max)
		length = max;
	if (offset >= obj.len) {
		strbuf_putc(&s->reply, 'l');
	} else {
		uint64_t n = obj.len - offset;
		bool last = n <= length;
		if (!last)
			n = length;
		strbuf_putc(&s->reply, last ? 'l' : 'm');
		rsp_escape_binary(&s->reply, obj.data + offset, (size_t)n);
	}
	strbuf_free(&obj);
	return true;
}
