/* Hardware breakpoints and watchpoints through the x86 debug registers
 * (the encoding is described in include/ptrev/debugregs.h): one thread's
 * registers, and the inferior's slots for gdb's Z1-Z4 on top of them.
 *
 * An unaligned or odd-sized request is split into aligned pieces, one
 * register each. x86 cannot trap reads only, so gdb's read watchpoints (Z3)
 * are refused, as gdbserver does. The kernel keeps these registers per
 * thread: every change is written to every thread. */
#include "inferior_internal.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>

#define DR_OFFSET(i) (offsetof(struct user, u_debugreg) + (i) * sizeof(long))
#define DR7_LOCAL_SLOWDOWN 0x100 /* LE: exact data breakpoints, as gdb sets */

int inf_dr_write_raw(pid_t tid, int n, uint64_t value)
{
	return ptrace(PTRACE_POKEUSER, tid, (void *)DR_OFFSET(n), (void *)value) < 0 ? -1 : 0;
}

int inf_dr_write(pid_t tid, int n, uint64_t value)
{
	/* Enabling a register that would never trap is refused: the caller
	 * takes the way it has without one, or says why it cannot. */
	if (n == 7 && (value & 0xff) && !inf_dr_traps()) {
		errno = ENODEV;
		return -1;
	}
	return inf_dr_write_raw(tid, n, value);
}

uint64_t inf_dr_read(pid_t tid, int n)
{
	errno = 0;
	long v = ptrace(PTRACE_PEEKUSER, tid, (void *)DR_OFFSET(n), NULL);
	return (v == -1 && errno) ? 0 : (uint64_t)v;
}

uint64_t inf_dr_read_dr6(pid_t tid)
{
	return inf_dr_read(tid, 6);
}

void inf_dr_clear_dr6(pid_t tid)
{
	inf_dr_write(tid, 6, 0);
}

bool inf_dr_lost_exec_hit(pid_t tid, uint64_t ip)
{
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) < 0)
		return false;
	if (si.si_code == TRAP_HWBKPT)
		return !(inf_dr_read_dr6(tid) & 0xf);
	if (si.si_code != TRAP_BRKPT)
		return false;
	/* The program's own INT1: its byte before ip, or at ip where the
	 * hypervisor reports it with ip not past it (ptrev/debugregs.h). */
	errno = 0;
	long bytes = ptrace(PTRACE_PEEKTEXT, tid, (void *)(ip - 1), NULL);
	return !(errno == 0 && ((bytes & 0xff) == 0xf1 || (bytes >> 8 & 0xff) == 0xf1));
}

bool inf_dr_stale_step_hit(pid_t tid, uint64_t eflags)
{
	siginfo_t si;
	return !(eflags & 0x100) && ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0 &&
	       si.si_code == TRAP_TRACE;
}

bool inf_dr_lost_hit(pid_t tid, const struct user_regs_struct *regs)
{
	return inf_dr_lost_exec_hit(tid, regs->rip) || inf_dr_stale_step_hit(tid, regs->eflags);
}

void inf_dr_clear_thread(pid_t tid)
{
	inf_dr_write(tid, 7, 0);
	for (int i = 0; i < 4; i++)
		inf_dr_write(tid, i, 0);
}

int inf_dr_apply_thread(struct inferior *inf, pid_t tid)
{
	/* Disable first, so no half-updated address/length pair is ever live
	 * (the kernel rejects an enabled slot whose address does not fit). */
	if (inf_dr_write(tid, 7, 0) < 0)
		return -1;
	for (int i = 0; i < 4; i++)
		if (inf->hw[i].used && inf_dr_write(tid, i, inf->hw[i].addr) < 0)
			return -1;
	if (inf->dr7 && inf_dr_write(tid, 7, inf->dr7) < 0)
		return -1;
	return 0;
}

uint64_t inf_dr7_slot(int slot, int kind, int len)
{
	uint64_t rw = kind == DR_EXEC ? 0 : kind == DR_WRITE ? 1 : 3;
	uint64_t lenbits = len == 1 ? 0 : len == 2 ? 1 : len == 4 ? 3 : 2;
	return 1ull << (2 * slot) | (rw | lenbits << 2) << (16 + 4 * slot);
}

static uint64_t compute_dr7(const struct hw_slot hw[4])
{
	uint64_t dr7 = 0;
	for (int i = 0; i < 4; i++)
		if (hw[i].used)
			dr7 |= inf_dr7_slot(i, hw[i].type, hw[i].len);
	return dr7 ? dr7 | DR7_LOCAL_SLOWDOWN : 0;
}

/* Write the slots to every thread. Threads that vanished (ESRCH) are
 * skipped: their exit is collected by inferior_wait. */
static int apply_all(struct inferior *inf)
{
	inf->dr7 = compute_dr7(inf->hw);
	for (size_t i = 0; i < inf->nthreads; i++) {
		errno = 0;
		if (inf_dr_apply_thread(inf, inf->threads[i].tid) < 0 && errno != ESRCH)
			return -1;
	}
	return 0;
}

int inf_dr_split(uint64_t addr, uint64_t len, struct dr_piece out[4])
{
	int n = 0;
	while (len > 0) {
		int size = 8;
		while (size > 1 && ((addr & (uint64_t)(size - 1)) || (uint64_t)size > len))
			size /= 2;
		if (n == 4)
			return -1;
		out[n++] = (struct dr_piece){ addr, size };
		addr += (uint64_t)size;
		len -= (uint64_t)size;
	}
	return n;
}

static int find_slot(const struct inferior *inf, int type, uint64_t req, const struct dr_piece *p)
{
	for (int i = 0; i < 4; i++) {
		const struct hw_slot *s = &inf->hw[i];
		if (s->used && s->type == type && s->req_addr == req && s->addr == p->addr &&
		    s->len == p->len)
			return i;
	}
	return -1;
}

/* Validate and split a request. Returns pieces, -1 or -2 (unsupported). */
static int plan(int type, uint64_t addr, int len, struct dr_piece pieces[4])
{
	if (type == DR_READ || type < DR_EXEC || type > DR_ACCESS)
		return -2;
	if (type == DR_EXEC) { /* an execute slot must have length 1 */
		pieces[0] = (struct dr_piece){ addr, 1 };
		return 1;
	}
	if (len <= 0)
		return -1;
	return inf_dr_split(addr, (uint64_t)len, pieces);
}

int inferior_insert_hwpoint(struct inferior *inf, int type, uint64_t addr, int len)
{
	struct dr_piece pieces[4];
	int n = plan(type, addr, len, pieces);
	if (n < 0)
		return n;

	int slot[4], found = 0;
	for (int k = 0; k < n; k++)
		if ((slot[k] = find_slot(inf, type, addr, &pieces[k])) >= 0)
			found++;
	if (found == n) { /* the same request again: count it */
		for (int k = 0; k < n; k++)
			inf->hw[slot[k]].refs++;
		return 0;
	}

	struct hw_slot saved[4];
	memcpy(saved, inf->hw, sizeof(saved));
	int k = 0;
	for (int i = 0; i < 4 && k < n; i++) {
		if (inf->hw[i].used)
			continue;
		inf->hw[i] = (struct hw_slot){ .used = true, .type = type, .addr = pieces[k].addr,
					       .len = pieces[k].len, .req_addr = addr, .refs = 1 };
		k++;
	}
	if (k < n || apply_all(inf) < 0) {
		memcpy(inf->hw, saved, sizeof(saved));
		apply_all(inf);
		return -1;
	}
	return 0;
}

int inferior_remove_hwpoint(struct inferior *inf, int type, uint64_t addr, int len)
{
	struct dr_piece pieces[4];
	int n = plan(type, addr, len, pieces);
	if (n < 0)
		return n;
	int slot[4];
	for (int k = 0; k < n; k++)
		if ((slot[k] = find_slot(inf, type, addr, &pieces[k])) < 0)
			return -1;
	for (int k = 0; k < n; k++)
		if (--inf->hw[slot[k]].refs == 0)
			inf->hw[slot[k]].used = false;
	if (!inf->pid || inf->exited) {
		inf->dr7 = compute_dr7(inf->hw);
		return 0;
	}
	return apply_all(inf);
}

bool inf_dr_hit(struct inferior *inf, pid_t tid, struct stop_event *e)
{
	/* DR6 only matters while a debug register is armed; skipping it keeps
	 * plain single-stepping at two system calls per step. */
	uint64_t dr6 = inf->dr7 ? inf_dr_read_dr6(tid) : 0;
	if (dr6)
		inf_dr_clear_dr6(tid);
	uint64_t pc;
	if (inf->dr7 && !(dr6 & 0xf) && inf_get_pc(tid, &pc) == 0)
		for (int i = 0; i < 4; i++)
			if (inf->hw[i].used && inf->hw[i].type == 1 && inf->hw[i].addr == pc &&
			    inf_dr_lost_exec_hit(tid, pc))
				dr6 |= 1u << i; /* its DR6 lost (a VM's) */
	for (int i = 0; i < 4; i++) {
		if (!(dr6 & (1u << i)) || !inf->hw[i].used)
			continue;
		if (inf->hw[i].type == 1) {
			e->kind = STOP_HWBREAK;
		} else {
			e->kind = STOP_WATCH;
			e->watch_addr = inf->hw[i].req_addr;
			e->watch_type = inf->hw[i].type;
		}
		return true;
	}
	return false;
}
