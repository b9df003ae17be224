/* The session loop and the top-level packet dispatch. */
#include "ptrev/gdb_server.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ptrev/hex.h"

void gdb_server_init(struct gdb_server *s)
{
	memset(s, 0, sizeof *s);
	vfile_init(&s->vfs);
	strbuf_init(&s->reply);
	s->wake_pipe[0] = s->wake_pipe[1] = -1;
}

int gdb_server_disable_packets(struct gdb_server *s, const char *list, char *err,
			       size_t errlen)
{
	char copy[256];
	snprintf(copy, sizeof copy, "%s", list);
	for (char *save, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "vCont") == 0) {
			s->no_vcont = true;
		} else if (strcmp(tok, "T") == 0) {
			s->no_T = true;
		} else if (strcmp(tok, "Tthread") == 0) {
			s->no_Tthread = true;
		} else if (strcmp(tok, "qC") == 0) {
			s->no_qC = true;
		} else if (strcmp(tok, "qfThreadInfo") == 0) {
			s->no_qfThreadInfo = true;
		} else if (strcmp(tok, "threads") == 0) {
			s->no_vcont = s->no_Tthread = s->no_qC = s->no_qfThreadInfo = true;
		} else {
			snprintf(err, errlen, "--disable-packet: '%s' is none of vCont, T, Tthread, "
				 "qC, qfThreadInfo, threads", tok);
			return -1;
		}
	}
	return 0;
}

void gdb_server_destroy(struct gdb_server *s)
{
	gdb_extended_destroy(s);
	gdb_nonstop_free(s);
	gdb_procs_free(s);
	target_free(s->target);
	s->target = NULL;
	vfile_close_all(&s->vfs);
	gdb_forget_program(s);
	strbuf_free(&s->reply);
	gdb_xfer_forget(s);
	rsp_conn_destroy(&s->conn);
	for (int i = 0; i < 2; i++)
		if (s->wake_pipe[i] >= 0)
			close(s->wake_pipe[i]);
}

/* D and D;PID: let the program go (a recording ends where gdb leaves).
 * In extended mode the session then waits for the next program. D;CHILD
 * lets a reported fork child go (follow-fork-mode parent). */
static void handle_detach(struct gdb_server *s, const char *arg)
{
	pid_t pid = *arg == ';' ? (pid_t)strtol(arg + 1, NULL, 16) : 0;
	pid_t child = target_fork_child(s->target);
	if (pid && !(child && pid == child) && s->nprocs) {
		/* One of several processes (gdb_procs.c): it goes, the
		 * others stay (gdb lets a vfork's parent go once the child
		 * it follows has exec'd). */
		if (!gdb_procs_select(s, pid)) {
			strbuf_puts(&s->reply, "E01");
			return;
		}
		if (target_can_reverse(s->target))
			fprintf(stderr, "ptrev: the recording of process %d ends here, whole: gdb "
				"lets it go\n", (int)pid);
		fprintf(stderr, "Detaching from process %d\n", (int)pid);
		fflush(stderr);
		if (target_detach(s->target) != 0) {
			strbuf_puts(&s->reply, "E01");
			return;
		}
		gdb_procs_drop_current(s);
		strbuf_puts(&s->reply, "OK");
		return;
	}
	if (*arg == ';' && child && pid == child) {
		strbuf_puts(&s->reply, target_detach_fork_child(s->target) == 0 ? "OK" : "E01");
		if (s->g_tid == child)
			s->g_tid = target_pid(s->target);
		return;
	}
	if (child) {
		/* follow-fork-mode child: gdb lets the parent go; the child is
		 * the program now, with none of the parent's breakpoints (gdb
		 * inserts them again) nor branch tracing. A recording of the
		 * parent ends here, whole (its file written): the child is
		 * not recorded. */
		pid_t parent = target_pid(s->target);
		struct target *live = target_record_stop(s->target);
		if (live != s->target) {
			fprintf(stderr, "ptrev: the recording of process %d ends at its fork: gdb "
				"follows the child, %d, which is not recorded\n", (int)parent,
				(int)child);
			s->target = live;
			s->btrace_pushed = false;
		}
		if (target_follow_fork_child(s->target) != 0) {
			strbuf_puts(&s->reply, "E01");
			return;
		}
		gdb_forget_program(s);
		s->g_tid = child;
		memset(&s->last, 0, sizeof s->last);
		strbuf_puts(&s->reply, "OK");
		return;
	}
	/* gdbserver's words, on its stderr, as the program goes. */
	fprintf(stderr, "Detaching from process %d\n", (int)target_pid(s->target));
	fflush(stderr);
	if (target_detach(s->target) != 0) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	strbuf_puts(&s->reply, "OK");
	if (s->extended)
		gdb_extended_end_program(s);
	else
		s->session_over = true;
}

/* k, vKill;PID. With several processes (or a fork child held), vKill
 * kills the one it names and the others stay; k kills them all. */
static bool handle_kill(struct gdb_server *s, pid_t pid)
{
	if (pid > 0 && s->target && (s->nprocs || pid != target_pid(s->target))) {
		/* One of several, or the fork child a process holds (gdb
		 * kills it before its parent). */
		if (!gdb_procs_select(s, pid))
			return false;
		target_kill(s->target);
		gdb_procs_drop_current(s);
		return true;
	}
	if (pid <= 0)
		gdb_procs_free(s);
	if (s->extended) {
		gdb_extended_end_program(s);
		return true;
	}
	target_kill(s->target);
	s->session_over = true;
	return true;
}

/* The target of the process gdb names by pid (0 or -1: any; then the one
 * with thread tid), or NULL. */
static struct target *thread_target(struct gdb_server *s, pid_t pid, pid_t tid)
{
	pid_t p, *ids;
	size_t n;
	struct target *t;
	for (size_t k = 0; gdb_procs_threads(s, k, &p, &t, &ids, &n); k++) {
		bool has = false;
		for (size_t i = 0; i < n && pid <= 0 && !has; i++)
			has = ids[i] == tid;
		free(ids);
		if (pid > 0 ? p == pid : has)
			return t;
	}
	return NULL;
}

/* T<thread-id>: is the thread alive? */
static void handle_thread_alive(struct gdb_server *s, const char *arg)
{
	pid_t pid, tid;
	const char *end;
	struct target *t = NULL;
	if (gdb_parse_thread_id(arg, &end, &pid, &tid) && *end == '\0' && tid > 0)
		t = thread_target(s, pid, tid);
	if (t && target_thread_exists(t, tid))
		strbuf_puts(&s->reply, "OK");
	else
		strbuf_puts(&s->reply, "E01");
}

/* H<op><thread-id>: select the thread for g/G/m/M (op g), or the one bs/bc
 * move (op c; vCont names threads itself). */
static void handle_set_thread(struct gdb_server *s, const char *arg)
{
	pid_t pid, tid;
	const char *end;
	char op = arg[0];
	if ((op != 'g' && op != 'c') || (!s->target && !s->fuzzing) ||
	    !gdb_parse_thread_id(arg + 1, &end, &pid, &tid) || *end != '\0') {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	pid_t child = target_fork_child(s->target);
	if (child && pid == child) {
		/* gdb turns to the fork child: a process of its own from now
		 * on, with the parent's breakpoints as a fork leaves them
		 * (gdb takes them out, or goes on with them: detach-on-fork
		 * off). Where it cannot be (non-stop mode), it stays held. */
		gdb_procs_keep_child(s);
		if (!target_fork_child(s->target))
			child = 0;
	}
	if (pid > 0 && !(child && pid == child) && !gdb_procs_select(s, pid)) {
		strbuf_puts(&s->reply, "E01"); /* no such process */
		return;
	}
	if (op == 'c')
		s->c_tid = tid > 0 && target_thread_exists(s->target, tid) ? tid : 0;
	if (op == 'g' && child && (pid == child || tid == child)) {
		/* The fork child gdb was told of: gdb takes its breakpoints
		 * out (already out: z is a no-op there) before it detaches it. */
		s->g_tid = child;
	} else if (op == 'g') {
		if (tid > 0) {
			if (!target_thread_exists(s->target, tid)) {
				strbuf_puts(&s->reply, "E01");
				return;
			}
			s->g_tid = tid;
		} else if (!target_thread_exists(s->target, s->g_tid)) {
			pid_t *ids;
			if (target_threads(s->target, &ids) > 0)
				s->g_tid = ids[0];
			free(ids);
		}
	}
	strbuf_puts(&s->reply, "OK");
}

/* vFile: host I/O, in the program's file system. A file only the target
 * can give (a saved recording's /proc/PID/maps, the recording's copy of a
 * binary rebuilt or deleted since) is written to a temporary
 * file that is opened the ordinary way, then unlinked: the open file stays
 * readable. */
static void handle_vfile(struct gdb_server *s, char *pkt, size_t len)
{
	/* The fuzzer must not open or unlink real files. */
	if (s->fuzzing)
		return;
	if (strncmp(pkt, "vFile:setfs:", 12) == 0 && target_fs_pid(s->target) == 0) {
		/* No process: its files are ours (the recorded paths, checked
		 * by build-id). */
		s->vfs.fs_pid = 0;
		strbuf_puts(&s->reply, "F0");
		return;
	}
	if (strncmp(pkt, "vFile:open:", 11) == 0) {
		char *hex = pkt + 11, *comma = strchr(hex, ',');
		char path[257];
		size_t n = comma ? (size_t)(comma - hex) / 2 : 0;
		struct strbuf contents = STRBUF_INIT;
		if (comma && (comma - hex) % 2 == 0 && n < sizeof path &&
		    hex_decode(hex, n, (uint8_t *)path) && (path[n] = '\0', 1) &&
		    target_proc_file(s->target, path, &contents) == 0) {
			char tmpl[] = "/tmp/ptrev-proc-XXXXXX";
			int fd = mkstemp(tmpl);
			bool written = fd >= 0 && write(fd, contents.data ? contents.data : "",
							contents.len) == (ssize_t)contents.len;
			if (fd >= 0)
				close(fd);
			struct strbuf rewritten = STRBUF_INIT;
			strbuf_puts(&rewritten, "vFile:open:");
			strbuf_hex(&rewritten, tmpl, strlen(tmpl));
			strbuf_puts(&rewritten, comma);
			if (!written || !vfile_handle(&s->vfs, rewritten.data, rewritten.len, &s->reply))
				strbuf_puts(&s->reply, "F-1,2");
			if (fd >= 0)
				unlink(tmpl);
			strbuf_free(&rewritten);
			strbuf_free(&contents);
			return;
		}
		strbuf_free(&contents);
	}
	if (!vfile_handle(&s->vfs, pkt, len, &s->reply))
		strbuf_reset(&s->reply);
}

static void dispatch(struct gdb_server *s, char *pkt, size_t len, bool *no_reply);

void gdb_server_dispatch(struct gdb_server *s, char *pkt, size_t len, bool *no_reply)
{
	strbuf_reset(&s->reply);
	*no_reply = false;
	if (len == 0 || (!s->fuzzing && gdb_nonstop_packet(s, pkt)))
		return;
	/* Non-stop mode: answered with every thread stopped. */
	gdb_nonstop_hold(s);
	dispatch(s, pkt, len, no_reply);
}

static void dispatch(struct gdb_server *s, char *pkt, size_t len, bool *no_reply)
{
	switch (pkt[0]) {
	case '?':
		if (target_current_stop(s->target, s->g_tid, &s->last, &s->last) == 0) {
			if (s->last.kind != TARGET_STOP_EXITED && s->last.kind != TARGET_STOP_KILLED)
				s->g_tid = s->last.tid;
			gdb_stop_reply(s, &s->last);
		} else {
			strbuf_puts(&s->reply, "W00");
		}
		return;
	case 'q':
	case 'Q':
		gdb_query_packet(s, pkt, len);
		return;
	case 'g': case 'G': case 'p': case 'P':
		gdb_regs_packet(s, pkt, len);
		return;
	case 'm': case 'M': case 'x': case 'X':
		gdb_mem_packet(s, pkt, len);
		return;
	case 'b':
		gdb_reverse_packet(s, pkt);
		return;
	case 'Z': case 'z':
		gdb_break_packet(s, pkt, len);
		return;
	case 'H':
		handle_set_thread(s, pkt + 1);
		return;
	case 'T':
		handle_thread_alive(s, pkt + 1);
		return;
	case 'D':
		handle_detach(s, pkt + 1);
		return;
	case 'k':
		/* gdb expects no reply to k. */
		handle_kill(s, 0);
		*no_reply = true;
		return;
	case 'c': case 'C': case 's': case 'S':
		gdb_resume_and_wait(s, pkt);
		return;
	case '!': case 'R':
		gdb_extended_packet(s, pkt, no_reply);
		return;
	case 'v':
		if (strncmp(pkt, "vRun;", 5) == 0 || strncmp(pkt, "vAttach;", 8) == 0) {
			gdb_extended_packet(s, pkt, no_reply);
		} else if (strcmp(pkt, "vCont?") == 0) {
			strbuf_puts(&s->reply, "vCont;c;C;s;S;t");
		} else if (strncmp(pkt, "vCont;", 6) == 0) {
			gdb_resume_and_wait(s, pkt + 5);
		} else if (strncmp(pkt, "vFile:", 6) == 0) {
			handle_vfile(s, pkt, len);
		} else if (strncmp(pkt, "vKill", 5) == 0) {
			strbuf_puts(&s->reply, handle_kill(s, pkt[5] == ';' ? (pid_t)strtol(pkt + 6,
							NULL, 16) : 0) ? "OK" : "E01");
		}
		/* vMustReplyEmpty and anything unknown: empty reply. */
		return;
	default:
		return; /* unknown: empty reply, as the protocol asks */
	}
}

/* Write end of the self-pipe that SIGCHLD makes readable. */
static volatile int wake_fd = -1;

static void on_sigchld(int sig)
{
	(void)sig;
	/* Only wakes the poll loop; reaping happens in inferior_wait. */
	int saved = errno;
	if (wake_fd >= 0) {
		ssize_t r = write(wake_fd, "c", 1);
		(void)r;
	}
	errno = saved;
}

/* What one connection set up and the next must not inherit: gdb
 * negotiates features again and inserts its breakpoints again. What it
 * enabled in the target (btrace, a recording) and the monitor settings
 * stay, as in gdbserver. */
static void new_connection(struct gdb_server *s, int rfd, int wfd)
{
	rsp_conn_destroy(&s->conn);
	rsp_conn_init(&s->conn, rfd, wfd);
	/* Each gdb asks for non-stop mode itself: all-stop until then. */
	gdb_nonstop_hold(s);
	gdb_nonstop_free(s);
	gdb_points_clear(s);
	s->gdb_swbreak = s->gdb_hwbreak = s->gdb_multiprocess = false;
	s->c_tid = 0;
	s->monitor_final = NULL;
	free(s->state_note); /* a new gdb has been told nothing */
	s->state_note = NULL;
}

/* The target is still at work inside a request (target_set_alive): an
 * empty console output packet every second, where one may come before
 * the reply, so that gdb, which waits 2 s (remotetimeout) for a monitor
 * command's reply, does not print "Ignoring packet error, continuing..."
 * while an event recording's history is made; and gdb's Ctrl-C, which
 * the user presses when a move takes minutes, asks the target to stop
 * (true; so does a gdb that went away). */
static bool gdb_server_alive(void *ctx)
{
	struct gdb_server *s = ctx;
	if (!s->console_open || s->fuzzing)
		return false;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (now - s->alive_sent_ms >= 1000) {
		if (s->remote_debug)
			gdb_debug_log_sent(s, "O", 1);
		rsp_conn_send(&s->conn, "O", 1);
		s->alive_sent_ms = now;
	}
	const char *pkt;
	size_t len;
	switch (rsp_conn_recv(&s->conn, &pkt, &len, 0)) {
	case RSP_RECV_INTERRUPT:
	case RSP_RECV_CLOSED:
		return true;
	case RSP_RECV_PACKET:
		/* All-stop: nothing but Ctrl-C comes while a request is
		 * answered (as wait_for_stop refuses it). */
		rsp_conn_send_str(&s->conn, "E01");
		return false;
	case RSP_RECV_TIMEOUT:
		break;
	}
	return false;
}

int gdb_server_run(struct gdb_server *s, int rfd, int wfd)
{
	new_connection(s, rfd, wfd);
	target_set_alive(s->target, gdb_server_alive, s);
	if (s->wake_pipe[0] < 0 && pipe2(s->wake_pipe, O_CLOEXEC | O_NONBLOCK) == 0) {
		wake_fd = s->wake_pipe[1];
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sigchld;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGCHLD, &sa, NULL);
	}
	/* gdb's current thread to begin with: the one the target reports
	 * (the first thread, or where a recording ended). */
	struct target_stop first;
	if (target_current_stop(s->target, 0, &s->last, &first) == 0)
		s->g_tid = first.tid;

	while (!s->session_over) {
		const char *pkt;
		size_t len;
		enum rsp_recv r;
		if (gdb_nonstop_running(s)) {
			/* Threads run (non-stop mode): their stops, or gdb. */
			int ready = gdb_poll_connection(s);
			if (ready < 0 || gdb_nonstop_collect(s) < 0)
				break;
			r = ready ? rsp_conn_recv(&s->conn, &pkt, &len, 0) : RSP_RECV_TIMEOUT;
		} else {
			r = rsp_conn_recv(&s->conn, &pkt, &len, -1);
		}
		if (r == RSP_RECV_CLOSED)
			break;
		if (r == RSP_RECV_INTERRUPT)
			gdb_nonstop_interrupt(s); /* else a stray Ctrl-C while stopped */
		if (r != RSP_RECV_PACKET)
			continue;
		/* The reader's buffer is reused by the next receive, and handlers
		 * parse in place: work on a private copy. */
		char *copy = malloc(len + 1);
		if (!copy)
			break;
		memcpy(copy, pkt, len); /* binary payloads (X) may hold NULs */
		copy[len] = '\0';
		bool no_ack_switch = len == 15 && memcmp(copy, "QStartNoAckMode", 15) == 0;
		bool no_reply;
		if (s->debug || s->remote_debug)
			gdb_debug_log_received(s, copy, len);
		gdb_server_dispatch(s, copy, len, &no_reply);
		free(copy);
		const char *reply = s->reply.data ? s->reply.data : "";
		if (!no_reply && (s->debug || s->remote_debug))
			gdb_debug_log_sent(s, reply, s->reply.len);
		if (!no_reply && rsp_conn_send(&s->conn, reply, s->reply.len) != 0)
			break;
		if (s->monitor_final) {
			const char *final = s->monitor_final;
			s->monitor_final = NULL;
			if (s->remote_debug)
				gdb_debug_log_sent(s, final, strlen(final));
			if (rsp_conn_send_str(&s->conn, final) != 0)
				break;
		}
		if (no_ack_switch)
			s->conn.noack = true;
		/* Non-stop mode: what runs for gdb runs again, and gdb hears
		 * of stops met meanwhile. */
		if (gdb_nonstop_release(s) < 0)
			break;
	}
	if (!s->session_over && s->keep_on_close && (s->multi || target_alive(s->target)))
		return GDB_SERVER_KEPT;
	if (!s->session_over && target_alive(s->target))
		fprintf(stderr, "ptrev: gdb connection closed; killing the program\n");
	/* Whatever ended the session, a recording is finished and saved. */
	gdb_procs_free(s);
	target_kill(s->target);
	return 0;
}

/* Fuzzing: the dispatcher with no target must answer anything safely. */
void gdb_server_fuzz_one(const uint8_t *data, size_t n)
{
	static struct gdb_server s;
	gdb_server_init(&s);
	s.fuzzing = true;
	char *pkt = malloc(n + 1);
	if (!pkt)
		return;
	memcpy(pkt, data, n);
	pkt[n] = '\0';
	bool no_reply;
	gdb_server_dispatch(&s, pkt, strlen(pkt), &no_reply);
	s.monitor_final = NULL;
	free(pkt);
	/* Everything an input left (a listed btrace thread, a kept qXfer
	 * object, non-stop state): what a session's end frees. */
	gdb_server_destroy(&s);
}
