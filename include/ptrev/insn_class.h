/* x86-64 instruction classification for the sw recorder backend.
 *
 * The sw backend single-steps the inferior and must emit the PT packets a CPU
 * would. Which packet an instruction produces depends only on its control-flow
 * kind, so this module answers, for the bytes at an IP: how long is the
 * instruction, what kind of control transfer is it, and (for direct branches)
 * where does it go. Decoding is done with Zydis in 64-bit mode and covers all
 * of x86-64 (VEX, EVEX/AVX-512, ...). Bytes that do not form a valid
 * instruction are an error, never a guess: the recorder must not invent
 * trace.
 *
 * The kinds follow libipt's instruction classes so that the packets we emit
 * are the ones libipt's decoder expects for the same instruction. */
#ifndef PTREV_INSN_CLASS_H
#define PTREV_INSN_CLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum insn_kind {
	INSN_OTHER = 0,  /* no control transfer (incl. ud2, hlt, xbegin) */
	INSN_COND,       /* jcc, jrcxz/jecxz, loop/loope/loopne: TNT bit */
	INSN_JMP,        /* direct near jump: no packet */
	INSN_CALL,       /* direct near call: no packet, pushes return addr */
	INSN_JMP_IND,    /* indirect near jump: TIP */
	INSN_CALL_IND,   /* indirect near call: TIP, pushes return addr */
	INSN_RET,        /* near ret, ret imm16: compressed (TNT) or TIP */
	INSN_FAR,        /* far call/jmp/ret, iret, sysret/sysexit: TIP */
	INSN_SYSCALL,    /* syscall, sysenter: enters the kernel (TIP.PGD) */
	INSN_INT,        /* int n, int1, int3: enters the kernel (TIP.PGD) */
};

struct insn_info {
	uint8_t len;           /* 1..15 */
	enum insn_kind kind;
	uint64_t target;       /* INSN_COND/JMP/CALL: the branch target; else 0 */
	/* A string instruction with an effective REP/REPE/REPNE prefix: it
	 * can be interrupted between iterations, rip still on it (a state
	 * there is not one a breakpoint on the instruction can find again:
	 * the CPU sets RF to resume it without a second hit). */
	bool rep;
};

/* Classify the instruction at ip whose bytes start at code (n bytes are
 * readable; 15 always suffice, fewer are fine near the end of a mapping).
 * Returns 0 and fills *out, or -1 when the bytes are not a valid 64-bit
 * instruction (or are cut short by n). */
int insn_classify(const uint8_t *code, size_t n, uint64_t ip,
		  struct insn_info *out);

/* "cond", "jmp", ... for messages and tests. */
const char *insn_kind_name(enum insn_kind kind);

/* Does this kind leave user space (so tracing stops until user execution
 * resumes)? */
static inline int insn_kind_enters_kernel(enum insn_kind kind)
{
	return kind == INSN_SYSCALL || kind == INSN_INT;
}

#endif
