/* The META records every recording starts with (include/ptrev/record_meta.h):
 * what ran, where, on which CPU, by which ptrev, when. Here rather than in
 * the CLI because the server's live recording writes the same records. */
#include "ptrev/record_meta.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "ptrev/cpu_bind.h"
#include "ptrev/cpu_id.h"

#ifndef PTREV_VERSION
#define PTREV_VERSION "0.1.0"
#endif

static void write_cpu_meta(record_meta_fn put, void *w)
{
	struct cpu_id id;
	char num[32];

	/* The CPU the recorder and its program are bound to (not the pt
	 * backend's): a replay runs there (ptrev/cpu_bind.h). */
	int cpu = cpu_bind_index();
	if (cpu >= 0) {
		snprintf(num, sizeof num, "%d", cpu);
		put(w, "cpu_index", num);
	}
	if (cpu_id_read(&id) != 0)
		return;
	put(w, "cpu_vendor", id.vendor);
	snprintf(num, sizeof num, "%u", id.family);
	put(w, "cpu_family", num);
	snprintf(num, sizeof num, "%u", id.model);
	put(w, "cpu_model", num);
	snprintf(num, sizeof num, "%u", id.stepping);
	put(w, "cpu_stepping", num);
}

/* What /proc/PID/what links to, in buf (size bytes); false: unreadable. */
static bool proc_link(pid_t pid, const char *what, char *buf, size_t size)
{
	char link[64];
	snprintf(link, sizeof link, "/proc/%d/%s", (int)pid, what);
	ssize_t n = readlink(link, buf, size - 1);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

void record_write_meta_to(record_meta_fn put, void *w, const char *backend,
			  const char *prog, char **args, pid_t pid,
			  unsigned psb_period)
{
	char buf[4096];
	time_t now = time(NULL);
	struct tm tm;

	put(w, "backend", backend);
	put(w, "program", prog);
	for (int i = 0; args[i]; i++)
		put(w, "arg", args[i]);
	/* The program's own directory: a program that execs another may
	 * have changed it (event_exec.c); at a launch it is ours. */
	if (proc_link(pid, "cwd", buf, sizeof buf) || getcwd(buf, sizeof buf))
		put(w, "cwd", buf);
	/* The file that runs: the program's path may name it only from
	 * inside the process (/proc/self/exe, which a replay must exec from
	 * inside the program again: relaunch.c). */
	if (proc_link(pid, "exe", buf, sizeof buf))
		put(w, "exe", buf);
	snprintf(buf, sizeof buf, "%d", (int)pid);
	put(w, "pid", buf);
	write_cpu_meta(put, w);
	snprintf(buf, sizeof buf, "%u", psb_period);
	put(w, "psb_period", buf);
	put(w, "ptrev_version", PTREV_VERSION);
	gmtime_r(&now, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	put(w, "start_time", buf);
}

static int put_writer(void *ctx, const char *key, const char *value)
{
	return trace_write_meta(ctx, key, value);
}

void record_write_meta(struct trace_writer *w, const char *backend,
		       const char *prog, char **args, pid_t pid,
		       unsigned psb_period)
{
	record_write_meta_to(put_writer, w, backend, prog, args, pid, psb_period);
}
