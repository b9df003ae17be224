/* Several processes at once, as gdbserver debugs them with gdb's
 * multiprocess extensions: a fork child gdb keeps (set detach-on-fork
 * off), and a vfork's parent while gdb follows the child (gdb lets the
 * parent go only once the child has exec'd or exited, as the two share
 * their memory until then).
 *
 * The session's fields that belong to a process (its target stack, what
 * gdb set with Z, btrace, TLS descriptors, its current thread and last
 * stop) are those of the current process; the others wait in s->procs,
 * stopped, and change places with it when gdb names one (Hg, Hc, vCont,
 * D, vKill). gdb's all-stop default (schedule-multiple off) resumes only
 * the current inferior; with schedule-multiple on, every process a vCont
 * names runs at once and the first stop is reported, the others held
 * where they are with what they met pending (the ptrace layer hands each
 * process the stops another's wait took: inferior_wait.c). A recorded
 * process runs alone. A kept child is not recorded: a recording follows
 * the process it began with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_server.h"

/* Exchange the current process's fields with p's. */
static void swap(struct gdb_server *s, struct gdb_proc *p)
{
	struct gdb_proc cur = {
		.target = s->target, .points = s->points, .npoints = s->npoints,
		.btrace = s->btrace, .nbtrace = s->nbtrace, .btrace_pushed = s->btrace_pushed,
		.g_tid = s->g_tid, .last = s->last, .state_note = s->state_note,
	};
	memcpy(cur.tls_sym, s->tls_sym, sizeof cur.tls_sym);
	s->target = p->target;
	s->points = p->points;
	s->npoints = p->npoints;
	s->btrace = p->btrace;
	s->nbtrace = p->nbtrace;
	s->btrace_pushed = p->btrace_pushed;
	s->g_tid = p->g_tid;
	s->last = p->last;
	s->state_note = p->state_note;
	memcpy(s->tls_sym, p->tls_sym, sizeof s->tls_sym);
	*p = cur;
	s->c_tid = 0; /* gdb names the thread to move again (Hc) */
}

void gdb_procs_keep_child(struct gdb_server *s)
{
	pid_t child = s->target ? target_fork_child(s->target) : 0;
	if (!child || !s->gdb_multiprocess || s->ns)
		return;
	struct gdb_proc *grown = realloc(s->procs, (s->nprocs + 1) * sizeof *grown);
	if (!grown)
		return;
	s->procs = grown;
	char err[256];
	bool vfork = false;
	struct target *t = target_live_take_fork_child(s->target, &vfork, err, sizeof err);
	if (!t) {
		fprintf(stderr, "ptrev: cannot keep fork child %d: %s\n", (int)child, err);
		return;
	}
	gdb_report_forks_of(s, t); /* its own forks, as gdb asked */
	struct gdb_proc *p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof *p);
	/* A forked child's memory holds the parent's int3s (the target
	 * put them back in its copy, and its debug registers); gdb takes
	 * them out or keeps them as its own, as from gdbserver's copy of
	 * its list. A vforked child shares the parent's memory, whose int3s
	 * are out until the parent's vfork is done. */
	if (!vfork)
		gdb_points_copy(s, &p->points, &p->npoints);
	p->target = t;
	p->g_tid = child;
	/* Stopped by its fork, with no signal of its own (what gdbserver
	 * reports for a new inferior that `?` asks about). */
	p->last = (struct target_stop){.kind = TARGET_STOP_SIGNAL, .sig = 0, .tid = child,
				       .core = -1};
	if (s->g_tid == child)
		s->g_tid = target_pid(s->target);
	if (s->target && target_can_reverse(s->target))
		fprintf(stderr, "ptrev: fork child %d is debugged too, not recorded: the "
			"recording follows process %d\n", (int)child, (int)target_pid(s->target));
}

bool gdb_procs_select(struct gdb_server *s, pid_t pid)
{
	if (pid <= 0 || !s->target || pid == target_pid(s->target))
		return true;
	for (size_t i = 0; i < s->nprocs; i++) {
		if (target_pid(s->procs[i].target) == pid) {
			swap(s, &s->procs[i]);
			return true;
		}
	}
	/* A fork child a process holds (gdb kills it with its parent, or
	 * turns to it): a process of its own from now on. */
	for (size_t i = 0; i <= s->nprocs; i++) {
		if (i > 0 && target_fork_child(s->procs[i - 1].target) == pid)
			swap(s, &s->procs[i - 1]);
		if (target_fork_child(s->target) == pid) {
			gdb_procs_keep_child(s);
			return target_fork_child(s->target) != pid && gdb_procs_select(s, pid);
		}
	}
	return false;
}

bool gdb_procs_drop_current(struct gdb_server *s)
{
	if (s->nprocs == 0)
		return false;
	/* The ended process's fields go with it, as gdb_forget_program
	 * forgets a program. */
	gdb_forget_program(s);
	target_kill(s->target); /* a recording is finished and saved */
	target_free(s->target);
	s->target = NULL;
	struct gdb_proc *p = &s->procs[--s->nprocs];
	swap(s, p);
	return true;
}

void gdb_procs_free(struct gdb_server *s)
{
	while (gdb_procs_drop_current(s))
		;
	free(s->procs);
	s->procs = NULL;
}

bool gdb_procs_threads(struct gdb_server *s, size_t i, pid_t *pid, struct target **t,
		       pid_t **ids, size_t *n)
{
	*ids = NULL;
	*n = 0;
	if (i > s->nprocs || (i == 0 && !s->target))
		return false;
	*t = i == 0 ? s->target : s->procs[i - 1].target;
	*pid = target_pid(*t);
	*n = target_threads(*t, ids);
	return true;
}

/* gdb's schedule-multiple: at most this many processes run at once. */
#define RUN_MAX 16

/* The processes that actions naming pids are for (0: every one) in run;
 * their number. */
static size_t processes_named(struct gdb_server *s, const pid_t *pids, size_t n,
			      pid_t run[RUN_MAX])
{
	size_t nrun = 0;
	bool all = false;
	for (size_t i = 0; i <= n + s->nprocs && nrun < RUN_MAX; i++) {
		pid_t p;
		if (i < n) {
			p = pids[i];
			all = all || p == 0;
		} else if (!all) {
			break;
		} else {
			p = i == n ? target_pid(s->target) : target_pid(s->procs[i - n - 1].target);
		}
		bool seen = p == 0;
		for (size_t k = 0; k < nrun && !seen; k++)
			seen = run[k] == p;
		if (!seen)
			run[nrun++] = p;
	}
	return nrun;
}

/* Wait for the first stop of the targets ts (NULL: done with); its index,
 * or -1 where gdb went away. */
static int first_stop(struct gdb_server *s, struct target *ts[], size_t nts,
		      struct target_stop *stop)
{
	for (;;) {
		size_t waiting = 0;
		for (size_t k = 0; k < nts; k++) {
			if (!ts[k])
				continue;
			int r = target_wait(ts[k], stop, false);
			if (r == 1 && stop->kind == TARGET_STOP_NO_RESUMED && !s->gdb_no_resumed)
				r = 0; /* a gdb without N waits on, as it always did */
			if (r == 1)
				return (int)k;
			if (r < 0) {
				gdb_stop_program_gone(s, stop);
				stop->tid = target_pid(ts[k]);
				return (int)k;
			}
			waiting++;
		}
		int ready = waiting ? gdb_poll_connection(s) : -1;
		if (ready < 0)
			return -1;
		if (!ready)
			continue;
		const char *pkt;
		size_t len;
		switch (rsp_conn_recv(&s->conn, &pkt, &len, 0)) {
		case RSP_RECV_INTERRUPT:
			for (size_t k = 0; k < nts; k++)
				if (ts[k])
					target_interrupt(ts[k]);
			break;
		case RSP_RECV_CLOSED:
			return -1;
		case RSP_RECV_PACKET:
			/* All-stop: nothing but Ctrl-C while they run. */
			if (rsp_conn_send_str(&s->conn, "E01") != 0)
				return -1;
			break;
		case RSP_RECV_TIMEOUT:
			break;
		}
	}
}

void gdb_procs_run_several(struct gdb_server *s, const struct target_action *acts,
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
	int won = started ? first_stop(s, ts, nrun, &stop) : -1;
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
