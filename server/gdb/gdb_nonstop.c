/* Non-stop mode (QNonStop:1): gdb resumes and stops threads one by one and
 * hears of each stop as a %Stop notification, acknowledged by vStopped.
 *
 * The targets run all-stop (target.h): one execution at a time, every
 * thread stopped when one stops. Non-stop is made of that here, as a
 * bookkeeping of what gdb was told: the threads gdb knows as stopped stay
 * stopped; every other thread of the program runs as far as gdb knows,
 * and ptrev keeps it running. When the target stops for one thread (a
 * breakpoint, a step, a signal), that stop is queued for gdb and the
 * others are resumed at once, with the actions gdb gave them. A packet
 * that reads or changes the program while threads run is answered with
 * the program held (ptrev pauses it, answers, and resumes it), as
 * gdbserver pauses all threads for memory access. So gdb sees each thread
 * stop alone, and threads it did not stop are never held for longer than
 * a packet takes.
 *
 * The target pauses the program itself where it can (target_pause: the
 * live target's SIGSTOPs, never reported; a stop met meanwhile stays
 * pending for the next resume). Where it cannot (a live recording, whose
 * engine runs the program only inside its waits), ptrev interrupts it
 * (target_interrupt) and the resume after it discards the SIGINT: those
 * sent and not yet seen stop nothing gdb is told of, and a real stop met
 * first is queued like any other. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_server.h"

#define NS_MAX_ACTIONS 64

struct gdb_nonstop {
	/* Threads gdb was told are stopped and has not resumed since. */
	pid_t *stopped;
	size_t nstopped, cap_stopped;
	/* The action gdb gave a running thread (a step, a signal to
	 * deliver), kept until it stops: used again when ptrev resumes the
	 * thread after holding the program. Threads without one continue. */
	struct target_action acts[NS_MAX_ACTIONS];
	size_t nacts;
	/* Stop replies for gdb. The head has been sent (a %Stop
	 * notification, or the reply to '?') when notified is set; vStopped
	 * takes it off and answers with the next. */
	char **queue;
	size_t nqueue, cap_queue;
	bool notified;
	bool running;          /* resumed; its stop not taken yet */
	unsigned sigint_owed;  /* SIGINTs sent to hold the program, not seen */
	bool gone;             /* the program exited: nothing runs any more */
	struct stop_point *storage; /* gdb's points for the execution */
	struct stop_set stops;
};

bool gdb_nonstop_running(const struct gdb_server *s)
{
	return s->ns && s->ns->running;
}

static bool is_stopped(const struct gdb_nonstop *ns, pid_t tid)
{
	for (size_t i = 0; i < ns->nstopped; i++)
		if (ns->stopped[i] == tid)
			return true;
	return false;
}

static void forget_action(struct gdb_nonstop *ns, pid_t tid)
{
	for (size_t i = 0; i < ns->nacts; i++)
		if (ns->acts[i].tid == tid) {
			ns->acts[i] = ns->acts[--ns->nacts];
			return;
		}
}

static void mark_stopped(struct gdb_nonstop *ns, pid_t tid)
{
	forget_action(ns, tid);
	if (is_stopped(ns, tid))
		return;
	if (ns->nstopped == ns->cap_stopped) {
		size_t cap = ns->cap_stopped ? ns->cap_stopped * 2 : 8;
		pid_t *p = realloc(ns->stopped, cap * sizeof *p);
		if (!p)
			return;
		ns->stopped = p;
		ns->cap_stopped = cap;
	}
	ns->stopped[ns->nstopped++] = tid;
}

/* gdb resumes tid with action a (its tid set). */
static void mark_running(struct gdb_nonstop *ns, const struct target_action *a)
{
	for (size_t i = 0; i < ns->nstopped; i++)
		if (ns->stopped[i] == a->tid) {
			ns->stopped[i] = ns->stopped[--ns->nstopped];
			break;
		}
	forget_action(ns, a->tid);
	if ((a->kind == 's' || a->sig) && ns->nacts < NS_MAX_ACTIONS)
		ns->acts[ns->nacts++] = *a;
}

static void mark_all_stopped(struct gdb_server *s)
{
	pid_t *ids;
	size_t n = target_threads(s->target, &ids);
	for (size_t i = 0; i < n; i++)
		mark_stopped(s->ns, ids[i]);
	free(ids);
}

static void queue_text(struct gdb_nonstop *ns, const char *text)
{
	char *copy = strdup(text);
	if (!copy)
		return;
	if (ns->nqueue == ns->cap_queue) {
		size_t cap = ns->cap_queue ? ns->cap_queue * 2 : 8;
		char **q = realloc(ns->queue, cap * sizeof *q);
		if (!q) {
			free(copy);
			return;
		}
		ns->queue = q;
		ns->cap_queue = cap;
	}
	ns->queue[ns->nqueue++] = copy;
}

static void drop_queue(struct gdb_nonstop *ns)
{
	for (size_t i = 0; i < ns->nqueue; i++)
		free(ns->queue[i]);
	ns->nqueue = 0;
	ns->notified = false;
}

/* Queue the stop reply of stop: its thread is stopped for gdb now. */
static void queue_stop(struct gdb_server *s, const struct target_stop *stop)
{
	struct gdb_nonstop *ns = s->ns;
	struct strbuf saved = s->reply;
	strbuf_init(&s->reply);
	gdb_tell_exit(s, stop);
	gdb_stop_reply(s, stop);
	queue_text(ns, s->reply.data ? s->reply.data : "");
	strbuf_free(&s->reply);
	s->reply = saved;
	s->last = *stop;
	if (stop->kind == TARGET_STOP_EXITED || stop->kind == TARGET_STOP_KILLED) {
		ns->gone = true;
		ns->nstopped = 0;
		ns->nacts = 0;
	} else {
		mark_stopped(ns, stop->tid);
	}
}

/* A thread gdb stopped with vCont;t: stopped with no signal. */
static void queue_stopped_by_gdb(struct gdb_server *s, pid_t tid)
{
	struct target_stop stop;
	memset(&stop, 0, sizeof stop);
	stop.kind = TARGET_STOP_SIGNAL;
	stop.tid = tid;
	stop.core = -1;
	queue_stop(s, &stop);
}

/* Nothing runs any more: gdb's points for the execution are done with. */
static void execution_over(struct gdb_nonstop *ns)
{
	ns->running = false;
	free(ns->storage);
	ns->storage = NULL;
}

/* The execution stopped: queue it for gdb, unless it is ptrev's own hold. */
static void take_stop(struct gdb_server *s, int waited, struct target_stop *stop)
{
	struct gdb_nonstop *ns = s->ns;
	execution_over(ns);
	if ((waited < 0 || stop->kind == TARGET_STOP_NO_RESUMED) && target_alive(s->target))
		return; /* the threads that ran have exited: nothing runs now */
	if (waited < 0)
		gdb_stop_program_gone(s, stop); /* nothing left to wait for */
	if (stop->kind == TARGET_STOP_SIGNAL && stop->sig == SIGINT && ns->sigint_owed) {
		ns->sigint_owed--;
		return;
	}
	if (stop->kind == TARGET_STOP_EXEC)
		gdb_after_exec(s);
	queue_stop(s, stop);
}

/* Every thread stopped, for a packet to be answered on a program that
 * does not run: paused by the target where it can (nothing to report; a
 * stop met meanwhile stays pending for the next resume), else
 * interrupted and waited for. Only a live recording is interrupted, by a
 * SIGINT its engine makes up between its steps: no signal mask of the
 * program's can keep that from stopping it. */
static void hold(struct gdb_server *s)
{
	struct gdb_nonstop *ns = s->ns;
	if (!ns->running)
		return;
	if (target_pause(s->target) == 0) {
		execution_over(ns);
		return;
	}
	if (target_interrupt(s->target) == 0)
		ns->sigint_owed++;
	struct target_stop stop;
	int r = target_wait(s->target, &stop, true);
	take_stop(s, r, &stop);
}

/* Resume every thread that runs as far as gdb knows, with the action it
 * gave it (continue otherwise); the threads it knows as stopped stay. */
static void release(struct gdb_server *s)
{
	struct gdb_nonstop *ns = s->ns;
	if (ns->running || ns->gone || !target_alive(s->target))
		return;
	pid_t *ids;
	size_t n = target_threads(s->target, &ids);
	struct target_action acts[NS_MAX_ACTIONS];
	size_t k = 0;
	for (size_t i = 0; i < n && k < NS_MAX_ACTIONS; i++) {
		if (is_stopped(ns, ids[i]))
			continue;
		struct target_action a = {.kind = 'c', .sig = 0, .tid = ids[i]};
		for (size_t j = 0; j < ns->nacts; j++)
			if (ns->acts[j].tid == ids[i])
				a = ns->acts[j];
		acts[k++] = a;
	}
	if (n > k + ns->nstopped)
		fprintf(stderr, "ptrev: non-stop mode resumes %d threads at most; the others stay "
			"stopped\n", NS_MAX_ACTIONS);
	free(ids);
	if (!k)
		return;
	gdb_points_stop_set(s, &ns->stops, &ns->storage);
	struct target_resume r = {.reverse = false, .actions = acts, .nactions = k,
				  .current = s->g_tid, .reverse_tid = s->c_tid,
				  .stops = &ns->stops};
	if (target_resume(s->target, &r) != 0) {
		execution_over(ns);
		return;
	}
	ns->running = true;
	/* A signal is delivered once: a resume after a hold passes none. */
	for (size_t j = 0; j < ns->nacts; j++)
		ns->acts[j].sig = 0;
}

/* Send the queue's head as a notification where gdb is not already
 * going through the queue. -1 if the connection failed. */
static int notify(struct gdb_server *s)
{
	struct gdb_nonstop *ns = s->ns;
	if (ns->notified || !ns->nqueue)
		return 0;
	struct strbuf n = STRBUF_INIT;
	strbuf_puts(&n, "Stop:");
	strbuf_puts(&n, ns->queue[0]);
	if (s->remote_debug)
		gdb_debug_log_sent(s, n.data, n.len);
	int rc = rsp_conn_notify(&s->conn, n.data, n.len);
	strbuf_free(&n);
	ns->notified = true;
	return rc;
}

int gdb_nonstop_collect(struct gdb_server *s)
{
	struct gdb_nonstop *ns = s->ns;
	while (ns && ns->running) {
		struct target_stop stop;
		int r = target_wait(s->target, &stop, false);
		if (r == 0)
			break;
		take_stop(s, r, &stop);
		release(s); /* the threads gdb did not see stop go on */
	}
	return ns ? notify(s) : 0;
}

void gdb_nonstop_hold(struct gdb_server *s)
{
	if (s->ns)
		hold(s);
}

int gdb_nonstop_release(struct gdb_server *s)
{
	if (!s->ns)
		return 0;
	release(s);
	return notify(s);
}

/* '?': a stop reply for every thread (the one the target stopped for
 * first), the rest through vStopped; OK where nothing is there. */
static void status(struct gdb_server *s)
{
	struct gdb_nonstop *ns = s->ns;
	hold(s);
	drop_queue(ns);
	struct target_stop first;
	if (target_current_stop(s->target, s->g_tid, &s->last, &first) == 0) {
		queue_stop(s, &first);
		if (first.kind != TARGET_STOP_EXITED && first.kind != TARGET_STOP_KILLED) {
			pid_t *ids;
			size_t n = target_threads(s->target, &ids);
			for (size_t i = 0; i < n; i++)
				if (ids[i] != first.tid)
					queue_stopped_by_gdb(s, ids[i]);
			free(ids);
		}
	}
	if (!ns->nqueue) {
		strbuf_puts(&s->reply, "OK");
		return;
	}
	strbuf_puts(&s->reply, ns->queue[0]);
	ns->notified = true;
}

static void stopped_ack(struct gdb_server *s)
{
	struct gdb_nonstop *ns = s->ns;
	if (ns->notified && ns->nqueue) {
		free(ns->queue[0]);
		memmove(ns->queue, ns->queue + 1, --ns->nqueue * sizeof *ns->queue);
	}
	if (ns->nqueue) {
		strbuf_puts(&s->reply, ns->queue[0]);
	} else {
		strbuf_puts(&s->reply, "OK");
		ns->notified = false;
	}
}

/* vCont in non-stop mode: each thread takes the leftmost action naming
 * it; t stops a running thread (a stop with no signal for gdb), c/s/C/S
 * resume a stopped one. OK at once; the stops come as notifications. */
static void vcont(struct gdb_server *s, const char *spec)
{
	struct gdb_nonstop *ns = s->ns;
	struct target_action acts[NS_MAX_ACTIONS];
	int n = gdb_parse_vcont(s, spec, acts, NS_MAX_ACTIONS, true);
	if (n <= 0) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	hold(s);
	pid_t *ids;
	size_t nt = target_threads(s->target, &ids);
	for (size_t i = 0; i < nt; i++) {
		for (int j = 0; j < n; j++) {
			if (acts[j].tid != -1 && acts[j].tid != ids[i])
				continue;
			bool stopped = is_stopped(ns, ids[i]);
			if (acts[j].kind == 't' && !stopped) {
				queue_stopped_by_gdb(s, ids[i]);
			} else if (acts[j].kind != 't' && stopped) {
				struct target_action a = acts[j];
				a.tid = ids[i];
				mark_running(ns, &a);
			}
			break;
		}
	}
	free(ids);
	strbuf_puts(&s->reply, "OK");
}

/* bs/bc: the move is made at once, as in all-stop, and its stop comes as
 * a notification. */
static void reverse(struct gdb_server *s, const char *pkt)
{
	hold(s);
	struct strbuf saved = s->reply;
	strbuf_init(&s->reply);
	gdb_reverse_packet(s, pkt);
	bool moved = s->reply.data && (s->reply.data[0] == 'T' || s->reply.data[0] == 'S' ||
				       s->reply.data[0] == 'W' || s->reply.data[0] == 'X');
	if (moved) {
		queue_text(s->ns, s->reply.data);
		mark_all_stopped(s);
	}
	char *answer = strdup(moved ? "OK" : s->reply.data ? s->reply.data : "");
	strbuf_free(&s->reply);
	s->reply = saved;
	if (answer)
		strbuf_puts(&s->reply, answer);
	free(answer);
}

static void set_mode(struct gdb_server *s, bool on)
{
	if (on && !s->ns) {
		s->ns = calloc(1, sizeof *s->ns);
		if (!s->ns) {
			strbuf_puts(&s->reply, "E01");
			return;
		}
		if (target_alive(s->target))
			mark_all_stopped(s); /* nothing runs before gdb resumes it */
	} else if (!on && s->ns) {
		hold(s); /* all-stop from here: every thread stopped */
		gdb_nonstop_free(s);
	}
	strbuf_puts(&s->reply, "OK");
}

bool gdb_nonstop_packet(struct gdb_server *s, const char *pkt)
{
	if (strcmp(pkt, "QNonStop:1") == 0 || strcmp(pkt, "QNonStop:0") == 0) {
		set_mode(s, pkt[9] == '1');
		return true;
	}
	if (!s->ns)
		return false;
	if (strcmp(pkt, "?") == 0) {
		status(s);
	} else if (strcmp(pkt, "vStopped") == 0) {
		stopped_ack(s);
	} else if (strcmp(pkt, "vCtrlC") == 0) {
		gdb_nonstop_interrupt(s);
		strbuf_puts(&s->reply, "OK");
	} else if (strncmp(pkt, "vCont;", 6) == 0) {
		vcont(s, pkt + 5);
	} else if (strcmp(pkt, "bs") == 0 || strcmp(pkt, "bc") == 0) {
		reverse(s, pkt);
	} else {
		return false;
	}
	return true;
}

void gdb_nonstop_interrupt(struct gdb_server *s)
{
	/* As Ctrl-C in all-stop: the thread that takes the SIGINT stops with
	 * it, and gdb hears of that stop. */
	if (s->ns && s->ns->running)
		target_interrupt(s->target);
}

void gdb_nonstop_free(struct gdb_server *s)
{
	struct gdb_nonstop *ns = s->ns;
	if (!ns)
		return;
	drop_queue(ns);
	free(ns->queue);
	free(ns->stopped);
	free(ns->storage);
	free(ns);
	s->ns = NULL;
}
