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
#include "relaunch.h"

/* A data watch during a scan (set up by replayer_watch.c, kept up to date
 * by the run through replayer_watch_hooks.c). While active, every
 * access the process makes to [addr, addr+len) (a debug-register trap, or
 * a recorded syscall write the replay puts in place) opens an interval
 * (lo, ...] at the last known position; the next known position hi closes
 * it (rp_advance): the access's "position after" lies in (lo, hi]. */
struct rp_watch {
	uint64_t addr;
	size_t len;
	bool active;            /* debug registers armed in the scanned process */
	bool stop_at_first;     /* end the run once one interval is closed */
	bool pending;           /* an access seen, its interval not closed yet */
	uint64_t pending_lo;
	unsigned dr_mask;       /* DR6 bits of the debug registers in use */
	bool found;             /* an interval was closed */
	uint64_t lo, hi;        /* the first (stop_at_first) or the last one */
	bool stop;              /* the run should end now (stop_at_first) */
	uint8_t before[32];     /* the range before a single step (rp_watch_step_begin) */
	bool have_before;
};

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
	const struct trace_gdb_write **gw; /* gdb's changes, in position order */
	size_t ngw;

	struct relaunch start;          /* the recorded start state */
	/* A history that begins after the program's start (a tail: META
	 * history_from): position 0 is reached by replaying the event
	 * recording natively to that event (replayer_set_events). */
	size_t tail_from;
	size_t tail_run;     /* ...or a run of its order (history_from_run):
	                        a multi-threaded program's tail in which one
	                        thread lives */
	const struct trace_data *events;
	pid_t start_copy;    /* parked at position 0 (replayer_give_start), 0: none */
	/* Parked at given_pos[i] (replayer_give_checkpoints), until adopted. */
	pid_t given_pid[REPLAYER_MAX_CHECKPOINTS];
	uint64_t given_pos[REPLAYER_MAX_CHECKPOINTS];
	size_t ngiven;
	const char *base_how;           /* how the base came to be (monitor checkpoints) */
	bool vdso_hidden;               /* META vdso=hidden: hide it too */
	uint64_t vdso_first;            /* first vDSO call, UINT64_MAX: none */
	uint64_t vdso_searched;         /* history searched up to here */
	bool no_hw_bp;                  /* use int3 only (tests, benchmarks) */
	bool stepped_recording;         /* sw backend: TF was set throughout */
	bool unsupported;               /* every seek fails with why_all */
	char why_all[512];

	/* Processes. The base is the launched program at position 0; like
	 * every checkpoint it never runs. cur is the one shown. */
	struct rp_proc base;
	struct rp_proc cps[REPLAYER_MAX_CHECKPOINTS];
	size_t ncps;
	struct rp_proc cur;
	bool cur_valid;                 /* cur stands where a seek asked */
	bool have_state;                /* the last seek succeeded: cur shows it */
	uint64_t last_target;
	/* Validation ahead of the shown position: re-execution agreed with
	 * the recording at every recorded event up to validated_to; it
	 * disagreed at the first event after bad_from (UINT64_MAX: never). */
	uint64_t validated_to;
	uint64_t bad_from;
	char bad_why[1024];

	struct rp_watch *watch;         /* non-NULL during a watch scan */

	struct replayer_stats stats;
	char why[512];                  /* reason of the failure in progress */
};

/* The files below, each using only those listed before it (so that their
 * dependencies form no circle):
 *   replayer_watch_hooks.c  replayer_events.c  replayer_proc.c
 *   sys_replay.c (one syscall, shared with the event replay)  replayer_syscall.c
 *   replayer_run.c  checkpoint.c
 *   replayer_start.c  replayer_vdso.c  replayer.c  replayer_watch.c */

/* replayer_watch_hooks.c: what a run does for an active watch scan (no-ops
 * without one). */
/* p stopped with SIGTRAP: was it a data-watch trap? (then it is noted,
 * DR6 cleared, and the run just resumes) */
bool rp_watch_trap(struct replayer *r, struct rp_proc *p);
/* ...a SIGTRAP away from any breakpoint of the run's (the caller knows;
 * regs as p stands), which only a data watch's #DB can be where the VM
 * got DR6 wrong (inf_dr_lost_hit): noted the same. A program's own
 * SIGTRAP (int3, ICEBP, its TF, a kill) is none. */
bool rp_watch_lost_trap(struct replayer *r, struct rp_proc *p,
			const struct user_regs_struct *regs);
/* Around a single step: the range is read before it, and after it a
 * change of its bytes is an access even where DR6 lost the watch's bit
 * (a write watch; a read that the VM's DR6 lost stays unseen). */
void rp_watch_step_begin(struct replayer *r, struct rp_proc *p);
void rp_watch_step_end(struct replayer *r, struct rp_proc *p);
/* The recorded syscall s (at p->pos) wrote memory: does it touch the
 * watched range? */
void rp_watch_sys_writes(struct replayer *r, struct rp_proc *p, const struct trace_syscall *s);
/* p reached the known position `to`: close a pending interval. */
void rp_watch_known(struct replayer *r, uint64_t to);
/* The run should end early (the first access was found). */
bool rp_watch_stopped(const struct replayer *r);

/* replayer_events.c: the thread's recorded events by position. */
/* (Re)build the arrays from td (its arrays may have moved). 0, -1 no memory. */
int rp_index_events(struct replayer *r);
const struct trace_syscall *rp_next_sys(const struct replayer *r, uint64_t pos);
const struct trace_rdtsc *rp_next_tsc(const struct replayer *r, uint64_t pos);
/* The first recorded signal with a handler after pos. */
const struct trace_signal *rp_next_sig(const struct replayer *r, uint64_t pos);
/* Did gdb change the registers at pos (the PC there may be its)? */
bool rp_gdb_moves_pc(const struct replayer *r, uint64_t pos);
/* The position of the first change gdb made after pos (UINT64_MAX: none). */
uint64_t rp_next_gdb_write(const struct replayer *r, uint64_t pos);

/* replayer_proc.c: one replay process, and the failure message. */
int rp_fail(struct replayer *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int rp_open_mem(struct rp_proc *p);
void rp_kill(struct rp_proc *p);
int rp_get_regs(struct replayer *r, struct rp_proc *p, struct user_regs_struct *regs);
int rp_set_regs(struct replayer *r, struct rp_proc *p, const struct user_regs_struct *regs);
/* ptrace request req (signal sig), wait for the next stop into *st; a
 * process that ended is a failure. */
int rp_resume_wait(struct replayer *r, struct rp_proc *p, int req, int sig, int *st);
/* p now stands at the known position `to`. */
void rp_advance(struct replayer *r, struct rp_proc *p, uint64_t to);
/* p stands at position pos: make the changes gdb made there, in order. */
int rp_gdb_writes_at(struct replayer *r, struct rp_proc *p, uint64_t pos);
/* Does the history put instruction pos at ip? (what: for the message) */
int rp_check_ip(struct replayer *r, uint64_t pos, uint64_t ip, const char *what);


/* replayer_syscall.c: replaying the events a process meets. */
/* p at a syscall-entry stop that must be s: same address, number, args. */
int rp_check_entry(struct replayer *r, struct rp_proc *p, const struct trace_syscall *s,
		   struct user_regs_struct *regs);
/* p at the entry stop of s: check, emulate or run; ends at its exit stop
 * with the recorded outcome in place, at position s->pos + 1. */
int rp_syscall_entry(struct replayer *r, struct rp_proc *p, const struct trace_syscall *s);
/* p stopped with SIGSEGV: the trapped rdtsc at the next recorded rdtsc
 * position (before limit), or a divergence. */
int rp_rdtsc(struct replayer *r, struct rp_proc *p, uint64_t limit);

/* replayer_run.c: running a replay process forward. */
/* Run p forward to exactly position target (no signal recorded in
 * (p->pos, target] other than at target, which is delivered on arrival).
 * 0, or -1 with r->why. A watch scan with stop_at_first may end it
 * earlier, at the first known position after an access. */
int rp_run_to(struct replayer *r, struct rp_proc *p, uint64_t target);
/* Run p (a throwaway copy) on to the next recorded event after it, at
 * native speed, and check it there (the syscall's address, number and
 * arguments). *upto: the event's position. 0 when it agrees. */
int rp_validate_ahead(struct replayer *r, struct rp_proc *p, uint64_t *upto);

/* checkpoint.c: copies of processes, and which ones to keep. */
/* A stopped copy of p (fork injected, traced, stopped). 0 / -1 + r->why. */
int rp_fork(struct replayer *r, const struct rp_proc *p, struct rp_proc *child);
/* Keep p as a checkpoint (takes ownership), evicting one if full. */
void rp_checkpoint_add(struct replayer *r, struct rp_proc *p);
/* The checkpoint (or the base) with the largest position <= pos. */
const struct rp_proc *rp_checkpoint_best(const struct replayer *r, uint64_t pos);
bool rp_checkpoint_at(const struct replayer *r, uint64_t pos);

/* replayer_start.c: launching and the recorded start state. */
int rp_start_state(struct replayer *r);
int rp_launch_base(struct replayer *r);

/* replayer_vdso.c */
void rp_vdso_scan(struct replayer *r);

/* replayer.c: seeking, and what the watch scans share with it. */
/* Can position pos be shown at all (0, or -1 + r->why)? */
int rp_reachable(struct replayer *r, uint64_t pos);
/* The launch (base process) exists, or is made now. */
int rp_ensure_base(struct replayer *r);
/* A throwaway copy of p runs on to the next recorded event and must agree
 * there (see validate in replayer.c); p itself is untouched. */
int rp_validate_from(struct replayer *r, struct rp_proc *p);

#endif
