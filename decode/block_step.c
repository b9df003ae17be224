/* Running a stopped thread natively to an address (block_step.h): an int3
 * written for the run, or an execution breakpoint in one of the thread's
 * debug registers, then PTRACE_CONT; at the thread's next stop the int3 is
 * lifted and the stop told apart from anything else that stopped it.
 *
 * Per thread we remember what our debug register holds, so that a loop
 * that ends at the same address again costs no register write, and who
 * shares an int3 site (two threads run to the same address: the byte goes
 * back when the last one stops). */
#include "ptrev/block_step.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/debugregs.h"

struct bthread {
	pid_t tid;
	bool running;          /* a run is in flight */
	enum bstep_mech how;
	uint64_t stop_ip;
	int slot;              /* our debug register, armed (-1: none) */
	bool addr_valid;       /* DR[slot] holds addr */
	uint64_t addr;
	uint64_t dr7;          /* what we last wrote to DR7 */
	uint64_t hit_ip;       /* stopped by our register here, RF set */
};

struct site {
	uint64_t addr;
	uint8_t saved;
	int refs;
};

#define MAX_SITES 16

struct bstep {
	pid_t pid;
	int memfd;             /* /proc/PID/mem, read-write */
	struct bthread *t;
	size_t n, cap;
	struct site sites[MAX_SITES];
};

static int open_mem(struct bstep *b)
{
	char path[64];
	int fd;

	snprintf(path, sizeof path, "/proc/%d/mem", (int)b->pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (b->memfd >= 0)
		close(b->memfd);
	b->memfd = fd;
	return 0;
}

struct bstep *bstep_new(pid_t pid, char *err, size_t errlen)
{
	struct bstep *b = calloc(1, sizeof *b);

	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	b->pid = pid;
	b->memfd = -1;
	if (open_mem(b) < 0) {
		snprintf(err, errlen, "cannot open /proc/%d/mem for writing: %s",
			 (int)pid, strerror(errno));
		free(b);
		return NULL;
	}
	return b;
}

void bstep_free(struct bstep *b)
{
	if (!b)
		return;
	if (b->memfd >= 0)
		close(b->memfd);
	free(b->t);
	free(b);
}

int bstep_exec(struct bstep *b)
{
	for (size_t i = 0; i < b->n; i++) {
		b->t[i].slot = -1;
		b->t[i].addr_valid = false;
		b->t[i].dr7 = 0;
		b->t[i].hit_ip = 0;
	}
	memset(b->sites, 0, sizeof b->sites);
	return open_mem(b);
}

static struct bthread *find(const struct bstep *b, pid_t tid)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->t[i].tid == tid)
			return &b->t[i];
	return NULL;
}

static struct bthread *get(struct bstep *b, pid_t tid)
{
	struct bthread *t = find(b, tid);

	if (t)
		return t;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 8;
		struct bthread *nt = realloc(b->t, cap * sizeof *nt);
		if (!nt)
			return NULL;
		b->t = nt;
		b->cap = cap;
	}
	t = &b->t[b->n++];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	t->slot = -1;
	return t;
}

void bstep_forget(struct bstep *b, pid_t tid)
{
	struct bthread *t = find(b, tid);

	if (t)
		*t = b->t[--b->n];
}

bool bstep_running(const struct bstep *b, pid_t tid)
{
	const struct bthread *t = find(b, tid);
	return t && t->running;
}

/* ---- int3 sites -------------------------------------------------------- */

static int site_put(struct bstep *b, uint64_t addr)
{
	static const uint8_t int3 = 0xcc;
	struct site *free_site = NULL;

	for (int i = 0; i < MAX_SITES; i++) {
		if (b->sites[i].refs && b->sites[i].addr == addr) {
			b->sites[i].refs++;
			return 0;
		}
		if (!b->sites[i].refs && !free_site)
			free_site = &b->sites[i];
	}
	if (!free_site) {
		errno = EBUSY;
		return -1;
	}
	if (pread(b->memfd, &free_site->saved, 1, (off_t)addr) != 1 ||
	    pwrite(b->memfd, &int3, 1, (off_t)addr) != 1) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	free_site->addr = addr;
	free_site->refs = 1;
	return 0;
}

static void site_lift(struct bstep *b, uint64_t addr)
{
	for (int i = 0; i < MAX_SITES; i++) {
		struct site *s = &b->sites[i];
		if (s->refs && s->addr == addr) {
			/* Fails only when the memory is gone with the process. */
			if (--s->refs == 0 &&
			    pwrite(b->memfd, &s->saved, 1, (off_t)addr) != 1)
				s->refs = 0;
			return;
		}
	}
}

/* ---- debug registers --------------------------------------------------- */

static int write_dr7(struct bthread *t, uint64_t v)
{
	if (t->dr7 == v && t->slot >= 0)
		return 0;
	if (inf_dr_write(t->tid, 7, v) < 0)
		return -1;
	t->dr7 = v;
	return 0;
}

static int disarm(struct bthread *t, uint64_t base_dr7)
{
	if (t->slot < 0)
		return 0;
	if (inf_dr_write(t->tid, 7, base_dr7) < 0)
		return -1;
	t->dr7 = base_dr7;
	t->slot = -1;
	t->addr_valid = false;
	t->hit_ip = 0;
	return 0;
}

static int arm(struct bthread *t, int slot, uint64_t addr, uint64_t base_dr7)
{
	if (slot < 0 || slot > 3) {
		errno = EINVAL;
		return -1;
	}
	if (t->slot >= 0 && t->slot != slot && disarm(t, base_dr7) < 0)
		return -1;
	/* The address first, so that enabling never arms a stale one. */
	if (!(t->slot == slot && t->addr_valid && t->addr == addr)) {
		if (inf_dr_write(t->tid, slot, addr) < 0)
			return -1;
		t->addr = addr;
		t->addr_valid = true;
	}
	if (t->slot != slot)
		t->dr7 = ~0ull; /* unknown: write it */
	t->slot = slot;
	if (write_dr7(t, base_dr7 | inf_dr7_slot(slot, DR_EXEC, 1)) < 0) {
		t->slot = -1;
		t->addr_valid = false;
		return -1;
	}
	return 0;
}

/* ---- runs ------------------------------------------------------------- */

int bstep_run(struct bstep *b, pid_t tid, uint64_t stop_ip, enum bstep_mech how,
	      int slot, uint64_t base_dr7)
{
	struct bthread *t = get(b, tid);

	if (!t) {
		errno = ENOMEM;
		return -1;
	}
	if (t->running) {
		errno = EBUSY;
		return -1;
	}
	if (how == BSTEP_HW) {
		if (arm(t, slot, stop_ip, base_dr7) < 0)
			return -1;
	} else {
		if (disarm(t, base_dr7) < 0 || site_put(b, stop_ip) < 0)
			return -1;
	}
	t->hit_ip = 0;
	/* A debug register's run goes to the next syscall at most: in this
	 * VM a register now and then does not stop the thread (CI: a run of
	 * rec_switch went on to the program's exit, and the recording said
	 * it had exited there). A run holds no syscall (a block ends before
	 * one), so a syscall stop says the hit was lost, before the
	 * thread's first syscall past it: the caller sees a stop outside
	 * the run. An int3 in memory is never lost. */
	if (ptrace(how == BSTEP_HW ? PTRACE_SYSCALL : PTRACE_CONT, tid, NULL, NULL) < 0) {
		int e = errno;
		if (how == BSTEP_INT3)
			site_lift(b, stop_ip);
		errno = e;
		return -1;
	}
	t->running = true;
	t->how = how;
	t->stop_ip = stop_ip;
	return 0;
}

/* A SIGTRAP that stopped tid at stop_ip in a run to it, DR6 without our
 * slot's bit: still our register's hit, its DR6 lost by the VM? The
 * known forms (inf_dr_lost_hit), and any other trap the kernel raised
 * there (not one sent by a process), with TF clear and no other
 * register's bit in DR6: a run executes no trapping instruction (a
 * block ends before an int3, int1 or syscall, which is stepped on its
 * own), so nothing else of the thread's traps exactly there. CI's dry
 * run met one more form (blk_prog, a run to a jae; not the known ones);
 * what it is is said on stderr, once, when it comes again. */
static bool lost_block_end(pid_t tid, const struct user_regs_struct *regs, int slot)
{
	if (inf_dr_lost_hit(tid, regs))
		return true;
	siginfo_t si;
	uint64_t dr6 = inf_dr_read_dr6(tid);
	if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) < 0)
		return false;
	bool ours = si.si_code != SI_USER && si.si_code != SI_TKILL && si.si_code != SI_QUEUE &&
		    !(regs->eflags & 0x100) && !(dr6 & 0xf & ~(1ull << slot));
	static atomic_bool told;
	if (ours && !atomic_exchange(&told, true))
		fprintf(stderr, "ptrev: a trap at a block's end without its debug register's bit "
			"(si_code %d, DR6 %#llx, eflags %#llx): taken as the register's hit\n",
			si.si_code, (unsigned long long)dr6, (unsigned long long)regs->eflags);
	return ours;
}

int bstep_stopped(struct bstep *b, pid_t tid, int wstatus, struct user_regs_struct *regs)
{
	struct bthread *t = find(b, tid);
	bool trap;

	if (!t || !t->running)
		return 0;
	t->running = false;
	if (t->how == BSTEP_INT3)
		site_lift(b, t->stop_ip);
	if (!WIFSTOPPED(wstatus)) {
		bstep_forget(b, tid);
		return 0;
	}
	trap = WSTOPSIG(wstatus) == SIGTRAP && (wstatus >> 16) == 0;
	if (!trap)
		return 0;
	if (t->how == BSTEP_INT3) {
		/* int3 traps after itself; nothing else of the run can
		 * leave the IP one byte into the instruction at stop_ip. */
		if (regs->rip != t->stop_ip + 1)
			return 0;
		regs->rip = t->stop_ip;
		return ptrace(PTRACE_SETREGS, tid, NULL, regs) < 0 ? -1 : 1;
	}
	/* A watchpoint's trap after the instruction before stop_ip stops
	 * there too: DR6 says whose it is, or, where a VM reported the hit
	 * with a DR6 empty or stale, the siginfo. */
	if (regs->rip != t->stop_ip || t->slot < 0)
		return 0;
	if (!(inf_dr_read_dr6(tid) & (1ull << t->slot)) && !lost_block_end(tid, regs, t->slot))
		return 0;
	inf_dr_clear_dr6(tid);
	t->hit_ip = t->stop_ip;
	return 1;
}

int bstep_before_step(struct bstep *b, pid_t tid, struct user_regs_struct *regs,
		      bool saves_flags, uint64_t base_dr7)
{
	struct bthread *t = find(b, tid);
	bool our_rf;

	if (!t)
		return 0;
	our_rf = t->hit_ip == regs->rip && (regs->eflags & BSTEP_EFLAGS_RF);
	/* Disarmed even where our hit's RF would let the step pass it: in
	 * some VMs (an Intel Xeon guest here) the breakpoint now and then
	 * fires again under RF, which would stop the step before its
	 * instruction ran. */
	if (t->slot >= 0 && t->addr_valid && t->addr == regs->rip && disarm(t, base_dr7) < 0)
		return -1;
	if (our_rf && saves_flags) {
		regs->eflags &= ~BSTEP_EFLAGS_RF;
		if (ptrace(PTRACE_SETREGS, tid, NULL, regs) < 0)
			return -1;
	}
	t->hit_ip = 0;
	return 0;
}

int bstep_disarm(struct bstep *b, pid_t tid, uint64_t base_dr7)
{
	struct bthread *t = find(b, tid);
	return t ? disarm(t, base_dr7) : 0;
}
