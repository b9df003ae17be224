/* sw backend: the caller's breakpoints as the stepping loop sees them.
 * They are checked before every instruction (sw_breakpoint_at), never
 * found by executing int3: a thread that must execute the instruction
 * under one of our int3 bytes gets the original byte back for its step
 * (sw_lift_int3) and the int3 again after it (sw_restore_int3). A native
 * run of a block stops before the first breakpoint inside it
 * (sw_breakpoint_cut), where the same check then finds it. */
#include "recorder_sw.h"

#include "ptrev/inferior_raw.h"

/* A breakpoint of the caller's before the instruction at ip? */
enum stop_kind sw_breakpoint_at(const struct inferior *inf, uint64_t ip)
{
	if (inf->nbps && inferior_has_swbreak(inf, ip))
		return STOP_SWBREAK;
	if (inf->dr7)
		for (int i = 0; i < 4; i++)
			if (inf->hw[i].used && inf->hw[i].type == 1 &&
			    inf->hw[i].addr == ip)
				return STOP_HWBREAK;
	return STOP_NONE;
}

uint32_t sw_breakpoint_cut(const struct inferior *inf, const struct block *b, uint32_t n)
{
	if (!inf->nbps && !inf->dr7)
		return n;
	for (uint32_t i = 1; i < n; i++)
		if (sw_breakpoint_at(inf, b->ip[i]) != STOP_NONE)
			return i;
	return n;
}

/* Our int3 at the instruction a thread must execute: put the original byte
 * back for its step (counted, as several threads may step it). Another
 * thread reaching it meanwhile still stops: breakpoints are checked before
 * every instruction, not found by executing int3. */
void sw_lift_int3(struct sw_thread *t)
{
	struct sw_rec *r = t->rec;
	uint64_t ip = t->regs.rip;
	struct sw_breakpoint *bp = r->inf->nbps ? inf_find_swbreak(r->inf, ip) : NULL;
	struct lifted_bp *slot = NULL;

	if (!bp)
		return;
	for (int i = 0; i < 8; i++) {
		if (r->lifted[i].count && r->lifted[i].addr == ip) {
			slot = &r->lifted[i];
			break;
		}
		if (!r->lifted[i].count && !slot)
			slot = &r->lifted[i];
	}
	if (!slot)
		return; /* cannot happen with fewer than 8 threads on one bp */
	if (slot->count++ == 0) {
		slot->addr = ip;
		inf_mem_write_raw(r->inf, ip, &bp->saved, 1);
	}
	t->lifted = ip;
}

/* t's step is over: the int3 goes back when no other thread is stepping
 * over it, and only if the caller still has the breakpoint there. */
void sw_restore_int3(struct sw_thread *t)
{
	struct sw_rec *r = t->rec;
	static const uint8_t int3 = 0xcc;

	if (!t->lifted)
		return;
	for (int i = 0; i < 8; i++) {
		struct lifted_bp *l = &r->lifted[i];
		if (l->count && l->addr == t->lifted && --l->count == 0 &&
		    inf_find_swbreak(r->inf, l->addr))
			inf_mem_write_raw(r->inf, l->addr, &int3, 1);
	}
	t->lifted = 0;
}
