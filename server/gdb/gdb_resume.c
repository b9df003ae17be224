/* Resuming (vCont, c, s, C, S), waiting for the next stop while watching
 * the connection for Ctrl-C, and stop replies. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ptrev/gdb_server.h"
#include "ptrev/gdb_signals.h"
#include "ptrev/hex.h"

struct action {
	char kind;     /* 'c' or 's' */
	int sig;       /* host signal, 0 = none */
	pid_t tid;     /* -1 = every thread */
};

#define MAX_ACTIONS 64

/* Parse ";ACTION[:TID];ACTION[:TID]..." into acts. */
static int parse_vcont(const char *p, struct action *acts, int max)
{
	int n = 0;
	while (*p == ';') {
		p++;
		if (n == max)
			return -1;
		struct action a = {.kind = 0, .sig = 0, .tid = -1};
		char k = *p++;
		if (k == 'c' || k == 's') {
			a.kind = k;
		} else if (k == 'C' || k == 'S') {
			uint64_t sig;
			if (!hex_parse_u64(&p, p + strlen(p), &sig) || sig > 0xff)
				return -1;
			a.kind = (char)(k - 'A' + 'a');
			a.sig = gdb_signal_to_host((int)sig);
		} else {
			return -1; /* t, r and others are not offered in vCont? */
		}
		if (*p == ':') {
			pid_t pid, tid;
			const char *end;
			if (!gdb_parse_thread_id(p + 1, &end, &pid, &tid))
				return -1;
			a.tid = tid == 0 ? -1 : tid;
			p = end;
		}
		acts[n++] = a;
	}
	return *p == '\0' ? n : -1;
}

/* Legacy c/s/C/S [sig][;addr]: all threads continue; s steps the current
 * thread only, keeping the others stopped as gdbserver does. */
static int parse_legacy(struct gdb_server *s, const char *p, struct action *acts)
{
	char k = *p++;
	struct action a = {.kind = (char)(k | 0x20), .sig = 0, .tid = -1};
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
		struct user_regs_struct regs;
		if (inferior_get_regs(&s->inf, s->g_tid, &regs) != 0)
			return -1;
		regs.rip = addr;
		if (inferior_set_regs(&s->inf, s->g_tid, &regs) != 0)
			return -1;
	}
	if (a.kind == 's')
		a.tid = s->g_tid;
	acts[0] = a;
	return 1;
}

static void drain(int fd)
{
	char buf[64];
	while (fd >= 0 && read(fd, buf, sizeof buf) > 0)
		;
}

/* Wait for the next stop. Returns 1 with *ev, 0 if gdb went away. */
static int wait_for_stop(struct gdb_server *s, struct stop_event *ev)
{
	for (;;) {
		int r = gdb_exec_wait(s, ev);
		if (r == 1)
			return 1;
		if (r < 0) {
			/* Nothing left to wait for: report what we know. */
			ev->kind = STOP_KILLED;
			ev->sig = SIGKILL;
			ev->tid = s->inf.pid;
			return 1;
		}
		struct pollfd fds[2] = {
			{.fd = s->conn.rfd, .events = POLLIN},
			{.fd = s->wake_pipe[0], .events = POLLIN},
		};
		int timeout = rsp_conn_has_buffered(&s->conn) ? 0 : 100;
		if (poll(fds, 2, timeout) < 0 && errno != EINTR)
			return 0;
		drain(s->wake_pipe[0]);
		if (rsp_conn_has_buffered(&s->conn) || (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			const char *pkt;
			size_t len;
			switch (rsp_conn_recv(&s->conn, &pkt, &len, 0)) {
			case RSP_RECV_INTERRUPT:
				gdb_exec_interrupt(s);
				break;
			case RSP_RECV_CLOSED:
				return 0;
			case RSP_RECV_PACKET:
				/* All-stop: gdb sends nothing but Ctrl-C while the
				 * program runs. Anything else is out of sequence:
				 * refuse it and keep waiting for the stop. */
				if (rsp_conn_send_str(&s->conn, "E01") != 0)
					return 0;
				break;
			case RSP_RECV_TIMEOUT:
				break;
			}
		}
	}
}

static bool breakpoint_to_skip(struct gdb_server *s, const struct stop_event *ev)
{
	if (ev->kind != STOP_SWBREAK && ev->kind != STOP_HWBREAK)
		return false;
	struct user_regs_struct regs;
	if (inferior_get_regs(&s->inf, ev->tid, &regs) != 0)
		return false;
	return !gdb_breakpoint_condition_met(s, ev->tid, regs.rip);
}

/* Execute the instruction under a breakpoint in ev's thread alone. Returns
 * true when the step finished normally; otherwise *ev becomes the event to
 * report instead. */
static bool step_over(struct gdb_server *s, struct stop_event *ev)
{
	struct user_regs_struct regs;
	if (inferior_get_regs(&s->inf, ev->tid, &regs) != 0)
		return false;
	/* An int3 must be lifted for the step; a hardware execution breakpoint
	 * does not fire again (the kernel resumes it with RF set). */
	bool lift = ev->kind == STOP_SWBREAK && inferior_has_swbreak(&s->inf, regs.rip);
	if (lift)
		inferior_remove_swbreak(&s->inf, regs.rip);
	struct stop_event step;
	bool ok = gdb_exec_resume(s, ev->tid, true, 0) == 0 && wait_for_stop(s, &step);
	if (lift && !s->inf.exited)
		inferior_insert_swbreak(&s->inf, regs.rip);
	if (!ok)
		return false;
	if (step.kind == STOP_STEP && step.tid == ev->tid)
		return true;
	*ev = step;
	return false;
}

void gdb_resume_and_wait(struct gdb_server *s, const char *spec)
{
	struct action acts[MAX_ACTIONS];
	bool live = s->have_inferior && !s->inf.exited;
	if (!live && !s->hist) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	int n = spec[0] == ';' ? parse_vcont(spec, acts, MAX_ACTIONS)
			       : live ? parse_legacy(s, spec, acts) : -1;
	if (spec[0] != ';' && !live && (spec[0] == 'c' || spec[0] == 's') && spec[1] == '\0') {
		acts[0] = (struct action){.kind = spec[0], .sig = 0, .tid = -1};
		n = 1;
	}
	if (n <= 0) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	/* A thread standing in the recorded past moves through the history;
	 * PC-level replay follows the thread gdb steps (or the current one). */
	if (s->hist) {
		pid_t tid = acts[0].tid > 0 ? acts[0].tid : 0;
		for (int j = 0; j < n && tid == 0; j++)
			if (acts[j].kind == 's' && acts[j].tid > 0)
				tid = acts[j].tid;
		bool step = false, all = false;
		for (int j = 0; j < n; j++) {
			step |= acts[j].kind == 's';
			all |= acts[j].tid == -1;
		}
		if (gdb_replay_resume(s, step, tid, all))
			return;
		if (!live) {
			strbuf_puts(&s->reply, "E01");
			return;
		}
	}
	/* Each thread takes the leftmost action that names it. Resume a copy
	 * of the tid list: resuming may not change it, but be safe. */
	size_t nt = s->inf.nthreads;
	pid_t tids[nt ? nt : 1];
	for (size_t i = 0; i < nt; i++)
		tids[i] = s->inf.threads[i].tid;
	struct stop_event ev;
	s->at_first_insn = false;
	for (bool first = true;; first = false) {
		int resumed = 0;
		for (size_t i = 0; i < nt; i++) {
			for (int j = 0; j < n; j++) {
				if (acts[j].tid != -1 && acts[j].tid != tids[i])
					continue;
				/* A signal is delivered once, not again after a
				 * breakpoint whose condition was false. */
				int sig = first ? acts[j].sig : 0;
				if (gdb_exec_resume(s, tids[i], acts[j].kind == 's', sig) == 0)
					resumed++;
				break;
			}
		}
		if (resumed == 0) {
			strbuf_puts(&s->reply, "E01");
			return;
		}
		if (!wait_for_stop(s, &ev)) {
			/* gdb went away while the program ran. */
			s->conn.closed = true;
			s->session_over = true;
			return;
		}
		/* A breakpoint whose target-side condition is false: step the
		 * thread past it and carry on, as if it had not been hit. */
		if (!breakpoint_to_skip(s, &ev))
			break;
		if (!step_over(s, &ev))
			break; /* something else happened during the step: report it */
	}
	s->last = ev;
	if (ev.kind != STOP_EXITED && ev.kind != STOP_KILLED)
		s->g_tid = ev.tid;
	gdb_record_after_stop(s);
	gdb_stop_reply(s, &ev);
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

void gdb_stop_reply(struct gdb_server *s, const struct stop_event *ev)
{
	struct strbuf *out = &s->reply;
	if (ev->kind == STOP_EXITED || ev->kind == STOP_KILLED) {
		if (ev->kind == STOP_EXITED)
			strbuf_printf(out, "W%02x", ev->exit_code & 0xff);
		else
			strbuf_printf(out, "X%02x", gdb_signal_from_host(ev->sig) & 0xff);
		if (s->gdb_multiprocess)
			strbuf_printf(out, ";process:%x", (unsigned)s->inf.pid);
		return;
	}
	strbuf_printf(out, "T%02x", gdb_signal_from_host(ev->sig) & 0xff);
	if (ev->kind == STOP_WATCH)
		strbuf_printf(out, "%s:%llx;",
			      ev->watch_type == 4 ? "awatch" : ev->watch_type == 3 ? "rwatch" : "watch",
			      (unsigned long long)ev->watch_addr);
	else if (ev->kind == STOP_SWBREAK && s->gdb_swbreak)
		strbuf_puts(out, "swbreak:;");
	else if (ev->kind == STOP_HWBREAK && s->gdb_hwbreak)
		strbuf_puts(out, "hwbreak:;");
	struct user_regs_struct regs;
	if (inferior_get_regs(&s->inf, ev->tid, &regs) == 0) {
		gdb_put_expedited(out, AMD64_RBP_REGNUM, regs.rbp);
		gdb_put_expedited(out, AMD64_RSP_REGNUM, regs.rsp);
		gdb_put_expedited(out, AMD64_RIP_REGNUM, regs.rip);
	}
	strbuf_puts(out, "thread:");
	gdb_format_thread_id(s, out, ev->tid);
	strbuf_putc(out, ';');
	int core = gdb_thread_core(s->inf.pid, ev->tid);
	if (core >= 0)
		strbuf_printf(out, "core:%x;", core);
}
