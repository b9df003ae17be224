/* Which files a program maps are recorded with the mapping's bytes: the
 * replay of an mmap maps the file again (sys_replay.c), which shows the
 * bytes the file holds then; a file the program or anyone else changed
 * or deleted since (a data file, a database, a log) would show other
 * bytes than the run saw, with nothing to say so. The recorders keep the
 * bytes a file mapping showed as the mmap returned, and a replay maps
 * them instead, for every regular file but the system's own (those under
 * /usr, /lib*, /bin, /sbin and /etc that belong to root and that no one
 * else may write: locale data, caches the package manager owns, which do
 * not change while a recording is debugged and are too many to copy; rr
 * decides the same way which mapped files to copy) and programs and
 * libraries (ELF files), whose code is copied for decoding anyway (FILE
 * records) and whose other builds a replay finds as a divergence. */
#ifndef PTREV_MAPPED_DATA_H
#define PTREV_MAPPED_DATA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Is the file that thread tid has open as fd one whose mapping's bytes
 * are recorded: a regular file, not one of the system's? True where it
 * cannot be told (the bytes are recorded then). *size: the file's size
 * (UINT64_MAX where it cannot be told). */
bool mapped_file_is_data(pid_t tid, int fd, uint64_t *size);

/* At most this many bytes of one mapping are recorded (a database mapped
 * whole: LMDB maps gigabytes); a bigger one is mapped again from its file
 * by a replay, as before, and the recorder says so. */
#define MAPPED_DATA_MAX (256ull << 20)

#endif
