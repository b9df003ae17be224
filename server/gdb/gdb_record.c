/* Recording while serving gdb: the sw engine runs the program (every
 * instruction single-stepped into PT), the history grows at every stop, and
 * reverse commands move through it. Also gdb's own branch-trace packets
 * (record btrace pt), which start and stop the same recording. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/cpu_id.h"
#include "ptrev/gdb_history.h"
#include "ptrev/gdb_server.h"
#include "ptrev/record_meta.h"
#include "ptrev/record_startup.h"
#include "ptrev/sw_engine.h"

int gdb_record_start(struct gdb_server *s, const char *path, char **prog_argv,
		     char *err, size_t errlen)
{
	if (s->engine)
		return 0;
	if (!s->have_inferior || s->inf.exited) {
		snprintf(err, errlen, "no process to record");
		return -1;
	}
	struct trace_writer *w = NULL;
	if (path) {
		w = trace_writer_open(path, err, errlen);
		if (!w)
			return -1;
	}
	/* At the program's first instruction only: turn the vDSO's clock
	 * functions into syscalls (before the engine copies the vDSO's code)
	 * and keep what a replay needs to start identically. Recording that
	 * starts later (record btrace) gets PC-level reverse execution only. */
	bool startup = s->at_first_insn && startup_hide_vdso(s->inf.pid) == 0;
	struct sw_record_opts opts = {.psb_period = 4096, .no_copy = s->record_no_copy};
	s->engine = sw_engine_new(&s->inf, w, &opts, err, errlen);
	if (!s->engine) {
		if (w)
			trace_writer_close(w, NULL, 0);
		return -1;
	}
	s->writer = w;
	/* META goes to the file and into the in-memory recording (the
	 * replayer reads the program, arguments and start state from it). */
	record_write_meta_to(sw_engine_meta, s->engine, "sw", prog_argv ? prog_argv[0] : "",
			     prog_argv ? prog_argv : (char *[]){NULL}, s->inf.pid, 4096);
	if (s->at_first_insn &&
	    (!startup || sw_engine_meta(s->engine, "vdso", "hidden") < 0 ||
	     record_startup_meta_to(sw_engine_meta, s->engine, s->inf.pid) < 0))
		fprintf(stderr, "ptrev: could not record the start state; "
			"reverse execution may not show full state\n");
	s->hist = calloc(1, sizeof *s->hist);
	if (!s->hist || gdb_history_open(s->hist, sw_engine_data(s->engine), false, err, errlen) != 0) {
		gdb_record_stop(s, NULL, 0);
		return -1;
	}
	return 0;
}

void gdb_record_stop(struct gdb_server *s, char *err, size_t errlen)
{
	char buf[256];
	if (!err) {
		err = buf;
		errlen = sizeof buf;
	}
	if (!s->engine)
		return; /* not recording (a saved recording's history is not ours) */
	gdb_replay_free(s); /* it replays the recording being dropped */
	if (s->hist) {
		gdb_history_close(s->hist);
		free(s->hist);
		s->hist = NULL;
	}
	struct trace_end end;
	if (sw_engine_finish(s->engine, &end, true, err, errlen) != 0)
		fprintf(stderr, "ptrev: finishing the recording: %s\n", err);
	if (s->writer && trace_writer_close(s->writer, err, errlen) != 0)
		fprintf(stderr, "ptrev: writing the recording: %s\n", err);
	sw_engine_free(s->engine);
	s->engine = NULL;
	s->writer = NULL;
}

void gdb_record_after_stop(struct gdb_server *s)
{
	if (s->hist && gdb_history_sync(s->hist) != 0)
		fprintf(stderr, "ptrev: indexing the history failed\n");
}

/* ---- execution: the engine while recording, else plain ptrace ---- */

int gdb_exec_resume(struct gdb_server *s, pid_t tid, bool step, int sig)
{
	return s->engine ? sw_engine_resume(s->engine, tid, step, sig)
			 : inferior_resume(&s->inf, tid, step, sig);
}

int gdb_exec_wait(struct gdb_server *s, struct stop_event *ev)
{
	if (!s->engine)
		return inferior_wait(&s->inf, ev, false);
	int r = sw_engine_wait(s->engine, ev, false);
	if (r < 0 && sw_engine_error(s->engine))
		fprintf(stderr, "ptrev: recording: %s\n", sw_engine_error(s->engine));
	return r;
}

int gdb_exec_interrupt(struct gdb_server *s)
{
	return s->engine ? sw_engine_interrupt(s->engine) : inferior_interrupt(&s->inf);
}

/* ---- gdb's branch-trace packets ---- */

static void cpu_xml(struct strbuf *out)
{
	struct cpu_id id;
	cpu_id_read(&id);
	strbuf_puts(out, "<cpu vendor=\"");
	strbuf_xml_escaped(out, id.vendor);
	strbuf_printf(out, "\" family=\"%u\" model=\"%u\" stepping=\"%u\"/>", id.family, id.model,
		      id.stepping);
}

bool gdb_btrace_packet(struct gdb_server *s, char *pkt)
{
	char err[256];
	if (strcmp(pkt, "Qbtrace:pt") == 0) {
		if (s->btrace_on) {
			strbuf_puts(&s->reply, "E.Btrace already enabled.");
		} else if (gdb_record_start(s, NULL, NULL, err, sizeof err) != 0) {
			strbuf_printf(&s->reply, "E.%s", err);
		} else {
			s->btrace_on = true;
			strbuf_puts(&s->reply, "OK");
		}
		return true;
	}
	if (strcmp(pkt, "Qbtrace:off") == 0) {
		if (!s->btrace_on) {
			strbuf_puts(&s->reply, "E.Btrace not enabled.");
			return true;
		}
		s->btrace_on = false;
		/* Only a recording gdb started is stopped: one the user asked for
		 * on the command line (-o) goes on. */
		if (!s->record_requested)
			gdb_record_stop(s, NULL, 0);
		strbuf_puts(&s->reply, "OK");
		return true;
	}
	if (strcmp(pkt, "Qbtrace:bts") == 0) {
		strbuf_puts(&s->reply, "E.Only Intel PT branch tracing is supported.");
		return true;
	}
	if (strncmp(pkt, "Qbtrace-conf:pt:size=", 21) == 0) {
		/* The sw backend keeps the whole trace: any size is fine. */
		s->btrace_size = strtoull(pkt + 21, NULL, 16);
		strbuf_puts(&s->reply, "OK");
		return true;
	}
	return false;
}

int gdb_btrace_xml(struct gdb_server *s, const char *annex, struct strbuf *obj)
{
	if (!s->btrace_on || !s->engine)
		return -1;
	const struct trace_data *td = sw_engine_data(s->engine);
	const struct trace_thread_stream *st = NULL;
	for (size_t i = 0; i < td->nstreams; i++)
		if (td->streams[i].tid == s->g_tid)
			st = &td->streams[i];
	if (strcmp(annex, "delta") == 0)
		return -2; /* PT cannot be stitched: gdb then asks for new/all */
	bool new_only = strcmp(annex, "new") == 0;
	if (!new_only && strcmp(annex, "all") != 0)
		return -1;
	size_t len = st ? st->pt_len : 0;
	/* "new": everything again if anything changed since the last read
	 * (gdb discards what it had), else nothing. */
	if (new_only && len == s->btrace_read_len && s->btrace_read_tid == s->g_tid) {
		strbuf_puts(obj, "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\"/>\n");
		return 0;
	}
	s->btrace_read_len = len;
	s->btrace_read_tid = s->g_tid;
	strbuf_puts(obj, "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\">\n<pt>\n<pt-config>\n");
	cpu_xml(obj);
	strbuf_puts(obj, "\n</pt-config>\n<raw>\n");
	if (len)
		strbuf_hex(obj, st->pt, len);
	strbuf_puts(obj, "\n</raw>\n</pt>\n</btrace>\n");
	return 0;
}

int gdb_btrace_conf_xml(struct gdb_server *s, struct strbuf *obj)
{
	strbuf_puts(obj, "<!DOCTYPE btrace-conf SYSTEM \"btrace-conf.dtd\">\n<btrace-conf version=\"1.0\">\n");
	if (s->btrace_on)
		strbuf_printf(obj, "<pt size=\"0x%llx\"/>\n", (unsigned long long)s->btrace_size);
	strbuf_puts(obj, "</btrace-conf>\n");
	return s->btrace_on ? 0 : -1;
}
