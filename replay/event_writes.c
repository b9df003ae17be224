/* Which recorded events may have written watched memory behind the debug
 * registers' back (include/ptrev/event_writes.h). A native search with
 * hardware watchpoints (event_search.c) sees the program's own stores
 * only: a replay puts a syscall's recorded results in place with ptrace,
 * runs the address-space calls for real, and makes gdb's recorded
 * changes, none of which a debug register traps. So a reverse-continue
 * to a watchpoint that ends its piece of the history at the last hit
 * the registers saw would pass a later read() into the watched bytes;
 * these events are where such writes can come, from the recording
 * alone. */
#include "ptrev/event_writes.h"

#include <stdbool.h>
#include <stdio.h>

#include "ptrev/syscall_table.h"

/* Does [addr, addr + len) touch any of r[0..n)? */
static bool touches(uint64_t addr, uint64_t len, const struct watched_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (len && addr < r[i].addr + r[i].len && r[i].addr < addr + len)
			return true;
	return false;
}

static bool failed(int64_t result)
{
	return result < 0 && result > -4096;
}

/* The program break before syscall i (a brk), from the brk calls before
 * it; its own result where none came before (no change known). */
static uint64_t break_before(const struct trace_data *ev, size_t i)
{
	for (size_t j = i; j-- > 0;)
		if (ev->syscalls[j].nr == 12 && ev->syscalls[j].tid == ev->syscalls[i].tid)
			return (uint64_t)ev->syscalls[j].result;
	return (uint64_t)ev->syscalls[i].result;
}

/* May syscall i of ev have changed bytes of r (other than through its
 * recorded writes): the address space under them, or what the table
 * cannot describe? */
static bool changes_under(const struct trace_data *ev, size_t i, const struct watched_range *r,
			  size_t n)
{
	const struct trace_syscall *sc = &ev->syscalls[i];
	const uint64_t *a = sc->args;
	uint64_t res = (uint64_t)sc->result;
	if (sc->unknown)
		return true;
	switch (sc->nr) {
	case 9: /* mmap: new pages where it put them */
		return !failed(sc->result) && touches(res, a[1], r, n);
	case 11: /* munmap */
		return touches(a[0], a[1], r, n);
	case 25: /* mremap: from the old place to the new */
		return !failed(sc->result) && (touches(a[0], a[1], r, n) || touches(res, a[2], r, n));
	case 28: /* madvise: MADV_DONTNEED and its kin empty pages */
		return touches(a[0], a[1], r, n);
	case 12: { /* brk: the pages between the old break and the new */
		uint64_t old = break_before(ev, i);
		return old < res ? touches(old, res - old, r, n) : touches(res, old - res, r, n);
	}
	case 10: /* mprotect and pkey_mprotect: the bytes stay */
	case 329:
		return false;
	default: {
		const struct syscall_desc *d = syscall_desc(sc->nr);
		return d && d->maps && !failed(sc->result);
	}
	}
}

/* May syscall i of ev have written bytes of r? */
static bool syscall_writes_to(const struct trace_data *ev, size_t i,
			      const struct watched_range *r, size_t n)
{
	const struct trace_syscall *sc = &ev->syscalls[i];
	for (size_t w = 0; w < sc->nwrites; w++)
		if (touches(sc->writes[w].addr, sc->writes[w].len, r, n))
			return true;
	return changes_under(ev, i, r, n);
}

/* Event k of ev's one thread (tid): its syscall's index, or nsyscalls
 * where it is none. */
static size_t syscall_of(const struct trace_data *ev, size_t k, pid_t tid)
{
	for (size_t i = 0; i < ev->nsyscalls; i++)
		if (ev->syscalls[i].pos == k && ev->syscalls[i].tid == tid)
			return i;
	return ev->nsyscalls;
}

static pid_t only_thread(const struct trace_data *ev)
{
	return ev->nthreads ? ev->threads[0].tid : 0;
}

/* The last (or the first) event among lo .. hi - 1 of ev's one thread
 * that may have written bytes of r, plus 1 (0: none): one pass over the
 * syscalls and gdb's changes (made right after the event before their
 * pos), not a search of them for every event, which a recording of
 * hundreds of thousands of syscalls makes quadratic. */
static size_t edge_write(const struct trace_data *ev, size_t lo, size_t hi,
			 const struct watched_range *r, size_t n, bool last)
{
	pid_t tid = only_thread(ev);
	size_t found = 0;
	for (size_t i = 0; i < ev->nsyscalls; i++) {
		const struct trace_syscall *sc = &ev->syscalls[i];
		size_t k = (size_t)sc->pos;
		if (sc->tid == tid && k >= lo && k < hi &&
		    (!found || (last ? k + 1 > found : k + 1 < found)) &&
		    syscall_writes_to(ev, i, r, n))
			found = k + 1;
	}
	for (size_t i = 0; i < ev->ngdb_writes; i++) {
		const struct trace_gdb_write *g = &ev->gdb_writes[i];
		size_t k = (size_t)g->pos - 1;
		if (g->tid == tid && g->pos > 0 && k >= lo && k < hi && !g->regs &&
		    (!found || (last ? k + 1 > found : k + 1 < found)) &&
		    touches(g->addr, g->len, r, n))
			found = k + 1;
	}
	return found;
}

size_t event_last_write(const struct trace_data *ev, size_t lo, size_t hi,
			const struct watched_range *r, size_t n)
{
	return edge_write(ev, lo, hi, r, n, true);
}

size_t event_first_write(const struct trace_data *ev, size_t lo, size_t hi,
			 const struct watched_range *r, size_t n)
{
	return edge_write(ev, lo, hi, r, n, false);
}

void event_write_label(const struct trace_data *ev, size_t k, const struct watched_range *r,
		       size_t n, char *buf, size_t len)
{
	size_t i = syscall_of(ev, k, only_thread(ev));
	if (i < ev->nsyscalls && syscall_writes_to(ev, i, r, n)) {
		char name[96];
		syscall_label(ev->syscalls[i].nr, ev->syscalls[i].args, name, sizeof name);
		snprintf(buf, len, "syscall %s", name);
	} else {
		snprintf(buf, len, "gdb's change to memory");
	}
}
