/* x86-64 instruction classification with Zydis (see insn_class.h). */
#include "ptrev/insn_class.h"

#include <Zydis/Zydis.h>

static enum insn_kind near_branch_kind(const ZydisDecodedInstruction *in,
				       enum insn_kind direct,
				       enum insn_kind indirect)
{
	/* Direct near branches carry a relative immediate; everything else
	 * (register or memory operand) is indirect. */
	return in->raw.imm[0].is_relative ? direct : indirect;
}

static enum insn_kind kind_of(const ZydisDecodedInstruction *in)
{
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSENTER:
		return INSN_SYSCALL;
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INTO:  /* invalid in 64-bit mode, kept for truth */
		return INSN_INT;
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
	case ZYDIS_MNEMONIC_UIRET:
	case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_SYSEXIT:
		return INSN_FAR;
	case ZYDIS_MNEMONIC_XBEGIN:
		/* Zydis files XBEGIN under conditional branches, but PT reports
		 * transactions with MODE.TSX and aborts as asynchronous
		 * branches, never with a TNT bit (libipt: ptic_other). */
		return INSN_OTHER;
	case ZYDIS_MNEMONIC_JMP:
		if (in->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
			return INSN_FAR;
		return near_branch_kind(in, INSN_JMP, INSN_JMP_IND);
	case ZYDIS_MNEMONIC_CALL:
		if (in->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
			return INSN_FAR;
		return near_branch_kind(in, INSN_CALL, INSN_CALL_IND);
	case ZYDIS_MNEMONIC_RET:
		if (in->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
			return INSN_FAR;
		return INSN_RET;
	default:
		break;
	}
	/* jcc, jrcxz/jecxz, loop/loope/loopne (and any future relative
	 * conditional branch Zydis adds to this category). */
	if (in->meta.category == ZYDIS_CATEGORY_COND_BR &&
	    in->raw.imm[0].is_relative)
		return INSN_COND;
	return INSN_OTHER;
}

int insn_classify(const uint8_t *code, size_t n, uint64_t ip,
		  struct insn_info *out)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;

	if (!code || !out)
		return -1;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)))
		return -1;
	if (n > ZYDIS_MAX_INSTRUCTION_LENGTH)
		n = ZYDIS_MAX_INSTRUCTION_LENGTH;
	/* No operand decoding: the raw immediate is all we need, and this
	 * runs once per single-stepped instruction. */
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, code, n,
							 &in)))
		return -1;

	out->len = in.length;
	out->kind = kind_of(&in);
	out->target = 0;
	out->rep = (in.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
				     ZYDIS_ATTRIB_HAS_REPNE)) != 0;
	switch (out->kind) {
	case INSN_COND:
	case INSN_JMP:
	case INSN_CALL:
		/* Relative to the next instruction; 64-bit wrap-around is
		 * what the CPU does too. */
		out->target = ip + in.length + (uint64_t)in.raw.imm[0].value.s;
		break;
	default:
		break;
	}
	return 0;
}

const char *insn_kind_name(enum insn_kind kind)
{
	switch (kind) {
	case INSN_OTHER: return "other";
	case INSN_COND: return "cond";
	case INSN_JMP: return "jmp";
	case INSN_CALL: return "call";
	case INSN_JMP_IND: return "jmp-ind";
	case INSN_CALL_IND: return "call-ind";
	case INSN_RET: return "ret";
	case INSN_FAR: return "far";
	case INSN_SYSCALL: return "syscall";
	case INSN_INT: return "int";
	}
	return "?";
}
