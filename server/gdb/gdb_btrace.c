/* gdb's own branch-trace packets (record btrace pt), thread by thread as
 * gdb enables them: Qbtrace:pt for the Hg thread starts recording the live
 * program (a recording target pushed over it, unless it is recorded
 * already) and marks where that thread's trace begins, Qbtrace:off ends
 * the thread's (and the recording it started, with the last thread), and
 * qXfer:btrace:read hands gdb the thread's PT since its enable. The PT is
 * the sw recorder's (the only target with btrace_pt), exactly what the
 * spec says: it names no CPU, so that gdb applies no CPU's errata. Where
 * it named the host's, gdb refused to decode it on a CPU its libipt does
 * not know (`Failed to configure the Intel Processor Trace decoder:
 * unknown cpu`, on an Intel Xeon of family 6 model 207). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_server.h"

/* The thread a btrace packet is for: Hg's, else the one last stopped. */
static pid_t btrace_tid(const struct gdb_server *s)
{
	return s->g_tid > 0 ? s->g_tid : s->last.tid;
}

static struct btrace_thread *find(struct gdb_server *s, pid_t tid)
{
	for (size_t i = 0; i < s->nbtrace; i++)
		if (s->btrace[i].tid == tid)
			return &s->btrace[i];
	return NULL;
}

static void enable(struct gdb_server *s)
{
	char err[256];
	pid_t tid = btrace_tid(s);
	if (find(s, tid)) {
		strbuf_puts(&s->reply, "E.Btrace already enabled.");
		return;
	}
	struct btrace_thread *grown = realloc(s->btrace, (s->nbtrace + 1) * sizeof *grown);
	if (!grown) {
		strbuf_puts(&s->reply, "E.out of memory");
		return;
	}
	s->btrace = grown;
	if (s->nbtrace == 0) {
		struct target_record_opts opts = {.path = NULL};
		struct target *top;
		if (!s->target || !(top = target_record_start(s->target, &opts, err, sizeof err))) {
			strbuf_printf(&s->reply, "E.%s", s->target ? err : "no process to record");
			return;
		}
		s->btrace_pushed = top != s->target;
		s->target = top;
	}
	struct btrace_thread *b = &s->btrace[s->nbtrace];
	memset(b, 0, sizeof *b);
	b->tid = tid;
	if (target_btrace_mark(s->target, tid, &b->start) != 0) {
		bool already = s->nbtrace == 0 && !s->btrace_pushed;
		if (s->nbtrace == 0 && s->btrace_pushed) {
			s->target = target_record_stop(s->target);
			s->btrace_pushed = false;
		}
		/* serve records by default with the event recorder, whose
		 * history is made only when gdb goes back: no trace to hand. */
		strbuf_printf(&s->reply, "E.Cannot trace thread %d.%s", (int)tid,
			      already ? " ptrev records this program already, with the event "
					"recorder, which keeps no branch trace: use gdb's reverse "
					"commands without record btrace, or start ptrev serve "
					"with --no-record or --backend sw for record btrace." : "");
		return;
	}
	if (s->nbtrace++ == 0)
		target_btrace_active(s->target, true);
	strbuf_puts(&s->reply, "OK");
}

static void disable(struct gdb_server *s)
{
	struct btrace_thread *b = find(s, btrace_tid(s));
	if (!b) {
		strbuf_puts(&s->reply, "E.Btrace not enabled.");
		return;
	}
	*b = s->btrace[--s->nbtrace];
	if (s->nbtrace == 0)
		target_btrace_active(s->target, false);
	/* Only a recording gdb started is stopped, with its last thread: one
	 * the user asked for on the command line (--record, -o) goes on. */
	if (s->nbtrace == 0 && s->btrace_pushed) {
		s->target = target_record_stop(s->target);
		s->btrace_pushed = false;
	}
	strbuf_puts(&s->reply, "OK");
}

/* The buffer a PT recording would get for size bytes: whole pages, a
 * power of two of them (what perf allocates and gdbserver reports). */
static uint64_t buffer_size(uint64_t size)
{
	uint64_t b = 4096;
	while (b < size && b < (1ull << 40))
		b <<= 1;
	return b;
}

bool gdb_btrace_packet(struct gdb_server *s, char *pkt)
{
	if (strcmp(pkt, "Qbtrace:pt") == 0) {
		enable(s);
		return true;
	}
	if (strcmp(pkt, "Qbtrace:off") == 0) {
		disable(s);
		return true;
	}
	if (strcmp(pkt, "Qbtrace:bts") == 0) {
		strbuf_puts(&s->reply, "E.Only Intel PT branch tracing is supported.");
		return true;
	}
	if (strncmp(pkt, "Qbtrace-conf:pt:size=", 21) == 0) {
		/* The sw backend keeps the whole trace: any size is fine. */
		s->btrace_size = buffer_size(strtoull(pkt + 21, NULL, 16));
		strbuf_puts(&s->reply, "OK");
		return true;
	}
	return false;
}

int gdb_btrace_xml(struct gdb_server *s, const char *annex, struct strbuf *obj)
{
	const uint8_t *pt;
	size_t len;
	struct btrace_thread *b = find(s, btrace_tid(s));
	if (!b || target_btrace_pt(s->target, b->tid, &pt, &len) != 0)
		return -1;
	if (strcmp(annex, "delta") == 0)
		return -2; /* PT cannot be stitched: gdb then asks for new/all */
	bool new_only = strcmp(annex, "new") == 0;
	if (!new_only && strcmp(annex, "all") != 0)
		return -1;
	/* Since the thread's enable. "new": everything again if anything
	 * changed since the last read (gdb discards what it had), else
	 * nothing. */
	size_t from = b->start < len ? (size_t)b->start : len;
	if (new_only && b->read && len == b->read_len) {
		strbuf_puts(obj, "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\"/>\n");
		return 0;
	}
	b->read = true;
	b->read_len = len;
	strbuf_puts(obj, "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\">\n<pt>\n"
		    "<raw>\n");
	if (len > from)
		strbuf_hex(obj, pt + from, len - from);
	strbuf_puts(obj, "\n</raw>\n</pt>\n</btrace>\n");
	return 0;
}

int gdb_btrace_conf_xml(struct gdb_server *s, struct strbuf *obj)
{
	struct btrace_thread *b = find(s, btrace_tid(s));
	strbuf_puts(obj, "<!DOCTYPE btrace-conf SYSTEM \"btrace-conf.dtd\">\n<btrace-conf version=\"1.0\">\n");
	if (b)
		strbuf_printf(obj, "<pt size=\"0x%llx\"/>\n",
			      (unsigned long long)(s->btrace_size ? s->btrace_size : buffer_size(0)));
	strbuf_puts(obj, "</btrace-conf>\n");
	return b ? 0 : -1;
}
