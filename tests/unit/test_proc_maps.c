/* Tests of the /proc/PID/maps reader (common/ptrace/proc_maps.c): this
 * process's own mappings hold a writable private one around a static
 * variable, an executable one around main, and [stack] by its name; the
 * mappings come in address order, and a process that does not exist has
 * none. A file under a path of over 63 bytes is named whole (a loader
 * there was not known as one when names were cut), with its inode; the
 * loader is known by its file's name, also as a replay's memory file. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrev/proc_maps.h"
#include "../check.h"

static int variable = 1;

int main(void)
{
	FILE *f = proc_maps_open(getpid());
	CHECK(f != NULL);
	struct proc_mapping m;
	uint64_t var = (uintptr_t)&variable, code = (uintptr_t)&main, prev_end = 0;
	bool saw_var = false, saw_code = false, saw_stack = false, ordered = true;
	while (f && proc_maps_next(f, &m)) {
		ordered = ordered && m.start < m.end && m.start >= prev_end;
		prev_end = m.end;
		if (m.start <= var && var < m.end)
			saw_var = m.perms[1] == 'w' && m.perms[3] == 'p';
		if (m.start <= code && code < m.end)
			saw_code = m.perms[2] == 'x' && m.name[0] == '/';
		saw_stack = saw_stack || strcmp(m.name, "[stack]") == 0;
	}
	if (f)
		fclose(f);
	CHECK(saw_var, " the static variable's mapping is writable and private");
	CHECK(saw_code, " main's mapping is executable and names its file");
	CHECK(saw_stack, " [stack] is named");
	CHECK(ordered, " the mappings come in address order");
	CHECK(proc_maps_open(0x7ffffff0) == NULL, " no such process");

	char dir[] = "/tmp/ptrev-proc-maps-XXXXXX", path[512];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/%s", dir,
		 "a-file-name-long-enough-that-the-whole-path-is-over-63-bytes");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	struct stat st;
	void *p = fd >= 0 && ftruncate(fd, 4096) == 0 && fstat(fd, &st) == 0
			  ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0)
			  : MAP_FAILED;
	CHECK(p != MAP_FAILED, " a file mapped");
	bool whole = false;
	f = proc_maps_open(getpid());
	while (p != MAP_FAILED && f && proc_maps_next(f, &m))
		if (m.start == (uintptr_t)p)
			whole = strcmp(m.name, path) == 0 && m.inode == (uint64_t)st.st_ino;
	if (f)
		fclose(f);
	CHECK(whole, " %s named whole, with its inode", path);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	if (fd >= 0)
		close(fd);
	unlink(path);
	rmdir(dir);

	struct proc_mapping ld = {0};
	snprintf(ld.name, sizeof ld.name, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
	CHECK(proc_maps_is_loader(&ld));
	snprintf(ld.name, sizeof ld.name, "/memfd:ld-linux-x86-64.so.2");
	CHECK(proc_maps_is_loader(&ld), " the loader's copy in a replay");
	snprintf(ld.name, sizeof ld.name, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	CHECK(!proc_maps_is_loader(&ld));
	CHECK(proc_maps_prot("r-xp") == (PROT_READ | PROT_EXEC) &&
	      proc_maps_prot("rw-s") == (PROT_READ | PROT_WRITE) && proc_maps_prot("---p") == 0);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
