/* Replaying the recorded events a process meets on its way: a syscall at
 * its entry stop (checked against the recording, then emulated or run, and
 * left at its exit stop with the recorded outcome in place) and a trapped
 * rdtsc (given the recorded value). */
#include "replayer_internal.h"
#include "sys_replay.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- syscalls ---- */

static struct sys_replay sys_ctx(struct replayer *r, struct rp_proc *p)
{
	return (struct sys_replay){
		.td = r->td, .tid = p->pid, .memfd = p->memfd,
		.stepped_recording = r->stepped_recording, .stops = &r->stats.stops,
		.why = r->why, .whylen = sizeof r->why,
	};
}

/* p is at a syscall-entry stop that must be s: same address, number and
 * arguments. */
int rp_check_entry(struct replayer *r, struct rp_proc *p,
		       const struct trace_syscall *s, struct user_regs_struct *regs)
{
	if (rp_get_regs(r, p, regs) < 0)
		return -1;
	rp_advance(r, p, s->pos);
	if (rp_check_ip(r, s->pos, regs->rip - 2, "syscall") < 0)
		return -1;
	struct sys_replay c = sys_ctx(r, p);
	if (sys_replay_check(&c, s, regs) < 0)
		return -1;
	/* Every process descends from the launch through checked runs, so
	 * agreement here holds for the replay as a whole. */
	if (s->pos > r->validated_to)
		r->validated_to = s->pos;
	return 0;
}

/* p is at the syscall-entry stop of s: check, emulate or run, and finish at
 * its exit stop with the recorded outcome in place. */
int rp_syscall_entry(struct replayer *r, struct rp_proc *p,
			    const struct trace_syscall *s)
{
	struct user_regs_struct regs;

	if (rp_check_entry(r, p, s, &regs) < 0)
		return -1;
	struct sys_replay c = sys_ctx(r, p);
	bool fork = sys_replay_is_fork(&c, s);
	const char *why = fork ? NULL : sys_replay_unsupported(s);
	if (why) {
		char name[96];
		syscall_label(s->nr, NULL, name, sizeof name);
		return rp_fail(r, "%s at position %llu cannot be replayed yet: %s", name,
			       (unsigned long long)s->pos, why);
	}
	if ((fork ? sys_replay_fork(&c, s, &regs) : sys_replay_do(&c, s, &regs)) < 0)
		return -1;
	/* The kernel's writes never trip a debug register: a watch sees
	 * them here (also those of syscalls that ran: same recorded bytes). */
	rp_watch_sys_writes(r, p, s);
	rp_advance(r, p, s->pos + 1);
	return 0;
}

/* ---- rdtsc ---- */

static int rdtsc_len(struct rp_proc *p, uint64_t ip)
{
	uint8_t b[3] = {0};
	if (pread(p->memfd, b, sizeof b, (off_t)ip) < 2)
		return 0;
	if (b[0] == 0x0f && b[1] == 0x31)
		return 2;
	if (b[0] == 0x0f && b[1] == 0x01 && b[2] == 0xf9)
		return 3;
	return 0;
}

/* p stopped with SIGSEGV: the trapped rdtsc at the next recorded rdtsc
 * position, or a divergence. */
int rp_rdtsc(struct replayer *r, struct rp_proc *p, uint64_t limit)
{
	struct user_regs_struct regs;
	const struct trace_rdtsc *t = rp_next_tsc(r, p->pos);
	siginfo_t si;

	memset(&si, 0, sizeof si);
	ptrace(PTRACE_GETSIGINFO, p->pid, NULL, &si);
	if (rp_get_regs(r, p, &regs) < 0)
		return -1;
	int len = rdtsc_len(p, regs.rip);
	if (si.si_code != SI_KERNEL || !len || !t || t->pos >= limit)
		return rp_fail(r, "replay diverged after position %llu: SIGSEGV at "
			       "%#llx that the recording did not have",
			       (unsigned long long)p->pos, (unsigned long long)regs.rip);
	rp_advance(r, p, t->pos);
	if (rp_check_ip(r, t->pos, regs.rip, "rdtsc") < 0)
		return -1;
	if ((len == 3) != t->is_rdtscp)
		return rp_fail(r, "replay diverged at position %llu: rdtsc kind",
			       (unsigned long long)t->pos);
	regs.rax = (uint32_t)t->value;
	regs.rdx = t->value >> 32;
	if (t->is_rdtscp)
		regs.rcx = t->aux;
	regs.rip += (uint64_t)len;
	regs.eflags &= ~0x10000ull; /* the CPU clears RF after the instruction */
	if (rp_set_regs(r, p, &regs) < 0)
		return -1;
	rp_advance(r, p, t->pos + 1);
	return 0;
}
