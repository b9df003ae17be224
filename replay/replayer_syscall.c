/* Replaying the recorded events a process meets on its way: a syscall at
 * its entry stop (checked against the recording, then emulated or run, and
 * left at its exit stop with the recorded outcome in place) and a trapped
 * rdtsc (given the recorded value). */
#include "replayer_internal.h"

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

/* Syscalls that build the address space or the signal state: executed for
 * real, and they must give the recorded result. */
static bool must_run(uint64_t nr)
{
	switch (nr) {
	case SYS_mmap: case SYS_munmap: case SYS_mprotect: case SYS_brk:
	case SYS_mremap: case SYS_madvise: case SYS_arch_prctl:
	case SYS_set_tid_address: case SYS_set_robust_list: case SYS_rseq:
	case SYS_rt_sigaction: case SYS_rt_sigprocmask: case SYS_sigaltstack:
	case SYS_rt_sigreturn: case SYS_pkey_mprotect:
		return true;
	default:
		return false;
	}
}

static bool unsupported(uint64_t nr)
{
	switch (nr) {
	case SYS_clone: case SYS_clone3: case SYS_fork: case SYS_vfork:
	case SYS_execve: case SYS_execveat: case SYS_shmat: case SYS_shmdt:
	case SYS_remap_file_pages:
		return true;
	default:
		return false;
	}
}

static int write_mem(struct replayer *r, struct rp_proc *p, uint64_t addr,
		     const void *buf, size_t len)
{
	if (pwrite(p->memfd, buf, len, (off_t)addr) != (ssize_t)len)
		return rp_fail(r, "cannot write the recorded syscall memory at "
			       "%#llx in the replay process", (unsigned long long)addr);
	return 0;
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
	const uint64_t args[6] = { regs->rdi, regs->rsi, regs->rdx, regs->r10,
				   regs->r8, regs->r9 };
	if (regs->orig_rax != s->nr)
		return rp_fail(r, "replay diverged at position %llu: syscall %llu, "
			       "the recording made syscall %llu",
			       (unsigned long long)s->pos,
			       (unsigned long long)regs->orig_rax,
			       (unsigned long long)s->nr);
	for (int i = 0; i < 6; i++)
		if (args[i] != s->args[i])
			return rp_fail(r, "replay diverged at position %llu: "
				       "syscall %llu argument %d is %#llx, was "
				       "%#llx in the recording",
				       (unsigned long long)s->pos,
				       (unsigned long long)s->nr, i + 1,
				       (unsigned long long)args[i],
				       (unsigned long long)s->args[i]);
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
	int st;
	bool run;

	if (rp_check_entry(r, p, s, &regs) < 0)
		return -1;
	if (unsupported(s->nr))
		return rp_fail(r, "syscall %llu at position %llu cannot be replayed "
			       "yet (processes, exec, shared memory)",
			       (unsigned long long)s->nr, (unsigned long long)s->pos);
	run = must_run(s->nr);
	if (!run && s->unknown)
		return rp_fail(r, "syscall %llu at position %llu is not in ptrev's "
			       "table: the memory it wrote was not recorded",
			       (unsigned long long)s->nr, (unsigned long long)s->pos);
	bool file_mmap = s->nr == SYS_mmap && !(s->args[3] & MAP_ANONYMOUS) &&
			 (int32_t)s->args[4] >= 0;
	if (file_mmap && s->result < 0)
		run = false; /* nothing was mapped: the recorded error will do */
	if (file_mmap && run) {
		if (rp_mmap_file(r, p, s, &regs) < 0 || rp_get_regs(r, p, &regs) < 0)
			return -1;
	} else {
		if (!run) {
			regs.orig_rax = (unsigned long long)-1; /* the kernel skips it */
			if (rp_set_regs(r, p, &regs) < 0)
				return -1;
		}
		if (rp_resume_wait(r, p, PTRACE_SYSCALL, 0, &st) < 0)
			return -1;
		if (!WIFSTOPPED(st) || WSTOPSIG(st) != (SIGTRAP | 0x80))
			return rp_fail(r, "syscall %llu at position %llu: no exit stop "
				       "(status %#x)", (unsigned long long)s->nr,
				       (unsigned long long)s->pos, st);
		if (rp_get_regs(r, p, &regs) < 0)
			return -1;
		if (run && s->nr != SYS_set_tid_address && (int64_t)regs.rax != s->result)
			/* set_tid_address returns the caller's tid: the recorded
			 * one is put in place below; anything else must agree. */
			return rp_fail(r, "replay diverged at position %llu: syscall "
				       "%llu returned %lld, %lld in the recording",
				       (unsigned long long)s->pos, (unsigned long long)s->nr,
				       (long long)(int64_t)regs.rax, (long long)s->result);
	}
	if (s->nr != SYS_rt_sigreturn) {
		regs.rax = (uint64_t)s->result;
		/* As after a syscall that ran: the kernel's restart logic
		 * (a signal delivered next) and gdb's $orig_rax see it. */
		regs.orig_rax = s->nr;
		/* `syscall` saves RFLAGS in r11; under the sw recorder's single
		 * steps they held TF, so the recorded program saw it there. */
		if (r->stepped_recording)
			regs.r11 |= 0x100;
		/* Arrived at the syscall by a hardware breakpoint hit, the
		 * process had the resume flag (RF) set, which `syscall` saved in
		 * r11 and the kernel's return after a ptrace stop (IRET) puts
		 * back. The recorded program had none: the CPU clears RF after
		 * every instruction it completes, and SYSRET clears it too. */
		regs.eflags &= ~0x10000ull;
		regs.r11 &= ~0x10000ull;
		if (rp_set_regs(r, p, &regs) < 0)
			return -1;
	}
	if (!run)
		for (size_t i = 0; i < s->nwrites; i++)
			if (write_mem(r, p, s->writes[i].addr, s->writes[i].bytes,
				      s->writes[i].len) < 0)
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
