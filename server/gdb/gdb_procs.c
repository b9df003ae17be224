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

void gdb_forget_program(struct gdb_server *s)
{
	gdb_points_clear(s);
	gdb_tls_forget(s);
	free(s->btrace);
	s->btrace = NULL;
	s->nbtrace = 0;
	s->btrace_pushed = false;
	s->g_tid = s->c_tid = 0;
	free(s->state_note);
	s->state_note = NULL;
}

void gdb_report_forks_of(const struct gdb_server *s, struct target *t)
{
	/* Asked once, in qSupported: what this target cannot report it
	 * simply does not (gdb was told of the first target's). */
	if (s->fork_events || s->vfork_events || s->exec_events) {
		bool fork = s->fork_events, vfork = s->vfork_events, exec = s->exec_events;
		target_report_forks(t, &fork, &vfork, &exec);
	}
}

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

