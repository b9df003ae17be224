/* event_cut (include/ptrev/event_cut.h): which events, mappings, threads
 * and runs of the recorded order a recording cut at a syscall's entry
 * keeps, on a made-up two-thread event recording:
 *
 *   thread 10: events 0 (syscall), 1 (rdtsc), 2 (syscall clone of 11),
 *              3 (syscall, a mmap), 4 (syscall: the cut), 5 (syscall)
 *   thread 11: events 0 (syscall), 1 (syscall), 2 (syscall exit)
 *   order: (10, 0, 3) (11, 0, 2) (10, 3, 2) (11, 2, 1) (10, 5, 1)
 *
 * Cut at thread 10's event 4: thread 10 keeps events 0-3 and its run goes
 * on to event 4 (not held: the entry it stands at); thread 11's last run
 * before ended at the entry of its syscall 1, which is left out; its exit
 * is not kept. A mapping made by event 3 (pos 4) stays, one by event 4
 * (pos 5) goes. event_cut_before finds the syscall before an event. */
#include <string.h>

#include "../check.h"
#include "ptrev/event_cut.h"

static struct trace_syscall syscalls[] = {
	{.tid = 10, .pos = 0, .nr = 1}, {.tid = 10, .pos = 2, .nr = 56},
	{.tid = 10, .pos = 3, .nr = 9},  {.tid = 10, .pos = 4, .nr = 30},
	{.tid = 10, .pos = 5, .nr = 1},  {.tid = 11, .pos = 0, .nr = 39},
	{.tid = 11, .pos = 1, .nr = 0},  {.tid = 11, .pos = 2, .nr = 60},
};
static struct trace_rdtsc rdtsc[] = {{.tid = 10, .pos = 1}};
static struct trace_mmap mmaps[] = {
	{.tid = 0, .pos = 0}, {.tid = 10, .pos = 4}, {.tid = 10, .pos = 5}};
static struct trace_gdb_write writes[] = {{.tid = 10, .pos = 4}, {.tid = 11, .pos = 2}};
static struct trace_thread threads[] = {
	{.tid = 10}, {.tid = 11, .parent = 10, .pos = 2}, {.tid = 11, .pos = 3, .exited = true}};
static struct trace_sched_run sched[] = {
	{10, 0, 3}, {11, 0, 2}, {10, 3, 2}, {11, 2, 1}, {10, 5, 1}};

static struct trace_data recording(void)
{
	struct trace_data td;
	memset(&td, 0, sizeof td);
	td.syscalls = syscalls;
	td.nsyscalls = sizeof syscalls / sizeof *syscalls;
	td.rdtsc = rdtsc;
	td.nrdtsc = 1;
	td.mmaps = mmaps;
	td.nmmaps = 3;
	td.gdb_writes = writes;
	td.ngdb_writes = 2;
	td.threads = threads;
	td.nthreads = 3;
	td.sched = sched;
	td.nsched = 5;
	td.complete = true;
	td.end.status_kind = 0;
	return td;
}

static size_t count_of(const struct trace_data *td, pid_t tid)
{
	size_t n = 0;
	for (size_t i = 0; i < td->nsyscalls; i++)
		n += td->syscalls[i].tid == tid;
	return n;
}

static void two_threads(void)
{
	struct trace_data td = recording(), cut;
	char err[256];
	CHECK(event_cut(&td, 10, 4, &cut, err, sizeof err) == 0, "%s", err);
	CHECK(count_of(&cut, 10) == 3, "thread 10 keeps syscalls 0, 2, 3");
	CHECK(count_of(&cut, 11) == 1 && cut.syscalls[3].pos == 0,
	      "thread 11 keeps its syscall 0; the one its run ended at is left out");
	CHECK(cut.nrdtsc == 1);
	CHECK(cut.nsched == 3 && cut.sched[2].tid == 10 && cut.sched[2].pos == 3 &&
		      cut.sched[2].count == 2,
	      "the order ends with thread 10's run to event 4's entry");
	CHECK(cut.nmmaps == 2 && cut.mmaps[1].pos == 4, "mappings up to event 3's");
	CHECK(cut.ngdb_writes == 1 && cut.gdb_writes[0].tid == 10,
	      "gdb's change after event 3 kept, thread 11's after its event 1 not");
	CHECK(cut.nthreads == 2 && !cut.threads[1].exited, "thread 11 made, not ended");
	CHECK(!cut.complete, "no END");
	CHECK(td.nsyscalls == 8 && td.nsched == 5, "the recording itself untouched");
	event_cut_free(&cut);
}

/* The cut at the first run: thread 11 was never created. */
static void before_the_clone(void)
{
	struct trace_data td = recording(), cut;
	char err[256];
	CHECK(event_cut(&td, 10, 2, &cut, err, sizeof err) == 0, "%s", err);
	CHECK(count_of(&cut, 10) == 1 && count_of(&cut, 11) == 0);
	CHECK(cut.nthreads == 1 && cut.nsched == 1 && cut.sched[0].count == 3);
	event_cut_free(&cut);
}

/* A thread that exited before the cut keeps its exit and its end. */
static void after_an_exit(void)
{
	struct trace_data td = recording(), cut;
	char err[256];
	CHECK(event_cut(&td, 10, 5, &cut, err, sizeof err) == 0, "%s", err);
	CHECK(count_of(&cut, 11) == 3, "thread 11's exit kept");
	CHECK(cut.nthreads == 3 && cut.threads[2].exited, "and its end");
	CHECK(cut.nsched == 5 && cut.sched[4].count == 1);
	event_cut_free(&cut);
}

/* No thread order (one thread, older recordings): one run made. */
static void no_order(void)
{
	struct trace_data td = recording(), cut;
	td.nsched = 0;
	td.nthreads = 1;
	char err[256];
	CHECK(event_cut(&td, 10, 3, &cut, err, sizeof err) == 0, "%s", err);
	CHECK(cut.nsched == 1 && cut.sched[0].tid == 10 && cut.sched[0].pos == 0 &&
	      cut.sched[0].count == 4);
	event_cut_free(&cut);
}

static void refused(void)
{
	struct trace_data td = recording(), cut;
	char err[256];
	CHECK(event_cut(&td, 10, 1, &cut, err, sizeof err) < 0 && strstr(err, "no syscall"),
	      "an rdtsc is no syscall: %s", err);
	CHECK(event_cut(&td, 12, 0, &cut, err, sizeof err) < 0, "no such thread");
	td.sched = sched + 1;
	td.nsched = 1;
	CHECK(event_cut(&td, 10, 4, &cut, err, sizeof err) < 0 && strstr(err, "order"),
	      "an order that does not hold it: %s", err);
}

/* A replay that diverged as a thread went for an event: cut at the
 * entry of its last syscall before (event_cut_before), passing its rdtsc;
 * none before the thread's first syscall. */
static void before_a_divergence(void)
{
	struct trace_data td = recording(), cut;
	char err[256];
	uint64_t at = 99;
	CHECK(event_cut_before(&td, 10, 5, &cut, &at, err, sizeof err) == 0 && at == 4, "%s",
	      err);
	CHECK(count_of(&cut, 10) == 3 && cut.nsched == 3 && cut.sched[2].count == 2,
	      "as the cut at event 4");
	event_cut_free(&cut);
	CHECK(event_cut_before(&td, 10, 2, &cut, &at, err, sizeof err) == 0 && at == 0,
	      "past the rdtsc at event 1 to syscall 0: %s", err);
	CHECK(count_of(&cut, 10) == 0 && cut.nsched == 1 && cut.sched[0].count == 1);
	event_cut_free(&cut);
	CHECK(event_cut_before(&td, 10, 0, &cut, &at, err, sizeof err) < 0 &&
		      strstr(err, "no syscall before"),
	      "nothing before the first: %s", err);
	CHECK(event_cut_before(&td, 11, 1, &cut, &at, err, sizeof err) == 0 && at == 0,
	      "thread 11's first syscall: %s", err);
	event_cut_free(&cut);
}

int main(void)
{
	two_threads();
	before_the_clone();
	after_an_exit();
	no_order();
	refused();
	before_a_divergence();
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
