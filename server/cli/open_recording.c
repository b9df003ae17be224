/* A recording as the commands that show its history need it (replay,
 * decode): read, and for an event recording whose history is not made
 * yet, made now by re-executing it (include/ptrev/materialise.h), with a
 * line on stderr saying so and how long it took. */
#include "ptrev/cli.h"

#include <stdio.h>
#include <string.h>

#include "ptrev/event_cut.h"
#include "ptrev/materialise.h"
#include "ptrev/tsc_trap.h"

void cli_say_torn(const char *path, const struct trace_data *td)
{
	if (td->torn[0])
		fprintf(stderr, "ptrev: %s: %s; using the records before it\n", path, td->torn);
}

bool cli_recorded_untrapped_tsc(const struct trace_data *td)
{
	const char *tsc = trace_meta(td, TSC_META_KEY);
	return tsc && strcmp(tsc, TSC_META_UNTRAPPED) == 0;
}

void cli_say_untrapped_tsc(const char *path, const struct trace_data *td)
{
	if (cli_recorded_untrapped_tsc(td))
		fprintf(stderr, "ptrev: %s was recorded where rdtsc does not trap: the TSC values "
			"its program read are not in it, and its replay can differ where it used "
			"them (and says so there)\n", path);
}

/* The history of td up to the syscall no replay can reproduce that its
 * making stopped at (st->failed_at; err says which): td cut there
 * (event_cut.h), as `ptrev replay` serves it; where it diverged instead,
 * up to the syscall before, the last place it met the recording. 0, or
 * -1 with err. */
static int made_up_to(const char *path, const struct trace_data *td,
		      struct materialise_stats *st, struct trace_data *made, char *err,
		      size_t errlen)
{
	struct trace_data cut;
	char why[256];
	const struct event_end_failure at = st->failed_at;
	uint64_t k;
	if (event_cut_where_failed(td, at.tid, at.event, at.diverged, &cut, &k, why, sizeof why) <
	    0)
		return -1; /* err still says why the whole one failed */
	fprintf(stderr, "ptrev: %s: its history ends where thread %d enters its syscall event "
		"%llu (%s%s); the recording goes on after it, out of reach\n", path, (int)at.tid,
		(unsigned long long)k, at.diverged ? "the last place where the replay met the "
		"recording: after it, it went differently: " : "", err);
	int rc = materialise_to_memory(&cut, made, st, NULL, err, errlen);
	event_cut_free(&cut);
	return rc;
}

int cli_open_recording(const char *path, struct trace_data *td, char *err, size_t errlen)
{
	if (trace_read_file(path, td, err, errlen) != 0)
		return -1;
	cli_say_torn(path, td);
	if (!materialise_needed(td))
		return 0;
	struct trace_data made;
	struct materialise_stats st;
	fprintf(stderr, "ptrev: %s is an event recording: making its history (re-executing it "
		"block by block)...\n", path);
	int rc = materialise_to_memory(td, &made, &st, NULL, err, errlen);
	if (rc != 0 && st.failed_at.tid)
		rc = made_up_to(path, td, &st, &made, err, errlen);
	if (rc != 0) {
		char why[512];
		snprintf(why, sizeof why, "cannot make its history: %s", err);
		snprintf(err, errlen, "%s", why);
		trace_data_free(td);
		return -1;
	}
	materialise_say_made(&st);
	trace_data_free(td);
	*td = made;
	return 0;
}
