/* Basic blocks as a block stepper runs them (the sw recorder today, a
 * materialiser that re-executes recordings next): the instructions from an
 * IP that may run natively, one after the other, and the control transfer
 * that ends them, decoded once (insn_class.h) and kept in a cache.
 *
 * A block is insn[0..n): instructions that always fall through to the next
 * (INSN_OTHER), so a thread started at `start` and stopped before `end` has
 * executed exactly a prefix of them, whatever stopped it (a signal, a
 * fault, a watchpoint); its IP says how many (block_index_of). When
 * has_term, insn[n] is the instruction at `end` that must be executed on
 * its own: any control transfer, a syscall or an int (anything of another
 * kind than INSN_OTHER), because only it decides where execution goes next
 * and the encoder needs that. Without has_term the block was cut (too
 * long, or the bytes after it cannot be read or decoded): `end` is simply
 * where the run stops, and whatever lies there is the next block's
 * business. n may be 0: the IP is at a control transfer.
 *
 * What a block does not know, and its user must handle: breakpoints or
 * other points where a thread must stop before `end` (cut the run shorter:
 * block_ip_at gives each instruction's address), code that changes (the
 * cache keeps what it read until block_cache_invalidate; the reader must
 * hide the user's own int3 bytes, as the ptrace layer hides gdb's), and
 * instructions that behave differently natively than single-stepped
 * (rdtsc under PR_SET_TSC faults mid-block; a REP string instruction runs
 * all its iterations at once, as a CPU counts it once).
 *
 * The terminator of a block can be executed without running it when it
 * only reads registers (block_emulate): a direct jmp, and a jcc, jrcxz,
 * jecxz, loop, loope or loopne whose direction follows from EFLAGS and rcx.
 * Calls and returns touch the stack (a watchpoint, a shadow stack would
 * see the difference); they are left to be stepped. */
#ifndef PTREV_BLOCK_CACHE_H
#define PTREV_BLOCK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#include "ptrev/insn_class.h"

/* The most instructions a block runs natively; a longer straight run is
 * cut (the thread then stops once more in its middle). */
#define BLOCK_MAX_INSNS 32

/* How the terminator may be executed from registers alone. */
enum block_emu {
	BLOCK_EMU_NONE = 0,  /* must be stepped */
	BLOCK_EMU_JMP,       /* direct jmp: to its target */
	BLOCK_EMU_JCC,       /* jcc: cc says which flags decide */
	BLOCK_EMU_JRCXZ,     /* jump if rcx == 0 */
	BLOCK_EMU_JECXZ,     /* jump if ecx == 0 */
	BLOCK_EMU_LOOP,      /* rcx -= 1; jump if rcx != 0 */
	BLOCK_EMU_LOOPE,     /* ... and ZF */
	BLOCK_EMU_LOOPNE,    /* ... and not ZF */
};

struct block {
	uint64_t start;
	uint64_t end;          /* start + the lengths of insn[0..n) */
	uint32_t n;            /* instructions that run natively */
	bool has_term;         /* insn[n] is the control transfer at end */
	uint8_t emu;           /* enum block_emu, for the terminator */
	uint8_t cc;            /* BLOCK_EMU_JCC: the condition (low nibble of
				* the 0x7x opcode: 4 = jz, 5 = jnz, ...) */
	struct insn_info insn[BLOCK_MAX_INSNS + 1];
};

/* Reads len bytes of the program at addr (the program's own bytes: the
 * caller's int3 hidden). Returns the bytes read (short at the end of a
 * mapping), or <= 0 when none can be read. */
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

/* Decode the block at ip from bytes already in hand: code holds len bytes
 * of the program from ip on. 0, or -1 when the instruction at ip is not a
 * valid one. (block_cache_get decodes with this.) */
int block_decode(const uint8_t *code, size_t len, uint64_t ip, struct block *out);

/* The address of insn[i] (i <= n; block_ip_at(b, b->n) == b->end). */
uint64_t block_ip_at(const struct block *b, uint32_t i);
/* How many of insn[0..n) lie before ip, when ip is one of their addresses
 * or end; -1 when ip is none of them (not a stop inside this block). */
int block_index_of(const struct block *b, uint64_t ip);

/* Execute the terminator at b->end (regs->rip must be there) from the
 * registers: set rip to where it goes (and rcx for loop). Returns false,
 * leaving regs alone, when it cannot be (emu is BLOCK_EMU_NONE, no
 * terminator, rip elsewhere). */
bool block_emulate(const struct block *b, struct user_regs_struct *regs);

#endif
