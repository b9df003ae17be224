/* The GDB remote-protocol server: one gdb connection over one target
 * (target.h). Packet dispatch lives here; each packet family is handled
 * by a small server/gdb/gdb_*.c file through the functions below. The
 * handlers talk to the target only: whether the program runs live, is
 * recorded, or stands in a recording is the target's business. */
#ifndef PTREV_GDB_SERVER_H
#define PTREV_GDB_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrev/amd64_regs.h"
#include "ptrev/rsp.h"
#include "ptrev/strbuf.h"
#include "ptrev/target.h"
#include "ptrev/vfile.h"

struct gdb_point;

/* glibc's thread_db descriptors gdb told us of (gdb_tls.c). */
#define GDB_TLS_SYMBOLS 4

/* What gdb set for the programs it runs (gdb_run_env.c). */
struct gdb_run_env {
	char **vars;               /* the environment, when own */
	size_t nvars;
	bool own;                  /* vars set (else: ptrev's environment) */
	char *cwd;                 /* NULL: ptrev's directory */
	bool randomize;            /* gdb's `set disable-randomization off` */
};

/* What a launch is asked for: environment, directory, address-space
 * randomisation. */
struct gdb_run_settings {
	char *const *envp;
	const char *cwd;           /* NULL: ptrev's */
	bool randomize;
};

/* What the session keeps of one process besides the current one
 * (gdb_procs.c): the fields of struct gdb_server that are a process's. */
struct gdb_proc {
	struct target *target;
	struct gdb_point *points;
	size_t npoints;
	struct btrace_thread *btrace;
	size_t nbtrace;
	bool btrace_pushed;
	uint64_t tls_sym[GDB_TLS_SYMBOLS];
	pid_t g_tid;
	struct target_stop last;
	char *state_note;
};

struct gdb_server {
	struct rsp_conn conn;
	struct target *target;     /* the top of the target stack (owned) */

	/* What gdb told us in qSupported. */
	bool gdb_swbreak, gdb_hwbreak, gdb_multiprocess;
	bool gdb_no_resumed;   /* gdb takes N: no resumed thread left */
	bool reverse_offered;  /* qSupported said ReverseStep+ */
	bool fork_events, vfork_events, exec_events; /* agreed: reported (live) */

	pid_t g_tid;               /* Hg: thread for register/memory access */
	pid_t c_tid;               /* Hc: thread bs/bc move (0: the Hg one) */
	struct target_stop last;   /* last reported stop (for `?`) */
	bool session_over;         /* stop serving: detach, kill or exit seen */
	/* Extended mode (gdb_extended.c): programs started by vRun/R through
	 * launch (set by the command line; NULL: nothing can be run). */
	struct target *(*launch)(void *ctx, char *const argv[], const struct gdb_run_settings *rs,
				 char *err, size_t errlen);
	struct gdb_run_env run_env; /* what vRun and R start a program with */
	struct target *(*attach)(void *ctx, pid_t pid, char *err, size_t errlen); /* vAttach */
	void *launch_ctx;
	char **run_argv;           /* the last program started (R, empty vRun) */
	bool extended;             /* gdb sent '!': kill and exit end the
				    * program, not the session */
	bool multi;                /* --multi: the session may begin, and a
				    * connection close, without a program */
	bool launch_records;       /* what launch starts is recorded: reverse
				    * execution is offered before it runs */
	/* gdbserver's --disable-packet=: features turned off to test gdb's
	 * fallbacks (gdb_server_disable_packets). */
	bool no_vcont;             /* vCont? unanswered: gdb uses c/s and Hc */
	bool no_T;                 /* stop replies as S<sig> */
	bool no_Tthread;           /* T stop replies without thread: */
	bool no_qC, no_qfThreadInfo;
	bool keep_on_close;        /* a closed connection leaves the program
				    * stopped for the next one (serve
				    * --reconnect, gdbserver without --once) */
	int wake_pipe[2];          /* SIGCHLD -> readable, to wake poll() */
	const struct amd64_layout *layout; /* the target's, once asked */
	struct vfile_state vfs;

	struct strbuf reply;       /* reply being built for the current packet */
	/* The object of the last qXfer read (OBJECT:ANNEX, and its bytes):
	 * read on from an offset past 0 it is not built again, so a
	 * document read in pieces is one snapshot (the host's processes
	 * change between two pieces of `info os processes`), as gdbserver
	 * keeps it. */
	char *xfer_key;
	struct strbuf xfer_obj;
	bool fuzzing;              /* no host side effects (vFile, monitor) */
	const char *monitor_final; /* qRcmd: an O packet was the reply; this follows
				    * ("OK", or "E01" for an unknown command) */
	bool console_open;         /* answering a monitor command or a resume:
				    * console output (O packets) may come first */
	/* gdbserver's `monitor set debug` / `set remote-debug` /
	 * `set debug-format timestamp`: what the session loop logs to stderr. */
	bool debug;                /* each resume and the stop it ended in */
	bool remote_debug;         /* every packet, both ways */
	bool debug_timestamp;      /* each log line starts with the time */
	bool log_resumed;          /* the packet being answered set it going */
	uint64_t alive_sent_ms;    /* when gdb_server_alive last sent an O packet */
	char *state_note;          /* why the state is unavailable, as last told
				    * gdb's user at a stop (NULL: nothing told) */

	struct gdb_point *points;  /* what gdb has set with Z (gdb_breakpoints.c) */
	size_t npoints;

	/* gdb's record btrace (gdb_btrace.c): enabled thread by thread. */
	struct btrace_thread *btrace; /* the threads it is enabled for */
	size_t nbtrace;
	bool btrace_pushed;        /* it started the recording */
	uint64_t btrace_size;      /* the buffer size asked for, in bytes */
	/* Where glibc's descriptors for libthread_db lie (qSymbol answers;
	 * 0: not known), for qGetTLSAddr (gdb_tls.c). */
	uint64_t tls_sym[GDB_TLS_SYMBOLS];
	/* Non-stop mode (gdb_nonstop.c), NULL in all-stop. */
	struct gdb_nonstop *ns;
	/* The processes gdb debugs besides target's (gdb_procs.c): a fork
	 * child it kept (detach-on-fork off), a vfork's parent while it
	 * follows the child. Each stands stopped until gdb names it. */
	struct gdb_proc *procs;
	size_t nprocs;
};

struct btrace_thread {
	pid_t tid;
	uint64_t start;            /* its trace since Qbtrace:pt: from here */
	size_t read_len;           /* what qXfer:btrace:read last gave */
	bool read;                 /* ...once at least */
};

/* Serve gdb on (rfd, wfd) until the session ends; s->target must be set.
 * Returns 0 on a normal end (the program is gone), 1 if the connection
 * failed, GDB_SERVER_KEPT when the connection closed with keep_on_close
 * set and the program alive: it stands stopped, with what gdb enabled
 * (btrace, the recording), for gdb_server_run on the next connection. */
#define GDB_SERVER_KEPT 2
int gdb_server_run(struct gdb_server *s, int rfd, int wfd);
void gdb_server_init(struct gdb_server *s);
/* gdbserver's --disable-packet=LIST (vCont, T, Tthread, qC, qfThreadInfo,
 * threads: all but T): 0, or -1 naming what it does not know in err. */
int gdb_server_disable_packets(struct gdb_server *s, const char *list, char *err,
			       size_t errlen);
/* Frees everything, the target stack included. */
void gdb_server_destroy(struct gdb_server *s);

/* Dispatch one packet payload; the reply is left in s->reply (packets that
 * need no reply set *no_reply). Exposed for the fuzz harness and unit tests. */
void gdb_server_dispatch(struct gdb_server *s, char *pkt, size_t len, bool *no_reply);
/* libFuzzer entry: one packet through the dispatcher with no target. */
void gdb_server_fuzz_one(const uint8_t *data, size_t n);

/* Packet families (server/gdb/gdb_*.c). Each appends its reply to s->reply
 * and returns false for a packet it does not know (the reply is then
 * empty). */
bool gdb_query_packet(struct gdb_server *s, char *pkt, size_t len);   /* q, Q */

bool gdb_xfer_packet(struct gdb_server *s, char *pkt, size_t len);    /* qXfer */
void gdb_xfer_forget(struct gdb_server *s);  /* the qXfer snapshot dropped */
bool gdb_regs_packet(struct gdb_server *s, char *pkt, size_t len);    /* g G p P */
bool gdb_mem_packet(struct gdb_server *s, char *pkt, size_t len);     /* m M x X */
bool gdb_break_packet(struct gdb_server *s, char *pkt, size_t len);   /* Z z */
bool gdb_btrace_packet(struct gdb_server *s, char *pkt);             /* Qbtrace */
bool gdb_monitor_packet(struct gdb_server *s, const char *hex);      /* qRcmd */
/* qXfer:osdata (gdb_osdata.c): annex "" (the types) or "processes";
 * 0, or -ENOENT for another. */
int gdb_osdata_xml(const char *annex, struct strbuf *obj);
bool gdb_extended_packet(struct gdb_server *s, char *pkt, bool *no_reply); /* ! R vRun */
/* QEnvironmentHexEncoded, QEnvironmentUnset, QEnvironmentReset,
 * QSetWorkingDir, QDisableRandomization (gdb_run_env.c). */
bool gdb_run_env_packet(struct gdb_server *s, const char *pkt);
/* The settings the next program gdb runs gets (valid until the next
 * packet of those). */
void gdb_run_env_settings(const struct gdb_server *s, struct gdb_run_settings *rs);
void gdb_run_env_free(struct gdb_server *s);
/* Extended mode: kill the program (a recording is saved) and forget it;
 * the session waits for vRun. */
void gdb_extended_end_program(struct gdb_server *s);
void gdb_extended_destroy(struct gdb_server *s);

/* The program R restarts and an empty vRun runs (argv is copied). */
void gdb_extended_remember(struct gdb_server *s, char *const argv[]);

/* The session log of `monitor set debug` / `set remote-debug`
 * (gdb_debug_log.c): each packet as received, each reply as sent. */
void gdb_debug_log_received(struct gdb_server *s, const char *pkt, size_t len);
void gdb_debug_log_sent(struct gdb_server *s, const char *pkt, size_t len);

/* gdb's points as the target's stop set: conditions are evaluated here
 * (agent expressions) on the state the target shows at a hit. Valid until
 * the next Z/z packet. */
void gdb_points_stop_set(struct gdb_server *s, struct stop_set *set, struct stop_point **storage);
void gdb_points_clear(struct gdb_server *s);
/* s's breakpoints and watchpoints, without their conditions, in *out
 * (malloc'ed): what a fork leaves in the child (the target copies its
 * int3s and debug registers). 0, or -1. */
int gdb_points_copy(const struct gdb_server *s, struct gdb_point **out, size_t *nout);

/* Resume per a vCont action list (or legacy c/s/C/S), or backwards (bs,
 * bc), and wait for the next stop, leaving its stop reply in s->reply
 * (server/gdb/gdb_resume.c). */
void gdb_resume_and_wait(struct gdb_server *s, const char *actions);
/* ";ACTION[:TID]..." of vCont into acts (at most max): their number, or
 * <= 0 when malformed or naming another process. stop_ok: t (stop) is
 * an action too (non-stop mode). */
int gdb_parse_vcont(struct gdb_server *s, const char *spec, struct target_action *acts, int max,
		    bool stop_ok);
/* Non-stop mode (gdb_nonstop.c). gdb_nonstop_packet handles QNonStop
 * always and, in non-stop mode, '?', vStopped, vCtrlC, vCont and bs/bc
 * (false: another packet, for the dispatcher). Any other packet is
 * answered between gdb_nonstop_hold (every thread stopped) and
 * gdb_nonstop_release (the threads gdb knows as running resumed).
 * gdb_nonstop_collect takes the target's stops while threads run and
 * sends gdb the notification of the first. The last two return -1 when
 * the connection failed. */
bool gdb_nonstop_packet(struct gdb_server *s, const char *pkt);
bool gdb_nonstop_running(const struct gdb_server *s);
void gdb_nonstop_hold(struct gdb_server *s);
int gdb_nonstop_release(struct gdb_server *s);
int gdb_nonstop_collect(struct gdb_server *s);
/* Ctrl-C or vCtrlC while threads run: the program gets a SIGINT, whose
 * stop gdb hears of. */
void gdb_nonstop_interrupt(struct gdb_server *s);
void gdb_nonstop_free(struct gdb_server *s);
/* Thread-local variables (gdb_tls.c): the qSymbol exchange that learns
 * where glibc's thread_db descriptors are, qGetTLSAddr, and forgetting
 * them with the program. */
void gdb_tls_symbol_packet(struct gdb_server *s, const char *pkt);
void gdb_tls_address_packet(struct gdb_server *s, const char *pkt);
void gdb_tls_forget(struct gdb_server *s);
/* Wait up to 100 ms for gdb's side of the connection or the program's
 * SIGCHLD (gdb_resume.c): 1 when something from gdb can be read, 0
 * when not, -1 when polling fails. */
int gdb_poll_connection(struct gdb_server *s);
/* The stop to report where nothing is left to wait for: the program was
 * killed. */
void gdb_stop_program_gone(struct gdb_server *s, struct target_stop *stop);
/* After the program's exec: gdb's points and the thread_db descriptors
 * belonged to the old one. */
void gdb_after_exec(struct gdb_server *s);
void gdb_reverse_packet(struct gdb_server *s, const char *pkt);
/* Append the stop reply for a stop (T/W/X). */
void gdb_stop_reply(struct gdb_server *s, const struct target_stop *stop);
/* The stop of an execution of the current process, reported to gdb (the
 * stop reply, what gdb's user is told on the console, the process dropped
 * where it ended). */
void gdb_report_stop(struct gdb_server *s, const struct target_stop *stop);
/* On ptrev's stderr, where the program's end is reported to gdb over
 * TCP, what gdbserver says there: "Child exited with status N", or
 * "Child terminated with signal = 0xN (SIGNAME)". Nothing for other
 * stops, nor over stdio, where gdb's terminal shows its own words (as
 * gdbserver does). */
void gdb_tell_exit(const struct gdb_server *s, const struct target_stop *stop);
/* A 64-bit register value as the protocol sends it (8 bytes, little-endian
 * hex), and as an expedited "NN:value;" pair of a stop reply. */
void gdb_put_reg64(struct strbuf *out, uint64_t v);
void gdb_put_expedited(struct strbuf *out, int regnum, uint64_t v);

/* The register layout (target description) of the target. */
const struct amd64_layout *gdb_layout(struct gdb_server *s);

/* qXfer objects built here: threads, btrace and btrace-conf. */
void gdb_threads_xml(struct gdb_server *s, struct strbuf *out);
int gdb_btrace_xml(struct gdb_server *s, const char *annex, struct strbuf *obj);
int gdb_btrace_conf_xml(struct gdb_server *s, struct strbuf *obj);

/* Thread ids as gdb writes them with multiprocess: "p<pid>.<tid>", also
 * "-1" (all), "0" (any), or a bare tid. Returns false if malformed;
 * *tid = -1 for all, 0 for any. */
bool gdb_parse_thread_id(const char *s, const char **end, pid_t *pid, pid_t *tid);
void gdb_format_thread_id(struct gdb_server *s, struct strbuf *out, pid_t tid);
/* The same for a thread of process pid (not always the current one). */
void gdb_format_thread_id_in(const struct gdb_server *s, struct strbuf *out, pid_t pid, pid_t tid);

/* ---- several processes (gdb_procs.c) ---- */
/* Before a resume: a fork child the target holds, which gdb has not let
 * go, becomes a process of gdb's own (it stays stopped). */
void gdb_procs_keep_child(struct gdb_server *s);
/* Make process pid the current one (target and its fields); true where it
 * is the current one already or pid <= 0, false where no process has it. */
bool gdb_procs_select(struct gdb_server *s, pid_t pid);
/* The current process has ended, or was let go or killed: true with
 * another one current (the ended one's target freed), false where none
 * is left (the current one stays, as before). */
bool gdb_procs_drop_current(struct gdb_server *s);
/* Every other process killed (recordings finished) and forgotten. */
void gdb_procs_free(struct gdb_server *s);
/* What belonged to a program that is gone (or was let go): gdb's points,
 * its threads' branch tracing, the threads gdb had selected. */
void gdb_forget_program(struct gdb_server *s);
/* Target t (a new program, a fork child kept) reports the forks, vforks
 * and execs gdb asked for in qSupported. */
void gdb_report_forks_of(const struct gdb_server *s, struct target *t);
/* Process i's threads (0: the current one's) in *ids (malloc'ed), its
 * pid and target; false past the last (gdb_threads.c). */
bool gdb_procs_threads(struct gdb_server *s, size_t i, pid_t *pid, struct target **t,
		       pid_t **ids, size_t *n);

#endif
