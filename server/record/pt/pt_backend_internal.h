/* Shared by the pt backend's recording files (pt_backend_record.c,
 * pt_backend_event.c). Not a public interface. */
#ifndef PTREV_PT_BACKEND_INTERNAL_H
#define PTREV_PT_BACKEND_INTERNAL_H

#include "ptrev/pt_backend.h"
#include "ptrev/sideband.h"

/* One thread's intel_pt event and its mapped rings. */
struct pt_tev {
	pid_t tid;
	int fd;
	void *base;          /* control page + data ring */
	size_t base_len;
	void *aux_base;      /* AUX area */
	size_t aux_len;
	struct pt_ring ring;
	bool started;        /* its first ptrace stop was seen and it was resumed */
};

struct pt_rec {
	struct inferior *inf;
	struct trace_writer *w;
	struct sideband *sb;  /* /proc/PID/maps snapshots and their code bytes */
	struct perf_event_attr attr;
	size_t aux_bytes, data_bytes;
	bool verbose;
	volatile sig_atomic_t *stop;
	struct pt_tev *tevs;
	size_t ntevs, cap_tevs;
	pid_t early[64];     /* new threads stopped before their creator's clone event */
	size_t nearly;
	uint64_t pt_bytes, truncated, partial, lost_records;
	bool write_failed;
	char *err;
	size_t errlen;
};

/* pt_backend_event.c */
/* Open, map and enable the event of tid. 0, or -1 with r->err. */
int pt_tev_open(struct pt_rec *r, pid_t tid);
struct pt_tev *pt_tev_find(struct pt_rec *r, pid_t tid);
/* Move everything new from tev's rings into the trace. 0, or -1 with r->err. */
int pt_tev_drain(struct pt_rec *r, struct pt_tev *t);
/* Final drain, unmap, close, forget. */
int pt_tev_close(struct pt_rec *r, pid_t tid);

/* Take the process's mappings again from /proc (sideband.h): at the
 * start (execve mapped things before any event existed), after an execve,
 * and when perf lost records. 0, or -1 with r->err. */
int pt_snapshot_maps(struct pt_rec *r, pid_t tid);

#endif
