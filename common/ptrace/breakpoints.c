/* Software breakpoints: an int3 (0xcc) written over the first byte of an
 * instruction, reference counted by address so that gdb inserting the same
 * address twice (two breakpoints on one line) needs two removals. */
#include "inferior_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INT3 0xcc

struct sw_breakpoint *inf_find_swbreak(struct inferior *inf, uint64_t addr)
{
	for (size_t i = 0; i < inf->nbps; i++)
		if (inf->bps[i].addr == addr)
			return &inf->bps[i];
	return NULL;
}

bool inferior_has_swbreak(const struct inferior *inf, uint64_t addr)
{
	return inf_find_swbreak((struct inferior *)inf, addr) != NULL;
}

int inferior_insert_swbreak(struct inferior *inf, uint64_t addr)
{
	struct sw_breakpoint *b = inf_find_swbreak(inf, addr);
	if (b) {
		b->refs++;
		return 0;
	}
	if (inf->nbps == inf->cap_bps) {
		size_t cap = inf->cap_bps ? inf->cap_bps * 2 : 16;
		struct sw_breakpoint *nb = realloc(inf->bps, cap * sizeof(*nb));
		if (!nb)
			return -1;
		inf->bps = nb;
		inf->cap_bps = cap;
	}
	uint8_t orig, int3 = INT3;
	if (inf_mem_read_raw(inf, addr, &orig, 1) != 1)
		return -1;
	if (inf_mem_write_raw(inf, addr, &int3, 1) != 1)
		return -1;
	inf->bps[inf->nbps++] = (struct sw_breakpoint){ .addr = addr, .saved = orig, .refs = 1 };
	return 0;
}

int inferior_remove_swbreak(struct inferior *inf, uint64_t addr)
{
	struct sw_breakpoint *b = inf_find_swbreak(inf, addr);
	if (!b)
		return -1;
	if (--b->refs > 0)
		return 0;
	/* A process that is gone has no memory to restore; forget it anyway. */
	int rc = 0;
	if (inf->pid && !inf->exited && inf_mem_write_raw(inf, addr, &b->saved, 1) != 1)
		rc = -1;
	size_t i = (size_t)(b - inf->bps);
	memmove(&inf->bps[i], &inf->bps[i + 1], (inf->nbps - i - 1) * sizeof(*b));
	inf->nbps--;
	return rc;
}

void inf_remove_all_swbreaks(struct inferior *inf)
{
	for (size_t i = 0; i < inf->nbps; i++)
		if (inf->pid && !inf->exited)
			inf_mem_write_raw(inf, inf->bps[i].addr, &inf->bps[i].saved, 1);
	inf->nbps = 0;
}

void inf_swbreaks_restore_in(const struct inferior *inf, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	for (size_t i = 0; i < inf->nbps; i++)
		if (pwrite(fd, &inf->bps[i].saved, 1, (off_t)inf->bps[i].addr) != 1)
			fprintf(stderr, "ptrev: could not take a breakpoint out of process %d at "
				"%#llx: %s\n", (int)pid, (unsigned long long)inf->bps[i].addr,
				strerror(errno));
	close(fd);
}

void inf_vfork_child_done(struct inferior *inf)
{
	if (inf->vfork_parent && inf->nbps)
		inf_swbreaks_restore_in(inf, inf->vfork_parent);
	inf->vfork_parent = 0;
}
