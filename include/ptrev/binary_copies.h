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

#include "ptrev/trace_file.h"

/* The file to map for m (a file mapping of the recording): m->path where
 * the file there is the build that ran (same build-id) or has none
 * recorded, else the path of its copy (/proc/PTREV/fd/N). NULL with why
 * where it is another build, or gone, and the recording has no copy. */
const char *binary_copy_for_map(const struct trace_data *td, const struct trace_mmap *m,
				char *buf, size_t buflen, char *why, size_t whylen);

/* The program's file: where the file at the recorded program path (path,
 * relative to cwd) is not the build that ran and the recording holds a
 * copy of it, a new directory *dir holding, at *rel (relative to it, as
 * long as path: the exec puts the string it was given on the new stack,
 * AT_EXECFN, so the stack's layout stays the recording's), a link to the
 * copy. 0: the file is the one that ran (or cannot be told: no build-id
 * recorded; or another build and no copy, said on stderr: the replay runs
 * it and diverges where they differ), nothing made; 1: made
 * (binary_copy_exe_done removes it); -1 with why: gone, and no copy.
 * auxv: the recorded
 * auxiliary vector, whose AT_ENTRY names the program's mapping. */
int binary_copy_exe(const struct trace_data *td, const char *path, const char *cwd,
		    const uint8_t *auxv, size_t auxv_len, char **dir, char **rel, char *why,
		    size_t whylen);
void binary_copy_exe_done(char *dir, char *rel);

/* The recording's copy of the file at path where that file is another
 * build than the one the recording mapped there, or gone; NULL where it
 * is the same (or cannot be told), or there is no copy. What gdb reads
 * of a replay's program and libraries (vFile) must be what ran. */
const struct trace_file_copy *binary_copy_changed(const struct trace_data *td,
						  const char *path);

#endif
