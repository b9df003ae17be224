/* qXfer:osdata:read — gdb's `info os`: what the host runs, read from
 * /proc, as gdbserver gives it (the processes; the list of types). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ptrev/gdb_server.h"

/* The next entry of a /proc directory that is a process or thread id. */
static const char *next_id(DIR *d)
{
	struct dirent *e;
	while ((e = readdir(d)))
		if (isdigit((unsigned char)e->d_name[0]))
			return e->d_name;
	return NULL;
}

static void column(struct strbuf *obj, const char *name, const char *value)
{
	strbuf_printf(obj, "<column name=\"%s\">", name);
	strbuf_xml_escaped(obj, value);
	strbuf_puts(obj, "</column>");
}

/* The command line of pid, its arguments joined by spaces; a kernel
 * thread (no command line) by its name in brackets, as ps shows it. */
static void command_line(const char *pid, char *out, size_t len)
{
	char path[300];
	out[0] = '\0';
	snprintf(path, sizeof path, "/proc/%s/cmdline", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	size_t n = fread(out, 1, len - 1, f);
	fclose(f);
	out[n] = '\0';
	while (n > 0 && out[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	if (n > 0)
		return;
	char name[64] = "";
	snprintf(path, sizeof path, "/proc/%s/comm", pid);
	f = fopen(path, "re");
	if (f && fgets(name, sizeof name, f)) {
		name[strcspn(name, "\n")] = '\0';
		snprintf(out, len, "[%s]", name);
	}
	if (f)
		fclose(f);
}

/* The CPUs pid's threads last ran on ("0,1"): field 39 of each task's
 * stat, after the parenthesised name. */
static void cores(const char *pid, char *out, size_t len)
{
	char path[300];
	bool seen[1024] = {false};
	out[0] = '\0';
	snprintf(path, sizeof path, "/proc/%s/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	const char *tid;
	while ((tid = next_id(d))) {
		char stat[600], buf[1024];
		snprintf(stat, sizeof stat, "/proc/%s/task/%s/stat", pid, tid);
		FILE *f = fopen(stat, "re");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = '\0';
		char *p = strrchr(buf, ')');
		int field = 2, cpu = -1;
		for (; p && *p && field < 39; p++)
			if (*p == ' ')
				field++;
		if (p && sscanf(p, "%d", &cpu) == 1 && cpu >= 0 && cpu < 1024)
			seen[cpu] = true;
	}
	closedir(d);
	size_t o = 0;
	for (int c = 0; c < 1024 && o + 8 < len; c++)
		if (seen[c])
			o += (size_t)snprintf(out + o, len - o, "%s%d", o ? "," : "", c);
}

static void processes(struct strbuf *obj)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	const char *pid;
	while ((pid = next_id(d))) {
		char path[300], cmd[4096], cpus[256], uid[16];
		struct stat st;
		snprintf(path, sizeof path, "/proc/%s", pid);
		if (stat(path, &st) != 0)
			continue; /* gone meanwhile */
		struct passwd *pw = getpwuid(st.st_uid);
		snprintf(uid, sizeof uid, "%u", (unsigned)st.st_uid);
		command_line(pid, cmd, sizeof cmd);
		cores(pid, cpus, sizeof cpus);
		strbuf_puts(obj, "<item>");
		column(obj, "pid", pid);
		column(obj, "user", pw ? pw->pw_name : uid);
		column(obj, "command", cmd);
		column(obj, "cores", cpus);
		strbuf_puts(obj, "</item>\n");
	}
	closedir(d);
}

int gdb_osdata_xml(const char *annex, struct strbuf *obj)
{
	strbuf_puts(obj, "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"osdata.dtd\">\n");
	if (annex[0] == '\0') {
		strbuf_puts(obj, "<osdata type=\"types\">\n<item>");
		column(obj, "Type", "processes");
		column(obj, "Description", "Listing of all processes");
		column(obj, "Title", "Processes");
		strbuf_puts(obj, "</item>\n</osdata>\n");
		return 0;
	}
	if (strcmp(annex, "processes") != 0)
		return -ENOENT;
	strbuf_puts(obj, "<osdata type=\"processes\">\n");
	processes(obj);
	strbuf_puts(obj, "</osdata>\n");
	return 0;
}
