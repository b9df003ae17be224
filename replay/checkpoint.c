/* Checkpoints: stopped copies of a replay process, made by injecting a
 * fork into it through ptrace (process_copy, syscall_inject_fork: exit signal 0, so
 * killing a copy sends its parent no SIGCHLD that the replay would have to
 * hide; copy-on-write memory), and the policy that decides which ones to
 * keep (dense near the last requested position, sparser further away). */
#include "replayer_internal.h"

#include "ptrev/process_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int rp_fork(struct replayer *r, const struct rp_proc *p, struct rp_proc *child)
{
	char err[256];
	pid_t cpid;

	memset(child, 0, sizeof *child);
	child->memfd = -1;
	if (process_copy(p->pid, &cpid, err, sizeof err) < 0)
		return rp_fail(r, "checkpoint: %s", err);
	child->pid = cpid;
	child->pos = p->pos;
	if (rp_open_mem(child) < 0) {
		rp_fail(r, "checkpoint: cannot set up the copy: %s", strerror(errno));
		rp_kill(child);
		return -1;
	}
	r->stats.forks++;
	return 0;
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
