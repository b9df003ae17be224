/* One replay process (struct rp_proc: the launched program or a copy) as
 * the replayer drives it: its /proc/PID/mem, its registers, resuming it
 * and waiting for its next stop, killing it; its position, moved forward
 * only through rp_advance (so that a watch scan hears of every known
 * position) and checked against the history with rp_check_ip; and the
 * reason of a failure, kept in the replayer for the user. The bottom of the
 * replayer: every other file drives processes through here. */
#include "replayer_internal.h"
#include "gdb_write.h"

#include "ptrev/ptrace_wait.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int rp_fail(struct replayer *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	va_end(ap);
	return -1;
}

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

int rp_get_regs(struct replayer *r, struct rp_proc *p, struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_GETREGS, p->pid, NULL, regs) < 0)
		return rp_fail(r, "replay process %d: registers: %s", (int)p->pid,
			       strerror(errno));
	return 0;
}

int rp_set_regs(struct replayer *r, struct rp_proc *p, const struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_SETREGS, p->pid, NULL, regs) < 0)
		return rp_fail(r, "replay process %d: set registers: %s", (int)p->pid,
			       strerror(errno));
	return 0;
}

int rp_resume_wait(struct replayer *r, struct rp_proc *p, int req, int sig, int *st)
{
	if (ptrace(req, p->pid, NULL, (void *)(long)sig) < 0 || ptrace_wait_task(p->pid, st) < 0)
		return rp_fail(r, "replay process %d: %s", (int)p->pid, strerror(errno));
	r->stats.stops++;
	if (WIFEXITED(*st) || WIFSIGNALED(*st)) {
		p->pid = 0;
		return rp_fail(r, "the replay process ended unexpectedly at position "
			       "%llu (%s %d)", (unsigned long long)p->pos,
			       WIFEXITED(*st) ? "exit" : "signal",
			       WIFEXITED(*st) ? WEXITSTATUS(*st) : WTERMSIG(*st));
	}
	return 0;
}

void rp_advance(struct replayer *r, struct rp_proc *p, uint64_t to)
{
	r->stats.insns_run += to - p->pos;
	p->pos = to;
	rp_watch_known(r, to);
}

/* Does the history put instruction pos at ip? */
int rp_check_ip(struct replayer *r, uint64_t pos, uint64_t ip, const char *what)
{
	uint64_t want;

	if (pos >= history_insn_count(r->h))
		return 0; /* the end: checked by the caller */
	if (history_ip_at(r->h, pos, &want) < 0)
		return rp_fail(r, "the history has no address for position %llu",
			       (unsigned long long)pos);
	if (want != ip)
		return rp_fail(r, "replay diverged from the recording at position "
			       "%llu: %s at %#llx, the recording was at %#llx",
			       (unsigned long long)pos, what,
			       (unsigned long long)ip, (unsigned long long)want);
	return 0;
}

int rp_gdb_writes_at(struct replayer *r, struct rp_proc *p, uint64_t pos)
{
	for (size_t i = 0; i < r->ngw; i++) {
		if (r->gw[i]->pos != pos)
			continue;
		if (gdb_write_apply(p->pid, p->memfd, r->gw[i], NULL, r->why, sizeof r->why) < 0)
			return -1;
	}
	return 0;
}
