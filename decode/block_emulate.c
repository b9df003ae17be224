/* A block's terminator before it runs (block_cache.h): executed from the
 * registers alone (a direct jmp goes to its target; a conditional branch
 * goes to its target or falls through as EFLAGS and rcx say, exactly as
 * the CPU decides it; nothing in memory changes, so no watchpoint or other
 * thread could tell), or only where it will go (a ret to the address on
 * the stack, an indirect branch to what its operand holds), so that a
 * block stepper can let it run natively on into the next block and stop
 * only at that block's end. */
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

/* The 64-bit register of user_regs_struct word w. */
static uint64_t reg(const struct user_regs_struct *regs, int w)
{
	const unsigned long long *words = (const unsigned long long *)regs;
	return w >= 0 ? (uint64_t)words[w] : 0;
}

static bool read_u64(block_read_fn read, void *arg, uint64_t addr, uint64_t *v)
{
	return read(arg, addr, v, sizeof *v) == (long)sizeof *v;
}

bool block_successor(const struct block *b, const struct user_regs_struct *regs,
		     block_read_fn read, void *arg, uint64_t *next)
{
	const struct insn_info *t = &b->insn[b->n];
	const struct block_src *s = &b->src;
	struct user_regs_struct r;
	uint64_t ea;

	if (!b->has_term || regs->rip != b->end)
		return false;
	switch (t->kind) {
	case INSN_COND:
	case INSN_JMP:
		r = *regs;
		if (!block_emulate(b, &r))
			return false;
		*next = r.rip;
		return true;
	case INSN_CALL:
		*next = t->target;
		return true;
	case INSN_RET:
		return s->kind == BLOCK_SRC_STACK && read_u64(read, arg, regs->rsp, next);
	case INSN_JMP_IND:
	case INSN_CALL_IND:
		if (s->kind == BLOCK_SRC_REG) {
			*next = reg(regs, s->base);
			return true;
		}
		if (s->kind != BLOCK_SRC_MEM)
			return false;
		/* The address as the CPU computes it, before a call pushes. */
		ea = (s->rip_rel ? b->end + t->len : reg(regs, s->base)) +
		     reg(regs, s->index) * s->scale + (uint64_t)s->disp;
		return read_u64(read, arg, ea, next);
	default:
		return false;
	}
}
