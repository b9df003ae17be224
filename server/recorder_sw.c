/* sw backend: the stepping loop. Every thread is single-stepped on its own:
 * wait for whichever thread reports next, encode the instruction it just
 * completed, step it again. A thread blocked in a syscall simply has not
 * reported yet, so no thread ever waits for another. Per step: one waitpid,
 * one PTRACE_GETREGS, one PTRACE_SINGLESTEP (classification is cached). */
#include "recorder_sw.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "ptrev/syscall_inject.h"
#include "syscall_log.h"

#define MAX_WRITES 64

/* Write the SYSCALL record of the syscall t just completed (registers
 * before in t->regs), with the memory it wrote read back now. */
static int log_syscall(struct sw_thread *t, int64_t result)
{
	struct sw_rec *r = t->rec;
	struct sc_range rg[MAX_WRITES];
	struct trace_mem_write wr[MAX_WRITES];
	struct trace_syscall s = {0};
	uint8_t *buf = NULL;
	size_t total = 0, at = 0;
	int n, rc;

	s.tid = t->tid;
	s.pos = t->insns;
	s.nr = t->regs.rax;
	s.args[0] = t->regs.rdi;
	s.args[1] = t->regs.rsi;
	s.args[2] = t->regs.rdx;
	s.args[3] = t->regs.r10;
	s.args[4] = t->regs.r8;
	s.args[5] = t->regs.r9;
	s.result = result;
	n = syscall_log_writes(s.nr, s.args, result, sw_read_mem, r, rg,
			       MAX_WRITES);
	s.unknown = n < 0;
	for (int i = 0; i < n; i++)
		total += rg[i].len;
	if (total && !(buf = malloc(total)))
		n = 0;
	for (int i = 0; i < n; i++) {
		/* What cannot be read (a bad pointer the kernel refused to
		 * write through, EFAULT) was not written either. */
		long got = sw_read_mem(r, rg[i].addr, buf + at, rg[i].len);
		if (got <= 0)
			continue;
		wr[s.nwrites].addr = rg[i].addr;
		wr[s.nwrites].bytes = buf + at;
		wr[s.nwrites].len = (size_t)got;
		s.nwrites++;
		at += (size_t)got;
	}
	s.writes = wr;
	rc = trace_write_syscall(r->w, &s);
	free(buf);
	r->end->syscalls++;
	return rc;
}

/* /proc/PID/mem reads the address space it was opened on: reopen it when
 * the program has a new one (execve). */
static int open_memfd(struct sw_rec *r)
{
	char path[64];
	int fd;

	snprintf(path, sizeof path, "/proc/%d/mem", (int)r->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(r->err, r->errlen, "cannot open %s: %s", path,
			 strerror(errno));
		return -1;
	}
	if (r->memfd >= 0)
		close(r->memfd);
	r->memfd = fd;
	if (r->sb)
		sideband_set_memfd(r->sb, fd);
	return 0;
}

int sw_complete_step(struct sw_thread *t, const struct user_regs_struct *now)
{
	struct sw_rec *r = t->rec;
	int rc;

	if (!t->info.len) {
		snprintf(r->err, r->errlen, "thread %d executed undecodable "
			 "bytes at %#llx", (int)t->tid,
			 (unsigned long long)t->regs.rip);
		return -1;
	}
	rc = ptenc_step(t->enc, t->regs.rip, &t->info, now->rip);
	if (rc < 0) {
		snprintf(r->err, r->errlen, "encoder (thread %d): %s",
			 (int)t->tid, ptenc_error(t->enc));
		return -1;
	}
	if (rc == 0)
		return 0; /* one iteration of a REP instruction */
	if (t->info.kind == INSN_SYSCALL) {
		if (log_syscall(t, (int64_t)now->rax) < 0)
			return -1;
		if ((t->regs.rax == SYS_execve || t->regs.rax == SYS_execveat) &&
		    (int64_t)now->rax == 0 && open_memfd(r) < 0)
			return -1;
		if (syscall_changes_maps(t->regs.rax)) {
			sw_icache_invalidate(r);
			if (sideband_update(r->sb, t->tid, t->insns + 1) < 0) {
				snprintf(r->err, r->errlen, "cannot update the "
					 "mappings of %d", (int)r->pid);
				return -1;
			}
		}
		ptenc_set_time(t->enc, __rdtsc());
	}
	t->insns++;
	return 0;
}

int sw_resume(struct sw_thread *t, const struct user_regs_struct *now)
{
	int sig = t->deliver;

	t->regs = *now;
	if (sw_classify(t->rec, now->rip, &t->info) < 0)
		memset(&t->info, 0, sizeof t->info); /* fails if it completes */
	t->deliver = 0;
	t->delivering = sig != 0;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, (void *)(long)sig) < 0 &&
	    errno != ESRCH) {
		snprintf(t->rec->err, t->rec->errlen, "cannot step thread %d: %s",
			 (int)t->tid, strerror(errno));
		return -1;
	}
	return 0;
}

static bool is_exit_syscall(const struct sw_thread *t)
{
	return t->info.kind == INSN_SYSCALL &&
	       (t->regs.rax == SYS_exit || t->regs.rax == SYS_exit_group);
}

/* A thread is gone (st from waitpid). A thread that was in a syscall ran
 * it (exit, exit_group, or blocked when another thread ended the process);
 * anything else was cut off before its next instruction. */
static int thread_gone(struct sw_thread *t, int st)
{
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);

	if (!t->started)
		return sw_thread_finish(t, 0, code);
	if (t->delivering && WIFSIGNALED(st)) {
		if (sw_signal_fatal(t) < 0)
			return -1;
		return sw_thread_finish(t, t->regs.rip, code);
	}
	if (t->info.kind == INSN_SYSCALL) {
		if (ptenc_step(t->enc, t->regs.rip, &t->info, 0) == 1) {
			if (is_exit_syscall(t) && log_syscall(t, 0) < 0)
				return -1;
			t->insns++;
		}
		return sw_thread_finish(t, 0, code);
	}
	return sw_thread_finish(t, t->regs.rip, code);
}

static void early_add(struct sw_rec *r, pid_t tid)
{
	if (r->nearly == r->capearly) {
		size_t cap = r->capearly ? r->capearly * 2 : 8;
		pid_t *n = realloc(r->early, cap * sizeof *n);
		if (!n)
			return;
		r->early = n;
		r->capearly = cap;
	}
	r->early[r->nearly++] = tid;
}

static bool early_take(struct sw_rec *r, pid_t tid)
{
	for (size_t i = 0; i < r->nearly; i++) {
		if (r->early[i] == tid) {
			r->early[i] = r->early[--r->nearly];
			return true;
		}
	}
	return false;
}

static int start_and_resume(struct sw_thread *t)
{
	if (sw_thread_start(t) < 0)
		return -1;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) < 0 && errno != ESRCH) {
		snprintf(t->rec->err, t->rec->errlen, "cannot step thread %d: %s",
			 (int)t->tid, strerror(errno));
		return -1;
	}
	return 0;
}

/* PTRACE_EVENT_CLONE: the parent's clone made thread ntid, which starts
 * after the clone instruction; its first stop (SIGSTOP) may have come
 * already. The parent goes on with its step. */
static int on_clone(struct sw_thread *t)
{
	struct sw_rec *r = t->rec;
	unsigned long msg = 0;
	struct trace_thread th = {0};
	struct sw_thread *nt;

	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg);
	nt = sw_thread_add(r, (pid_t)msg);
	if (!nt) {
		snprintf(r->err, r->errlen, "out of memory");
		return -1;
	}
	th.tid = nt->tid;
	th.parent = t->tid;
	th.pos = t->insns;
	if (trace_write_thread(r->w, &th) < 0)
		return -1;
	if (early_take(r, nt->tid) && start_and_resume(nt) < 0)
		return -1;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) < 0 && errno != ESRCH)
		return -1;
	return 0;
}

static int on_stop(struct sw_rec *r, pid_t tid, int st)
{
	struct sw_thread *t = sw_thread_find(r, tid);
	struct user_regs_struct now;
	int sig = WSTOPSIG(st);

	if (!t) {
		/* A new thread reporting before its creator's clone event. */
		early_add(r, tid);
		return 0;
	}
	if (st >> 16 == PTRACE_EVENT_CLONE)
		return on_clone(t);
	if (st >> 16) /* other events are not enabled; just go on */
		return ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0 &&
		       errno != ESRCH ? -1 : 0;
	if (!t->started)
		return start_and_resume(t); /* its initial SIGSTOP */
	if (ptrace(PTRACE_GETREGS, tid, NULL, &now) < 0)
		return errno == ESRCH ? 0 : -1;
	if (t->delivering) {
		if (sig == SIGTRAP)
			return sw_delivered_stop(t, &now);
		if (sw_signal_fatal(t) < 0) /* no handler ran */
			return -1;
		t->delivering = false;
	}
	if (sig == SIGTRAP && t->info.kind != INSN_INT) {
		if (sw_complete_step(t, &now) < 0)
			return -1;
		return sw_resume(t, &now);
	}
	return sw_signal_stop(t, sig, &now);
}

static void stop_everything(struct sw_rec *r)
{
	int st;

	for (size_t i = 0; i < r->nthreads; i++) {
		struct sw_thread *t = r->threads[i];
		if (!t->gone)
			sw_thread_finish(t, t->started ? t->regs.rip : 0, 0);
	}
	kill(r->pid, SIGKILL);
	while (waitpid(-1, &st, __WALL) > 0 || errno == EINTR)
		;
}

static int set_tsc_trapping(struct sw_rec *r, struct sw_thread *t)
{
	uint64_t args[6] = { PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0, 0 };
	int64_t res = 0;
	int pending = 0;

	if (syscall_inject(r->pid, SYS_prctl, args, &res, &pending, r->err,
			   r->errlen) < 0)
		return -1;
	t->deliver = pending;
	if (res < 0) {
		/* Without trapping the program reads the TSC itself: the
		 * recording is still exact, only the values are not logged. */
		fprintf(stderr, "ptrev: cannot trap rdtsc (prctl: %s); rdtsc "
			"values are not recorded\n", strerror((int)-res));
	}
	return 0;
}

int sw_backend_record(struct inferior *inf, struct trace_writer *w,
		      const struct sw_record_opts *opts, struct trace_end *end,
		      char *err, size_t errlen)
{
	struct sw_rec r = {0};
	struct trace_thread th = {0};
	struct sw_thread *main_thread;
	struct timespec t0, t1;
	int rc = -1, st;
	bool stopped = false;

	memset(end, 0, sizeof *end);
	end->status_kind = 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r.pid = inf->pid;
	r.memfd = -1;
	r.w = w;
	r.psb_period = opts && opts->psb_period ? opts->psb_period
						: PTENC_DEFAULT_PSB_PERIOD;
	r.end = end;
	r.err = err;
	r.errlen = errlen;
	r.gen = 1;
	r.icache = calloc((size_t)1 << ICACHE_BITS, sizeof *r.icache);
	if (open_memfd(&r) < 0)
		goto out;
	r.sb = sideband_new(r.pid, r.memfd, w);
	if (!r.icache || !r.sb) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	ptrace(PTRACE_SETOPTIONS, r.pid, NULL,
	       (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL));
	if (sideband_update(r.sb, 0, 0) < 0) {
		snprintf(err, errlen, "cannot read the mappings of %d", (int)r.pid);
		goto out;
	}
	main_thread = sw_thread_add(&r, r.pid);
	if (!main_thread || set_tsc_trapping(&r, main_thread) < 0)
		goto out;
	th.tid = r.pid;
	if (trace_write_thread(w, &th) < 0 || sw_thread_start(main_thread) < 0)
		goto out;
	if (sw_resume(main_thread, &main_thread->regs) < 0)
		goto out;

	while (r.live > 0) {
		pid_t tid;
		if (opts && opts->stop && *opts->stop) {
			stopped = true;
			break;
		}
		tid = waitpid(-1, &st, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: nothing left */
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			struct sw_thread *t = sw_thread_find(&r, tid);
			if (t && thread_gone(t, st) < 0)
				goto out;
			if (tid == r.pid) {
				end->status_kind = WIFEXITED(st) ? 0 : 1;
				end->status = WIFEXITED(st) ? WEXITSTATUS(st)
							    : WTERMSIG(st);
			}
			continue;
		}
		if (WIFSTOPPED(st) && on_stop(&r, tid, st) < 0) {
			if (!err[0])
				snprintf(err, errlen, "recording failed: %s",
					 strerror(errno));
			goto out;
		}
	}
	rc = 0;
	if (stopped) {
		end->status_kind = 2;
		end->status = 0;
	}
out:
	if (opts && opts->stop && *opts->stop) {
		stopped = true;
		end->status_kind = 2;
	}
	if (rc < 0 || stopped) {
		char keep[256];
		snprintf(keep, sizeof keep, "%s", err);
		stop_everything(&r);
		snprintf(err, errlen, "%s", keep);
	}
	else
		while (waitpid(-1, &st, __WALL) > 0) /* reap the leftovers */
			;
	inf->exited = true;
	inf->pid = 0;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	end->duration_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull +
			   (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
	sw_threads_free(&r);
	sideband_free(r.sb);
	free(r.icache);
	free(r.early);
	if (r.memfd >= 0)
		close(r.memfd);
	return rc;
}
