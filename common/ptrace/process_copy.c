/* Copies of a traced process that share no writable memory with it
 * (include/ptrev/process_copy.h). */
#include "ptrev/process_copy.h"
#include "ptrev/proc_maps.h"
#include "ptrev/ptrace_wait.h"
#include "ptrev/syscall_inject.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The bytes are moved in pieces of this size; a piece that is all zero
 * is not written (the new mapping reads zero already), so a large,
 * sparsely used mapping costs its reads only. */
#define PIECE (256 * 1024)

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Replace one mapping [start, end) of pid by a shared anonymous mapping
 * of its own holding the same bytes. */
static int unshare_one(pid_t pid, int memfd, const struct proc_mapping *m, char *err,
		       size_t errlen)
{
	size_t len = m->end - m->start;
	uint8_t *saved = malloc(len ? len : 1);
	if (!saved) {
		snprintf(err, errlen, "copy: no memory for the %zu bytes of the shared mapping at "
			 "%#llx", len, (unsigned long long)m->start);
		return -1;
	}
	for (size_t off = 0; off < len; off += PIECE) {
		size_t n = len - off < PIECE ? len - off : PIECE;
		if (pread(memfd, saved + off, n, (off_t)(m->start + off)) != (ssize_t)n) {
			snprintf(err, errlen, "copy: cannot read the shared mapping at %#llx: %s",
				 (unsigned long long)(m->start + off), strerror(errno));
			free(saved);
			return -1;
		}
	}
	const uint64_t args[6] = {m->start, len, (uint64_t)proc_maps_prot(m->perms),
				  MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, (uint64_t)-1, 0};
	int64_t res = 0;
	int sig = 0;
	if (syscall_inject(pid, SYS_mmap, args, &res, &sig, err, errlen) < 0) {
		free(saved);
		return -1;
	}
	if (sig)
		/* Nothing is pending in a fresh copy; one that came is its own. */
		kill(pid, sig);
	if ((uint64_t)res != m->start) {
		snprintf(err, errlen, "copy: cannot remap the shared mapping at %#llx: %s",
			 (unsigned long long)m->start,
			 res < 0 && res > -4096 ? strerror((int)-res) : "moved");
		free(saved);
		return -1;
	}
	for (size_t off = 0; off < len; off += PIECE) {
		size_t n = len - off < PIECE ? len - off : PIECE;
		if (all_zero(saved + off, n))
			continue;
		if (pwrite(memfd, saved + off, n, (off_t)(m->start + off)) != (ssize_t)n) {
			snprintf(err, errlen, "copy: cannot write the shared mapping at %#llx: %s",
				 (unsigned long long)(m->start + off), strerror(errno));
			free(saved);
			return -1;
		}
	}
	free(saved);
	return 0;
}

int process_unshare_memory(pid_t pid, char *err, size_t errlen)
{
	struct proc_mapping *list = NULL, m;
	size_t n = 0, cap = 0;
	int rc = 0;

	/* The list first: remapping changes the file being read. */
	FILE *f = proc_maps_open(pid);
	if (!f) {
		snprintf(err, errlen, "copy: cannot read the maps of %d: %s", (int)pid,
			 strerror(errno));
		return -1;
	}
	while (proc_maps_next(f, &m)) {
		if (m.perms[1] != 'w' || m.perms[3] != 's')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			struct proc_mapping *more = realloc(list, cap * sizeof *list);
			if (!more) {
				rc = -1;
				break;
			}
			list = more;
		}
		list[n++] = m;
	}
	fclose(f);
	if (rc < 0) {
		snprintf(err, errlen, "copy: out of memory");
		free(list);
		return -1;
	}
	if (n == 0)
		return 0;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int memfd = open(path, O_RDWR | O_CLOEXEC);
	if (memfd < 0) {
		snprintf(err, errlen, "copy: cannot open %s: %s", path, strerror(errno));
		free(list);
		return -1;
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = unshare_one(pid, memfd, &list[i], err, errlen);
	close(memfd);
	free(list);
	return rc;
}

/* The copy made, then its memory made its own; a copy that cannot be is
 * killed, not handed out half shared. */
static int own_memory(int made, pid_t *child, char *err, size_t errlen)
{
	if (made < 0)
		return -1;
	if (process_unshare_memory(*child, err, errlen) == 0)
		return 0;
	int st;
	kill(*child, SIGKILL);
	ptrace_waitpid(*child, &st, __WALL);
	*child = 0;
	return -1;
}

int process_copy(pid_t pid, pid_t *child, char *err, size_t errlen)
{
	return own_memory(syscall_inject_fork(pid, child, err, errlen), child, err, errlen);
}

int process_copy_sibling(pid_t pid, pid_t *child, char *err, size_t errlen)
{
	return own_memory(syscall_inject_fork_sibling(pid, child, err, errlen), child, err,
			  errlen);
}
