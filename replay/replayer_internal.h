/* Shared between the replayer's files (replay/replayer*.c, checkpoint.c). */
#ifndef PTREV_REPLAYER_INTERNAL_H
#define PTREV_REPLAYER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "ptrev/history.h"
#include "ptrev/replayer.h"
#include "ptrev/trace_image.h"

/* One stopped process of ours: the replay process or a checkpoint. */
struct rp_proc {
	pid_t pid;      /* 0: none */
	int memfd;      /* /proc/PID/mem, read-write */
	uint64_t pos;   /* instructions completed */
};

struct replayer {
	const struct trace_data *td;
	pid_t tid;                      /* the recorded thread */
	struct trace_image img;
	struct history *h;
	size_t fed;                     /* PT bytes given to h */
	bool end_ip_known;
	uint64_t end_ip;                /* where the thread stood at the end */

	/* The thread's events in position order (pointers into td). */
	const struct trace_syscall **sys;
	size_t nsys;
	const struct trace_signal **sig;
	size_t nsig;
	const struct trace_rdtsc **tsc;
	size_t ntsc;
	size_t indexed_sys, indexed_sig, indexed_tsc; /* td counts indexed */

	/* Start state. */
	char *path, *cwd;
	char **argv, **envp;
	uint8_t at_random[16];
	bool have_at_random;
	uint8_t *auxv;
	size_t auxv_len;
	bool vdso_hidden;               /* META vdso=hidden: hide it too */
	uint64_t vdso_first;            /* first vDSO call, UINT64_MAX: none */
	uint64_t vdso_searched;         /* history searched up to here */
	bool no_hw_bp;                  /* use int3 only (tests, benchmarks) */
	bool stepped_recording;         /* sw backend: TF was set throughout */
	char warning[512];
	bool unsupported;               /* every seek fails with why_all */
	char why_all[512];

	/* Processes. The base is the launched program at position 0; like
	 * every checkpoint it never runs. cur is the one shown. */
	struct rp_proc base;
	struct rp_proc cps[REPLAYER_MAX_CHECKPOINTS];
	size_t ncps;
	struct rp_proc cur;
	bool cur_valid;                 /* cur stands where the last seek asked */
	uint64_t last_target;

	struct replayer_stats stats;
	char why[512];                  /* reason of the failure in progress */
};

/* replayer_start.c: launching and the recorded start state. */
int rp_start_state(struct replayer *r);
int rp_launch_base(struct replayer *r);
int rp_index_events(struct replayer *r);

/* replayer_vdso.c */
void rp_vdso_scan(struct replayer *r);

/* checkpoint.c: processes. */
/* A stopped copy of p (clone injected, traced, stopped). 0 / -1 + r->why. */
int rp_fork(struct replayer *r, const struct rp_proc *p, struct rp_proc *child);
void rp_kill(struct rp_proc *p);
/* Keep p as a checkpoint (takes ownership), evicting one if full. */
void rp_checkpoint_add(struct replayer *r, struct rp_proc *p);
/* The checkpoint (or the base) with the largest position <= pos. */
const struct rp_proc *rp_checkpoint_best(const struct replayer *r, uint64_t pos);
bool rp_checkpoint_at(const struct replayer *r, uint64_t pos);
int rp_open_mem(struct rp_proc *p);

/* replayer_run.c: running a replay process forward. */
/* Run p forward to exactly position target (no signal recorded in
 * (p->pos, target] other than at target, which is delivered on arrival).
 * 0, or -1 with r->why. */
int rp_run_to(struct replayer *r, struct rp_proc *p, uint64_t target);

/* Helpers */
int rp_fail(struct replayer *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int rp_wait(pid_t pid, int *status);

#endif
