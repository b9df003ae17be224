/* Inferior control with ptrace: one traced process and its threads.
 *
 * All-stop model, as gdbserver: the caller resumes some threads, waits for
 * one event, and the module then stops every other thread before returning
 * the event. Events other threads produced meanwhile are kept pending and
 * returned by later waits, so nothing is lost. Signals are host numbers here;
 * the server converts to gdb's numbering. Code that runs the threads with an
 * event loop of its own (the recorders) also uses ptrev/inferior_raw.h. */
#ifndef PTREV_INFERIOR_H
#define PTREV_INFERIOR_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

enum stop_kind {
	STOP_NONE = 0,
	STOP_SIGNAL,   /* a signal arrived (sig); not yet delivered */
	STOP_STEP,     /* a single-step finished (sig = SIGTRAP) */
	STOP_SWBREAK,  /* hit an inserted int3 (sig = SIGTRAP); PC rewound to it */
	STOP_HWBREAK,  /* hit a hardware execution breakpoint (sig = SIGTRAP) */
	STOP_WATCH,    /* a data watchpoint triggered (sig = SIGTRAP) */
	STOP_EXITED,   /* the whole process exited with exit_code */
	STOP_KILLED,   /* the whole process was killed by sig */
	STOP_FORK,     /* the thread forked child (held stopped, reported) */
	STOP_VFORK,    /* ... vforked it */
	STOP_VFORK_DONE, /* its vfork child has exec'd or exited */
	STOP_EXEC,     /* the process exec'd (reported); one thread left */
	STOP_NO_RESUMED, /* every resumed thread has exited; the others stay stopped */
};

struct stop_event {
	enum stop_kind kind;
	pid_t tid;            /* thread that stopped (the pid for exit/kill) */
	int sig;              /* host signal number */
	int exit_code;
	uint64_t watch_addr;  /* STOP_WATCH: address gdb asked to watch */
	int watch_type;       /* STOP_WATCH: 2 write, 3 read, 4 access */
	pid_t child;          /* STOP_FORK, STOP_VFORK: the new process */
};

struct inf_thread {
	pid_t tid;
	bool running;         /* resumed and not yet stopped */
	bool has_pending;     /* an event seen but not yet reported */
	struct stop_event pending;
	bool has_siginfo;     /* siginfo of the last signal stop */
	siginfo_t siginfo;
	bool stepping;        /* resumed with PTRACE_SINGLESTEP */
	int stop_expected;    /* we sent SIGSTOP and await it */
};

struct sw_breakpoint {
	uint64_t addr;
	uint8_t saved;        /* original byte under the int3 */
	int refs;
};

struct hw_slot {
	bool used;
	int type;             /* 1 exec, 2 write, 3 read, 4 access (Z numbering) */
	uint64_t addr;        /* aligned address programmed into DRn */
	int len;              /* 1, 2, 4 or 8 */
	uint64_t req_addr;    /* the address gdb asked for (reported in watch:) */
	int refs;
};

struct inferior {
	pid_t pid;            /* 0 when no process */
	bool exited;          /* the process is gone (exited or killed) */
	bool resumed_gone;    /* a resumed thread exited since the last resume */
	/* Wait statuses of its threads that another inferior's wait took
	 * (several processes traced by one thread: inferior_wait.c). */
	struct inf_stashed {
		pid_t tid;
		int status;
	} *stash;
	size_t nstash;
	int memfd;            /* /proc/PID/mem, -1 if not open */
	struct inf_thread *threads;
	size_t nthreads, cap_threads;
	struct sw_breakpoint *bps;
	size_t nbps, cap_bps;
	struct hw_slot hw[4];
	bool pass_signals[65];/* host signals delivered without stopping */
	bool attached;        /* attached to (inferior_attach), not launched */
	bool follow_forks;    /* forks traced: children cleaned and let go */
	bool vfork_lifted;    /* breakpoints out of memory shared with a
	                         vfork child, until the parent's vfork-done */
	bool report_forks;    /* forks and vforks are events for gdb: the */
	bool report_vforks;   /* child is held until detached (fork_child) */
	bool report_exec;     /* an exec is an event for gdb, else a SIGTRAP */
	pid_t fork_child;     /* a reported child not let go yet, 0 none */
	bool fork_child_vfork;/* ... and it was vforked */
	/* A vfork child kept as a process of its own: the parent whose memory
	 * it shares until it execs or exits; the int3s it had then are put
	 * back to their bytes in the parent's (inf_vfork_child_done). */
	pid_t vfork_parent;
	uint64_t dr7;
};

/* Launch path with argv/envp exactly as given, address-space randomisation
 * off, stopped at its first instruction (after execve, before ld.so runs).
 * stdin_fd/stdout_fd/stderr_fd: fds the child gets (-1 = inherit ours).
 * Returns 0, or -1 with a message in err (e.g. "./prog: No such file"). */
int inferior_launch(struct inferior *inf, const char *path, char *const argv[],
		    char *const envp[], int stdin_fd, int stdout_fd, int stderr_fd,
		    char *err, size_t errlen);
/* What a process inherits through exec beyond its signals, which a replay
 * gives it as recorded: resource limits (RLIMIT_* as the index), umask,
 * personality (randomisation off whatever it says). Each have_* false:
 * ptrev's own. A limit above ptrev's hard limit cannot be had and stays
 * ptrev's. */
struct inherited_limits {
	bool have_limit[16];
	unsigned long long limit_cur[16], limit_max[16];
	bool have_umask;
	unsigned umask;
	bool have_personality;
	unsigned long personality;
};

/* How inferior_launch_with starts the program. */
struct inferior_launch_opts {
	int stdin_fd, stdout_fd, stderr_fd; /* what it gets (-1: ours) */
	/* path and argv are a wrapper's command line (gdbserver's --wrapper)
	 * that ends by exec'ing the program: its first wrapper_execs execs
	 * run on, the program stops at its first instruction after the next. */
	unsigned wrapper_execs;
	/* The signal state it starts with (a replay: the recorded one; bit
	 * N-1 is signal N): these ignored, every other at its default, these
	 * blocked (not SIGTRAP: the exec's stop must come). Without it, the
	 * program gets ptrev's ignored signals but SIGPIPE and SIGINT, none
	 * blocked. */
	bool set_signals;
	uint64_t sig_ignored, sig_blocked;
	struct inherited_limits limits; /* a replay: the recorded ones */
	/* Its working directory (NULL: ours), and address-space
	 * randomisation left on (gdb's `set disable-randomization off`). */
	const char *cwd;
	bool randomize;
	/* Once path runs, it execs this (a replay: the recorded string, e.g.
	 * /proc/self/exe, which names the program only from inside it; path
	 * is the file it named), with argv and envp again. NULL: none. */
	const char *exec_again;
};
/* ptrev ignores SIGXFSZ, so that writing a recording past the file size
 * limit fails with EFBIG (reported, the program kept alive) rather than
 * killing it; a program ptrev starts gets the disposition ptrev was given,
 * noted here before ptrev changed it (ignored: true). */
void inferior_note_xfsz(bool ignored);
int inferior_launch_with(struct inferior *inf, const char *path, char *const argv[],
			 char *const envp[], const struct inferior_launch_opts *o, char *err,
			 size_t errlen);

/* Trace the running process pid (gdbserver's --attach): every thread
 * attached and stopped where it was, new ones followed. Nothing is
 * changed in it; if ptrev goes away the process goes on. 0, or -1 with
 * err (no such process, not permitted: ptrace_scope, another tracer). */
int inferior_attach(struct inferior *inf, pid_t pid, char *err, size_t errlen);

/* Trace the program's forks, vforks and execs (on), or not: a child gets
 * the original bytes under the breakpoints and is let go (or held, where
 * report_forks/report_vforks say gdb decides), so it does not die on one;
 * an exec leaves a fresh process (inferior_fork.c). The live target turns
 * it on (the sw recorder sets its own options and lets children go the
 * same way). 0, or -1. */
int inferior_follow_forks(struct inferior *inf, bool on);

/* Let the reported fork child go (gdb's D;CHILD). 0, or -1 when there is
 * none. */
int inferior_detach_fork_child(struct inferior *inf);
/* Read (write false) or write the held fork child's memory: gdb reads it
 * between the fork and the child's detach. Bytes done, or -1. */
ssize_t inferior_fork_child_mem(struct inferior *inf, uint64_t addr, void *buf, size_t len,
				bool write);
/* follow-fork-mode child: let the parent go (detached) and make the
 * reported child the process, with its one thread, stopped where the fork
 * left it. 0, or -1 when there is no child. */
int inferior_follow_fork_child(struct inferior *inf);
/* gdb keeps the reported child (detach-on-fork off, or a vfork child it
 * follows while the parent waits): child becomes a process of its own,
 * with its one thread stopped where the fork left it, the parent's
 * settings for forks and signals, and no breakpoints (its memory has none
 * of the parent's: gdb inserts its own); inf holds no child any more.
 * 0, or -1 when there is no child. */
int inferior_take_fork_child(struct inferior *inf, struct inferior *child);

/* Kill the process (SIGKILL) and reap everything. Safe to call twice. */
void inferior_kill(struct inferior *inf);
/* Remove our breakpoints and debug registers, detach every thread and let
 * the process run. */
int inferior_detach(struct inferior *inf);
/* Free memory; the process must be gone or detached. */
void inferior_destroy(struct inferior *inf);

struct inf_thread *inferior_thread(struct inferior *inf, pid_t tid);

/* Resume one stopped thread: step or continue, delivering sig (0 = none).
 * A thread with a pending event is not really resumed: the next wait
 * returns its event at once. */
int inferior_resume(struct inferior *inf, pid_t tid, bool step, int sig);
/* Wait for the next reportable event from any resumed thread, then stop all
 * threads. block=false returns 0 at once if there is none yet. Returns 1
 * with *ev filled, 0 for none, -1 on error (no process). Signals marked in
 * pass_signals are delivered and the thread resumed without reporting.
 * Thread creation and exit are handled inside (new threads start resumed
 * when their creator was resumed, debug registers are copied to them). */
int inferior_wait(struct inferior *inf, struct stop_event *ev, bool block);
/* gdb's Ctrl-C: send SIGINT to the process, as gdbserver does. The stop it
 * causes is returned by inferior_wait as a STOP_SIGNAL with SIGINT. */
int inferior_interrupt(struct inferior *inf);
/* Stop every running thread with a SIGSTOP of ptrev's own (never
 * reported); events met meanwhile stay pending for the next resume. */
void inferior_pause(struct inferior *inf);

/* Registers of a stopped thread. */
int inferior_get_regs(struct inferior *inf, pid_t tid, struct user_regs_struct *regs);
int inferior_set_regs(struct inferior *inf, pid_t tid, const struct user_regs_struct *regs);
/* NT_X86_XSTATE (XSAVE layout). *len in: buffer size, out: bytes filled. */
int inferior_get_xstate(struct inferior *inf, pid_t tid, void *buf, size_t *len);
int inferior_set_xstate(struct inferior *inf, pid_t tid, const void *buf, size_t len);

/* Memory: read returns bytes read (short at an unmapped page, -1 if none);
 * our int3 bytes are hidden (reads show the original code) and writes over
 * a breakpoint update its saved byte. */
ssize_t inferior_read_mem(struct inferior *inf, uint64_t addr, void *buf, size_t len);
ssize_t inferior_write_mem(struct inferior *inf, uint64_t addr, const void *buf, size_t len);

/* Software breakpoints (Z0/z0), reference counted by address. */
int inferior_insert_swbreak(struct inferior *inf, uint64_t addr);
int inferior_remove_swbreak(struct inferior *inf, uint64_t addr);
bool inferior_has_swbreak(const struct inferior *inf, uint64_t addr);

/* Hardware points through DR0-DR3/DR7 (Z1..Z4 numbering in type).
 * Returns 0, -1 when no debug register is free or the range cannot be
 * covered, -2 when the type is not supported (x86 has no read-only
 * watchpoints: type 3). Applied to every thread. */
int inferior_insert_hwpoint(struct inferior *inf, int type, uint64_t addr, int len);
int inferior_remove_hwpoint(struct inferior *inf, int type, uint64_t addr, int len);

#endif
