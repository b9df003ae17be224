/* Resuming (vCont, c, s, C, S forwards; bs, bc backwards), waiting for the
 * next stop while watching the connection for Ctrl-C, and stop replies. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrev/gdb_server.h"
#include "ptrev/gdb_signals.h"
#include "ptrev/hex.h"

#define MAX_ACTIONS 64

/* Parse ";ACTION[:TID];ACTION[:TID]..." into acts, and the process each
 * names into pids (0: none, all processes); -2 for an action for process
 * other (a held fork child, in non-stop mode: it cannot be run). */
static int parse_vcont(const char *p, struct target_action *acts, pid_t *pids, int max,
		       pid_t other, bool stop_ok)
{
	int n = 0;
	while (*p == ';') {
		p++;
		if (n == max)
			return -1;
		struct target_action a = {.kind = 0, .sig = 0, .tid = -1};
		char k = *p++;
		if (k == 'c' || k == 's' || (k == 't' && stop_ok)) {
			a.kind = k;
		} else if (k == 'C' || k == 'S') {
			uint64_t sig;
			if (!hex_parse_u64(&p, p + strlen(p), &sig) || sig > 0xff)
				return -1;
			a.kind = (char)(k - 'A' + 'a');
			a.sig = gdb_signal_to_host((int)sig);
		} else {
			return -1; /* r and others are not offered in vCont?; t
				    * only in non-stop mode */
		}
		if (*p == ':') {
			pid_t pid, tid;
			const char *end;
			if (!gdb_parse_thread_id(p + 1, &end, &pid, &tid))
				return -1;
			if (other && pid == other)
				return -2;
			pids[n] = pid > 0 ? pid : 0;
			a.tid = tid == 0 ? -1 : tid;
			p = end;
		} else {
			pids[n] = 0;
		}
		acts[n++] = a;
	}
	return *p == '\0' ? n : -1;
}

/* The one process actions name (0: none, the current one), or -1 for
 * several: two named, or one named and actions for all while gdb
 * debugs more than one. */
static pid_t one_process(const struct gdb_server *s, const pid_t *pids, int n)
{
	pid_t named = 0;
	bool all = false;
	for (int i = 0; i < n; i++) {
		if (pids[i] == 0)
			all = true;
		else if (named && pids[i] != named)
			return -1;
		else
			named = pids[i];
	}
	return all && s->nprocs ? -1 : named;
}

/* Parse and make the process the actions are for the current one. */
static int parse_for_one(struct gdb_server *s, const char *spec, struct target_action *acts,
			 pid_t *pids, int max, bool stop_ok, bool *several)
{
	int n = parse_vcont(spec, acts, pids, max, target_fork_child(s->target), stop_ok);
	if (n == -2)
		fprintf(stderr, "ptrev: gdb asks to run the fork child too (set detach-on-fork off): "
			"in non-stop mode ptrev debugs one process; use detach-on-fork on\n");
	if (n <= 0)
		return n;
	pid_t named = one_process(s, pids, n);
	*several = named < 0;
	if (named > 0 && !gdb_procs_select(s, named)) {
		fprintf(stderr, "ptrev: gdb asks to run process %d, which ptrev does not debug\n",
			(int)named);
		return -1;
	}
	return n;
}

int gdb_parse_vcont(struct gdb_server *s, const char *spec, struct target_action *acts, int max,
		    bool stop_ok)
{
	pid_t pids[MAX_ACTIONS];
	bool several = false;
	int n = parse_for_one(s, spec, acts, pids, max < MAX_ACTIONS ? max : MAX_ACTIONS, stop_ok,
			      &several);
	if (n > 0 && several) {
		fprintf(stderr, "ptrev: gdb asks to run several processes at once: in non-stop "
			"mode ptrev runs one\n");
		return -1;
	}
	return n;
}

/* Legacy c/s/C/S [sig][;addr]: all threads continue; s steps the current
 * thread only, keeping the others stopped as gdbserver does. */
static int parse_legacy(struct gdb_server *s, const char *p, struct target_action *acts)
{
	char k = *p++;
	struct target_action a = {.kind = (char)(k | 0x20), .sig = 0, .tid = -1};
	if (k == 'C' || k == 'S') {
		uint64_t sig;
		if (!hex_parse_u64(&p, p + strlen(p), &sig) || sig > 0xff)
			return -1;
		a.sig = gdb_signal_to_host((int)sig);
		if (*p == ';')
			p++;
	}
	if (*p) {
		uint64_t addr;
		if (!hex_parse_u64(&p, p + strlen(p), &addr) || *p)
			return -1;
		/* Resuming at another address: set the PC first. */
		struct amd64_regfile *rf = malloc(sizeof *rf);
		bool ok = rf && target_fetch_registers(s->target, s->g_tid, rf) == TARGET_REGS_FULL;
		if (ok) {
			rf->gpr.rip = addr;
			ok = target_store_registers(s->target, s->g_tid, rf) == 0;
		}
		free(rf);
		if (!ok)
			return -1;
	}
	if (a.kind == 's')
		a.tid = s->g_tid;
	acts[0] = a;
	return 1;
}

static void drain_wake_pipe(struct gdb_server *s)
{
	char buf[64];
	while (s->wake_pipe[0] >= 0 && read(s->wake_pipe[0], buf, sizeof buf) > 0)
		;
}

int gdb_poll_connection(struct gdb_server *s)
{
	struct pollfd fds[2] = {
		{.fd = s->conn.rfd, .events = POLLIN},
		{.fd = s->wake_pipe[0], .events = POLLIN},
	};
	int timeout = rsp_conn_has_buffered(&s->conn) ? 0 : 100;
	if (poll(fds, 2, timeout) < 0 && errno != EINTR)
		return -1;
	drain_wake_pipe(s);
	return rsp_conn_has_buffered(&s->conn) || (fds[0].revents & (POLLIN | POLLHUP | POLLERR));
}

void gdb_stop_program_gone(struct gdb_server *s, struct target_stop *stop)
{
	memset(stop, 0, sizeof *stop);
	stop->kind = TARGET_STOP_KILLED;
	stop->sig = SIGKILL;
	stop->tid = target_pid(s->target);
}

void gdb_after_exec(struct gdb_server *s)
{
	gdb_points_clear(s); /* gone with the old program; gdb inserts them again */
	gdb_tls_forget(s);   /* gdb's qSymbol tells of the new one's */
}

/* Wait for the first stop of the targets ts (one, or the processes of a
 * schedule-multiple resume), watching the connection for Ctrl-C (to each
 * of them): the index of the one that stopped, with *stop, or -1 if gdb
 * went away. */
static int wait_for_stop(struct gdb_server *s, struct target *const ts[], size_t nts,
			 struct target_stop *stop)
{
	for (;;) {
		for (size_t k = 0; k < nts; k++) {
			int r = target_wait(ts[k], stop, false);
			if (r == 1 && stop->kind == TARGET_STOP_NO_RESUMED && !s->gdb_no_resumed)
				r = 0; /* a gdb without N waits on, as it always did */
			if (r == 1)
				return (int)k;
			if (r < 0) {
				/* Nothing left to wait for: report what we know. */
				gdb_stop_program_gone(s, stop);
				stop->tid = target_pid(ts[k]);
				return (int)k;
			}
		}
		int ready = gdb_poll_connection(s);
		if (ready < 0)
			return -1;
		if (ready) {
			const char *pkt;
			size_t len;
			switch (rsp_conn_recv(&s->conn, &pkt, &len, 0)) {
			case RSP_RECV_INTERRUPT:
				for (size_t k = 0; k < nts; k++)
					target_interrupt(ts[k]);
				break;
			case RSP_RECV_CLOSED:
				return -1;
			case RSP_RECV_PACKET:
				/* All-stop: gdb sends nothing but Ctrl-C while the
				 * program runs. Anything else is out of sequence:
				 * refuse it and keep waiting for the stop. */
				if (rsp_conn_send_str(&s->conn, "E01") != 0)
					return -1;
				break;
			case RSP_RECV_TIMEOUT:
				break;
			}
		}
	}
}

/* A line on gdb's console: console output (an O packet) before the stop
 * reply, which gdb prints over any transport and an IDE shows. */
static void console_line(struct gdb_server *s, const struct strbuf *line)
{
	struct strbuf pkt = STRBUF_INIT;
	strbuf_putc(&pkt, 'O');
	strbuf_hex(&pkt, line->data, line->len);
	if (s->remote_debug)
		gdb_debug_log_sent(s, pkt.data, pkt.len);
	rsp_conn_send(&s->conn, pkt.data, pkt.len);
	strbuf_free(&pkt);
}

/* Where the program stopped, its registers and memory may be unavailable
 * (gdb shows <unavailable> and a short backtrace): say why on gdb's
 * console, once per reason. */
static void tell_state(struct gdb_server *s, pid_t tid)
{
	struct strbuf why = STRBUF_INIT;
	if (!target_state_unavailable(s->target, tid, &why) || !why.data) {
		free(s->state_note);
		s->state_note = NULL;
		strbuf_free(&why);
		return;
	}
	if (!s->state_note || strcmp(s->state_note, why.data) != 0) {
		struct strbuf line = STRBUF_INIT;
		strbuf_printf(&line, "ptrev: registers and memory are unavailable here, only the "
			      "PC and read-only memory: %s (monitor why)\n", why.data);
		console_line(s, &line);
		strbuf_free(&line);
		free(s->state_note);
		s->state_note = strdup(why.data);
	}
	strbuf_free(&why);
}

/* A move that went on without something gdb asked for (a watchpoint the
 * history could not check): say so where the stop is shown, which gdb
 * would otherwise present as the watchpoint never being hit. */
static void tell_move(struct gdb_server *s)
{
	struct strbuf why = STRBUF_INIT;
	if (target_move_note(s->target, &why) && why.data) {
		struct strbuf line = STRBUF_INIT;
		strbuf_printf(&line, "ptrev: %s\n", why.data);
		console_line(s, &line);
		strbuf_free(&line);
	}
	strbuf_free(&why);
}

/* Start the execution r describes, wait for its stop and report it. */
static void run_and_report(struct gdb_server *s, struct target_resume *r)
{
	struct stop_point *storage;
	struct stop_set stops;
	gdb_points_stop_set(s, &stops, &storage);
	r->current = s->g_tid;
	r->reverse_tid = s->c_tid;
	r->stops = &stops;
	s->console_open = true;
	int rc = target_resume(s->target, r);
	s->console_open = false;
	if (rc != 0) {
		free(storage);
		/* Reverse execution without a history: unsupported (empty).
		 * A refusal says why first: gdb shows console output that
		 * comes before the reply, and the E01 alone says nothing. */
		if (rc != TARGET_UNSUPPORTED) {
			tell_move(s);
			strbuf_puts(&s->reply, "E01");
		}
		return;
	}
	struct target_stop stop;
	bool got = wait_for_stop(s, &s->target, 1, &stop) == 0;
	free(storage);
	if (!got) {
		/* gdb went away while the program ran: stop it, for the next
		 * connection or to end the session at a stop (a recording
		 * then ends whole, with every instruction it counts in the
		 * file: one cut while a thread ran lost its last ones). */
		s->conn.closed = true;
		if (target_interrupt(s->target) != 0 || target_wait(s->target, &stop, true) != 1 ||
		    stop.kind == TARGET_STOP_EXITED || stop.kind == TARGET_STOP_KILLED ||
		    !s->keep_on_close) {
			s->session_over = true;
			if (target_alive(s->target))
				fprintf(stderr, "ptrev: gdb connection closed while the program ran; "
					"killing the program%s\n", target_can_reverse(s->target)
					? " (its recording ends here, whole)" : "");
		}
		else
			s->last = stop;
		/* The interrupt was ptrev's, not the user's: the next gdb finds
		 * the program stopped with no signal to pass, as gdbserver
		 * reports a thread it stopped itself. */
		if (!s->session_over && stop.kind == TARGET_STOP_SIGNAL && stop.sig == SIGINT)
			s->last.sig = 0;
		return;
	}
	gdb_report_stop(s, &stop);
}

void gdb_report_stop(struct gdb_server *s, const struct target_stop *stopp)
{
	struct target_stop stop = *stopp;
	if (stop.kind == TARGET_STOP_NO_RESUMED) {
		/* The threads gdb resumed have exited; the others it left
		 * stopped stay so, and where they stopped is what it knows. */
		strbuf_puts(&s->reply, "N");
		return;
	}
	s->last = stop;
	tell_move(s);
	if (stop.kind != TARGET_STOP_EXITED && stop.kind != TARGET_STOP_KILLED) {
		s->g_tid = stop.tid;
		tell_state(s, stop.tid);
	}
	if (stop.kind == TARGET_STOP_EXEC)
		gdb_after_exec(s);
	gdb_tell_exit(s, &stop);
	gdb_stop_reply(s, &stop);
	/* Another process gdb debugs is current now: gdb names the one it
	 * resumes next. */
	if (stop.kind == TARGET_STOP_EXITED || stop.kind == TARGET_STOP_KILLED)
		gdb_procs_drop_current(s);
}

void gdb_tell_exit(const struct gdb_server *s, const struct target_stop *stop)
{
	if (s->conn.rfd == STDIN_FILENO)
		return;
	if (stop->kind == TARGET_STOP_EXITED)
		fprintf(stderr, "\nChild exited with status %d\n", stop->exit_code & 0xff);
	else if (stop->kind == TARGET_STOP_KILLED)
		fprintf(stderr, "\nChild terminated with signal = 0x%x (SIG%s)\n", stop->sig,
			sigabbrev_np(stop->sig) ? sigabbrev_np(stop->sig) : "?");
	else
		return;
	fflush(stderr);
}

/* gdb's schedule-multiple: at most this many processes run at once. */
#define RUN_MAX 16

/* p into run (nrun of them, RUN_MAX at most) unless it is there. */
static void add_process(pid_t run[RUN_MAX], size_t *nrun, pid_t p)
{
	for (size_t k = 0; k < *nrun; k++)
		if (run[k] == p)
			return;
	if (*nrun < RUN_MAX)
		run[(*nrun)++] = p;
}

/* The processes that actions naming pids are for (0: every one) in run;
 * their number. */
static size_t processes_named(struct gdb_server *s, const pid_t *pids, size_t n,
			      pid_t run[RUN_MAX])
{
	size_t nrun = 0;
	bool all = false;
	for (size_t i = 0; i < n; i++) {
		if (pids[i])
			add_process(run, &nrun, pids[i]);
		else
			all = true;
	}
	if (all) {
		add_process(run, &nrun, target_pid(s->target));
		for (size_t i = 0; i < s->nprocs; i++)
			add_process(run, &nrun, target_pid(s->procs[i].target));
	}
	return nrun;
}

/* vCont actions for several processes at once (gdb's schedule-multiple;
 * pids[i]: the process acts[i] names, 0 every one): each runs, the first
 * stop is reported, the others are held where they are with what they
 * met pending (gdb_procs.c). Refused (E01) where one of them is recorded. */
static void run_several(struct gdb_server *s, const struct target_action *acts,
			   const pid_t *pids, size_t n)
{
	pid_t run[RUN_MAX];
	size_t nrun = processes_named(s, pids, n, run);
	for (size_t k = 0; k < nrun; k++) {
		if (!gdb_procs_select(s, run[k])) {
			fprintf(stderr, "ptrev: gdb asks to run process %d, which ptrev does not "
				"debug\n", (int)run[k]);
			strbuf_puts(&s->reply, "E01");
			return;
		}
		if (target_can_reverse(s->target)) {
			/* A recording runs the program inside its own waits,
			 * which take any child's stops. */
			fprintf(stderr, "ptrev: gdb asks to run several processes at once (set "
				"schedule-multiple on), and process %d is recorded: ptrev runs a "
				"recorded process alone; use set schedule-multiple off\n",
				(int)run[k]);
			strbuf_puts(&s->reply, "E01");
			return;
		}
	}
	struct target *ts[RUN_MAX] = {0};
	struct stop_point *storage[RUN_MAX] = {0};
	struct stop_set sets[RUN_MAX];
	struct target_action *mine = calloc(n ? n : 1, sizeof *mine);
	bool started = mine != NULL;
	for (size_t k = 0; k < nrun && started; k++) {
		gdb_procs_select(s, run[k]);
		size_t m = 0;
		for (size_t i = 0; i < n; i++)
			if (pids[i] == 0 || pids[i] == run[k])
				mine[m++] = acts[i];
		gdb_points_stop_set(s, &sets[k], &storage[k]);
		struct target_resume r = {.actions = mine, .nactions = m, .current = s->g_tid,
					  .reverse_tid = s->c_tid, .stops = &sets[k]};
		started = target_resume(s->target, &r) == 0;
		if (started)
			ts[k] = s->target;
	}
	free(mine);
	struct target_stop stop;
	int won = started ? wait_for_stop(s, ts, nrun, &stop) : -1;
	/* The others stand where they are, what they met kept for their
	 * next resume (all-stop: gdb sees every process stopped). */
	for (size_t k = 0; k < nrun; k++) {
		if (ts[k] && (int)k != won && target_pause(ts[k]) != 0 && target_alive(ts[k]) &&
		    target_interrupt(ts[k]) == 0)
			target_wait(ts[k], &(struct target_stop){0}, true);
		free(storage[k]);
	}
	if (!started) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	if (won < 0) {
		s->conn.closed = true;
		s->session_over = true;
		fprintf(stderr, "ptrev: gdb connection closed while the programs ran; killing them\n");
		return;
	}
	gdb_procs_select(s, run[won]);
	gdb_report_stop(s, &stop);
}

void gdb_resume_and_wait(struct gdb_server *s, const char *spec)
{
	struct target_action acts[MAX_ACTIONS];
	pid_t pids[MAX_ACTIONS];
	bool several = false;
	/* A fork child gdb has not let go is a process of its own now
	 * (all-stop; in non-stop mode ptrev runs one process). */
	gdb_procs_keep_child(s);
	int n = spec[0] == ';' ? parse_for_one(s, spec, acts, pids, MAX_ACTIONS, false, &several)
			       : parse_legacy(s, spec, acts);
	if (n <= 0) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	if (several) {
		/* gdb's schedule-multiple: every process it names at once. */
		run_several(s, acts, pids, (size_t)n);
		return;
	}
	struct target_resume r = {.reverse = false, .actions = acts, .nactions = (size_t)n};
	run_and_report(s, &r);
}

void gdb_reverse_packet(struct gdb_server *s, const char *pkt)
{
	if (!target_can_reverse(s->target)) {
		if (!s->reverse_offered)
			return; /* no history: empty reply, gdb says unsupported */
		/* gdb was offered reverse execution of a recording that has
		 * ended since (gdb followed a fork's child): nothing was
		 * recorded here, so the history begins where the thread
		 * stands ("No more reverse-execution history"). */
		struct target_stop here = {.kind = TARGET_STOP_HISTORY_BEGIN, .sig = SIGTRAP,
					   .tid = s->c_tid > 0 ? s->c_tid : s->g_tid, .core = -1};
		if (here.tid <= 0)
			here.tid = target_pid(s->target);
		gdb_stop_reply(s, &here);
		return;
	}
	if (strcmp(pkt, "bs") != 0 && strcmp(pkt, "bc") != 0) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	/* bs/bc carry no thread: gdb names the one to move with Hc. */
	struct target_action a = {.kind = pkt[1], .sig = 0, .tid = s->c_tid};
	struct target_resume r = {.reverse = true, .actions = &a, .nactions = 1};
	run_and_report(s, &r);
}

void gdb_put_reg64(struct strbuf *out, uint64_t v)
{
	uint8_t raw[8];
	for (int i = 0; i < 8; i++)
		raw[i] = (uint8_t)(v >> (8 * i));
	strbuf_hex(out, raw, 8);
}

void gdb_put_expedited(struct strbuf *out, int regnum, uint64_t v)
{
	strbuf_printf(out, "%02x:", regnum);
	gdb_put_reg64(out, v);
	strbuf_putc(out, ';');
}

void gdb_stop_reply(struct gdb_server *s, const struct target_stop *stop)
{
	struct strbuf *out = &s->reply;
	if (stop->kind == TARGET_STOP_EXITED || stop->kind == TARGET_STOP_KILLED) {
		if (stop->kind == TARGET_STOP_EXITED)
			strbuf_printf(out, "W%02x", stop->exit_code & 0xff);
		else
			strbuf_printf(out, "X%02x", gdb_signal_from_host(stop->sig) & 0xff);
		if (s->gdb_multiprocess)
			strbuf_printf(out, ";process:%x", (unsigned)target_pid(s->target));
		return;
	}
	if (s->no_T) {
		/* --disable-packet=T: the bare signal, as gdbserver sends it */
		strbuf_printf(out, "S%02x", gdb_signal_from_host(stop->sig) & 0xff);
		return;
	}
	strbuf_printf(out, "T%02x", gdb_signal_from_host(stop->sig) & 0xff);
	switch (stop->kind) {
	case TARGET_STOP_WATCH:
		strbuf_printf(out, "%s:%llx;",
			      stop->watch_type == 4 ? "awatch" : stop->watch_type == 3 ? "rwatch" : "watch",
			      (unsigned long long)stop->watch_addr);
		break;
	case TARGET_STOP_SWBREAK:
		if (s->gdb_swbreak)
			strbuf_puts(out, "swbreak:;");
		break;
	case TARGET_STOP_HWBREAK:
		if (s->gdb_hwbreak)
			strbuf_puts(out, "hwbreak:;");
		break;
	case TARGET_STOP_HISTORY_BEGIN:
		strbuf_puts(out, "replaylog:begin;");
		break;
	case TARGET_STOP_HISTORY_END:
		strbuf_puts(out, "replaylog:end;");
		break;
	case TARGET_STOP_FORK:
	case TARGET_STOP_VFORK:
		strbuf_printf(out, "%s:p%x.%x;", stop->kind == TARGET_STOP_FORK ? "fork" : "vfork",
			      (unsigned)stop->child, (unsigned)stop->child);
		break;
	case TARGET_STOP_VFORK_DONE:
		strbuf_puts(out, "vforkdone:;");
		break;
	case TARGET_STOP_EXEC: {
		/* The new program's path; gdb loads its symbols */
		struct strbuf path = STRBUF_INIT;
		if (target_exec_file(s->target, &path) == 0 && path.len) {
			strbuf_puts(out, "exec:");
			strbuf_hex(out, path.data, path.len);
			strbuf_putc(out, ';');
		}
		strbuf_free(&path);
		break;
	}
	default:
		break;
	}
	if (stop->have_frame_regs) {
		gdb_put_expedited(out, AMD64_RBP_REGNUM, stop->rbp);
		gdb_put_expedited(out, AMD64_RSP_REGNUM, stop->rsp);
	}
	if (stop->have_pc)
		gdb_put_expedited(out, AMD64_RIP_REGNUM, stop->rip);
	if (!s->no_Tthread) {
		strbuf_puts(out, "thread:");
		gdb_format_thread_id(s, out, stop->tid);
		strbuf_putc(out, ';');
	}
	if (stop->core >= 0)
		strbuf_printf(out, "core:%x;", stop->core);
}
