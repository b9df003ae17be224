/* gdb's own branch-trace packets (record btrace pt): Qbtrace:pt starts
 * recording the live program (a recording target pushed over it, unless
 * it is recorded already), Qbtrace:off stops what it started, and
 * qXfer:btrace:read hands gdb a thread's PT with the CPU it is for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/cpu_id.h"
#include "ptrev/gdb_server.h"

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
		struct target_record_opts opts = {.path = NULL};
		struct target *top;
		if (s->btrace_on) {
			strbuf_puts(&s->reply, "E.Btrace already enabled.");
		} else if (!s->target || !(top = target_record_start(s->target, &opts, err, sizeof err))) {
			strbuf_printf(&s->reply, "E.%s", s->target ? err : "no process to record");
		} else {
			s->btrace_on = true;
			s->btrace_pushed = top != s->target;
			s->target = top;
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
		if (s->btrace_pushed)
			s->target = target_record_stop(s->target);
		s->btrace_pushed = false;
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
	const uint8_t *pt;
	size_t len;
	if (!s->btrace_on || target_btrace_pt(s->target, s->g_tid, &pt, &len) != 0)
		return -1;
	if (strcmp(annex, "delta") == 0)
		return -2; /* PT cannot be stitched: gdb then asks for new/all */
	bool new_only = strcmp(annex, "new") == 0;
	if (!new_only && strcmp(annex, "all") != 0)
		return -1;
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
		strbuf_hex(obj, pt, len);
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
