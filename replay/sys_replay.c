/* Replaying one recorded syscall in a process stopped at its entry
 * (replay/sys_replay.h). A file-backed mmap needs the file: the program's
 * open() was emulated, so the fd it passes is not open in the replay
 * process. The file the recording says was mapped there (MMAP sideband) is
 * opened in the replay process itself and mapped, all inside the one
 * syscall instruction: its entry stop is turned into openat, the
 * instruction run again as the mmap with our fd, then as close, and the
 * registers end as the recorded mmap left them. */
#include "sys_replay.h"
#include "ptrev/binary_copies.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/proc_maps.h"
#include "ptrev/ptrace_wait.h"

static int fail(const struct sys_replay *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(const struct sys_replay *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, c->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

const char *sys_replay_unsupported(const struct trace_syscall *s)
{
	/* One that failed did nothing, and is emulated. */
	return s->result < 0 ? NULL : syscall_unsupported_why(s->nr);
}

bool sys_replay_clone_args(const struct sys_replay *c, const struct trace_syscall *s,
			   uint64_t *flags, uint64_t *ptid, uint64_t *ctid)
{
	uint64_t ca[4]; /* struct clone_args: flags, pidfd, child_tid, parent_tid */
	if (s->nr == SYS_clone) {
		ca[0] = s->args[0];
		ca[2] = s->args[3];
		ca[3] = s->args[2];
	} else if (s->nr != SYS_clone3 ||
		   pread(c->memfd, ca, sizeof ca, (off_t)s->args[0]) != (ssize_t)sizeof ca) {
		return false;
	}
	*flags = ca[0];
	*ptid = ca[0] & CLONE_PARENT_SETTID ? ca[3] : 0;
	*ctid = ca[0] & CLONE_CHILD_SETTID ? ca[2] : 0;
	return true;
}

bool sys_replay_is_fork(const struct sys_replay *c, const struct trace_syscall *s)
{
	uint64_t flags, ptid, ctid;
	enum syscall_replay k = syscall_replay_kind(s->nr);
	if (k == SYSCALL_FORK)
		return true;
	return k == SYSCALL_CLONE && sys_replay_clone_args(c, s, &flags, &ptid, &ctid) &&
	       !(flags & CLONE_THREAD);
}

int sys_replay_fork(const struct sys_replay *c, const struct trace_syscall *s,
		    const struct user_regs_struct *entry)
{
	uint64_t flags, ptid = 0, ctid;
	if (sys_replay_do(c, s, entry) < 0)
		return -1;
	if (s->result <= 0 || !sys_replay_clone_args(c, s, &flags, &ptid, &ctid) || !ptid)
		return 0;
	pid_t child = (pid_t)s->result;
	if (pwrite(c->memfd, &child, sizeof child, (off_t)ptid) != (ssize_t)sizeof child)
		return fail(c, "syscall %llu at position %llu: cannot write the child's pid: %s",
			    (unsigned long long)s->nr, (unsigned long long)s->pos,
			    strerror(errno));
	return 0;
}

bool sys_replay_runs(const struct trace_syscall *s)
{
	switch (syscall_replay_kind(s->nr)) {
	case SYSCALL_RUN:
		return true;
	case SYSCALL_RUN_OK:
		return s->result >= 0;
	default:
		return false;
	}
}

int sys_replay_check(const struct sys_replay *c, const struct trace_syscall *s,
		     const struct user_regs_struct *regs)
{
	uint64_t args[6];
	syscall_args(regs, args);
	if (regs->orig_rax != s->nr)
		return fail(c, "replay diverged at position %llu: syscall %llu, the recording "
			    "made syscall %llu", (unsigned long long)s->pos,
			    (unsigned long long)regs->orig_rax, (unsigned long long)s->nr);
	for (int i = 0; i < 6; i++)
		if (args[i] != s->args[i])
			return fail(c, "replay diverged at position %llu: syscall %llu argument "
				    "%d is %#llx, was %#llx in the recording",
				    (unsigned long long)s->pos, (unsigned long long)s->nr, i + 1,
				    (unsigned long long)args[i], (unsigned long long)s->args[i]);
	return 0;
}

/* One more ptrace round trip of tid to the next syscall stop. */
static int syscall_stop(const struct sys_replay *c, const char *what)
{
	int st;
	if (ptrace(PTRACE_SYSCALL, c->tid, NULL, NULL) < 0 || ptrace_wait_task(c->tid, &st) < 0)
		return fail(c, "replay process %d: %s", (int)c->tid, strerror(errno));
	if (c->stops)
		(*c->stops)++;
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != (SIGTRAP | 0x80))
		return fail(c, "%s: no syscall stop (status %#x)", what, st);
	return 0;
}

/* ---- other syscalls run in the recorded one's place ---- */

/* From a syscall stop (entry or exit), make the thread execute syscall nr
 * with args at the same instruction: at an exit stop the instruction is
 * backed up and run again; at an entry stop the syscall is replaced. Ends
 * at the exit stop; *ret is rax. */
static int run_here(const struct sys_replay *c, bool at_entry, uint64_t sys_ip, uint64_t nr,
		    const uint64_t a[6], int64_t *ret)
{
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, c->tid, NULL, &regs) < 0)
		return fail(c, "replay process %d: registers: %s", (int)c->tid, strerror(errno));
	regs.rdi = a[0];
	regs.rsi = a[1];
	regs.rdx = a[2];
	regs.r10 = a[3];
	regs.r8 = a[4];
	regs.r9 = a[5];
	if (at_entry) {
		regs.orig_rax = nr;
	} else {
		regs.rip = sys_ip;
		regs.rax = nr;
		regs.orig_rax = (unsigned long long)-1;
	}
	if (ptrace(PTRACE_SETREGS, c->tid, NULL, &regs) < 0)
		return fail(c, "replay process %d: set registers: %s", (int)c->tid, strerror(errno));
	if (!at_entry && syscall_stop(c, "a syscall in the recorded one's place") < 0)
		return -1;
	if (syscall_stop(c, "a syscall in the recorded one's place") < 0)
		return -1;
	if (ptrace(PTRACE_GETREGS, c->tid, NULL, &regs) < 0)
		return fail(c, "replay process %d: registers: %s", (int)c->tid, strerror(errno));
	*ret = (int64_t)regs.rax;
	return 0;
}

/* The registers as the recorded call left them, after run_here ran
 * others in its place (the caller sets rax, orig_rax and r11). */
static int as_after(const struct sys_replay *c, const struct user_regs_struct *entry)
{
	struct user_regs_struct regs = *entry;
	regs.rcx = regs.rip; /* `syscall` puts the return address there */
	if (ptrace(PTRACE_SETREGS, c->tid, NULL, &regs) < 0)
		return fail(c, "replay process %d: set registers: %s", (int)c->tid,
			    strerror(errno));
	return 0;
}

/* ---- shared memory: System V segments, writable shared file mappings ---- */

/* In place of the memory the recorded call mapped at [at, at+len): an
 * anonymous mapping of the process's own holding the bytes the recording
 * read there as the call returned (its writes), with protection prot,
 * shared (MAP_SHARED) or private as share says. Shared memory stays
 * shared, so that the state digest leaves it out as it left the original
 * out; a replay's copies get it as their own (process_copy.h). Mapped
 * writable for the bytes, then given prot: /proc/PID/mem cannot write a
 * read-only shared mapping. */
static int map_recorded(const struct sys_replay *c, const struct trace_syscall *s,
			const struct user_regs_struct *entry, uint64_t at, uint64_t len,
			uint64_t prot, uint64_t share)
{
	uint64_t sys_ip = entry->rip - 2;
	int64_t res = 0;
	uint64_t ma[6] = {at, len, prot | PROT_READ | PROT_WRITE,
			  share | MAP_ANONYMOUS | MAP_FIXED, (uint64_t)-1, 0};
	if (run_here(c, true, sys_ip, SYS_mmap, ma, &res) < 0)
		return -1;
	if ((uint64_t)res != at)
		return fail(c, "replay diverged at position %llu: the memory mapped at %#llx in "
			    "the recording could not be mapped there (%lld)",
			    (unsigned long long)s->pos, (unsigned long long)at, (long long)res);
	for (size_t i = 0; i < s->nwrites; i++)
		if (pwrite(c->memfd, s->writes[i].bytes, s->writes[i].len,
			   (off_t)s->writes[i].addr) != (ssize_t)s->writes[i].len)
			return fail(c, "cannot write the recorded mapping's bytes at %#llx in the "
				    "replay process: %s", (unsigned long long)s->writes[i].addr,
				    strerror(errno));
	if ((prot & (PROT_READ | PROT_WRITE)) != (PROT_READ | PROT_WRITE)) {
		uint64_t pa[6] = {at, len, prot, 0, 0, 0};
		if (run_here(c, false, sys_ip, SYS_mprotect, pa, &res) < 0)
			return -1;
		if (res != 0)
			return fail(c, "syscall %llu at position %llu: cannot give the mapping its "
				    "protection: %s",
				    (unsigned long long)s->nr, (unsigned long long)s->pos,
				    strerror((int)-res));
	}
	return as_after(c, entry);
}

/* shmat where it succeeded. The replay has no segment (shmget and shmctl
 * were emulated): map_recorded puts the bytes the recording read at the
 * attach (w_shmat in the syscall table) in its place. */
static int shm_attach(const struct sys_replay *c, const struct trace_syscall *s,
		      const struct user_regs_struct *entry)
{
	uint64_t at = (uint64_t)s->result;
	if (s->nwrites != 1 || s->writes[0].addr != at)
		return fail(c, "shmat at position %llu of thread %d: the recording does not hold "
			    "the bytes of the segment it attached at %#llx (its size could not be "
			    "read, or an older ptrev made it), so the replay cannot go past it; "
			    "positions before it have full state", (unsigned long long)s->pos,
			    (int)s->tid, (unsigned long long)at);
	uint64_t prot = PROT_READ | (s->args[2] & SHM_RDONLY ? 0 : PROT_WRITE) |
			(s->args[2] & SHM_EXEC ? PROT_EXEC : 0);
	return map_recorded(c, s, entry, at, s->writes[0].len, prot, MAP_SHARED);
}

/* shmdt where it succeeded: shm_attach's mapping is unmapped, with every
 * piece an mprotect split off it (the same file: its inode), as the
 * kernel's shmdt unmaps the segment's. */
static int shm_detach(const struct sys_replay *c, const struct trace_syscall *s,
		      const struct user_regs_struct *entry)
{
	uint64_t at = s->args[0], end = at, inode = 0;
	struct proc_mapping m;
	int64_t res = 0;
	FILE *f = proc_maps_open(c->tid);
	if (!f)
		return fail(c, "replay process %d: its maps: %s", (int)c->tid, strerror(errno));
	while (proc_maps_next(f, &m))
		if (m.start == end && m.perms[3] == 's' && (end == at || m.inode == inode)) {
			inode = m.inode;
			end = m.end;
		}
	fclose(f);
	if (end == at)
		return fail(c, "replay diverged at position %llu: shmdt of %#llx, where the replay "
			    "has no segment", (unsigned long long)s->pos, (unsigned long long)at);
	uint64_t ua[6] = {at, end - at, 0, 0, 0, 0};
	if (run_here(c, true, entry->rip - 2, SYS_munmap, ua, &res) < 0)
		return -1;
	if (res != 0)
		return fail(c, "replay diverged at position %llu: the segment's mapping at %#llx "
			    "could not be unmapped: %s", (unsigned long long)s->pos,
			    (unsigned long long)at, strerror((int)-res));
	return as_after(c, entry);
}

/* ---- file-backed mmap ---- */

/* The file mapped at addr right after the syscall at pos, per the
 * sideband (the latest record covering addr up to then). */
static const struct trace_mmap *mapped_file(const struct trace_data *td, uint64_t addr,
					    pid_t tid, uint64_t pos)
{
	const struct trace_mmap *best = NULL;
	for (size_t i = 0; i < td->nmmaps; i++) {
		const struct trace_mmap *m = &td->mmaps[i];
		if ((m->tid == tid || m->tid == 0) && m->pos <= pos + 1 && m->start <= addr &&
		    addr < m->end && (!best || m->pos >= best->pos))
			best = m;
	}
	return best;
}

static int mmap_file(const struct sys_replay *c, const struct trace_syscall *s,
		     const struct user_regs_struct *entry)
{
	const struct trace_mmap *m = mapped_file(c->td, (uint64_t)s->result, s->tid, s->pos);
	uint64_t sys_ip = entry->rip - 2;
	uint8_t saved[4096];
	int64_t fd = -1, res = 0, ignored;
	int rc = -1;

	if (!m || !m->path[0] || m->path[0] != '/')
		return fail(c, "mmap at position %llu: the recording does not say which file "
			    "was mapped at %#llx", (unsigned long long)s->pos,
			    (unsigned long long)s->result);
	if ((s->args[3] & MAP_SHARED) && (s->args[2] & PROT_WRITE))
		return fail(c, "mmap at position %llu of thread %d: the recording does not hold "
			    "the bytes of %s, which it mapped shared and writable at %#llx (an "
			    "older ptrev made it, or the file was empty), so the replay cannot go "
			    "past it; positions before it have full state",
			    (unsigned long long)s->pos, (int)s->tid, m->path,
			    (unsigned long long)s->result);
	/* A library rebuilt or deleted since: the recording's copy. */
	char copy[64], why[512];
	const char *file = binary_copy_for_map(c->td, m, copy, sizeof copy, why, sizeof why);
	if (!file)
		return fail(c, "mmap at position %llu: %s", (unsigned long long)s->pos, why);
	/* The path goes below the stack pointer (past the red zone), and
	 * what was there is put back: the program may read that memory
	 * later, uninitialised. */
	size_t len = strlen(file) + 1;
	uint64_t scratch = (entry->rsp - 256 - len) & ~15ull;
	if (pread(c->memfd, saved, len, (off_t)scratch) != (ssize_t)len ||
	    pwrite(c->memfd, file, len, (off_t)scratch) != (ssize_t)len)
		return fail(c, "mmap replay: no scratch memory below the stack");
	uint64_t oa[6] = {(uint64_t)AT_FDCWD, scratch, O_RDONLY | O_CLOEXEC, 0, 0, 0};
	if (run_here(c, true, sys_ip, SYS_openat, oa, &fd) < 0)
		goto out;
	if (fd < 0) {
		fail(c, "mmap at position %llu: cannot open %s (%s), which the recording "
		     "mapped there", (unsigned long long)s->pos, m->path, strerror((int)-fd));
		goto out;
	}
	uint64_t ma[6] = {s->args[0], s->args[1], s->args[2], s->args[3], (uint64_t)fd,
			  s->args[5]};
	if (run_here(c, false, sys_ip, SYS_mmap, ma, &res) < 0)
		goto out;
	uint64_t ca[6] = {(uint64_t)fd, 0, 0, 0, 0, 0};
	if (run_here(c, false, sys_ip, SYS_close, ca, &ignored) < 0)
		goto out;
	fd = -1;
	if (res != s->result) {
		fail(c, "replay diverged at position %llu: mmap of %s returned %#llx, %#llx in "
		     "the recording", (unsigned long long)s->pos, m->path,
		     (unsigned long long)res, (unsigned long long)s->result);
		goto out;
	}
	rc = as_after(c, entry);
out:
	if (pwrite(c->memfd, saved, len, (off_t)scratch) != (ssize_t)len && rc == 0)
		rc = fail(c, "mmap replay: cannot restore the stack");
	return rc;
}

/* ---- one syscall ---- */

int sys_replay_do(const struct sys_replay *c, const struct trace_syscall *s,
		  const struct user_regs_struct *entry)
{
	struct user_regs_struct regs = *entry;
	bool run = sys_replay_runs(s);
	bool shm = syscall_replay_kind(s->nr) == SYSCALL_SHM && s->result >= 0;

	/* An unknown syscall that failed wrote nothing: emulated below. */
	if (!run && !shm && s->unknown && s->result >= 0) {
		char name[96];
		syscall_label(s->nr, s->args, name, sizeof name);
		return fail(c, "%s at position %llu of thread %d: ptrev's syscall table "
			    "(common/syscall_table.c) does not say which memory it writes, so the "
			    "recording lacks it and the replay cannot go past it; positions before "
			    "it have full state. Add the call to the table and record again, or "
			    "keep the program from making it (report it to ptrev's authors)",
			    name, (unsigned long long)s->pos, (int)s->tid);
	}
	bool file_mmap = s->nr == SYS_mmap && !(s->args[3] & MAP_ANONYMOUS) &&
			 (int32_t)s->args[4] >= 0;
	/* A file's mapping whose bytes the recording holds (mapped_data.h,
	 * and every writable shared one) is made from them, not the file. */
	bool from_bytes = file_mmap && run && s->nwrites > 0 &&
			  s->writes[0].addr == (uint64_t)s->result;
	if ((file_mmap && run) || shm) {
		int rc;
		if (from_bytes)
			rc = map_recorded(c, s, &regs, (uint64_t)s->result, s->args[1], s->args[2],
					  s->args[3] & MAP_SHARED ? MAP_SHARED : MAP_PRIVATE);
		else if (shm)
			rc = (s->nr == SYS_shmat ? shm_attach : shm_detach)(c, s, &regs);
		else
			rc = mmap_file(c, s, &regs);
		if (rc < 0)
			return -1;
		if (ptrace(PTRACE_GETREGS, c->tid, NULL, &regs) < 0)
			return fail(c, "replay process %d: registers: %s", (int)c->tid,
				    strerror(errno));
	} else {
		if (!run) {
			regs.orig_rax = (unsigned long long)-1; /* the kernel skips it */
			if (ptrace(PTRACE_SETREGS, c->tid, NULL, &regs) < 0)
				return fail(c, "replay process %d: set registers: %s", (int)c->tid,
					    strerror(errno));
		}
		char what[64];
		snprintf(what, sizeof what, "syscall %llu at position %llu",
			 (unsigned long long)s->nr, (unsigned long long)s->pos);
		if (syscall_stop(c, what) < 0)
			return -1;
		if (ptrace(PTRACE_GETREGS, c->tid, NULL, &regs) < 0)
			return fail(c, "replay process %d: registers: %s", (int)c->tid,
				    strerror(errno));
		if (run && s->nr != SYS_set_tid_address && (int64_t)regs.rax != s->result)
			/* set_tid_address returns the caller's tid: the recorded
			 * one is put in place below; anything else must agree. */
			return fail(c, "replay diverged at position %llu: syscall %llu returned "
				    "%lld, %lld in the recording", (unsigned long long)s->pos,
				    (unsigned long long)s->nr, (long long)(int64_t)regs.rax,
				    (long long)s->result);
	}
	if (s->nr != SYS_rt_sigreturn) {
		regs.rax = (uint64_t)s->result;
		/* As after a syscall that ran: the kernel's restart logic
		 * (a signal delivered next) and gdb's $orig_rax see it. */
		regs.orig_rax = s->nr;
		/* A refused rseq: the recorders made the kernel see number -1. */
		if (s->nr == SYS_rseq && s->result == -ENOSYS)
			regs.orig_rax = (unsigned long long)-1;
		/* `syscall` saves RFLAGS in r11; under the sw recorder's single
		 * steps they held TF, so the recorded program saw it there. */
		if (c->stepped_recording)
			regs.r11 |= 0x100;
		/* Arrived at the syscall by a hardware breakpoint hit, the
		 * process had the resume flag (RF) set, which `syscall` saved in
		 * r11 and the kernel's return after a ptrace stop (IRET) puts
		 * back. The recorded program had none: the CPU clears RF after
		 * every instruction it completes, and SYSRET clears it too. */
		regs.eflags &= ~0x10000ull;
		regs.r11 &= ~0x10000ull;
		if (ptrace(PTRACE_SETREGS, c->tid, NULL, &regs) < 0)
			return fail(c, "replay process %d: set registers: %s", (int)c->tid,
				    strerror(errno));
	}
	if (!run && !shm)
		for (size_t i = 0; i < s->nwrites; i++)
			if (pwrite(c->memfd, s->writes[i].bytes, s->writes[i].len,
				   (off_t)s->writes[i].addr) != (ssize_t)s->writes[i].len)
				return fail(c, "cannot write the recorded syscall memory at %#llx "
					    "in the replay process",
					    (unsigned long long)s->writes[i].addr);
	return 0;
}
