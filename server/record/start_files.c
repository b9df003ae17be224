/* The descriptors and session a recorded program started with, as META
 * records: see include/ptrev/start_files.h. */
#include "ptrev/start_files.h"
#include "ptrev/start_state.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* A terminal device: the pseudo-terminals' slaves (majors 136-143), the
 * virtual consoles and serial lines (4), /dev/tty and /dev/console (5:0,
 * 5:1; 5:2 is /dev/ptmx, a master, not a terminal). */
static bool is_terminal(dev_t rdev)
{
	unsigned ma = major(rdev), mi = minor(rdev);
	return (ma >= 136 && ma <= 143) || ma == 4 || (ma == 5 && mi <= 1);
}

/* /proc/PID/NAME as a string, to free(); NULL when it cannot be read. */
static char *proc_text(pid_t pid, const char *name)
{
	size_t len = 0;
	uint8_t *raw = start_state_read_proc(pid, name, &len);
	char *text = raw ? realloc(raw, len + 1) : NULL;
	if (!text) {
		free(raw);
		return NULL;
	}
	text[len] = '\0';
	return text;
}

/* The flags of pid's descriptor fd, from fdinfo ("flags:\t0100002",
 * octal); -1 when it cannot be read. */
static long fd_flags(pid_t pid, int fd)
{
	char name[32];
	snprintf(name, sizeof name, "fdinfo/%d", fd);
	char *text = proc_text(pid, name);
	const char *at = text ? strstr(text, "flags:") : NULL;
	long fl = at ? strtol(at + 6, NULL, 8) : -1;
	free(text);
	return fl;
}

static int compare_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* pid's open descriptors in number order; their count, -1 on failure. */
static int open_fds(pid_t pid, int **out)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int *fds = NULL, n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (n == cap) {
			int *grown = realloc(fds, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *grown);
			if (!grown) {
				free(fds);
				closedir(d);
				return -1;
			}
			fds = grown;
		}
		fds[n++] = atoi(e->d_name);
	}
	closedir(d);
	qsort(fds, (size_t)n, sizeof *fds, compare_ints);
	*out = fds;
	return n;
}

static int put_fds(record_meta_fn put, void *ctx, pid_t pid, dev_t tty, char *tty_name,
		   size_t tty_len)
{
	int *fds = NULL, n = open_fds(pid, &fds), rc = n < 0 ? -1 : 0;
	for (int i = 0; i < n; i++) {
		char path[64], target[512], value[640];
		snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fds[i]);
		ssize_t len = readlink(path, target, sizeof target - 1);
		long fl = fd_flags(pid, fds[i]);
		struct stat st;
		if (len < 0 || fl < 0) {
			rc = -1; /* closed meanwhile: not the program's doing */
			continue;
		}
		target[len] = '\0';
		/* stat follows the link to the object itself (no open: opening
		 * a terminal could make it ours). */
		bool term = stat(path, &st) == 0 && S_ISCHR(st.st_mode) && is_terminal(st.st_rdev);
		int acc = (int)(fl & O_ACCMODE);
		snprintf(value, sizeof value, "%d %s%s%s%s %s", fds[i],
			 acc == O_RDONLY ? "read-only" : acc == O_WRONLY ? "write-only" : "read-write",
			 fl & O_APPEND ? ",append" : "", fl & O_NONBLOCK ? ",non-blocking" : "",
			 term ? ",terminal" : "", target);
		if (put(ctx, "fd", value) < 0)
			rc = -1;
		if (term && tty && st.st_rdev == tty && !*tty_name)
			snprintf(tty_name, tty_len, "%s", target);
	}
	free(fds);
	return rc;
}

int start_files_meta(record_meta_fn put, void *ctx, pid_t pid)
{
	char *stat = proc_text(pid, "stat");
	/* After the command name in parentheses: state, ppid, pgrp,
	 * session, tty_nr, tpgid. */
	const char *p = stat ? strrchr(stat, ')') : NULL;
	int pgrp, sid, tty_nr, tpgid;
	bool have = p && sscanf(p + 1, " %*c %*d %d %d %d %d", &pgrp, &sid, &tty_nr, &tpgid) == 4;
	free(stat);
	dev_t tty = have && tty_nr ? makedev(((unsigned)tty_nr >> 8) & 0xfff,
					     ((unsigned)tty_nr & 0xff) |
						     (((unsigned)tty_nr >> 12) & 0xfff00))
				   : 0;
	char tty_name[512] = "";
	int rc = put_fds(put, ctx, pid, tty, tty_name, sizeof tty_name);
	if (!have)
		return -1;
	/* The terminal's name when no descriptor shows it. */
	if (tty && !*tty_name) {
		if (major(tty) >= 136 && major(tty) <= 143)
			snprintf(tty_name, sizeof tty_name, "/dev/pts/%u",
				 (major(tty) - 136) * 256 + minor(tty));
		else
			snprintf(tty_name, sizeof tty_name, "device %u:%u", major(tty), minor(tty));
	}
	char value[640];
	snprintf(value, sizeof value, "group=%s session=%s foreground=%s terminal=%s",
		 pgrp == pid ? "leader" : "member", sid == pid ? "leader" : "member",
		 tty && tpgid == pgrp ? "yes" : "no", tty ? tty_name : "none");
	if (put(ctx, "session", value) < 0)
		rc = -1;
	return rc;
}
