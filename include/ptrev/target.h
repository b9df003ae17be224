/* What executes under the protocol: the one interface the gdb layer
 * (server/gdb) calls for everything that runs the program or reads its
 * state, as gdbserver's process_stratum_target is for gdbserver and rr's
 * ReplayTimeline for rr's GdbServer. No packet handler knows which kind of
 * target it talks to.
 *
 * Three implementations (server/target/):
 *   live       the program under ptrace (target_live.c);
 *   recording  the live program while it is recorded (target_recording.c):
 *              it runs under the sw recorder at the present, and at a past
 *              position it answers as the history target over the recording
 *              being made;
 *   history    a position in a recording (target_history.c): a saved
 *              recording, or the past of a live one; the state there comes
 *              from the timeline (replay/timeline.h).
 * Targets stack as gdb's do: a recording target is pushed over the live one
 * (record btrace, --record, -o) and popped when the recording stops. An
 * operation a target leaves NULL is asked of the target beneath it; the
 * target_* functions below walk the stack, and give the documented answer
 * where no target has the operation.
 *
 * All-stop, as gdbserver: target_resume starts an execution, target_wait
 * reports its one stop (every thread is stopped then). Signals are host
 * numbers; the gdb layer converts them. */
#ifndef PTREV_TARGET_H
#define PTREV_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/amd64_regfile.h"
#include "ptrev/stop_set.h"
#include "ptrev/strbuf.h"

struct target;
struct trace_data;
struct timeline;
struct inferior_launch_opts;

enum target_stop_kind {
	TARGET_STOP_NONE = 0,
	TARGET_STOP_SIGNAL,     /* a signal arrived (sig), not yet delivered */
	TARGET_STOP_STEP,       /* a single step finished (sig SIGTRAP) */
	TARGET_STOP_SWBREAK,    /* a software breakpoint hit (sig SIGTRAP) */
	TARGET_STOP_HWBREAK,    /* a hardware execution breakpoint hit */
	TARGET_STOP_WATCH,      /* a data watchpoint triggered */
	TARGET_STOP_EXITED,     /* the process exited (exit_code) */
	TARGET_STOP_KILLED,     /* the process was killed by sig */
	TARGET_STOP_HISTORY_BEGIN, /* the start of the recorded history */
	TARGET_STOP_HISTORY_END,   /* its end: the live present, or the end
	                              of a saved recording */
	TARGET_STOP_FORK,       /* the thread forked child (gdb lets it go) */
	TARGET_STOP_VFORK,      /* ... vforked it */
	TARGET_STOP_VFORK_DONE, /* its vfork child exec'd or exited */
	TARGET_STOP_EXEC,       /* the process exec'd a new program */
	TARGET_STOP_NO_RESUMED, /* the resumed threads have all exited, the others
				 * stay stopped (reported as N) */
};

struct target_stop {
	enum target_stop_kind kind;
	pid_t tid;              /* the thread (the process id for exit/kill) */
	int sig;                /* host signal */
	int exit_code;
	uint64_t watch_addr;    /* WATCH: the address gdb asked to watch */
	int watch_type;         /* WATCH: 2 write, 3 read, 4 access */
	int core;               /* CPU the thread last ran on, -1 unknown */
	pid_t child;            /* FORK, VFORK: the new process */
	/* Registers known at the stop without asking (expedited in the stop
	 * reply): rbp, rsp and rip, or only rip, or none. */
	bool have_frame_regs, have_pc;
	uint64_t rbp, rsp, rip;
};

struct target_action {
	char kind;              /* 'c' continue or 's' step */
	int sig;                /* host signal to deliver, 0 none */
	pid_t tid;              /* -1: every thread not named by another action */
};

struct target_resume {
	bool reverse;           /* bs / bc: actions[0].kind says which */
	const struct target_action *actions;
	size_t nactions;
	pid_t current;          /* gdb's current thread (Hg) */
	/* The thread bs/bc move (Hc); 0 or -1: the current one, and the others
	 * move with it as they ran. */
	pid_t reverse_tid;
	/* What stops the execution. Owned by the caller; valid until the
	 * stop of this execution has been returned by target_wait. */
	const struct stop_set *stops;
};

/* target_resume's answers besides 0 (started). */
#define TARGET_REFUSED     (-1)  /* nothing that can run (gdb hears E01) */
#define TARGET_UNSUPPORTED (-2)  /* reverse execution without a history */

/* target_fetch_registers' answers. */
enum target_regs {
	TARGET_REGS_NONE = 0,   /* nothing known here (all unavailable) */
	TARGET_REGS_PC = 1,     /* only rf->gpr.rip is known */
	TARGET_REGS_FULL = 2,
	/* All but rcx and r11: the state before a syscall instruction, read
	 * from a process that has run it (it overwrote those two). */
	TARGET_REGS_BEFORE_SYSCALL = 3,
};

/* Is the PC among what a fetch_registers answer knows? */
static inline bool target_regs_pc_known(int known)
{
	return known == TARGET_REGS_PC || known == TARGET_REGS_FULL ||
	       known == TARGET_REGS_BEFORE_SYSCALL;
}

struct target_ops {
	const char *name;

	/* ---- the process and its threads ---- */
	pid_t (*pid)(struct target *t);
	/* Is there a process that can run (not gone)? */
	bool (*alive)(struct target *t);
	/* Was the process attached to rather than started (gdb detaches
	 * from it on quit instead of killing it)? */
	bool (*attached)(struct target *t);
	/* The threads that exist where the program stands; *ids malloc'ed. */
	size_t (*threads)(struct target *t, pid_t **ids);
	/* A live thread's name and last CPU ("" / -1 when unknown). */
	void (*thread_info)(struct target *t, pid_t tid, char *name, size_t namelen, int *core);

	/* ---- execution ---- */
	bool (*can_reverse)(struct target *t);
	bool (*can_record)(struct target *t);
	/* Report forks, vforks and execs to gdb (what gdb asked for): a
	 * child is then held until detach_fork_child. False where they are
	 * not reported (a child is let go, cleaned, by the target). */
	/* In: the events gdb asked for; out: those the target reports. */
	bool (*report_forks)(struct target *t, bool *fork, bool *vfork, bool *exec);
	/* The reported child not let go yet (0: none); let it go. */
	pid_t (*fork_child)(struct target *t);
	int (*detach_fork_child)(struct target *t);
	/* follow-fork-mode child: the parent let go, the child the program. */
	int (*follow_fork_child)(struct target *t);
	int (*resume)(struct target *t, const struct target_resume *r);
	/* 1 with *stop; 0: no stop yet (block false); -1: nothing to wait for. */
	int (*wait)(struct target *t, struct target_stop *stop, bool block);
	int (*interrupt)(struct target *t);
	/* Stop every thread where it is, with nothing to report: events met
	 * meanwhile stay pending for the next resume (non-stop mode answers
	 * gdb's packets on a program held so). 0, or -1 where the target
	 * cannot (the gdb layer interrupts it instead). */
	int (*pause)(struct target *t);
	/* The stop gdb sees when it connects ('?'): *last if there was one
	 * (kind != NONE) and the target keeps no stop of its own. -1: none. */
	int (*current_stop)(struct target *t, pid_t current, const struct target_stop *last,
			    struct target_stop *stop);
	/* Deliver these host signals (1..64) without stopping. */
	void (*pass_signals)(struct target *t, const bool pass[65]);

	/* ---- state where the program stands ---- */
	/* enum target_regs, or -1 when the thread cannot be read at all. */
	int (*fetch_registers)(struct target *t, pid_t tid, struct amd64_regfile *rf);
	int (*store_registers)(struct target *t, pid_t tid, const struct amd64_regfile *rf);
	/* Bytes read (short at an unmapped page), -1 for none. */
	ssize_t (*read_memory)(struct target *t, pid_t tid, uint64_t addr, void *buf, size_t len);
	ssize_t (*write_memory)(struct target *t, pid_t tid, uint64_t addr, const void *buf,
				size_t len);
	/* XCR0 of the register layout (0: unknown). */
	uint64_t (*xcr0)(struct target *t);
	/* Why the full state (every register, all memory) of thread tid where
	 * it stands cannot be shown: true with the reason in out; false when
	 * it can (a live program; a position the re-execution reaches). */
	bool (*state_unavailable)(struct target *t, pid_t tid, struct strbuf *out);
	/* Optional: what the last move could not do as gdb asked (a watchpoint
	 * it could not check on the way, so it went on without it): true with
	 * the reason in out, said once. */
	bool (*move_note)(struct target *t, struct strbuf *out);
	/* Optional: alive(ctx) is to be called every tenth of a second or so
	 * while the target works long inside one request (making an event
	 * recording's history: minutes), so that the protocol layer can tell
	 * gdb it is still at work (gdb gives up waiting for a monitor
	 * command's reply after `remotetimeout`, 2 s). It returns true when
	 * gdb asked to stop (its user's Ctrl-C) or went away: the target then
	 * ends the request where it stands, a move with a SIGINT stop. */
	void (*set_alive)(struct target *t, bool (*alive)(void *ctx), void *ctx);

	/* ---- breakpoints and watchpoints (Z numbering) ---- */
	/* 0, -1 refused, -2 unsupported type. */
	int (*insert_point)(struct target *t, int type, uint64_t addr, int len);
	int (*remove_point)(struct target *t, int type, uint64_t addr, int len);

	/* ---- objects gdb reads (0 or -errno) ---- */
	int (*auxv)(struct target *t, struct strbuf *out);
	int (*exec_file)(struct target *t, struct strbuf *out);
	int (*libraries_svr4)(struct target *t, pid_t tid, const char *annex, struct strbuf *out);
	int (*siginfo)(struct target *t, pid_t tid, struct strbuf *out);
	/* A file only this target can give (a saved recording's
	 * /proc/PID/maps): 0 with its contents, -ENOENT when the path is an
	 * ordinary file of the host. */
	int (*proc_file)(struct target *t, const char *path, struct strbuf *out);
	/* The process whose files vFile:setfs may name; 0: the host's own. */
	pid_t (*fs_pid)(struct target *t);

	/* ---- recording ---- */
	/* The PT recorded for thread tid so far (record btrace): 0, or -1
	 * when nothing is recorded. Valid until the next resume. */
	int (*btrace_pt)(struct target *t, pid_t tid, const uint8_t **pt, size_t *len);
	/* Branch tracing of thread tid starts here (Qbtrace:pt for it): the
	 * offset in btrace_pt's bytes where its trace from its next
	 * instruction begins. 0, or -1. */
	int (*btrace_mark)(struct target *t, pid_t tid, uint64_t *offset);
	/* gdb records with btrace (on: some thread has it), or no longer. */
	void (*btrace_active)(struct target *t, bool on);
	/* A monitor command of this target (when, save, checkpoints; current:
	 * gdb's current thread): true with the output in out, false for a
	 * command it does not know. */
	bool (*monitor)(struct target *t, pid_t current, const char *cmd, const char *arg,
			struct strbuf *out);

	/* ---- the end ---- */
	int (*detach)(struct target *t);
	void (*kill)(struct target *t);
	/* Free the target itself (not the ones beneath). */
	void (*destroy)(struct target *t);
};

struct target {
	const struct target_ops *ops;
	struct target *beneath;
};

/* The target in t's stack that does long work calls alive (set_alive). */
void target_set_alive(struct target *t, bool (*alive)(void *ctx), void *ctx);

/* ---- making targets ---- */
/* Launch path (argv, envp as given) as o says (ptrev/inferior.h: its
 * stdin/out/err, a wrapper that execs it, its directory, address-space
 * randomisation: off unless o->randomize), stopped at its first
 * instruction, as the live target. NULL with err. */
struct target *target_live_launch(const char *path, char *const argv[], char *const envp[],
				  const struct inferior_launch_opts *o, char *err, size_t errlen);
/* Attach to the running process pid (every thread stopped where it was),
 * as the live target; recording from there starts mid-run. NULL with err. */
struct target *target_live_attach(pid_t pid, char *err, size_t errlen);
/* The fork child held by the live program of the stack whose top is t
 * (target_fork_child), as a live target of its own: gdb keeps it
 * (detach-on-fork off), or follows a vfork child while the parent waits.
 * The stack then holds no child. It is not recorded. A forked child has
 * the parent's breakpoints and watchpoints (as the fork left its memory),
 * a vforked one (*vfork) none. NULL with err. */
struct target *target_live_take_fork_child(struct target *t, bool *vfork, char *err,
					  size_t errlen);
/* A saved recording as a target: tl (taking it over) over td (borrowed,
 * outliving the target). The program stands where the recording ended. */
struct target *target_history_new(struct timeline *tl, const struct trace_data *td,
				  char *err, size_t errlen);
/* An event recording whose history is not made yet (materialise.h): the
 * program at the end of the recording, every thread with full state; the
 * history is made when first needed. ev is borrowed. saved (a recording
 * read from a file): one whose replay meets a syscall no replay can
 * reproduce is served up to that syscall's entry (event_cut.h), the user
 * told at the first move. NULL with err. */
struct target *target_history_new_event(const struct trace_data *ev, bool saved, char *err,
					size_t errlen);

struct target_record_opts {
	const char *path;       /* -o FILE, or NULL: in memory only */
	const char *program;    /* the file execve was given, for META (NULL:
				   unknown, as for gdb's record btrace) */
	char **argv;            /* the program's argv, for META (may be NULL) */
	bool no_copy;           /* do not copy the mapped binaries */
	/* Hold the program before it ends (exit_group, the last thread's
	 * exit) with a stop, so that gdb can still go back from there, as
	 * with gdb's record full and rr; the next resume ends it. */
	bool stop_before_exit;
	/* "event": the event recorder (the program runs natively, the
	 * history is made when gdb goes back), with these STATE bounds (0:
	 * its defaults); NULL or "sw": the sw recorder. */
	const char *backend;
	unsigned signal_us, slice_us;
};
/* Record the live program of the stack whose top is t: push a recording
 * target over it and return the new top; t itself when t already records.
 * NULL with err ("no process to record", a file that cannot be written). */
struct target *target_record_start(struct target *t, const struct target_record_opts *o,
				   char *err, size_t errlen);
/* Stop the recording target t (the recording is finished: END written,
 * file closed), pop it and return the target beneath; t itself when t is
 * not a recording target. */
struct target *target_record_stop(struct target *t);

/* Free the whole stack (processes killed, recordings finished). */
void target_free(struct target *t);

/* ---- calling them (each walks the stack, see above) ---- */
pid_t target_pid(struct target *t);                                   /* 0 */
bool target_alive(struct target *t);                                  /* false */
bool target_attached(struct target *t);                               /* false */
bool target_report_forks(struct target *t, bool *fork, bool *vfork, bool *exec); /* false */
pid_t target_fork_child(struct target *t);                            /* 0 */
int target_detach_fork_child(struct target *t);                       /* -1 */
int target_follow_fork_child(struct target *t);                       /* -1 */
size_t target_threads(struct target *t, pid_t **ids);                 /* 0 */
bool target_thread_exists(struct target *t, pid_t tid);
void target_thread_info(struct target *t, pid_t tid, char *name, size_t namelen, int *core);
bool target_can_reverse(struct target *t);                            /* false */
bool target_can_record(struct target *t);                             /* false */
int target_resume(struct target *t, const struct target_resume *r);   /* REFUSED */
int target_wait(struct target *t, struct target_stop *stop, bool block); /* -1 */
int target_interrupt(struct target *t);                               /* -1 */
int target_pause(struct target *t);                                   /* -1 */
int target_current_stop(struct target *t, pid_t current, const struct target_stop *last,
			struct target_stop *stop);                   /* -1 */
void target_pass_signals(struct target *t, const bool pass[65]);
int target_fetch_registers(struct target *t, pid_t tid, struct amd64_regfile *rf); /* -1 */
int target_store_registers(struct target *t, pid_t tid, const struct amd64_regfile *rf);
ssize_t target_read_memory(struct target *t, pid_t tid, uint64_t addr, void *buf, size_t len);
ssize_t target_write_memory(struct target *t, pid_t tid, uint64_t addr, const void *buf,
			    size_t len);
uint64_t target_xcr0(struct target *t);                               /* 0 */
int target_insert_point(struct target *t, int type, uint64_t addr, int len);
int target_remove_point(struct target *t, int type, uint64_t addr, int len);
int target_auxv(struct target *t, struct strbuf *out);                /* -ESRCH */
int target_exec_file(struct target *t, struct strbuf *out);
int target_libraries_svr4(struct target *t, pid_t tid, const char *annex, struct strbuf *out);
int target_siginfo(struct target *t, pid_t tid, struct strbuf *out);  /* -EINVAL */
int target_proc_file(struct target *t, const char *path, struct strbuf *out); /* -ENOENT */
pid_t target_fs_pid(struct target *t);                                /* 0 */
int target_btrace_pt(struct target *t, pid_t tid, const uint8_t **pt, size_t *len);
int target_btrace_mark(struct target *t, pid_t tid, uint64_t *offset);
void target_btrace_active(struct target *t, bool on);
bool target_monitor(struct target *t, pid_t current, const char *cmd, const char *arg,
		    struct strbuf *out);
bool target_state_unavailable(struct target *t, pid_t tid, struct strbuf *out);
bool target_move_note(struct target *t, struct strbuf *out);
int target_detach(struct target *t);                                  /* -1 */
void target_kill(struct target *t);

#endif
