/* Thread ids in packets, and the qXfer:threads:read object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_history.h"

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
		strbuf_printf(out, "p%x.%x", (unsigned)s->inf.pid, (unsigned)tid);
	else
		strbuf_printf(out, "%x", (unsigned)tid);
}

/* The CPU a thread last ran on (field 39 of /proc/PID/task/TID/stat), or -1. */
int gdb_thread_core(pid_t pid, pid_t tid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name may contain spaces and parentheses: skip to the
	 * last ')' and count fields from there (field 3 follows it). */
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	int field = 2;
	for (p++; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	int core;
	return sscanf(p, "%d", &core) == 1 ? core : -1;
}

static void thread_name(pid_t pid, pid_t tid, char *name, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	name[0] = '\0';
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(name, (int)cap, f))
		name[strcspn(name, "\n")] = '\0';
	fclose(f);
}

size_t gdb_thread_ids(struct gdb_server *s, pid_t **out)
{
	size_t n = 0;
	*out = NULL;
	/* In the past, with thread switches known, the threads that existed
	 * there: not those created later, nor those that had ended. */
	if (s->hist && s->hist->global && (s->hist->saved || !gdb_history_sched_at_end(s->hist))) {
		*out = malloc((s->hist->nthreads ? s->hist->nthreads : 1) * sizeof **out);
		for (size_t i = 0; *out && i < s->hist->nthreads; i++)
			if (gdb_history_thread_exists(s->hist, &s->hist->threads[i]))
				(*out)[n++] = s->hist->threads[i].tid;
	} else if (s->have_inferior && !s->inf.exited) {
		*out = malloc((s->inf.nthreads ? s->inf.nthreads : 1) * sizeof **out);
		for (size_t i = 0; *out && i < s->inf.nthreads; i++)
			(*out)[n++] = s->inf.threads[i].tid;
	} else if (s->hist) {
		*out = malloc((s->hist->nthreads ? s->hist->nthreads : 1) * sizeof **out);
		for (size_t i = 0; *out && i < s->hist->nthreads; i++)
			(*out)[n++] = s->hist->threads[i].tid;
	}
	return n;
}

bool gdb_thread_exists(struct gdb_server *s, pid_t tid)
{
	pid_t *ids;
	size_t n = gdb_thread_ids(s, &ids);
	bool found = false;
	for (size_t i = 0; i < n && !found; i++)
		found = ids[i] == tid;
	free(ids);
	return found;
}

void gdb_threads_xml(struct gdb_server *s, struct strbuf *out)
{
	pid_t *ids;
	size_t nids = gdb_thread_ids(s, &ids);
	strbuf_puts(out, "<threads>\n");
	for (size_t i = 0; i < nids; i++) {
		pid_t tid = ids[i];
		char name[64];
		strbuf_puts(out, "<thread id=\"");
		gdb_format_thread_id(s, out, tid);
		strbuf_putc(out, '"');
		int core = gdb_thread_core(s->inf.pid, tid);
		if (core >= 0)
			strbuf_printf(out, " core=\"%x\"", core);
		thread_name(s->inf.pid, tid, name, sizeof name);
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
