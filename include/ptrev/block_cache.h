/* Basic blocks as a block stepper runs them (the sw recorder today, a
 * materialiser that re-executes recordings next): the instructions from an
 * IP whose successors are known in advance, which may therefore run
 * natively one after the other, and the control transfer that ends them,
 * decoded once (insn_class.h) and kept in a cache.
 *
 * A block is insn[0..n) at ip[0..n): each one's successor is the next one,
 * ip[i + 1], whatever the registers hold: an instruction that falls
 * through (INSN_OTHER), or a direct jmp or call, followed to its target (a
 * block goes on through them, so it need not be contiguous in memory).
 * Every ip[] of a block is distinct, and none lies inside another's bytes
 * (code that jumps into the middle of instructions ends a block there), so
 * an int3 at `end` changes nothing the run executes before it, and a
 * thread started at ip[0] and stopped at ip[k] (k <= n; ip[n] is `end`)
 * has executed exactly insn[0..k),
 * whatever stopped it (a signal, a fault, a watchpoint), and its IP says
 * which k (block_index_of). When has_term, insn[n] is the instruction at
 * `end` that decides where execution goes next from the registers or
 * memory (any other control transfer, a syscall, an int), or a direct
 * jmp or call back into the block: it must be executed on its own. Without
 * has_term the block was cut (too long, a fall-through into an address
 * already in it, or bytes that cannot be read or decoded next): `end` is
 * only where a run stops. n may be 0: the IP is at a control transfer.
 *
 * What a block does not know, and its user must handle: breakpoints or
 * other points where a thread must stop before `end` (cut the run shorter
 * at one of ip[]), code that changes (the cache keeps what it read until
 * block_cache_invalidate; the reader must hide the user's own int3 bytes,
 * as the ptrace layer hides gdb's), and instructions that behave
 * differently natively than single-stepped (rdtsc under PR_SET_TSC faults
 * mid-block; a REP string instruction runs all its iterations at once, as
 * a CPU counts it once).
 *
 * The terminator's successor follows from the registers and memory where
 * the thread stands before it (block_successor): a conditional branch's
 * from EFLAGS and rcx, a ret's from the stack, an indirect branch's from
 * its register or memory operand. Those that only read registers (jcc,
 * jrcxz, jecxz, loop*, a direct jmp) can even be executed from the
 * registers without running them (block_emulate); calls and returns write
 * or read the stack (a watchpoint, a shadow stack would see the
 * difference), so they are left to run. */
#ifndef PTREV_BLOCK_CACHE_H
#define PTREV_BLOCK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#include "ptrev/insn_class.h"

/* The most instructions a block runs natively; a longer run is cut (the
 * thread then stops once more in its middle). */
#define BLOCK_MAX_INSNS 32

/* How the terminator may be executed from registers alone. */
enum block_emu {
	BLOCK_EMU_NONE = 0,  /* must run or be stepped */
	BLOCK_EMU_JMP,       /* direct jmp: to its target */
	BLOCK_EMU_JCC,       /* jcc: cc says which flags decide */
	BLOCK_EMU_JRCXZ,     /* jump if rcx == 0 */
	BLOCK_EMU_JECXZ,     /* jump if ecx == 0 */
	BLOCK_EMU_LOOP,      /* rcx -= 1; jump if rcx != 0 */
	BLOCK_EMU_LOOPE,     /* ... and ZF */
	BLOCK_EMU_LOOPNE,    /* ... and not ZF */
};

/* Where an indirect terminator finds its target. */
enum block_src_kind {
	BLOCK_SRC_NONE = 0,  /* unknown: only running it tells */
	BLOCK_SRC_REG,       /* a register: jmp/call reg */
	BLOCK_SRC_MEM,       /* 8 bytes at base + index * scale + disp */
	BLOCK_SRC_STACK,     /* ret: 8 bytes at rsp */
};

struct block_src {
	uint8_t kind;          /* enum block_src_kind */
	int8_t base, index;    /* user_regs_struct words (-1 none); REG: base */
	uint8_t scale;
	bool rip_rel;          /* base is the next instruction's address */
	int64_t disp;
};

struct block {
	uint64_t start;        /* ip[0] */
	uint64_t end;          /* ip[n]: where a run stops */
	uint32_t n;            /* instructions that run natively */
	bool has_term;         /* insn[n] is the control transfer at end */
	uint8_t emu;           /* enum block_emu, for the terminator */
	uint8_t cc;            /* BLOCK_EMU_JCC: the condition (low nibble of
				* the 0x7x opcode: 4 = jz, 5 = jnz, ...) */
	struct block_src src;  /* for an indirect terminator or ret */
	uint64_t ip[BLOCK_MAX_INSNS + 1];
	struct insn_info insn[BLOCK_MAX_INSNS + 1];
};

/* Reads len bytes of the program at addr. Returns the bytes read (short
 * at the end of a mapping), or <= 0 when none can be read. For code: the
 * program's own bytes (the caller's int3 hidden); for block_successor's
 * memory operands: what the CPU will read. */
typedef long (*block_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

struct block_cache;

struct block_cache_stats {
	uint64_t hits, misses, invalidations;
};

/* NULL out of memory. */
struct block_cache *block_cache_new(block_read_fn read, void *arg);
void block_cache_free(struct block_cache *c);
/* Forget everything read so far (mappings changed, code was written). */
void block_cache_invalidate(struct block_cache *c);
/* The block at ip, from the cache or decoded now. NULL when not even the
 * instruction at ip can be read and decoded. The block stays valid until
 * the next block_cache_get or block_cache_invalidate (copy it to keep it). */
const struct block *block_cache_get(struct block_cache *c, uint64_t ip);
const struct block_cache_stats *block_cache_stats(const struct block_cache *c);

/* Decode the block at ip, reading its code with read. 0, or -1 when the
 * instruction at ip cannot be read or is not a valid one. (block_cache_get
 * decodes with this.) */
int block_decode(block_read_fn read, void *arg, uint64_t ip, struct block *out);

/* The address of insn[i] (i <= n; block_ip_at(b, b->n) == b->end). */
uint64_t block_ip_at(const struct block *b, uint32_t i);
/* k when ip is ip[k] (0 <= k <= n), -1 when it is none of them (not a
 * stop inside this block). */
int block_index_of(const struct block *b, uint64_t ip);

/* Execute the terminator at b->end (regs->rip must be there) from the
 * registers: set rip to where it goes (and rcx for loop). Returns false,
 * leaving regs alone, when it cannot be (emu is BLOCK_EMU_NONE, no
 * terminator, rip elsewhere). */
bool block_emulate(const struct block *b, struct user_regs_struct *regs);

/* Where the terminator at b->end will go when the thread, standing there
 * with regs (and memory as read reads it), executes it: *next. False when
 * that cannot be known beforehand (syscall, int, far transfers, an operand
 * with a segment override or an address size other than 64 bits, memory
 * that cannot be read) or rip is elsewhere. */
bool block_successor(const struct block *b, const struct user_regs_struct *regs,
		     block_read_fn read, void *arg, uint64_t *next);

#endif
