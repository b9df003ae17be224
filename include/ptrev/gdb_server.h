/* The GDB remote-protocol server: one gdb connection, one inferior.
 * Packet dispatch lives here; each packet family is handled by a small
 * server/gdb_*.c file through the functions below. */
#ifndef PTREV_GDB_SERVER_H
#define PTREV_GDB_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrev/agent_expr.h"
#include "ptrev/amd64_regs.h"
#include "ptrev/inferior.h"
#include "ptrev/rsp.h"
#include "ptrev/strbuf.h"
#include "ptrev/vfile.h"

struct gdb_point;
struct gdb_history;
struct sw_engine;
struct replayer;
struct trace_writer;
struct gdb_hist_thread;

struct gdb_server {
	struct rsp_conn conn;
	struct inferior inf;
	bool have_inferior;        /* inf holds a live (or just-ended) process */
	struct vfile_state vfs;
	const struct amd64_layout *layout; /* from the first thread's XCR0 */

	/* What gdb told us in qSupported. */
	bool gdb_swbreak, gdb_hwbreak, gdb_multiprocess;

	pid_t g_tid;               /* Hg: thread for register/memory access */
	pid_t c_tid;               /* Hc: thread bs/bc move (0: the Hg one) */
	char exec_path[4096];      /* a saved recording's program for gdb */
	bool exec_path_is_temp;    /* ...a temporary copy, removed at the end */
	struct stop_event last;    /* last reported stop (for `?`) */
	bool session_over;         /* stop serving: detach, kill or exit seen */
	int wake_pipe[2];          /* SIGCHLD -> readable, to wake poll() */

	struct strbuf reply;       /* reply being built for the current packet */
	bool fuzzing;              /* no host side effects (vFile) */

	struct gdb_point *points;  /* what gdb has set with Z (gdb_breakpoints.c) */
	size_t npoints;

	/* The recorded history, when there is one (a saved recording being
	 * replayed, or a live recording): positions per thread. */
	struct gdb_history *hist;
	bool hist_saved_initial;   /* `?` reports the recording's end state */

	/* Recording while serving (gdb_record.c). */
	struct sw_engine *engine;  /* runs the program while recording */
	struct trace_writer *writer; /* -o FILE, or NULL (memory only) */
	bool record_requested;     /* recording asked for on the command line */
	bool record_no_copy;       /* --no-copy: binaries are not copied */
	bool at_first_insn;        /* the program has not run yet */
	bool btrace_on;            /* gdb's record btrace is active */
	uint64_t btrace_size;
	size_t btrace_read_len;    /* for qXfer:btrace:read:new */
	pid_t btrace_read_tid;
	bool monitor_then_ok;      /* qRcmd: an O packet was the reply; OK follows */

	/* Full state at past positions: re-execution (replay/replayer*.c). */
	struct replayer *replayer;
	bool replayer_failed;      /* could not be created: PC level only */
	pid_t replay_tid;          /* where the replayer stands (valid if */
	uint64_t replay_pos;       /*   replay_state is 1; -1: unavailable) */
	int replay_state;
};

/* Take over a launched inferior and serve gdb on (rfd, wfd) until the
 * session ends. Returns 0 on a normal end, 1 if the connection failed. */
int gdb_server_run(struct gdb_server *s, int rfd, int wfd);
void gdb_server_init(struct gdb_server *s);
void gdb_server_destroy(struct gdb_server *s);

/* Dispatch one packet payload; the reply is left in s->reply (packets that
 * need no reply set *no_reply). Exposed for the fuzz harness and unit tests. */
void gdb_server_dispatch(struct gdb_server *s, char *pkt, size_t len, bool *no_reply);
/* libFuzzer entry: one packet through the dispatcher with no inferior. */
void gdb_server_fuzz_one(const uint8_t *data, size_t n);

/* Packet families (server/gdb_*.c). Each appends its reply to s->reply and
 * returns false for a packet it does not know (the reply is then empty). */
bool gdb_query_packet(struct gdb_server *s, char *pkt, size_t len);   /* q, Q */
bool gdb_xfer_packet(struct gdb_server *s, char *pkt, size_t len);    /* qXfer */
bool gdb_regs_packet(struct gdb_server *s, char *pkt, size_t len);    /* g G p P */
bool gdb_mem_packet(struct gdb_server *s, char *pkt, size_t len);     /* m M x X */
bool gdb_break_packet(struct gdb_server *s, char *pkt, size_t len);   /* Z z */
/* Does a breakpoint stop at addr satisfy the conditions gdb gave with it
 * (true when it has none, or when one fails to evaluate)? */
bool gdb_breakpoint_condition_met(struct gdb_server *s, pid_t tid, uint64_t addr);
void gdb_points_clear(struct gdb_server *s);
/* Conditions gdb gave for the breakpoint at addr, evaluated against rf and
 * a memory reader (the live process, or a past position). */
bool gdb_breakpoint_has_condition(struct gdb_server *s, uint64_t addr);
bool gdb_conditions_hold(struct gdb_server *s, uint64_t addr, const struct amd64_regfile *rf,
			 long (*read_mem)(struct gdb_server *, uint64_t, void *, size_t));
/* Full registers at the current thread's past position (false if only the
 * PC level is known there). */
bool gdb_replay_regfile(struct gdb_server *s, struct amd64_regfile *rf);
/* Point i of gdb's list: an execution breakpoint (Z0/Z1)? its address. */
bool gdb_point_is_exec(const struct gdb_server *s, size_t i);
uint64_t gdb_point_addr(const struct gdb_server *s, size_t i);
int gdb_point_type(const struct gdb_server *s, size_t i);   /* Z type */
size_t gdb_point_len(const struct gdb_server *s, size_t i); /* watched bytes */
/* Create the replayer if it is not there yet; false if it cannot be. */
bool gdb_replay_ensure_replayer(struct gdb_server *s);

/* Reverse execution and replay (server/gdb_reverse.c, gdb_replay_state.c). */
/* bs / bc. */
void gdb_reverse_packet(struct gdb_server *s, const char *pkt);
/* Forward s/c through the history for thread tid (0: the current one);
 * all: the other threads run too (they may stop it). Returns false when
 * the program is at the live end: run for real. */
bool gdb_replay_resume(struct gdb_server *s, bool step, pid_t tid, bool all);
/* Does the current thread stand in the past (or in a saved recording)? */
bool gdb_replay_in_past(struct gdb_server *s);
struct gdb_hist_thread *gdb_replay_thread(struct gdb_server *s);
/* The stop reply for thread t standing in the history: the signal, the
 * reason ("swbreak", "replaylog:begin", "watch:ADDR", ... or NULL), rip. */
void gdb_history_stop_reply(struct gdb_server *s, struct gdb_hist_thread *t,
			    int hostsig, const char *reason);
/* Registers and memory at a past position: the PC, read-only memory. */
void gdb_replay_regs_packet(struct gdb_server *s, char *pkt, size_t len);
void gdb_replay_mem_packet(struct gdb_server *s, char *pkt, size_t len);
/* The stop reply for `?` in a saved recording. */
void gdb_replay_initial_stop(struct gdb_server *s);
/* Recording while serving (server/gdb_record.c). path NULL: in memory. */
int gdb_record_start(struct gdb_server *s, const char *path, char **prog_argv,
		     char *err, size_t errlen);
/* Finish the recording (END record, file closed) and drop the history. */
void gdb_record_stop(struct gdb_server *s, char *err, size_t errlen);
/* Index what the program did since the last stop. */
void gdb_record_after_stop(struct gdb_server *s);
/* Execution: through the recording engine when recording, else ptrace. */
int gdb_exec_resume(struct gdb_server *s, pid_t tid, bool step, int sig);
int gdb_exec_wait(struct gdb_server *s, struct stop_event *ev);
int gdb_exec_interrupt(struct gdb_server *s);
/* gdb's branch-trace packets: Qbtrace:*, and the qXfer objects. */
bool gdb_btrace_packet(struct gdb_server *s, char *pkt);
int gdb_btrace_xml(struct gdb_server *s, const char *annex, struct strbuf *obj);
int gdb_btrace_conf_xml(struct gdb_server *s, struct strbuf *obj);

/* qRcmd,HEX: monitor commands (server/gdb_monitor.c). */
bool gdb_monitor_packet(struct gdb_server *s, const char *hex);
void gdb_monitor_checkpoints(struct gdb_server *s, struct strbuf *out);

/* The siginfo recorded where the current thread stands. 0 or -errno. */
int gdb_recorded_siginfo(struct gdb_server *s, struct strbuf *out);
/* The program of a saved recording (absolute path). 0 or -errno. */
int gdb_recorded_program(struct gdb_server *s, struct strbuf *out);
/* Memory at the current thread's past position (full state when the
 * replayer can, else read-only memory). Bytes read, or -1. */
ssize_t gdb_replay_read_mem(struct gdb_server *s, uint64_t addr, void *buf, size_t len);
/* vFile:open of /proc/PID[/task/TID]/maps for a saved recording: gdb reads
 * the mappings (e.g. the vDSO's range) as from a live process; they come
 * from the recording. Returns false for any other path. */
bool gdb_replay_proc_open(struct gdb_server *s, char *pkt);
/* Drop the replayer (its processes are killed). */
void gdb_replay_free(struct gdb_server *s);
/* The register layout: the process's, or this machine's for a saved
 * recording. */
const struct amd64_layout *gdb_layout(struct gdb_server *s);

/* Resume per a vCont action list (or legacy c/s/C/S) and wait for the next
 * stop, leaving its stop reply in s->reply (server/gdb_resume.c). */
void gdb_resume_and_wait(struct gdb_server *s, const char *actions);
/* A 64-bit register value as the protocol sends it (8 bytes, little-endian
 * hex), and as an expedited "NN:value;" pair of a stop reply. */
void gdb_put_reg64(struct strbuf *out, uint64_t v);
void gdb_put_expedited(struct strbuf *out, int regnum, uint64_t v);
/* Append the stop reply for ev (T/W/X). */
void gdb_stop_reply(struct gdb_server *s, const struct stop_event *ev);

/* Thread ids as gdb writes them with multiprocess: "p<pid>.<tid>", also
 * "-1" (all), "0" (any), or a bare tid. Returns false if malformed;
 * *tid = -1 for all, 0 for any. */
bool gdb_parse_thread_id(const char *s, const char **end, pid_t *pid, pid_t *tid);
void gdb_format_thread_id(struct gdb_server *s, struct strbuf *out, pid_t tid);
/* The CPU a thread last ran on, or -1 (for core: in stop replies). */
int gdb_thread_core(pid_t pid, pid_t tid);
/* The threads gdb can see: the live process's, or a saved recording's.
 * *out is malloc'ed (free it); returns the count. */
size_t gdb_thread_ids(struct gdb_server *s, pid_t **out);
bool gdb_thread_exists(struct gdb_server *s, pid_t tid);
/* The qXfer:threads:read document. */
void gdb_threads_xml(struct gdb_server *s, struct strbuf *out);

/* Registers of a thread, read fresh (returns false if it cannot be read). */
bool gdb_read_regfile(struct gdb_server *s, pid_t tid, struct amd64_regfile *rf);

#endif
