/* Private to replay/: gdb's changes to a recorded program (set var, call,
 * jump: trace_gdb_write) made again in a replay process, the same way by
 * the replayer (at an instruction position) and the event replay (after
 * an event). */
#ifndef PTREV_GDB_WRITE_H
#define PTREV_GDB_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/trace_file.h"

/* Make g in thread tid of the stopped process whose memory is memfd. 0,
 * or -1 with why. *jumped_from (may be NULL) is set to the thread's rip
 * before a register change that moved it, else 0, so that a caller making
 * a history can tell a jump. */
int gdb_write_apply(pid_t tid, int memfd, const struct trace_gdb_write *g,
		    uint64_t *jumped_from, char *why, size_t whylen);

/* qsort order of pointers to the changes of one array: by position, the
 * changes made at one position in the order gdb made them (file order). */
int gdb_write_by_pos(const void *a, const void *b);

#endif
