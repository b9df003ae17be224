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
	gdb_format_thread_id_in(s, out, target_pid(s->target), tid);
}

void gdb_format_thread_id_in(const struct gdb_server *s, struct strbuf *out, pid_t pid, pid_t tid)
{
	if (s->gdb_multiprocess)
		strbuf_printf(out, "p%x.%x", (unsigned)pid, (unsigned)tid);
	else
		strbuf_printf(out, "%x", (unsigned)tid);
}

bool gdb_procs_threads(struct gdb_server *s, size_t i, pid_t *pid, struct target **t,
		       pid_t **ids, size_t *n)
{
	*ids = NULL;
	*n = 0;
	if (i > s->nprocs || (i == 0 && !s->target))
		return false;
	*t = i == 0 ? s->target : s->procs[i - 1].target;
	*pid = target_pid(*t);
	*n = target_threads(*t, ids);
	return true;
}

static void thread_xml(struct gdb_server *s, struct strbuf *out, struct target *t, pid_t pid,
		       pid_t tid)
{
	char name[64];
	int core;
	target_thread_info(t, tid, name, sizeof name, &core);
	strbuf_puts(out, "<thread id=\"");
	gdb_format_thread_id_in(s, out, pid, tid);
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

/* The threads of every process gdb debugs (gdb_procs.c). */
void gdb_threads_xml(struct gdb_server *s, struct strbuf *out)
{
	strbuf_puts(out, "<threads>\n");
	pid_t pid, *ids;
	size_t nids;
	struct target *t;
	for (size_t k = 0; gdb_procs_threads(s, k, &pid, &t, &ids, &nids); k++) {
		for (size_t i = 0; i < nids; i++)
			thread_xml(s, out, t, pid, ids[i]);
		free(ids);
	}
	strbuf_puts(out, "</threads>\n");
}
