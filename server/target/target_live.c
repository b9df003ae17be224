/* The live target: the program under ptrace (common/ptrace's inferior),
 * as gdbserver runs it. */
#include "target_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/target_xfer.h"

struct live_target {
	struct target base;
	struct inferior inf;
	bool have;          /* inf holds a process (running, or just ended) */
	bool started;       /* it has run: not at its first instruction now */
	struct process_run run;
};

static struct live_target *live(struct target *t)
{
	return (struct live_target *)t;
}

static bool running(const struct live_target *l)
{
	return l->have && !l->inf.exited;
}

static int exec_resume(void *ctx, pid_t tid, bool step, int sig)
{
	return inferior_resume(ctx, tid, step, sig);
}

static int exec_wait(void *ctx, struct stop_event *ev, bool block)
{
	return inferior_wait(ctx, ev, block);
}

static const struct process_exec_ops ptrace_exec = {exec_resume, exec_wait};

/* The thread gdb means: tid when it is one of ours (or the fork child
 * held for gdb), else the first. */
static pid_t thread_or_first(struct live_target *l, pid_t tid)
{
	if (!inferior_thread(&l->inf, tid) && !(tid && tid == l->inf.fork_child) &&
	    l->inf.nthreads)
		return l->inf.threads[0].tid;
	return tid;
}

static pid_t live_pid(struct target *t)
{
	return live(t)->inf.pid;
}

static bool live_alive(struct target *t)
{
	return running(live(t));
}

/* ptrev attached to it, not started it: gdb detaches on quit. */
static bool live_attached(struct target *t)
{
	return live(t)->inf.attached;
}

static bool live_report_forks(struct target *t, bool *fork, bool *vfork, bool *exec)
{
	struct live_target *l = live(t);
	l->inf.report_forks = *fork = *fork && l->inf.follow_forks;
	l->inf.report_vforks = *vfork = *vfork && l->inf.follow_forks;
	l->inf.report_exec = *exec = *exec && l->inf.follow_forks;
	return l->inf.follow_forks;
}

static pid_t live_fork_child(struct target *t)
{
	return live(t)->inf.fork_child;
}

static int live_detach_fork_child(struct target *t)
{
	return inferior_detach_fork_child(&live(t)->inf);
}

static int live_follow_fork_child(struct target *t)
{
	return inferior_follow_fork_child(&live(t)->inf);
}

static size_t live_threads(struct target *t, pid_t **ids)
{
	struct live_target *l = live(t);
	size_t n = 0;
	*ids = NULL;
	if (!running(l))
		return 0;
	*ids = malloc((l->inf.nthreads ? l->inf.nthreads : 1) * sizeof **ids);
	for (size_t i = 0; *ids && i < l->inf.nthreads; i++)
		(*ids)[n++] = l->inf.threads[i].tid;
	return n;
}

static void live_thread_info(struct target *t, pid_t tid, char *name, size_t namelen, int *core)
{
	pid_t pid = live(t)->inf.pid;
	char path[64];
	*core = process_thread_core(pid, tid);
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(name, (int)namelen, f))
		name[strcspn(name, "\n")] = '\0';
	fclose(f);
}

static bool live_can_record(struct target *t)
{
	return live(t)->have;
}

static int live_resume(struct target *t, const struct target_resume *r)
{
	struct live_target *l = live(t);
	if (r->reverse)
		return TARGET_UNSUPPORTED; /* no history: nothing to go back in */
	if (!running(l))
		return TARGET_REFUSED;
	l->started = true;
	return process_run_resume(&l->run, r);
}

static int live_wait(struct target *t, struct target_stop *stop, bool block)
{
	return process_run_wait(&live(t)->run, stop, block);
}

static int live_pause(struct target *t)
{
	struct live_target *l = live(t);
	if (!running(l))
		return -1;
	inferior_pause(&l->inf);
	return 0;
}

static int live_interrupt(struct target *t)
{
	return inferior_interrupt(&live(t)->inf);
}

static int live_current_stop(struct target *t, pid_t current, const struct target_stop *last,
			     struct target_stop *stop)
{
	struct live_target *l = live(t);
	(void)current;
	if (last->kind != TARGET_STOP_NONE) {
		*stop = *last;
		return 0;
	}
	if (!running(l))
		return -1;
	/* Nothing has happened yet: stopped at the first instruction. */
	memset(stop, 0, sizeof *stop);
	stop->kind = TARGET_STOP_SIGNAL;
	stop->sig = SIGTRAP;
	stop->tid = l->inf.pid;
	stop->core = -1;
	return 0;
}

static void live_pass_signals(struct target *t, const bool pass[65])
{
	memcpy(live(t)->inf.pass_signals, pass, sizeof live(t)->inf.pass_signals);
}

static int live_fetch_registers(struct target *t, pid_t tid, struct amd64_regfile *rf)
{
	struct live_target *l = live(t);
	memset(rf, 0, sizeof *rf);
	if (!running(l))
		return -1;
	tid = thread_or_first(l, tid);
	size_t n = sizeof rf->xsave;
	if (inferior_get_regs(&l->inf, tid, &rf->gpr) != 0 ||
	    inferior_get_xstate(&l->inf, tid, rf->xsave, &n) != 0)
		return -1;
	rf->xsave_len = n;
	rf->xcr0 = amd64_xcr0_from_xsave(rf->xsave, n);
	return TARGET_REGS_FULL;
}

static int live_store_registers(struct target *t, pid_t tid, const struct amd64_regfile *rf)
{
	struct live_target *l = live(t);
	if (!running(l))
		return -1;
	tid = thread_or_first(l, tid);
	return inferior_set_regs(&l->inf, tid, &rf->gpr) == 0 &&
	       inferior_set_xstate(&l->inf, tid, rf->xsave, rf->xsave_len) == 0 ? 0 : -1;
}

static ssize_t live_read_memory(struct target *t, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct live_target *l = live(t);
	if (tid && tid == l->inf.fork_child) /* gdb reads it before letting it go */
		return inferior_fork_child_mem(&l->inf, addr, buf, len, false);
	return running(l) ? inferior_read_mem(&l->inf, addr, buf, len) : -1; /* one address space */
}

static ssize_t live_write_memory(struct target *t, pid_t tid, uint64_t addr, const void *buf,
				 size_t len)
{
	struct live_target *l = live(t);
	if (tid && tid == l->inf.fork_child)
		return inferior_fork_child_mem(&l->inf, addr, (void *)buf, len, true);
	return running(l) ? inferior_write_mem(&l->inf, addr, buf, len) : -1;
}

static uint64_t live_xcr0(struct target *t)
{
	struct live_target *l = live(t);
	struct amd64_regfile *rf = malloc(sizeof *rf);
	uint64_t xcr0 = 0;
	if (rf && running(l) && l->inf.nthreads &&
	    live_fetch_registers(t, l->inf.threads[0].tid, rf) == TARGET_REGS_FULL)
		xcr0 = rf->xcr0;
	free(rf);
	return xcr0;
}

/* For Z1 the kind is the breakpoint length (1 on x86); for watchpoints it
 * is the watched length. */
static int live_insert_point(struct target *t, int type, uint64_t addr, int len)
{
	struct live_target *l = live(t);
	if (!running(l))
		return -1;
	if (type == 0)
		return inferior_insert_swbreak(&l->inf, addr);
	return inferior_insert_hwpoint(&l->inf, type, addr, len);
}

static int live_remove_point(struct target *t, int type, uint64_t addr, int len)
{
	struct live_target *l = live(t);
	if (!running(l))
		return -1;
	if (type == 0)
		return inferior_remove_swbreak(&l->inf, addr);
	return inferior_remove_hwpoint(&l->inf, type, addr, len);
}

static int live_auxv(struct target *t, struct strbuf *out)
{
	return running(live(t)) ? xfer_auxv(live(t)->inf.pid, out) : -ESRCH;
}

static int live_exec_file(struct target *t, struct strbuf *out)
{
	return running(live(t)) ? xfer_exec_file(live(t)->inf.pid, out) : -ESRCH;
}

static ssize_t read_mem_cb(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return inferior_read_mem(ctx, addr, buf, len);
}

static int live_libraries_svr4(struct target *t, pid_t tid, const char *annex,
			       struct strbuf *out)
{
	struct live_target *l = live(t);
	(void)tid;
	if (!running(l))
		return -ESRCH;
	return xfer_libraries_svr4(l->inf.pid, read_mem_cb, &l->inf, annex, out);
}

static int live_siginfo(struct target *t, pid_t tid, struct strbuf *out)
{
	struct live_target *l = live(t);
	struct inf_thread *th = running(l) ? inferior_thread(&l->inf, tid) : NULL;
	if (!th || !th->has_siginfo)
		return -EINVAL;
	strbuf_append(out, &th->siginfo, sizeof th->siginfo);
	return 0;
}

static pid_t live_fs_pid(struct target *t)
{
	return live(t)->have ? live(t)->inf.pid : 0;
}

/* Without a recording there is no history to ask about. */
static bool live_monitor(struct target *t, pid_t current, const char *cmd, const char *arg,
			 struct strbuf *out)
{
	(void)t;
	(void)current;
	(void)arg;
	if (strcmp(cmd, "when") == 0 || strcmp(cmd, "history") == 0)
		strbuf_puts(out, "No recording: ptrev serve was started with --no-record "
				 "(or attached to the process without --record).\n");
	else if (strcmp(cmd, "save") == 0)
		strbuf_puts(out, "No recording to save: ptrev serve was started with "
				 "--no-record (or attached to the process without --record).\n");
	else if (strcmp(cmd, "checkpoints") == 0)
		strbuf_puts(out, "No checkpoints: no full-state replay has run yet.\n");
	else
		return false;
	return true;
}

static int live_detach(struct target *t)
{
	struct live_target *l = live(t);
	if (!running(l) || inferior_detach(&l->inf) != 0)
		return -1;
	inferior_destroy(&l->inf);
	l->have = false;
	return 0;
}

static void live_kill(struct target *t)
{
	struct live_target *l = live(t);
	if (!l->have)
		return;
	inferior_kill(&l->inf);
	inferior_destroy(&l->inf);
	l->have = false;
}

static void live_destroy(struct target *t)
{
	live_kill(t);
	free(t);
}

static const struct target_ops live_ops = {
	.name = "live",
	.pid = live_pid,
	.alive = live_alive,
	.attached = live_attached,
	.report_forks = live_report_forks,
	.fork_child = live_fork_child,
	.detach_fork_child = live_detach_fork_child,
	.follow_fork_child = live_follow_fork_child,
	.threads = live_threads,
	.thread_info = live_thread_info,
	.can_record = live_can_record,
	.resume = live_resume,
	.wait = live_wait,
	.interrupt = live_interrupt,
	.pause = live_pause,
	.current_stop = live_current_stop,
	.pass_signals = live_pass_signals,
	.fetch_registers = live_fetch_registers,
	.store_registers = live_store_registers,
	.read_memory = live_read_memory,
	.write_memory = live_write_memory,
	.xcr0 = live_xcr0,
	.insert_point = live_insert_point,
	.remove_point = live_remove_point,
	.auxv = live_auxv,
	.exec_file = live_exec_file,
	.libraries_svr4 = live_libraries_svr4,
	.siginfo = live_siginfo,
	.fs_pid = live_fs_pid,
	.monitor = live_monitor,
	.detach = live_detach,
	.kill = live_kill,
	.destroy = live_destroy,
};

static struct live_target *new_live(char *err, size_t errlen)
{
	struct live_target *l = calloc(1, sizeof *l);
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->base.ops = &live_ops;
	l->inf.memfd = -1;
	return l;
}

/* l->inf holds the process now: served as the live target. */
static struct target *serve_live(struct live_target *l)
{
	l->have = true;
	inferior_follow_forks(&l->inf, true); /* a forked child must not die on a breakpoint */
	l->run = (struct process_run){.inf = &l->inf, .exec = &ptrace_exec, .ctx = &l->inf};
	return &l->base;
}

struct target *target_live_launch(const char *path, char *const argv[], char *const envp[],
				  const struct inferior_launch_opts *o, char *err, size_t errlen)
{
	struct live_target *l = new_live(err, errlen);
	if (!l)
		return NULL;
	if (inferior_launch_with(&l->inf, path, argv, envp, o, err, errlen) != 0) {
		inferior_destroy(&l->inf);
		free(l);
		return NULL;
	}
	return serve_live(l);
}

struct target *target_live_attach(pid_t pid, char *err, size_t errlen)
{
	struct live_target *l = new_live(err, errlen);
	if (!l)
		return NULL;
	if (inferior_attach(&l->inf, pid, err, errlen) != 0) {
		free(l);
		return NULL;
	}
	l->started = true; /* a recording from here starts mid-run */
	return serve_live(l);
}

struct target *target_live_take_fork_child(struct target *t, bool *vfork, char *err,
					  size_t errlen)
{
	while (t && t->beneath)
		t = t->beneath; /* the live target is at the bottom of the stack */
	if (!t || t->ops != &live_ops || !live(t)->have || !live(t)->inf.fork_child) {
		snprintf(err, errlen, "no fork child is held");
		return NULL;
	}
	struct live_target *l = new_live(err, errlen);
	if (!l)
		return NULL;
	*vfork = live(t)->inf.fork_child_vfork;
	if (inferior_take_fork_child(&live(t)->inf, &l->inf) != 0) {
		snprintf(err, errlen, "out of memory");
		free(l);
		return NULL;
	}
	l->started = true; /* it runs on from its parent's fork */
	return serve_live(l);
}

struct inferior *target_live_inferior(struct target *t)
{
	return t && t->ops == &live_ops && live(t)->have ? &live(t)->inf : NULL;
}

bool target_live_at_start(struct target *t)
{
	return t && t->ops == &live_ops && !live(t)->started;
}

void target_live_mark_started(struct target *t)
{
	if (t && t->ops == &live_ops)
		live(t)->started = true;
}
