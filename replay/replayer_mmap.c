/* File-backed mmap during replay. The program's open() was emulated, so the
 * fd it passes to mmap is not open in the replay process: the replayer
 * opens the file the recording says was mapped there (MMAP sideband
 * record), in the replay process itself, and maps that. All inside the one
 * syscall instruction: its entry stop is turned into openat, then the
 * instruction is run again as the mmap with our fd, then again as close,
 * and the registers end as the recorded mmap left them. */
#include "replayer_internal.h"

#include "ptrev/ptrace_wait.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The file mapped at addr right after the syscall at pos, per the
 * sideband (the latest record covering addr up to then). */
static const struct trace_mmap *mapped_file(const struct replayer *r, uint64_t addr,
					    uint64_t pos)
{
	const struct trace_mmap *best = NULL;

	for (size_t i = 0; i < r->td->nmmaps; i++) {
		const struct trace_mmap *m = &r->td->mmaps[i];
		if (m->pos <= pos + 1 && m->start <= addr && addr < m->end &&
		    (!best || m->pos >= best->pos))
			best = m;
	}
	return best;
}

/* From a syscall stop (entry or exit), make the thread execute syscall nr
 * with args at the same instruction: at an exit stop the instruction is
 * backed up and run again; at an entry stop the syscall is replaced. Ends
 * at the exit stop; *ret is rax. */
static int run_here(struct replayer *r, struct rp_proc *p, bool at_entry,
		    uint64_t sys_ip, uint64_t nr, const uint64_t a[6], int64_t *ret)
{
	struct user_regs_struct regs;
	int st;

	if (ptrace(PTRACE_GETREGS, p->pid, NULL, &regs) < 0)
		return rp_fail(r, "mmap replay: registers: %s", strerror(errno));
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
	if (ptrace(PTRACE_SETREGS, p->pid, NULL, &regs) < 0)
		return rp_fail(r, "mmap replay: set registers: %s", strerror(errno));
	if (!at_entry) {
		if (ptrace(PTRACE_SYSCALL, p->pid, NULL, NULL) < 0 ||
		    ptrace_wait_task(p->pid, &st) < 0 || !WIFSTOPPED(st) ||
		    WSTOPSIG(st) != (SIGTRAP | 0x80))
			return rp_fail(r, "mmap replay: no syscall entry");
		r->stats.stops++;
	}
	if (ptrace(PTRACE_SYSCALL, p->pid, NULL, NULL) < 0 ||
	    ptrace_wait_task(p->pid, &st) < 0 || !WIFSTOPPED(st) ||
	    WSTOPSIG(st) != (SIGTRAP | 0x80))
		return rp_fail(r, "mmap replay: no syscall exit");
	r->stats.stops++;
	if (ptrace(PTRACE_GETREGS, p->pid, NULL, &regs) < 0)
		return rp_fail(r, "mmap replay: registers: %s", strerror(errno));
	*ret = (int64_t)regs.rax;
	return 0;
}

int rp_mmap_file(struct replayer *r, struct rp_proc *p, const struct trace_syscall *s,
		 const struct user_regs_struct *entry)
{
	const struct trace_mmap *m = mapped_file(r, (uint64_t)s->result, s->pos);
	uint64_t sys_ip = entry->rip - 2;
	uint8_t saved[4096];
	int64_t fd = -1, res = 0, ignored;
	int rc = -1;

	if (!m || !m->path[0] || m->path[0] != '/')
		return rp_fail(r, "mmap at position %llu: the recording does not say "
			       "which file was mapped at %#llx",
			       (unsigned long long)s->pos, (unsigned long long)s->result);
	if ((s->args[3] & MAP_SHARED) && (s->args[2] & PROT_WRITE))
		return rp_fail(r, "mmap at position %llu: a writable shared mapping of "
			       "%s cannot be replayed", (unsigned long long)s->pos, m->path);
	/* The path goes below the stack pointer (past the red zone), and
	 * what was there is put back: the program may read that memory
	 * later, uninitialised. */
	size_t len = strlen(m->path) + 1;
	uint64_t scratch = (entry->rsp - 256 - len) & ~15ull;
	if (pread(p->memfd, saved, len, (off_t)scratch) != (ssize_t)len ||
	    pwrite(p->memfd, m->path, len, (off_t)scratch) != (ssize_t)len)
		return rp_fail(r, "mmap replay: no scratch memory below the stack");
	uint64_t oa[6] = { (uint64_t)AT_FDCWD, scratch, O_RDONLY | O_CLOEXEC, 0, 0, 0 };
	if (run_here(r, p, true, sys_ip, SYS_openat, oa, &fd) < 0)
		goto out;
	if (fd < 0) {
		rp_fail(r, "mmap at position %llu: cannot open %s (%s), which the "
			"recording mapped there", (unsigned long long)s->pos, m->path,
			strerror((int)-fd));
		goto out;
	}
	uint64_t ma[6] = { s->args[0], s->args[1], s->args[2], s->args[3],
			   (uint64_t)fd, s->args[5] };
	if (run_here(r, p, false, sys_ip, SYS_mmap, ma, &res) < 0)
		goto out;
	uint64_t ca[6] = { (uint64_t)fd, 0, 0, 0, 0, 0 };
	if (run_here(r, p, false, sys_ip, SYS_close, ca, &ignored) < 0)
		goto out;
	fd = -1;
	if (res != s->result) {
		rp_fail(r, "replay diverged at position %llu: mmap of %s returned "
			"%#llx, %#llx in the recording", (unsigned long long)s->pos,
			m->path, (unsigned long long)res, (unsigned long long)s->result);
		goto out;
	}
	/* The registers as the recorded mmap left them (the caller sets
	 * rax, orig_rax and r11). */
	struct user_regs_struct regs = *entry;
	regs.rip = sys_ip + 2;
	regs.rcx = sys_ip + 2; /* `syscall` puts the return address there */
	if (ptrace(PTRACE_SETREGS, p->pid, NULL, &regs) < 0) {
		rp_fail(r, "mmap replay: set registers: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (pwrite(p->memfd, saved, len, (off_t)scratch) != (ssize_t)len && rc == 0)
		rc = rp_fail(r, "mmap replay: cannot restore the stack");
	return rc;
}
