/* Event recorder: a STATE point at the program's entry, where rdtsc does
 * not trap. The dynamic loader times its work with rdtsc (five reads and
 * more in every run of a dynamically linked program) and leaves the
 * values in its data and in the stack below the entry's rsp. Where the
 * machine lets rdtsc through, the recording cannot hold them, a replay's
 * loader reads others, and the leftovers stay in the stack where the
 * program's frames later lie, unwritten: an uninitialised local, a
 * leaf's red zone (GDB's step-reverse.c under glibc.cpu.hwcaps=-AVX2 has
 * one at main's rsp - 96). Every later point whose digest covers them
 * then never matches, and a live session refuses every reverse move.
 *
 * So the recorder stops the program once at its entry (AT_ENTRY, an int3
 * of the inferior's table, hidden from gdb as its own are: ld.so jumps
 * there once, when it is done) and writes a STATE point there with the
 * memory the loader may have put TSC values in (trace_file.h, STATE_MEM):
 * the stack below rsp and the loader's writable data. A replay standing
 * there with the recorded registers writes that memory before it compares
 * (event_step.c, erp_at_state), so from the entry on it holds what the
 * recorded program held. What ran before the entry (the loader itself) is
 * replayed with other TSC values, as before. */
#include "event_rec.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "ptrev/proc_maps.h"
#include "ptrev/start_state.h"
#include "ptrev/tsc_trap.h"

#define PAGE 4096

void ev_entry_arm(struct ev_rec *r)
{
	r->entry_bp = 0;
	if (tsc_traps())
		return; /* the loader's reads are recorded */
	size_t len = 0;
	uint8_t *auxv = start_state_read_proc(r->pid, "auxv", &len);
	uint64_t entry = auxv ? start_state_auxv_value(auxv, len, AT_ENTRY) : 0;
	uint64_t base = auxv ? start_state_auxv_value(auxv, len, AT_BASE) : 0;
	free(auxv);
	/* A static program has no loader (AT_BASE 0): nothing runs before
	 * its entry. */
	if (!entry || !base)
		return;
	if (inferior_insert_swbreak(r->inf, entry) < 0) {
		fprintf(stderr, "ptrev: cannot stop the program at its entry point %#llx (%s): "
			"the TSC values the dynamic loader left are not recorded, and reverse "
			"moves may find the replay's memory different there\n",
			(unsigned long long)entry, strerror(errno));
		return;
	}
	r->entry_bp = entry;
}

/* Is the page at addr all zeros (never written: the stack's untouched
 * part)? A page that cannot be read counts as written. */
static bool zero_page(struct ev_rec *r, uint64_t addr)
{
	static const uint8_t zeros[PAGE];
	uint8_t buf[PAGE];
	return ev_read_mem(r, addr, buf, PAGE) == PAGE && memcmp(buf, zeros, PAGE) == 0;
}

/* The ranges of the point's memory (at most TRACE_STATE_MEM_RANGES): the
 * stack from its lowest written page up to rsp, the loader's writable
 * mappings. */
static size_t entry_ranges(struct ev_rec *r, uint64_t rsp, uint64_t lo[], uint64_t hi[])
{
	FILE *f = proc_maps_open(r->pid);
	struct proc_mapping m;
	size_t n = 0;
	if (!f)
		return 0;
	while (n < TRACE_STATE_MEM_RANGES && proc_maps_next(f, &m)) {
		uint64_t a = m.start, b = m.end;
		if (rsp > m.start && rsp <= m.end) {
			b = rsp;
			while (a < b && b - a >= PAGE && zero_page(r, a))
				a += PAGE;
		} else if (!(m.perms[1] == 'w' && proc_maps_is_loader(&m))) {
			continue;
		}
		/* Bounded: the part nearest rsp (or the mapping's start). */
		if (b - a > TRACE_STATE_MEM_MAX) {
			if (b == rsp)
				a = b - TRACE_STATE_MEM_MAX;
			else
				b = a + TRACE_STATE_MEM_MAX;
		}
		if (a < b) {
			lo[n] = a;
			hi[n++] = b;
		}
	}
	fclose(f);
	return n;
}

/* The point, with its memory. */
static int entry_point(struct ev_thread *t, const struct user_regs_struct *at)
{
	struct ev_rec *r = t->rec;
	uint64_t lo[TRACE_STATE_MEM_RANGES], hi[TRACE_STATE_MEM_RANGES];
	struct trace_mem_write mem[TRACE_STATE_MEM_RANGES];
	size_t n = entry_ranges(r, at->rsp, lo, hi), k = 0;
	uint8_t *bufs[TRACE_STATE_MEM_RANGES] = {0};
	for (size_t i = 0; i < n; i++) {
		size_t len = (size_t)(hi[i] - lo[i]);
		bufs[i] = malloc(len);
		/* A range that cannot be read whole is left out: the replay
		 * keeps its own bytes there, as before. */
		if (bufs[i] && ev_read_mem(r, lo[i], bufs[i], len) == (long)len)
			mem[k++] = (struct trace_mem_write){.addr = lo[i], .bytes = bufs[i], .len = len};
	}
	int rc = ev_point_write_mem(t, at, mem, k);
	for (size_t i = 0; i < n; i++)
		free(bufs[i]);
	return rc;
}

int ev_entry_stop(struct ev_thread *t, int sig, const siginfo_t *si, struct user_regs_struct *now)
{
	struct ev_rec *r = t->rec;
	uint64_t entry = r->entry_bp;
	if (!entry || sig != SIGTRAP || si->si_code != SI_KERNEL || now->rip != entry + 1)
		return 0;
	r->entry_bp = 0;
	/* Ours out (gdb's, if it has one there, stays). */
	if (inferior_remove_swbreak(r->inf, entry) < 0)
		return ev_fail(r, "cannot take the int3 out of the program's entry point %#llx",
			       (unsigned long long)entry);
	struct user_regs_struct at = *now;
	at.rip = entry;
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &at) < 0)
		return ev_fail(r, "thread %d: registers: %s", (int)t->tid, strerror(errno));
	if (entry_point(t, &at) < 0)
		return -1;
	/* gdb's breakpoint at the entry: its hit, reported as usual. */
	if (r->live.on && inferior_has_swbreak(r->inf, entry))
		return ev_live_stop(t, sig, si, now) < 0 ? -1 : 1;
	/* Else on as it went (a step of gdb's through the int3 is made again,
	 * over the instruction itself). */
	return ev_resume(t, 0) < 0 ? -1 : 1;
}
