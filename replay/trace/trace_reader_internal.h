/* Private to replay/trace: the storage behind trace_data and the payload
 * parsers (trace_records.c) that the reader's framing code
 * (trace_reader.c) calls once a record's checksums have been verified, and
 * the writer (trace_writer.c) calls for each record it writes when it
 * keeps the recording in memory. */
#ifndef PTREV_REPLAY_TRACE_READER_INTERNAL_H
#define PTREV_REPLAY_TRACE_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ptrev/trace_file.h"

/* Appending a thread's PT to a recording being built in memory
 * (trace_append.c). The appender remembers capacities between calls. */
struct trace_pt_appender {
	size_t streams_cap;
	size_t *pt_caps;      /* per stream, parallel to td->streams */
	size_t last_stream;   /* the stream appended to last (the usual case) */
};
void trace_append_pt(struct trace_data *td, struct trace_pt_appender *a, pid_t tid,
		     const void *data, size_t n);
void trace_pt_appender_free(struct trace_pt_appender *a);

struct trace_reader_priv {
	/* capacities of the trace_data arrays */
	size_t meta_cap, mmaps_cap, munmaps_cap, code_cap;
	size_t syscalls_cap, signals_cap, rdtsc_cap, threads_cap, files_cap;
	size_t sched_cap, sigframes_cap, states_cap, gdb_writes_cap;
	struct trace_pt_appender pt; /* the threads' PT streams */
	/* heap blocks that trace_data points into (CODE bytes, SYSCALL
	 * payloads and their write tables, SIGFRAME bytes) */
	void **blocks;
	size_t nblocks, blocks_cap;
	/* the bytes of the last FILE copy: its block and that block's size */
	size_t file_block;
	uint64_t file_cap;
};

/* Decodes one verified record of a known type into td.
 * Returns 0, 1 if the type is unknown (the caller skips it), or -1 with
 * the reason the payload is malformed in why. */
int trace_parse_record(struct trace_data *td, uint32_t type,
		       const uint8_t *payload, size_t len, char *why, size_t whylen);
/* What trace_parse_record does with a PT payload, for a caller that holds
 * the thread id and the chunk apart (the writer: no copy of the chunk into
 * a record just to parse it back). 0, or -1 with why. */
int trace_parse_pt(struct trace_data *td, pid_t tid, const uint8_t *data, size_t len,
		   char *why, size_t whylen);

#endif
