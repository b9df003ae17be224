/* The program a command line names, found as a shell (and gdbserver, which
 * starts it through one) would find it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrev/cli.h"

/* PROG as execve needs it: with a slash as given; else a regular file of
 * that name in the current directory (gdbserver's rule: `gdbserver :1234
 * prog` runs ./prog), else found in PATH. */
int cli_find_program(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");
	struct stat here;

	if (strchr(prog, '/') || (stat(prog, &here) == 0 && S_ISREG(here.st_mode)) || !path) {
		snprintf(out, len, "%s%s", strchr(prog, '/') ? "" : "./", prog);
		return access(out, F_OK) == 0 ? 0 : -1;
	}
	while (*path) {
		size_t n = strcspn(path, ":");
		struct stat st;
		snprintf(out, len, "%.*s%s%s", (int)n, path, n ? "/" : "", prog);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(out, X_OK) == 0)
			return 0;
		path += n;
		if (*path == ':')
			path++;
	}
	snprintf(out, len, "%s", prog);
	return -1;
}
