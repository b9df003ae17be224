/* Which recorded events of an event recording may have written watched
 * memory where the debug registers do not see it: the kernel's writes
 * (a syscall's results, replayed from the recording), the address space
 * changed under the bytes (mmap, munmap, madvise's emptying), gdb's own
 * changes. A native search with hardware watchpoints finds only the
 * program's own stores; these are the rest. */
#ifndef PTREV_EVENT_WRITES_H
#define PTREV_EVENT_WRITES_H

#include <stddef.h>
#include <stdint.h>

#include "ptrev/trace_file.h"

struct watched_range {
	uint64_t addr;
	uint64_t len;
};

/* The last event among events lo .. hi - 1 of ev's one thread (ev an
 * event recording of one thread) that may have written bytes of r[0..n),
 * plus 1 (0: none). Erring on the side of "may": a syscall the table
 * does not know, any change of the address space that touches them. */
size_t event_last_write(const struct trace_data *ev, size_t lo, size_t hi,
			const struct watched_range *r, size_t n);

/* The first such event among events lo .. hi - 1, plus 1 (0: none). */
size_t event_first_write(const struct trace_data *ev, size_t lo, size_t hi,
			 const struct watched_range *r, size_t n);

/* Which write of event k (one event_last_write named) it is, for
 * messages: "syscall read (0)", "gdb's change to memory". */
void event_write_label(const struct trace_data *ev, size_t k, const struct watched_range *r,
		       size_t n, char *buf, size_t len);

#endif
