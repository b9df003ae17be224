/* Checkpoints: stopped copies of a replay process, made by injecting a
 * clone() into it through ptrace, and the policy that decides which ones
 * to keep (dense near the last requested position, sparser further away).
 *
 * The clone has exit signal 0 (so killing a copy sends its parent no
 * SIGCHLD that the replay would have to hide) and no CLONE_VM: a fork with
 * copy-on-write memory. PTRACE_O_TRACECLONE makes the copy ours, stopped. */
#include "replayer_internal.h"

#include "ptrev/ptrace_wait.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int rp_open_mem(struct rp_proc *p)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/mem", (int)p->pid);
	p->memfd = open(path, O_RDWR | O_CLOEXEC);
	return p->memfd < 0 ? -1 : 0;
}

void rp_kill(struct rp_proc *p)
{
	int st;

	if (!p->pid)
		return;
	kill(p->pid, SIGKILL);
	ptrace_waitpid(p->pid, &st, __WALL);
	if (p->memfd >= 0)
		close(p->memfd);
	p->pid = 0;
	p->memfd = -1;
}

/* Wait for the next stop of the child that a clone event announced (its
 * SIGSTOP; with PTRACE_O_TRACECLONE it may even have come first). */
static int wait_new_child(pid_t pid)
{
	int st;

	if (ptrace_wait_task(pid, &st) < 0 || !WIFSTOPPED(st))
		return -1;
	return 0;
}

int rp_fork(struct replayer *r, const struct rp_proc *p, struct rp_proc *child)
{
	struct user_regs_struct saved, regs;
	unsigned long msg = 0;
	long word;
	int st, ret = -1;
	pid_t cpid = 0;

	memset(child, 0, sizeof *child);
	child->memfd = -1;
	if (ptrace(PTRACE_GETREGS, p->pid, NULL, &saved) < 0)
		return rp_fail(r, "checkpoint: registers of %d: %s", (int)p->pid,
			       strerror(errno));
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, p->pid, (void *)saved.rip, NULL);
	if (errno)
		return rp_fail(r, "checkpoint: code at %#llx: %s",
			       (unsigned long long)saved.rip, strerror(errno));
	/* Borrow two bytes at the IP for `syscall` (0f 05, little endian). */
	if (ptrace(PTRACE_POKETEXT, p->pid, (void *)saved.rip,
		   (void *)(((uint64_t)word & ~0xffffull) | 0x050full)) < 0)
		return rp_fail(r, "checkpoint: patch: %s", strerror(errno));
	regs = saved;
	regs.rax = SYS_clone;
	regs.orig_rax = (unsigned long long)-1;
	regs.rdi = 0;  /* flags: no CLONE_VM, exit signal 0 */
	regs.rsi = 0;  /* same stack */
	regs.rdx = regs.r10 = regs.r8 = 0;
	if (ptrace(PTRACE_SETREGS, p->pid, NULL, &regs) < 0) {
		rp_fail(r, "checkpoint: set registers: %s", strerror(errno));
		goto restore;
	}
	/* First stop: the clone event (the copy exists), then the end of the
	 * syscall in the parent. */
	if (ptrace(PTRACE_SINGLESTEP, p->pid, NULL, NULL) < 0 ||
	    ptrace_wait_task(p->pid, &st) < 0 || !WIFSTOPPED(st) ||
	    st >> 8 != (SIGTRAP | (PTRACE_EVENT_CLONE << 8))) {
		rp_fail(r, "checkpoint: clone did not happen (status %#x)", st);
		goto restore;
	}
	ptrace(PTRACE_GETEVENTMSG, p->pid, NULL, &msg);
	cpid = (pid_t)msg;
	if (ptrace(PTRACE_SINGLESTEP, p->pid, NULL, NULL) < 0 ||
	    ptrace_wait_task(p->pid, &st) < 0 || !WIFSTOPPED(st)) {
		rp_fail(r, "checkpoint: clone did not return");
		goto restore;
	}
	if (cpid <= 0 || wait_new_child(cpid) < 0) {
		rp_fail(r, "checkpoint: the copy did not stop");
		goto restore;
	}
	/* The copy has the parent's patched code and registers of the
	 * injected call: give it what the parent had. */
	child->pid = cpid;
	child->pos = p->pos;
	if (ptrace(PTRACE_SETREGS, cpid, NULL, &saved) < 0 ||
	    ptrace(PTRACE_POKETEXT, cpid, (void *)saved.rip, (void *)word) < 0 ||
	    rp_open_mem(child) < 0) {
		rp_fail(r, "checkpoint: cannot set up the copy: %s", strerror(errno));
		goto restore;
	}
	r->stats.forks++;
	ret = 0;
restore:
	if (ptrace(PTRACE_SETREGS, p->pid, NULL, &saved) < 0 ||
	    ptrace(PTRACE_POKETEXT, p->pid, (void *)saved.rip, (void *)word) < 0) {
		if (ret == 0)
			rp_fail(r, "checkpoint: cannot restore %d: %s",
				(int)p->pid, strerror(errno));
		ret = -1;
	}
	if (ret < 0) {
		if (child->pid)
			rp_kill(child);
		else if (cpid > 0) {
			kill(cpid, SIGKILL);
			ptrace_waitpid(cpid, &st, __WALL);
		}
	}
	return ret;
}

const struct rp_proc *rp_checkpoint_best(const struct replayer *r, uint64_t pos)
{
	const struct rp_proc *best = r->base.pid ? &r->base : NULL;

	for (size_t i = 0; i < r->ncps; i++)
		if (r->cps[i].pos <= pos && (!best || r->cps[i].pos > best->pos))
			best = &r->cps[i];
	return best;
}

bool rp_checkpoint_at(const struct replayer *r, uint64_t pos)
{
	if (r->base.pid && r->base.pos == pos)
		return true;
	for (size_t i = 0; i < r->ncps; i++)
		if (r->cps[i].pos == pos)
			return true;
	return false;
}

/* Which checkpoint to give up: the one whose neighbourhood is most
 * crowded for its distance from the last requested position. Keeping
 * gap/distance even gives rr's exponential spacing: each checkpoint
 * covers a stretch proportional to how far back it lies. */
static size_t victim(const struct replayer *r)
{
	size_t best = 0;
	double best_score = 0;

	for (size_t i = 0; i < r->ncps; i++) {
		uint64_t pos = r->cps[i].pos, below = r->base.pos;
		for (size_t j = 0; j < r->ncps; j++)
			if (r->cps[j].pos < pos && r->cps[j].pos > below)
				below = r->cps[j].pos;
		uint64_t dist = pos > r->last_target ? pos - r->last_target
						     : r->last_target - pos;
		double score = (double)(pos - below) / (double)(dist + 1);
		if (i == 0 || score < best_score) {
			best = i;
			best_score = score;
		}
	}
	return best;
}

void rp_checkpoint_add(struct replayer *r, struct rp_proc *p)
{
	if (rp_checkpoint_at(r, p->pos)) {
		rp_kill(p);
		return;
	}
	if (r->ncps == REPLAYER_MAX_CHECKPOINTS) {
		size_t v = victim(r);
		rp_kill(&r->cps[v]);
		r->cps[v] = r->cps[--r->ncps];
	}
	r->cps[r->ncps++] = *p;
	p->pid = 0;
	p->memfd = -1;
	r->stats.checkpoints = r->ncps;
}
