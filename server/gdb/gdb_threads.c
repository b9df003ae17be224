/* Thread ids in packets, and the qXfer:threads:read object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

/* One id component: "-1" or hex digits. */
static bool parse_component(const char **p, pid_t *out)
{
	if ((*p)[0] == '-' && (*p)[1] == '1') {
		*p += 2;
		*out = -1;
		return true;
	}
	uint64_t v;
	const char *s = *p;
	if (!hex_parse_u64(&s, s + strlen(s), &v) || v > 0x7fffffff)
		return false;
	*p = s;
	*out = (pid_t)v;
	return true;
}

bool gdb_parse_thread_id(const char *s, const char **end, pid_t *pid, pid_t *tid)
{
	const char *p = s;
	*pid = -1;
	if (*p == 'p') {
		p++;
		if (!parse_component(&p, pid))
			return false;
		if (*p == '.') {
			p++;
			if (!parse_component(&p, tid))
				return false;
		} else {
			*tid = -1; /* every thread of the process */
		}
	} else if (!parse_component(&p, tid)) {
		return false;
	}
	*end = p;
	return true;
}

void gdb_format_thread_id(struct gdb_server *s, struct strbuf *out, pid_t tid)
{
	if (s->gdb_multiprocess)
		strbuf_printf(out, "p%x.%x", (unsigned)target_pid(s->target), (unsigned)tid);
	else
		strbuf_printf(out, "%x", (unsigned)tid);
}

void gdb_threads_xml(struct gdb_server *s, struct strbuf *out)
{
	pid_t *ids;
	size_t nids = target_threads(s->target, &ids);
	strbuf_puts(out, "<threads>\n");
	for (size_t i = 0; i < nids; i++) {
		pid_t tid = ids[i];
		char name[64];
		int core;
		target_thread_info(s->target, tid, name, sizeof name, &core);
		strbuf_puts(out, "<thread id=\"");
		gdb_format_thread_id(s, out, tid);
		strbuf_putc(out, '"');
		if (core >= 0)
			strbuf_printf(out, " core=\"%x\"", core);
		if (name[0]) {
			strbuf_puts(out, " name=\"");
			strbuf_xml_escaped(out, name);
			strbuf_putc(out, '"');
		}
		strbuf_puts(out, "/>\n");
	}
	free(ids);
	strbuf_puts(out, "</threads>\n");
}
