/* Executing a block's terminator from the registers alone (block_cache.h):
 * a direct jmp goes to its target; a conditional branch goes to its target
 * or falls through as EFLAGS (and rcx) say, exactly as the CPU decides it.
 * This saves the stop a single step of the terminator would cost; nothing
 * in memory changes, so no watchpoint or other thread could tell. */
#include "ptrev/block_cache.h"

#define CF 0x001
#define PF 0x004
#define ZF 0x040
#define SF 0x080
#define OF 0x800

/* The condition of jcc number cc (the low nibble of its 0x7x opcode):
 * even numbers test a condition, odd ones its negation. */
static bool cc_holds(unsigned cc, uint64_t fl)
{
	bool sf_ne_of = !(fl & SF) != !(fl & OF);
	bool v;

	switch (cc >> 1) {
	case 0: v = fl & OF; break;                       /* o */
	case 1: v = fl & CF; break;                       /* b */
	case 2: v = fl & ZF; break;                       /* z */
	case 3: v = (fl & CF) || (fl & ZF); break;        /* be */
	case 4: v = fl & SF; break;                       /* s */
	case 5: v = fl & PF; break;                       /* p */
	case 6: v = sf_ne_of; break;                      /* l */
	default: v = (fl & ZF) || sf_ne_of; break;        /* le */
	}
	return (cc & 1) ? !v : v;
}

bool block_emulate(const struct block *b, struct user_regs_struct *regs)
{
	const struct insn_info *t = &b->insn[b->n];
	uint64_t fall = b->end + t->len, rcx = regs->rcx;
	bool taken;

	if (!b->has_term || regs->rip != b->end)
		return false;
	switch (b->emu) {
	case BLOCK_EMU_JMP:
		taken = true;
		break;
	case BLOCK_EMU_JCC:
		taken = cc_holds(b->cc, regs->eflags);
		break;
	case BLOCK_EMU_JRCXZ:
		taken = rcx == 0;
		break;
	case BLOCK_EMU_JECXZ:
		taken = (uint32_t)rcx == 0;
		break;
	case BLOCK_EMU_LOOP:
	case BLOCK_EMU_LOOPE:
	case BLOCK_EMU_LOOPNE:
		rcx--;
		taken = rcx != 0;
		if (b->emu == BLOCK_EMU_LOOPE)
			taken = taken && (regs->eflags & ZF);
		else if (b->emu == BLOCK_EMU_LOOPNE)
			taken = taken && !(regs->eflags & ZF);
		regs->rcx = rcx;
		break;
	default:
		return false;
	}
	regs->rip = taken ? t->target : fall;
	return true;
}
