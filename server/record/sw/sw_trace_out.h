/* Where the sw recorder's records go: the .ptrev writer (if any) and, for
 * the engine, an in-memory struct trace_data kept exactly as the trace
 * reader would return it for the file written so far, so the history index
 * and the image builder work the same on a live and on a saved recording. */
#ifndef PTREV_SERVER_SW_TRACE_OUT_H
#define PTREV_SERVER_SW_TRACE_OUT_H

#include <stdbool.h>
#include <stddef.h>

#include "ptrev/trace_file.h"

struct sw_out {
	struct trace_writer *w;  /* NULL: memory only */
	bool keep;               /* mirror everything into td */
	struct trace_data td;
	/* capacities of td's arrays (td.priv stays NULL: never pass td to
	 * trace_data_free; sw_out_free releases it) */
	size_t mmaps_cap, munmaps_cap, code_cap, syscalls_cap;
	size_t signals_cap, rdtsc_cap, threads_cap, meta_cap, files_cap;
	size_t sched_cap, sigframes_cap;
	struct trace_pt_appender pt; /* the threads' PT streams */
};

/* Each returns 0, or -1 when the writer failed (memory failures abort, as
 * the reader does). */
int sw_out_meta(struct sw_out *o, const char *key, const char *value);
int sw_out_pt(struct sw_out *o, pid_t tid, const void *data, size_t len);
int sw_out_mmap(struct sw_out *o, const struct trace_mmap *m);
int sw_out_munmap(struct sw_out *o, const struct trace_munmap *m);
int sw_out_code(struct sw_out *o, const struct trace_code *c);
int sw_out_syscall(struct sw_out *o, const struct trace_syscall *s);
int sw_out_signal(struct sw_out *o, const struct trace_signal *s);
int sw_out_rdtsc(struct sw_out *o, const struct trace_rdtsc *r);
int sw_out_thread(struct sw_out *o, const struct trace_thread *t);
int sw_out_file(struct sw_out *o, const struct trace_file_copy *f);
/* Runs of the thread schedule, in order: as many SCHED records as it
 * takes (n may exceed TRACE_SCHED_MAX_RUNS), merged into td.sched as the
 * reader merges them. n == 0 writes nothing. */
int sw_out_sched(struct sw_out *o, const struct trace_sched_run *runs, size_t n);
/* A signal frame; td keeps its own copy of the bytes (the caller's buffer
 * may go away as soon as this returns). */
int sw_out_sigframe(struct sw_out *o, const struct trace_sigframe *f);
int sw_out_end(struct sw_out *o, const struct trace_end *e);
void sw_out_free(struct sw_out *o);

#endif
