/* qXfer:auxv:read and qXfer:exec-file:read: two objects the kernel already
 * keeps for us in /proc, passed to gdb unchanged. */
#include "ptrev/target_xfer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int xfer_auxv(pid_t pid, struct strbuf *out)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;

	/* The file reports size 0, so read until end of file. */
	size_t start = out->len;
	char buf[1024];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;
			close(fd);
			out->len = start; /* all or nothing */
			if (out->data)
				out->data[start] = '\0';
			return -err;
		}
		if (n == 0)
			break;
		strbuf_append(out, buf, (size_t)n);
	}
	close(fd);
	return 0;
}

int xfer_exec_file(pid_t pid, struct strbuf *out)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);

	/* readlink does not say whether it truncated: grow until it fits. */
	for (size_t cap = 256; cap <= (1u << 20); cap *= 2) {
		char *buf = malloc(cap);
		if (!buf)
			return -ENOMEM;
		ssize_t n = readlink(path, buf, cap);
		if (n < 0) {
			int err = errno;
			free(buf);
			return -err;
		}
		if ((size_t)n < cap) {
			strbuf_append(out, buf, (size_t)n);
			free(buf);
			return 0;
		}
		free(buf);
	}
	return -ENAMETOOLONG;
}
