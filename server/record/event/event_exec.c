/* Event recorder: the program executes another (execve). A replay cannot
 * go through an exec yet (it would have to load the new program as the
 * kernel did and gdb would have to follow it), so the recording starts
 * again there: the file is cut back to its header and begins as if ptrev
 * had launched the new program itself, with the execve's own path and
 * arguments (what the kernel put on the new stack, so a relaunch builds
 * the same one), the process's environment, auxv, signal state and
 * directory read at its first instruction, and one thread. What that
 * skips is the program that did the exec: the usual case is a wrapper
 * (a shell's `exec`, nohup, env, a version manager's shim script), and
 * the program the user meant is the one recorded. The kernel keeps the
 * rdtsc trap (PR_SET_TSC) across exec, and the held signals and the
 * descriptors the replay emulates carry over with the thread. */
#include "event_rec.h"

#include "ptrev/inferior_raw.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptrev/record_meta.h"
#include "ptrev/record_startup.h"

#define EXEC_MAX_ARGS 65536

static void free_exec(struct ev_rec *r)
{
	if (r->exec_argv)
		for (size_t i = 0; r->exec_argv[i]; i++)
			free(r->exec_argv[i]);
	free(r->exec_argv);
	free(r->exec_path);
	r->exec_argv = NULL;
	r->exec_path = NULL;
}

/* The NUL-terminated string at addr in the program's memory. */
static char *read_string(struct ev_rec *r, uint64_t addr)
{
	size_t len = 0, cap = 256;
	char *s = malloc(cap);
	while (s) {
		if (len + 64 > cap) {
			char *g = cap < (1u << 20) ? realloc(s, cap *= 2) : NULL;
			if (!g)
				break;
			s = g;
		}
		long n = ev_read_mem(r, addr + len, s + len, 64);
		if (n <= 0)
			break;
		char *nul = memchr(s + len, 0, (size_t)n);
		if (nul)
			return s;
		len += (size_t)n;
	}
	free(s);
	return NULL;
}

void ev_exec_entry(struct ev_thread *t, const struct user_regs_struct *regs)
{
	struct ev_rec *r = t->rec;
	bool at = t->entry_nr == SYS_execveat;
	uint64_t path = at ? regs->rsi : regs->rdi, argv = at ? regs->rdx : regs->rsi;
	free_exec(r);
	/* execveat relative to a directory or of a descriptor: the path
	 * means nothing to a relaunch; /proc/PID/exe names the file. */
	if (at && (int)regs->rdi != AT_FDCWD)
		path = 0;
	r->exec_path = path ? read_string(r, path) : NULL;
	if (r->exec_path && !r->exec_path[0]) {
		free(r->exec_path);
		r->exec_path = NULL;
	}
	size_t n = 0;
	r->exec_argv = calloc(1, sizeof *r->exec_argv);
	for (; r->exec_argv && n < EXEC_MAX_ARGS; n++) {
		uint64_t p = 0;
		if (ev_read_mem(r, argv + n * 8, &p, 8) != 8 || !p)
			break;
		char **g = realloc(r->exec_argv, (n + 2) * sizeof *g);
		if (!g)
			break;
		r->exec_argv = g;
		r->exec_argv[n] = read_string(r, p);
		r->exec_argv[n + 1] = NULL;
		if (!r->exec_argv[n])
			break;
	}
}

/* Every thread but t is gone (the kernel ended them); t has the pid. */
static void one_thread(struct ev_rec *r, struct ev_thread *t)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i] != t) {
			mem_diff_free(r->threads[i]->watch);
			free(r->threads[i]);
		}
	r->threads[0] = t;
	r->nthreads = 1;
	r->rr = 0;
	r->cpu = NULL;
	r->nearly = 0;
	t->tid = r->pid;
}

int ev_exec_event(struct ev_rec *r, pid_t tid)
{
	unsigned long former = (unsigned long)tid;
	ptrace(PTRACE_GETEVENTMSG, tid, NULL, &former);
	struct ev_thread *t = ev_thread_find(r, (pid_t)former);
	if (!t)
		t = ev_thread_find(r, tid);
	if (!t)
		return ev_fail(r, "exec by thread %lu, which ptrev does not know", former);
	one_thread(r, t);
	return ev_resume(t, 0); /* the execve's return comes next */
}

int ev_exec_restart(struct ev_thread *t)
{
	struct ev_rec *r = t->rec;
	char exe[PATH_MAX], link[64];
	snprintf(link, sizeof link, "/proc/%d/exe", (int)r->pid);
	ssize_t n = readlink(link, exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	const char *prog = r->exec_path ? r->exec_path : exe;
	char *none[] = {exe, NULL};
	char **args = r->exec_argv && r->exec_argv[0] ? r->exec_argv : none;

	if (ev_open_memfd(r) < 0)
		return -1;
	/* Driven by gdb, the recording kept in memory starts again too. */
	if ((r->live.on && ev_live_unkeep(r) < 0) || trace_writer_restart(r->w) < 0 ||
	    (r->live.on && ev_live_keep(r) < 0))
		return ev_fail(r, "starting the recording again at the exec of %s: %s", prog,
			       trace_writer_error(r->w) ? trace_writer_error(r->w) : "out of memory");
	r->execs++;
	snprintf(r->exec_last, sizeof r->exec_last, "%s", prog);
	record_write_meta(r->w, "event", prog, args, r->pid, r->opts.psb_period);
	trace_write_meta(r->w, "started", "exec");
	if (record_startup_hide_vdso(r->w, r->pid) < 0 || record_startup_meta(r->w, r->pid) < 0)
		fprintf(stderr, "ptrev: could not record the start state of %s; replays may not "
			"show full state\n", prog);
	free_exec(r);

	if (ev_sideband_start(r) < 0)
		return -1;
	r->nruns = 0; /* the runs of the program before: not in this file */
	r->end.syscalls = r->end.signals = 0;
	r->t0_ns = ev_now_ns();
	t->events = 0;
	t->event_ns = r->t0_ns;
	t->run_first = 0;
	struct trace_thread th = {.tid = t->tid};
	if (trace_write_thread(r->w, &th) < 0)
		return ev_fail(r, "writing a THREAD record: %s", trace_writer_error(r->w));
	t->at_return = ev_signal_pending(t);
	t->state = EV_T_READY;
	/* The old program's breakpoints went with its memory (gdb's are
	 * forgotten here too): the new one's entry gets its own. */
	if (r->live.on)
		inf_after_exec(r->inf);
	ev_entry_arm(r);
	if (r->live.on) {
		/* gdb learns of the exec as it would without recording (the
		 * new program's symbols, its breakpoints gone with the old
		 * memory). */
		struct stop_event ev = {.kind = r->inf->report_exec ? STOP_EXEC : STOP_SIGNAL,
					.tid = r->pid, .sig = SIGTRAP};
		return ev_live_report(r, &ev);
	}
	return ev_dispatch(r);
}

void ev_exec_free(struct ev_rec *r)
{
	free_exec(r);
}

void ev_exec_report(const struct ev_rec *r)
{
	if (r->execs)
		fprintf(stderr, "ptrev: the program executed another (%u exec%s): the recording "
			"holds the last, %s, from its start (a replay cannot go back through an "
			"exec)\n", r->execs, r->execs == 1 ? "" : "s", r->exec_last);
}
