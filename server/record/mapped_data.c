/* Which mapped files are recorded with their bytes
 * (include/ptrev/mapped_data.h). */
#include "ptrev/mapped_data.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The system's directories: what the package manager installs. */
static const char *const system_dirs[] = {"/usr/", "/lib/", "/lib64/", "/lib32/", "/libx32/",
					  "/bin/", "/sbin/", "/etc/"};

static bool under_system_dir(const char *path)
{
	for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++)
		if (strncmp(path, system_dirs[i], strlen(system_dirs[i])) == 0)
			return true;
	return false;
}

static bool is_elf(const char *path)
{
	unsigned char magic[4] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool elf = read(fd, magic, sizeof magic) == (ssize_t)sizeof magic &&
		   memcmp(magic, "\177ELF", 4) == 0;
	close(fd);
	return elf;
}

bool mapped_file_is_data(pid_t tid, int fd, uint64_t *size)
{
	char link[64], path[4096];
	struct stat st;
	*size = UINT64_MAX;
	snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)tid, fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0 || stat(link, &st) < 0)
		return true;
	*size = (uint64_t)st.st_size;
	path[n] = '\0';
	static const char deleted[] = " (deleted)";
	size_t len = (size_t)n;
	if (len >= sizeof deleted - 1 && strcmp(path + len - (sizeof deleted - 1), deleted) == 0)
		return true;
	/* A device's mapping (/dev/zero, a frame buffer) is not a file's
	 * bytes: mapped again by the replay as before. */
	if (!S_ISREG(st.st_mode))
		return false;
	/* A program or library: its executable parts are copied whole for
	 * decoding (FILE records), and a replay that meets another build of
	 * it diverges and says so; its bytes are not recorded at each of the
	 * loader's mappings again (a 23 MB libpython grew a recording by
	 * 41 %). */
	if (is_elf(link))
		return false;
	return !(under_system_dir(path) && st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH)));
}
