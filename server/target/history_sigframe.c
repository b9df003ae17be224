/* A recorded signal seen going forwards through a history: the thread
 * stands where the signal was taken, before its delivery, as a live stop
 * shows it (gdb's record full and gdbserver report the signal there, at
 * the interrupted instruction, not at the handler's first one). The
 * history indexes instructions, and the next one after the delivery is
 * the handler's first; the state just before the delivery is the one the
 * kernel saved in the handler's signal frame, which is in memory at that
 * position: the interrupted registers (ucontext) and vector state (its
 * fpstate, in the XSAVE layout ptrace uses). Memory is the same but for
 * the frame itself, which lies below the interrupted rsp. */
#include "target_internal.h"

#include <stddef.h>
#include <string.h>
#include <ucontext.h>

/* The frame at the handler's first instruction: the return address
 * (pretcode), then the kernel's ucontext, whose head glibc's ucontext_t
 * mirrors up to uc_mcontext. */
#define UC_AT 8
#ifndef FP_XSTATE_MAGIC1
#define FP_XSTATE_MAGIC1 0x46505853u
#endif
#define XSAVE_SW_BYTES 464 /* fx_sw_bytes: magic1, extended_size, xfeatures, xstate_size */
#define XSAVE_LEGACY 512

typedef ssize_t (*read_fn)(void *ctx, pid_t tid, uint64_t addr, void *buf, size_t len);

static uint64_t greg(const ucontext_t *uc, int r)
{
	return (uint64_t)uc->uc_mcontext.gregs[r];
}

int history_sigframe_interrupted(read_fn rd, void *ctx, pid_t tid, struct amd64_regfile *rf)
{
	enum { HEAD = offsetof(ucontext_t, uc_mcontext) + sizeof(mcontext_t) };
	ucontext_t uc;
	uint64_t at = rf->gpr.rsp + UC_AT;
	if (rd(ctx, tid, at, &uc, HEAD) != HEAD)
		return -1;
	struct user_regs_struct *g = &rf->gpr;
	g->r8 = greg(&uc, REG_R8);
	g->r9 = greg(&uc, REG_R9);
	g->r10 = greg(&uc, REG_R10);
	g->r11 = greg(&uc, REG_R11);
	g->r12 = greg(&uc, REG_R12);
	g->r13 = greg(&uc, REG_R13);
	g->r14 = greg(&uc, REG_R14);
	g->r15 = greg(&uc, REG_R15);
	g->rdi = greg(&uc, REG_RDI);
	g->rsi = greg(&uc, REG_RSI);
	g->rbp = greg(&uc, REG_RBP);
	g->rbx = greg(&uc, REG_RBX);
	g->rdx = greg(&uc, REG_RDX);
	g->rax = greg(&uc, REG_RAX);
	g->rcx = greg(&uc, REG_RCX);
	g->rsp = greg(&uc, REG_RSP);
	g->rip = greg(&uc, REG_RIP);
	g->eflags = greg(&uc, REG_EFL);
	/* cs, gs, fs, ss as four 16-bit fields; the bases are not in the
	 * frame and did not change. */
	uint64_t seg = greg(&uc, REG_CSGSFS);
	g->cs = seg & 0xffff;
	g->ss = (seg >> 48) & 0xffff;
	g->orig_rax = (uint64_t)-1;

	/* The vector state, as the kernel saved it (XSAVE layout, the
	 * software bytes at 464 saying how much); the buffer's own software
	 * bytes (XCR0, as ptrace gives it) stay. */
	uint64_t fp = (uint64_t)(uintptr_t)uc.uc_mcontext.fpregs;
	struct {
		uint32_t magic1, extended_size;
		uint64_t xfeatures;
		uint32_t xstate_size;
	} sw;
	if (!fp || rf->xsave_len < XSAVE_LEGACY ||
	    rd(ctx, tid, fp + XSAVE_SW_BYTES, &sw, sizeof sw) != (ssize_t)sizeof sw)
		return 0; /* the general registers at least */
	size_t n = XSAVE_LEGACY;
	if (sw.magic1 == FP_XSTATE_MAGIC1 && sw.xstate_size > XSAVE_LEGACY)
		n = sw.xstate_size < rf->xsave_len ? sw.xstate_size : rf->xsave_len;
	uint8_t keep[XSAVE_LEGACY - XSAVE_SW_BYTES];
	memcpy(keep, rf->xsave + XSAVE_SW_BYTES, sizeof keep);
	if (rd(ctx, tid, fp, rf->xsave, n) != (ssize_t)n)
		return -1;
	memcpy(rf->xsave + XSAVE_SW_BYTES, keep, sizeof keep);
	return 0;
}
