/* A recording as the commands that show its history need it (replay,
 * decode): read, and for an event recording whose history is not made
 * yet, made now by re-executing it (include/ptrev/materialise.h), with a
 * line on stderr saying so and how long it took. */
#include "ptrev/cli.h"

#include <stdio.h>
#include <string.h>

#include "ptrev/materialise.h"

void cli_say_torn(const char *path, const struct trace_data *td)
{
	if (td->torn[0])
		fprintf(stderr, "ptrev: %s: %s; using the records before it\n", path, td->torn);
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
	if (materialise_to_memory(td, &made, &st, NULL, err, errlen) != 0) {
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
