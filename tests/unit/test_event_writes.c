/* event_writes (include/ptrev/event_writes.h): which events of a made-up
 * one-thread event recording may write a watched range behind the debug
 * registers' back, watching 8 bytes at 0x5000:
 *
 *   event 0: read() writing 4 bytes at 0x4000 (elsewhere)
 *   event 1: read() writing 16 bytes at 0x4ff8 (over the range's start)
 *   event 2: mmap, its pages at 0x7000 (elsewhere)
 *   event 3: rdtsc (no syscall)
 *   event 4: brk from 0x9000 to 0xa000 (elsewhere), then event 5: brk
 *            back to 0x4000 (the range lay in the pages given back)
 *   event 6: mprotect over the range (the bytes stay)
 *   event 7: munmap over the range
 *   event 8: a syscall the table does not know
 *   event 9: madvise over 0x6000 (elsewhere)
 *   event 10: a failed mmap; gdb's change of 0x5004 right after it
 *             (its pos 11)
 *   event 11: mremap from 0x8000 to 0x5000 (the range's new pages)
 */
#include <string.h>

#include "../check.h"
#include "ptrev/event_writes.h"

static const uint8_t bytes[16];
static const struct trace_mem_write elsewhere = {0x4000, bytes, 4};
static const struct trace_mem_write over = {0x4ff8, bytes, 16};
static struct trace_syscall syscalls[] = {
	{.tid = 7, .pos = 0, .nr = 0, .result = 4, .nwrites = 1, .writes = &elsewhere},
	{.tid = 7, .pos = 1, .nr = 0, .result = 16, .nwrites = 1, .writes = &over},
	{.tid = 7, .pos = 2, .nr = 9, .args = {0, 4096}, .result = 0x7000},
	{.tid = 7, .pos = 4, .nr = 12, .args = {0xa000}, .result = 0x9000},
	{.tid = 7, .pos = 5, .nr = 12, .args = {0x4000}, .result = 0x4000},
	{.tid = 7, .pos = 6, .nr = 10, .args = {0x5000, 4096, 1}},
	{.tid = 7, .pos = 7, .nr = 11, .args = {0x5000, 4096}},
	{.tid = 7, .pos = 8, .nr = 999, .unknown = true},
	{.tid = 7, .pos = 9, .nr = 28, .args = {0x6000, 4096, 4}},
	{.tid = 7, .pos = 10, .nr = 9, .args = {0, 4096}, .result = -12},
	{.tid = 7, .pos = 11, .nr = 25, .args = {0x8000, 4096, 4096}, .result = 0x5000},
};
static struct trace_rdtsc rdtsc[] = {{.tid = 7, .pos = 3}};
static struct trace_gdb_write gdb_writes[] = {{.tid = 7, .pos = 11, .addr = 0x5004, .len = 2}};
static struct trace_thread threads[] = {{.tid = 7}};
static const struct watched_range watched = {0x5000, 8};

static struct trace_data recording(void)
{
	struct trace_data td;
	memset(&td, 0, sizeof td);
	td.syscalls = syscalls;
	td.nsyscalls = sizeof syscalls / sizeof *syscalls;
	td.rdtsc = rdtsc;
	td.nrdtsc = 1;
	td.gdb_writes = gdb_writes;
	td.ngdb_writes = 1;
	td.threads = threads;
	td.nthreads = 1;
	return td;
}

/* Each event alone: may it write the range? */
static void each_event(void)
{
	struct trace_data td = recording();
	static const bool may[] = {false, true, false, false, false, true,
				   false, true, true, false, true, true};
	for (size_t k = 0; k < sizeof may / sizeof *may; k++)
		CHECK((event_last_write(&td, k, k + 1, &watched, 1) == k + 1) == may[k],
		      "event %zu: %s expected", k, may[k] ? "a write" : "none");
}

/* The last and the first in a span, with the span's bounds kept. */
static void spans(void)
{
	struct trace_data td = recording();
	CHECK(event_last_write(&td, 0, 12, &watched, 1) == 12);
	CHECK(event_last_write(&td, 0, 7, &watched, 1) == 6, "the brk back at event 5");
	CHECK(event_last_write(&td, 2, 5, &watched, 1) == 0, "none among events 2-4");
	CHECK(event_first_write(&td, 0, 12, &watched, 1) == 2, "the read at event 1");
	CHECK(event_first_write(&td, 2, 12, &watched, 1) == 6);
	CHECK(event_first_write(&td, 9, 10, &watched, 1) == 0);
	/* A range no event touches but the unknown syscall. */
	struct watched_range far = {0x100000, 4};
	CHECK(event_last_write(&td, 0, 12, &far, 1) == 9);
}

static void labels(void)
{
	struct trace_data td = recording();
	char buf[128];
	event_write_label(&td, 1, &watched, 1, buf, sizeof buf);
	CHECK(strcmp(buf, "syscall read (0)") == 0, "%s", buf);
	event_write_label(&td, 10, &watched, 1, buf, sizeof buf);
	CHECK(strcmp(buf, "gdb's change to memory") == 0, "%s", buf);
}

int main(void)
{
	each_event();
	spans();
	labels();
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
