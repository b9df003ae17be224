/* sw backend: one thread's step, from the recorder's side. A thread stands
 * at an instruction boundary: the instruction it just completed is encoded
 * (and a syscall's result and the memory it wrote are logged, the
 * mappings refreshed after one that changes them); then it is stepped
 * again, or left stopped with an event for the caller: a breakpoint before
 * the next instruction, the end of a single-step. A native run's
 * instructions are encoded here one by one too (sw_complete_run), and a
 * branch the block stepper emulates completes here like a step, without a
 * stop in between. Who steps when is the scheduler's
 * (recorder_sw_sched.c); what a waitpid status means is
 * recorder_sw_stop.c's, which calls here. */
#include "recorder_sw.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#include "ptrev/inferior_raw.h"
#include "ptrev/record_events.h"
#include "ptrev/syscall_table.h"

/* Write the SYSCALL record of the syscall t just completed (registers
 * before in t->regs), with the memory it wrote read back now. */
int sw_log_syscall(struct sw_thread *t, int64_t result)
{
	struct sw_rec *r = t->rec;
	int rc = record_syscall(r->w, t->tid, t->insns, t->regs.rax, &t->regs, result,
				sw_read_mem, r, t->watch, false);
	mem_diff_free(t->watch);
	t->watch = NULL;
	r->end.syscalls++;
	return rc;
}

/* A clone that made a task sharing our memory without being one of our
 * threads (CLONE_VM without CLONE_THREAD; CLONE_VFORK children stop
 * sharing before the parent goes on): from now on no int3 is written for
 * a native run, since that task could execute it. */
static void note_shared_vm(struct sw_thread *t, int64_t result)
{
	uint64_t flags = t->regs.rdi;

	if (result <= 0)
		return;
	if (t->regs.rax == SYS_clone3 &&
	    sw_read_mem(t->rec, t->regs.rdi, &flags, sizeof flags) != (long)sizeof flags)
		flags = CLONE_VM; /* unknown: assume the worst */
	else if (t->regs.rax != SYS_clone && t->regs.rax != SYS_clone3)
		return;
	if ((flags & CLONE_VM) && !(flags & (CLONE_THREAD | CLONE_VFORK)))
		t->rec->shared_vm = true;
}

int sw_complete_run(struct sw_thread *t, const struct block *b, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++) {
		if (ptenc_step(t->enc, b->ip[i], &b->insn[i], b->ip[i + 1]) < 0) {
			snprintf(t->rec->err, t->rec->errlen, "encoder (thread %d): %s",
				 (int)t->tid, ptenc_error(t->enc));
			return -1;
		}
		t->insns++;
		if (sw_sched_note(t, t->insns - 1) < 0)
			return -1;
	}
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
		if (sw_log_syscall(t, (int64_t)now->rax) < 0)
			return -1;
		if ((t->regs.rax == SYS_execve || t->regs.rax == SYS_execveat) &&
		    (int64_t)now->rax == 0) {
			if (sw_open_memfd(r) < 0)
				return -1;
			r->shared_vm = false; /* a new address space, ours alone */
			if (r->inf->report_exec) {
				/* gdb is told, and inserts its points in the
				 * new program again: the old ones are gone. */
				inf_after_exec(r->inf);
				t->exec_report = true;
			}
		}
		note_shared_vm(t, (int64_t)now->rax);
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

/* t stands at a boundary with registers now: its "before" state. */
static void at_boundary(struct sw_thread *t, const struct user_regs_struct *now,
			bool after_step)
{
	t->regs = *now;
	if (sw_classify(t->rec, t->regs.rip, &t->info) < 0)
		memset(&t->info, 0, sizeof t->info); /* fails if it completes */
	if (after_step) {
		t->exempt = false;
		t->reported = false;
		if (t->exec_report && !t->has_pending) {
			sw_set_pending(t, STOP_EXEC, SIGTRAP);
			t->exec_report = false;
		}
		if (t->fork_child && !t->has_pending) {
			/* Its fork returned: gdb is told, as live. */
			sw_set_pending(t, STOP_FORK, SIGTRAP);
			t->pending.child = t->fork_child;
			t->fork_child = 0;
		}
		if (t->stepping && t->resumed && !t->has_pending)
			sw_set_pending(t, STOP_STEP, SIGTRAP);
	}
}

/* Is t's next instruction the end of the program: exit_group, or the exit
 * of the only thread left? */
static bool ends_program(const struct sw_thread *t)
{
	if (!sw_is_exit_syscall(t))
		return false;
	if (t->regs.rax == SYS_exit_group)
		return true;
	for (size_t i = 0; i < t->rec->nthreads; i++)
		if (t->rec->threads[i] != t && !t->rec->threads[i]->gone)
			return false;
	return true;
}

int sw_advance(struct sw_thread *t)
{
	struct sw_rec *r = t->rec;
	struct user_regs_struct emu;
	unsigned chain = 0;

	for (;;) {
		int rc;

		if (t->gone || t->has_pending || !t->resumed || r->stopping) {
			sw_sched_release(t);
			return 0;
		}
		if (!t->deliver)
			predict_restart(t);
		if (!t->deliver && !(t->exempt && t->regs.rip == t->reported_ip)) {
			/* A signal to deliver goes first: the handler runs
			 * before the instruction here. */
			enum stop_kind k = sw_breakpoint_at(r->inf, t->regs.rip);
			if (k != STOP_NONE) {
				sw_set_pending(t, k, SIGTRAP);
				sw_sched_release(t);
				return 0;
			}
			/* The end of the program: held before it, so that gdb
			 * can still go back (sw_engine_stop_before_exit). */
			if (r->stop_before_exit && ends_program(t)) {
				sw_set_pending(t, STOP_SIGNAL, 0);
				sw_sched_release(t);
				return 0;
			}
		}
		rc = sw_sched_run(t, ++chain < SW_EMU_CHAIN ? &emu : NULL);
		if (rc <= 0)
			return rc;
		/* A branch emulated from the registers: it completed as a
		 * step would have, and the thread goes on from its target
		 * (loop here rather than recurse, for chains of them). */
		if (sw_complete_step(t, &emu) < 0)
			return -1;
		at_boundary(t, &emu, true);
	}
}

int sw_resume(struct sw_thread *t, const struct user_regs_struct *now, bool after_step)
{
	at_boundary(t, now, after_step);
	return sw_advance(t);
}
