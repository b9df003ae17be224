/* Running the recorded binaries where the files at their paths are gone
 * or another build (a program rebuilt or deleted since its recording),
 * from the copies the recording holds (FILE records), and giving gdb
 * those copies to read (the history target's vFile). A replay runs the
 * program again: the program's file is exec'd (replay/relaunch.c), and
 * its libraries are mapped by the replay's mmap (replay/sys_replay.c).
 * Each copy is held in a memory file of ptrev's (memfd), which the
 * replay process opens as /proc/PTREV/fd/N. */
#ifndef PTREV_BINARY_COPIES_H
#define PTREV_BINARY_COPIES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/trace_file.h"

/* The file to map for m (a file mapping of the recording): m->path where
 * the file there is the build that ran (same build-id) or has none
 * recorded, else the path of its copy (/proc/PTREV/fd/N). NULL with why
 * where it is another build, or gone, and the recording has no copy. */
const char *binary_copy_for_map(const struct trace_data *td, const struct trace_mmap *m,
				char *buf, size_t buflen, char *why, size_t whylen);

/* What binary_copy_exe made for the exec of the program's copy. */
struct binary_copy_exec {
	char *dir;          /* a new directory, the exec's working directory */
	char *rel;          /* the program's path in it, as long as the recorded
			     * one (the exec puts the path it was given on the new
			     * stack, AT_EXECFN, and its length decides the whole
			     * stack's layout): a link to the copy */
	char *interp_rel;   /* where the loader changed too: its copy's link, the
			     * name the program's copy gives its loader in place
			     * of the recorded one (PT_INTERP), as long */
	uint8_t *interp;    /* ...and the recorded name, put back after the exec */
	uint64_t interp_len, interp_vaddr, phdr_vaddr;
};

/* The program's file, where the file at the recorded program path (path,
 * relative to cwd) or the loader's is not the build that ran and the
 * recording holds copies: x says what was made to exec the program's copy
 * (the loader's copy running with it where the loader changed). 0: the
 * files are the ones that ran (or cannot be told: no build-id recorded;
 * or another build and no copy, said on stderr: the replay runs it and
 * diverges where they differ), nothing made; 1: made (exec path x->rel in
 * x->dir; then binary_copy_exe_fix, binary_copy_exe_done); -1 with why:
 * gone, and no copy. auxv: the recorded auxiliary vector, whose AT_ENTRY
 * and AT_BASE name the program's and the loader's mappings. */
int binary_copy_exe(const struct trace_data *td, const char *path, const char *cwd,
		    const uint8_t *auxv, size_t auxv_len, struct binary_copy_exec *x, char *why,
		    size_t whylen);
/* After the exec, stopped: the recorded loader name back in the program's
 * memory (memfd: its /proc/PID/mem; at_phdr: its auxv's AT_PHDR, where
 * its program headers were loaded). 0, or -1. */
int binary_copy_exe_fix(const struct binary_copy_exec *x, int memfd, uint64_t at_phdr);
/* Removes what was made (once the exec has the files open) and frees x. */
void binary_copy_exe_done(struct binary_copy_exec *x);

/* The recording's copy of the file at path where that file is another
 * build than the one the recording mapped there, or gone; NULL where it
 * is the same (or cannot be told), or there is no copy. What gdb reads
 * of a replay's program and libraries (vFile) must be what ran. */
const struct trace_file_copy *binary_copy_changed(const struct trace_data *td,
						  const char *path);

#endif
