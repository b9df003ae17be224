/* Reads what it inherited that is not memory: which file descriptors are
 * open and what they are (flags, file type, a terminal or not, its name),
 * its session, process group, the terminal's foreground group and its
 * parent. Keeps the text in `facts` and prints it, so that a replay,
 * started with other descriptors and without a terminal, can be checked
 * against the run: every way a program learns these is a syscall, whose
 * result the recording holds. Also makes a number of syscalls that
 * depends on them, so that a replay that saw other facts goes another
 * way. */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char facts[4096];
size_t used;

void done(void)
{
}

static void note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (used < sizeof facts)
		used += (size_t)vsnprintf(facts + used, sizeof facts - used, fmt, ap);
	va_end(ap);
}

int main(void)
{
	for (int fd = 0; fd < 32; fd++) {
		int fdfl = fcntl(fd, F_GETFD), fl = fcntl(fd, F_GETFL);
		struct stat st;
		if (fdfl < 0 || fstat(fd, &st) != 0)
			continue;
		const char *name = isatty(fd) ? ttyname(fd) : "-";
		note("fd %d: flags %x type %o tty %s\n", fd, fl & (O_ACCMODE | O_APPEND | O_NONBLOCK),
		     (unsigned)(st.st_mode & S_IFMT), name ? name : "?");
	}
	long fg = tcgetpgrp(0);
	/* Whether it leads its session and its group (not the numbers: a
	 * replay's pids are the recording's, but the test compares with the
	 * run's text), and whether its group has the terminal. */
	note("session leader %d group leader %d foreground %d\n", getsid(0) == getpid(),
	     getpgrp() == getpid(), fg < 0 ? -1 : fg == getpgrp());
	int listed = 0;
	DIR *d = opendir("/proc/self/fd");
	for (struct dirent *e; d && (e = readdir(d));)
		listed += e->d_name[0] != '.';
	if (d)
		closedir(d);
	note("listed %d\n", listed - (d != NULL)); /* less the directory's own */
	for (size_t i = 0; i < used % 7; i++)
		getppid();
	fputs(facts, stdout);
	fflush(stdout);
	done();
	return 0;
}
