/* sw backend: the one stepping loop. Every thread is single-stepped on its
 * own: the engine (sw_engine.c) waits for whichever thread reports next and
 * hands the status here: encode the instruction it just completed, then
 * step it again, or leave it stopped with an event for the caller (a
 * breakpoint before the next instruction, the end of a single-step, a
 * watchpoint, a signal). A thread blocked in a syscall simply has not
 * reported yet, so no thread ever waits for another. Per step: one waitpid,
 * one PTRACE_GETREGS, one PTRACE_SINGLESTEP (classification is cached).
 * `ptrev record` (sw_backend_record, at the end) is the engine resumed once
 * with every signal passed, waited on until the program ends. */
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

#include "ptrev/inferior_raw.h"
#include "ptrev/ptrace_wait.h"
#include "ptrev/sw_engine.h"
#include "ptrev/syscall_log.h"

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
	rc = sw_out_syscall(&r->out, &s);
	free(buf);
	r->end.syscalls++;
	return rc;
}

/* /proc/PID/mem reads the address space it was opened on: reopen it when
 * the program has a new one (execve). */
int sw_open_memfd(struct sw_rec *r)
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
		    (int64_t)now->rax == 0 && sw_open_memfd(r) < 0)
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
	return sw_sched_note(t, t->insns - 1);
}

void sw_set_pending(struct sw_thread *t, enum stop_kind kind, int sig)
{
	memset(&t->pending, 0, sizeof t->pending);
	t->pending.kind = kind;
	t->pending.tid = t->tid;
	t->pending.sig = sig;
	t->has_pending = true;
}

static bool is_exit_syscall(const struct sw_thread *t)
{
	return t->info.kind == INSN_SYSCALL &&
	       (t->regs.rax == SYS_exit || t->regs.rax == SYS_exit_group);
}

/* A breakpoint of the caller's before the instruction at ip? */
static enum stop_kind breakpoint_at(const struct inferior *inf, uint64_t ip)
{
	if (inf->nbps && inferior_has_swbreak(inf, ip))
		return STOP_SWBREAK;
	if (inf->dr7)
		for (int i = 0; i < 4; i++)
			if (inf->hw[i].used && inf->hw[i].type == 1 &&
			    inf->hw[i].addr == ip)
				return STOP_HWBREAK;
	return STOP_NONE;
}

/* Our int3 at the instruction a thread must execute: put the original byte
 * back for its step (counted, as several threads may step it). Another
 * thread reaching it meanwhile still stops: breakpoints are checked before
 * every instruction, not found by executing int3. */
void sw_lift_int3(struct sw_thread *t)
{
	struct sw_rec *r = t->rec;
	uint64_t ip = t->regs.rip;
	struct sw_breakpoint *bp = r->inf->nbps ? inf_find_swbreak(r->inf, ip) : NULL;
	struct lifted_bp *slot = NULL;

	if (!bp)
		return;
	for (int i = 0; i < 8; i++) {
		if (r->lifted[i].count && r->lifted[i].addr == ip) {
			slot = &r->lifted[i];
			break;
		}
		if (!r->lifted[i].count && !slot)
			slot = &r->lifted[i];
	}
	if (!slot)
		return; /* cannot happen with fewer than 8 threads on one bp */
	if (slot->count++ == 0) {
		slot->addr = ip;
		inf_mem_write_raw(r->inf, ip, &bp->saved, 1);
	}
	t->lifted = ip;
}

static void restore_int3(struct sw_thread *t)
{
	struct sw_rec *r = t->rec;
	static const uint8_t int3 = 0xcc;

	if (!t->lifted)
		return;
	for (int i = 0; i < 8; i++) {
		struct lifted_bp *l = &r->lifted[i];
		if (l->count && l->addr == t->lifted && --l->count == 0 &&
		    inf_find_swbreak(r->inf, l->addr))
			inf_mem_write_raw(r->inf, l->addr, &int3, 1);
	}
	t->lifted = 0;
}

int sw_step_thread(struct sw_thread *t)
{
	int sig = t->deliver;

	t->deliver = 0;
	t->delivering = sig != 0;
	t->exiting = !sig && is_exit_syscall(t);
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, (void *)(long)sig) < 0 &&
	    errno != ESRCH) {
		snprintf(t->rec->err, t->rec->errlen, "cannot step thread %d: %s",
			 (int)t->tid, strerror(errno));
		return -1;
	}
	t->inflight = true;
	return 0;
}

/* Has the thread an unblocked signal queued (the kernel delivers it before
 * it restarts a syscall)? From /proc: rare, only at interrupted syscalls. */
static bool signal_pending(pid_t pid, pid_t tid)
{
	char path[80], buf[4096];
	unsigned long long pnd = 0, shd = 0, blk = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, "SigPnd:", 7))
			pnd = strtoull(l + 7, NULL, 16);
		else if (!strncmp(l, "ShdPnd:", 7))
			shd = strtoull(l + 7, NULL, 16);
		else if (!strncmp(l, "SigBlk:", 7))
			blk = strtoull(l + 7, NULL, 16);
	}
	return ((pnd | shd) & ~blk) != 0;
}

/* A syscall interrupted by a signal is restarted by the kernel when the
 * thread goes on without a handler running: it executes the syscall
 * instruction again (restart_syscall for -ERESTART_RESTARTBLOCK). The
 * registers show that only once it has run, so the step about to be made
 * starts there. (With a signal to deliver, the handler decides.) */
static void predict_restart(struct sw_thread *t)
{
	int64_t rax = (int64_t)t->regs.rax;

	if ((int64_t)t->regs.orig_rax < 0 ||
	    (rax != -512 && rax != -513 && rax != -514 && rax != -516))
		return;
	if (signal_pending(t->rec->pid, t->tid))
		return; /* it is dequeued first, and stops us again */
	t->regs.rip -= 2;
	t->regs.rax = rax == -516 ? SYS_restart_syscall : t->regs.orig_rax;
	if (sw_classify(t->rec, t->regs.rip, &t->info) < 0)
		memset(&t->info, 0, sizeof t->info);
}

int sw_advance(struct sw_thread *t)
{
	struct sw_rec *r = t->rec;

	if (t->gone || t->has_pending || !t->resumed || r->stopping) {
		sw_sched_release(t);
		return 0;
	}
	if (!t->deliver)
		predict_restart(t);
	if (!t->deliver && !(t->exempt && t->regs.rip == t->reported_ip)) {
		/* A signal to deliver goes first: the handler runs before
		 * the instruction here. */
		enum stop_kind k = breakpoint_at(r->inf, t->regs.rip);
		if (k != STOP_NONE) {
			sw_set_pending(t, k, SIGTRAP);
			sw_sched_release(t);
			return 0;
		}
	}
	return sw_sched_run(t);
}

int sw_resume(struct sw_thread *t, const struct user_regs_struct *now, bool after_step)
{
	t->regs = *now;
	if (sw_classify(t->rec, t->regs.rip, &t->info) < 0)
		memset(&t->info, 0, sizeof t->info); /* fails if it completes */
	if (after_step) {
		t->exempt = false;
		t->reported = false;
		if (t->stepping && t->resumed && !t->has_pending)
			sw_set_pending(t, STOP_STEP, SIGTRAP);
	}
	return sw_advance(t);
}

/* A thread is gone (st from waitpid). A thread that was in a syscall ran
 * it (exit, exit_group, or blocked when another thread ended the process);
 * anything else was cut off before its next instruction. */
static int thread_gone(struct sw_thread *t, int st)
{
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);

	t->inflight = false;
	t->ready = false;
	sw_sched_release(t);
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
			if (sw_sched_note(t, t->insns - 1) < 0)
				return -1;
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

/* A new thread's first stop: its trace starts at its first instruction. */
static int start_new_thread(struct sw_thread *t)
{
	t->inflight = false;
	if (sw_thread_start(t) < 0)
		return -1;
	if (t->rec->inf->dr7) /* the kernel does not copy debug registers */
		inf_dr_apply_thread(t->rec->inf, t->tid);
	return sw_advance(t);
}

/* PTRACE_EVENT_CLONE: the parent's clone made thread ntid, which starts
 * after the clone instruction; its first stop (SIGSTOP) may have come
 * already. It runs when its creator was running. The parent goes on with
 * its step (it is inside the syscall, not at an instruction boundary). */
static int on_clone(struct sw_thread *t)
{
	struct sw_rec *r = t->rec;
	unsigned long msg = 0;
	struct trace_thread th = {0};
	struct sw_thread *nt;

	ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &msg);
	nt = sw_thread_add(r, (pid_t)msg);
	if (!nt || !inf_add_thread(r->inf, (pid_t)msg)) {
		snprintf(r->err, r->errlen, "out of memory");
		return -1;
	}
	nt->resumed = t->resumed;
	nt->inflight = true; /* until its first stop */
	th.tid = nt->tid;
	th.parent = t->tid;
	th.pos = t->insns;
	if (sw_out_thread(&r->out, &th) < 0)
		return -1;
	if (early_take(r, nt->tid) && start_new_thread(nt) < 0)
		return -1;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) < 0 && errno != ESRCH)
		return -1;
	t->inflight = true;
	return 0;
}

/* A step ended with SIGTRAP: the instruction ran, unless a hardware
 * execution breakpoint faulted before it. */
static int on_step_trap(struct sw_thread *t, struct user_regs_struct *now)
{
	struct inferior *inf = t->rec->inf;
	uint64_t dr6 = 0;

	if (inf->dr7) {
		dr6 = inf_dr_read_dr6(t->tid);
		if (dr6)
			inf_dr_clear_dr6(t->tid);
		dr6 &= 0xf;
	}
	for (int i = 0; i < 4 && dr6; i++) {
		if (!(dr6 & (1u << i)) || !inf->hw[i].used)
			continue;
		if (inf->hw[i].type == 1 && now->rip == t->regs.rip)
			/* Faulted before executing (the kernel set RF for
			 * the retry): nothing ran. */
			return sw_resume(t, now, false);
	}
	if (sw_complete_step(t, now) < 0)
		return -1;
	for (int i = 0; i < 4 && dr6; i++) {
		if (!(dr6 & (1u << i)) || !inf->hw[i].used || inf->hw[i].type == 1)
			continue;
		sw_set_pending(t, STOP_WATCH, SIGTRAP);
		t->pending.watch_addr = inf->hw[i].req_addr;
		t->pending.watch_type = inf->hw[i].type;
		break;
	}
	return sw_resume(t, now, true);
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
	t->inflight = false;
	if (st >> 16 == PTRACE_EVENT_CLONE)
		return on_clone(t);
	if (st >> 16) { /* other events are not enabled; just go on */
		t->inflight = true;
		return ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0 &&
		       errno != ESRCH ? -1 : 0;
	}
	if (!t->started)
		return start_new_thread(t); /* its initial SIGSTOP */
	if (ptrace(PTRACE_GETREGS, tid, NULL, &now) < 0)
		return errno == ESRCH ? 0 : -1;
	restore_int3(t);
	if (t->delivering) {
		if (sig == SIGTRAP)
			return sw_delivered_stop(t, &now);
		if (sw_signal_fatal(t) < 0) /* no handler ran */
			return -1;
		t->delivering = false;
	}
	if (sig == SIGTRAP && t->info.kind != INSN_INT)
		return on_step_trap(t, &now);
	return sw_signal_stop(t, sig, &now);
}

int sw_on_status(struct sw_rec *r, pid_t tid, int st)
{
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		struct sw_thread *t = sw_thread_find(r, tid);
		if (t && thread_gone(t, st) < 0)
			return -1;
		if (tid != r->pid) {
			inf_remove_thread(r->inf, tid);
			return 0;
		}
		/* The leader reports last: the whole process is gone. */
		for (size_t i = 0; i < r->nthreads; i++) {
			struct sw_thread *o = r->threads[i];
			if (!o->gone)
				sw_thread_finish(o, o->started ? o->regs.rip : 0, 0);
			o->inflight = false;
		}
		r->proc_gone = true;
		memset(&r->exit_ev, 0, sizeof r->exit_ev);
		r->exit_ev.tid = r->pid;
		if (WIFEXITED(st)) {
			r->exit_ev.kind = STOP_EXITED;
			r->exit_ev.exit_code = WEXITSTATUS(st);
			r->end.status_kind = 0;
			r->end.status = WEXITSTATUS(st);
		} else {
			r->exit_ev.kind = STOP_KILLED;
			r->exit_ev.sig = WTERMSIG(st);
			r->end.status_kind = 1;
			r->end.status = WTERMSIG(st);
		}
		return 0;
	}
	if (WIFSTOPPED(st) && on_stop(r, tid, st) < 0) {
		if (!r->err[0])
			snprintf(r->err, r->errlen, "recording failed: %s",
				 strerror(errno));
		return -1;
	}
	return 0;
}

/* Something failed: end every stream where it stands, kill the program
 * and reap it (the file stays readable). */
static void kill_everything(struct sw_rec *r)
{
	int st;

	for (size_t i = 0; i < r->nthreads; i++) {
		struct sw_thread *t = r->threads[i];
		if (!t->gone)
			sw_thread_finish(t, t->started ? t->regs.rip : 0, 0);
	}
	if (!r->proc_gone) {
		kill(r->pid, SIGKILL);
		while (ptrace_waitpid(-1, &st, __WALL) > 0)
			;
	}
	r->proc_gone = true;
}

int sw_backend_record(struct inferior *inf, struct trace_writer *w,
		      const struct sw_record_opts *opts, struct trace_end *end,
		      char *err, size_t errlen)
{
	struct sw_record_opts o = {0};
	struct sw_engine *e;
	bool saved_pass[65];
	int rc = -1, st;

	memset(end, 0, sizeof *end);
	end->status_kind = 2;
	if (opts)
		o = *opts;
	o.file_only = true;
	/* The program gets every signal as it would without us: none is an
	 * event. */
	memcpy(saved_pass, inf->pass_signals, sizeof saved_pass);
	for (int i = 1; i < 65; i++)
		inf->pass_signals[i] = true;
	e = sw_engine_new(inf, w, &o, err, errlen);
	if (!e) {
		memcpy(inf->pass_signals, saved_pass, sizeof saved_pass);
		inferior_kill(inf);
		return -1;
	}
	for (size_t i = 0; i < inf->nthreads; i++)
		sw_engine_resume(e, inf->threads[i].tid, false, 0);
	for (;;) {
		struct stop_event ev;
		int n = sw_engine_wait(e, &ev, true);
		if (n < 0)
			break;
		if (n == 1 && (ev.kind == STOP_EXITED || ev.kind == STOP_KILLED)) {
			rc = 0;
			break;
		}
		/* Nothing else is reported with every signal passed and no
		 * breakpoints; carry on regardless. */
		for (size_t i = 0; i < inf->nthreads; i++)
			sw_engine_resume(e, inf->threads[i].tid, false,
					 inf->threads[i].tid == ev.tid &&
					 ev.kind == STOP_SIGNAL ? ev.sig : 0);
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", e->r.err[0] ? e->r.err
			 : "recording failed");
		kill_everything(&e->r);
	}
	sw_engine_finish(e, end, false, NULL, 0);
	if (rc < 0 || (opts && opts->stop && *opts->stop)) {
		end->status_kind = 2;
		end->status = 0;
	}
	while (ptrace_waitpid(-1, &st, __WALL) > 0) /* reap the leftovers */
		;
	sw_engine_free(e);
	memcpy(inf->pass_signals, saved_pass, sizeof saved_pass);
	inf_mark_gone(inf);
	inf->pid = 0;
	return rc;
}
