/* The META records every recording starts with, whoever records: `ptrev
 * record` (server/cli) into its file, the server's live recording
 * (server/gdb) into the sw engine. Written by server/record/record_meta.c;
 * the keys are listed in docs/trace-format.md (META). */
#ifndef PTREV_RECORD_META_H
#define PTREV_RECORD_META_H

#include <sys/types.h>

#include "ptrev/trace_file.h"

/* Where META records go: put(ctx, key, value) writes one, 0 or -1 (a
 * trace writer, the live engine's sw_engine_meta). */
typedef int (*record_meta_fn)(void *ctx, const char *key, const char *value);

/* backend, program, arg (argv[0] included, args NULL-terminated), cwd,
 * pid, the cpu as cpu_vendor/cpu_family/cpu_model/cpu_stepping,
 * psb_period, ptrev_version and start_time (now, UTC). */
void record_write_meta_to(record_meta_fn put, void *ctx, const char *backend,
			  const char *prog, char **args, pid_t pid, unsigned psb_period);
/* The same into a trace writer. */
void record_write_meta(struct trace_writer *w, const char *backend, const char *prog,
		       char **args, pid_t pid, unsigned psb_period);

#endif
