/* Closing a recording's file (ptrev/record_file.h). */
#include "ptrev/record_file.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

int record_file_close(struct trace_writer *w, const char *path, const char *went_on)
{
	char err[400];
	uint64_t kept = 0;
	bool full = trace_writer_io_failed(w, &kept);
	if (trace_writer_close(w, err, sizeof err) == 0)
		return 0;
	if (!full) {
		fprintf(stderr, "ptrev: %s: %s\n", path, err);
		return -1;
	}
	fprintf(stderr, "ptrev: %s: %s: the recording stopped there (%llu bytes kept, which "
		"info, decode and replay use); %s\n", path, err, (unsigned long long)kept,
		went_on);
	return 0;
}
