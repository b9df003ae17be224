/* /proc/PID/maps read line by line (include/ptrev/proc_maps.h). */
#include "ptrev/proc_maps.h"

#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>

FILE *proc_maps_open(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	return fopen(path, "re");
}

bool proc_maps_next(FILE *f, struct proc_mapping *m)
{
	/* A line holds a path of up to PATH_MAX bytes. */
	char line[4352];
	while (fgets(line, sizeof line, f)) {
		m->name[0] = '\0';
		int used = 0;
		m->inode = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %*s %*s %" SCNu64 " %n", &m->start,
			   &m->end, m->perms, &m->inode, &used) < 3)
			continue;
		if (used > 0)
			sscanf(line + used, "%4095s", m->name);
		return true;
	}
	return false;
}

int proc_maps_prot(const char *perms)
{
	return (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
	       (perms[2] == 'x' ? PROT_EXEC : 0);
}

bool proc_maps_is_loader(const struct proc_mapping *m)
{
	const char *base = strrchr(m->name, '/');
	if (base && strncmp(base + 1, "memfd:", 6) == 0)
		base += 6; /* a replay running the recording's copy (binary_copies.h) */
	return base && strncmp(base + 1, "ld-linux", 8) == 0;
}
