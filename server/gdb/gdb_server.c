/* The session loop and the top-level packet dispatch. */
#include "ptrev/gdb_server.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrev/hex.h"

void gdb_server_init(struct gdb_server *s)
{
	memset(s, 0, sizeof *s);
	s->inf.memfd = -1;
	vfile_init(&s->vfs);
	strbuf_init(&s->reply);
	s->wake_pipe[0] = s->wake_pipe[1] = -1;
}

void gdb_server_destroy(struct gdb_server *s)
{
	gdb_replay_free(s);
	if (s->exec_path_is_temp)
		unlink(s->exec_path);
	if (s->engine)
		gdb_record_stop(s, NULL, 0);
	if (s->have_inferior) {
		inferior_kill(&s->inf);
		inferior_destroy(&s->inf);
		s->have_inferior = false;
	}
	vfile_close_all(&s->vfs);
	gdb_points_clear(s);
	strbuf_free(&s->reply);
	rsp_conn_destroy(&s->conn);
	for (int i = 0; i < 2; i++)
		if (s->wake_pipe[i] >= 0)
			close(s->wake_pipe[i]);
}

static bool inferior_alive(const struct gdb_server *s)
{
	return s->have_inferior && !s->inf.exited;
}

/* D and D;PID: let the program go. */
static void handle_detach(struct gdb_server *s)
{
	if (!inferior_alive(s)) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	gdb_record_stop(s, NULL, 0); /* the recording ends where gdb leaves */
	if (inferior_detach(&s->inf) != 0) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	inferior_destroy(&s->inf);
	s->have_inferior = false;
	strbuf_puts(&s->reply, "OK");
	s->session_over = true;
}

static void handle_kill(struct gdb_server *s)
{
	gdb_record_stop(s, NULL, 0);
	if (s->have_inferior) {
		inferior_kill(&s->inf);
		inferior_destroy(&s->inf);
		s->have_inferior = false;
	}
	s->session_over = true;
}

/* T<thread-id>: is the thread alive? */
static void handle_thread_alive(struct gdb_server *s, const char *arg)
{
	pid_t pid, tid;
	const char *end;
	if (gdb_parse_thread_id(arg, &end, &pid, &tid) && *end == '\0' && tid > 0 &&
	    gdb_thread_exists(s, tid))
		strbuf_puts(&s->reply, "OK");
	else
		strbuf_puts(&s->reply, "E01");
}

/* H<op><thread-id>: select the thread for g/G/m/M (op g); c is obsolete
 * (vCont names threads itself) and accepted for any valid id. */
static void handle_set_thread(struct gdb_server *s, const char *arg)
{
	pid_t pid, tid;
	const char *end;
	char op = arg[0];
	if ((op != 'g' && op != 'c') ||
	    !gdb_parse_thread_id(arg + 1, &end, &pid, &tid) || *end != '\0') {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	if (op == 'c')
		s->c_tid = tid > 0 && gdb_thread_exists(s, tid) ? tid : 0;
	if (op == 'g') {
		if (tid > 0) {
			if (!gdb_thread_exists(s, tid)) {
				strbuf_puts(&s->reply, "E01");
				return;
			}
			s->g_tid = tid;
		} else if (!gdb_thread_exists(s, s->g_tid)) {
			pid_t *ids;
			if (gdb_thread_ids(s, &ids) > 0)
				s->g_tid = ids[0];
			free(ids);
		}
	}
	strbuf_puts(&s->reply, "OK");
}

void gdb_server_dispatch(struct gdb_server *s, char *pkt, size_t len, bool *no_reply)
{
	strbuf_reset(&s->reply);
	*no_reply = false;
	if (len == 0)
		return;
	switch (pkt[0]) {
	case '?':
		if (s->hist && s->hist_saved_initial) {
			gdb_replay_initial_stop(s);
			return;
		}
		if (s->last.kind == STOP_NONE && inferior_alive(s)) {
			s->last.kind = STOP_SIGNAL;
			s->last.sig = SIGTRAP;
			s->last.tid = s->inf.pid;
		}
		if (s->last.kind != STOP_NONE)
			gdb_stop_reply(s, &s->last);
		else
			strbuf_puts(&s->reply, "W00");
		return;
	case 'q':
	case 'Q':
		gdb_query_packet(s, pkt, len);
		return;
	case 'g': case 'G': case 'p': case 'P':
		if (gdb_replay_in_past(s))
			gdb_replay_regs_packet(s, pkt, len);
		else
			gdb_regs_packet(s, pkt, len);
		return;
	case 'm': case 'M': case 'x': case 'X':
		if (gdb_replay_in_past(s))
			gdb_replay_mem_packet(s, pkt, len);
		else
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
		handle_detach(s);
		return;
	case 'k':
		/* gdb expects no reply to k. */
		handle_kill(s);
		*no_reply = true;
		return;
	case 'c': case 'C': case 's': case 'S':
		gdb_resume_and_wait(s, pkt);
		return;
	case 'v':
		if (strcmp(pkt, "vCont?") == 0) {
			strbuf_puts(&s->reply, "vCont;c;C;s;S");
		} else if (strncmp(pkt, "vCont;", 6) == 0) {
			gdb_resume_and_wait(s, pkt + 5);
		} else if (strncmp(pkt, "vFile:setfs:", 12) == 0 && !s->have_inferior) {
			/* A saved recording's process is gone: its files are
			 * ours (the recorded paths, checked by build-id). */
			s->vfs.fs_pid = 0;
			strbuf_puts(&s->reply, "F0");
		} else if (strncmp(pkt, "vFile:open:", 11) == 0 && !s->have_inferior && s->hist &&
			   !s->fuzzing && gdb_replay_proc_open(s, pkt)) {
			/* /proc/PID/maps of a saved recording's (gone) process. */
		} else if (strncmp(pkt, "vFile:", 6) == 0) {
			/* The fuzzer must not open or unlink real files. */
			if (s->fuzzing || !vfile_handle(&s->vfs, pkt, len, &s->reply))
				strbuf_reset(&s->reply);
		} else if (strncmp(pkt, "vKill", 5) == 0) {
			handle_kill(s);
			strbuf_puts(&s->reply, "OK");
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

int gdb_server_run(struct gdb_server *s, int rfd, int wfd)
{
	rsp_conn_init(&s->conn, rfd, wfd);
	if (s->wake_pipe[0] < 0 && pipe2(s->wake_pipe, O_CLOEXEC | O_NONBLOCK) == 0) {
		wake_fd = s->wake_pipe[1];
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sigchld;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGCHLD, &sa, NULL);
	}
	if (s->have_inferior && s->inf.nthreads > 0)
		s->g_tid = s->inf.threads[0].tid;

	while (!s->session_over) {
		const char *pkt;
		size_t len;
		enum rsp_recv r = rsp_conn_recv(&s->conn, &pkt, &len, -1);
		if (r == RSP_RECV_CLOSED)
			break;
		if (r != RSP_RECV_PACKET)
			continue; /* a stray Ctrl-C while stopped means nothing */
		/* The reader's buffer is reused by the next receive, and handlers
		 * parse in place: work on a private copy. */
		char *copy = malloc(len + 1);
		if (!copy)
			break;
		memcpy(copy, pkt, len); /* binary payloads (X) may hold NULs */
		copy[len] = '\0';
		bool no_ack_switch = len == 15 && memcmp(copy, "QStartNoAckMode", 15) == 0;
		bool no_reply;
		gdb_server_dispatch(s, copy, len, &no_reply);
		free(copy);
		if (!no_reply && rsp_conn_send(&s->conn, s->reply.data ? s->reply.data : "",
					       s->reply.len) != 0)
			break;
		if (s->monitor_then_ok) {
			s->monitor_then_ok = false;
			if (rsp_conn_send_str(&s->conn, "OK") != 0)
				break;
		}
		if (no_ack_switch)
			s->conn.noack = true;
	}
	bool dropped = !s->session_over;
	if (dropped && s->have_inferior && !s->inf.exited)
		fprintf(stderr, "ptrev: gdb connection closed; killing the program\n");
	/* Whatever ended the session, the recording is finished and saved. */
	gdb_record_stop(s, NULL, 0);
	if (s->have_inferior) {
		inferior_kill(&s->inf);
		inferior_destroy(&s->inf);
		s->have_inferior = false;
	}
	return 0;
}

/* Fuzzing: the dispatcher with no inferior must answer anything safely. */
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
	s.monitor_then_ok = false;
	free(pkt);
	vfile_close_all(&s.vfs);
	gdb_points_clear(&s);
	strbuf_free(&s.reply);
}
