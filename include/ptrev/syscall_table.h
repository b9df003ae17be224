/* The one table of x86-64 system calls that both the recorders and the
 * replays use (common/syscall_table.c), in the spirit of rr's
 * syscalls.py: for every number of the kernel's x86-64 table, its name,
 * which user memory it writes (so that a recorder reads those ranges back
 * after the call and a replay can put them in place instead of running
 * it), whether it changes the address space, and how a replay treats it.
 *
 * A syscall whose writes the table cannot describe (a number beyond the
 * table or in one of its holes, an ioctl request, fcntl command, prctl
 * option ... it does not know, restart_syscall) is "unknown": the
 * recording says so (the SYSCALL record's unknown flag, nothing recorded).
 * One that failed (a result in -4095..-1) wrote nothing, and a replay
 * emulates it; one that succeeded stops the replay there with a message
 * that names it (syscall_label). */
#ifndef PTREV_SYSCALL_TABLE_H
#define PTREV_SYSCALL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

/* One more than the highest number described (the kernel's x86-64 table
 * as of Linux 6.17: file_setattr is 469). */
#define SYSCALL_TABLE_LEN 470

struct sc_range {
	uint64_t addr;
	uint64_t len;
};

/* A syscall's six arguments from its entry registers (rdi rsi rdx r10 r8
 * r9, the x86-64 convention). */
static inline void syscall_args(const struct user_regs_struct *entry, uint64_t args[6])
{
	args[0] = entry->rdi;
	args[1] = entry->rsi;
	args[2] = entry->rdx;
	args[3] = entry->r10;
	args[4] = entry->r8;
	args[5] = entry->r9;
}

/* Reads inferior memory; returns bytes read or -1. */
typedef long (*sc_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

/* How a replay treats a syscall. */
enum syscall_replay {
	SYSCALL_EMULATE,     /* skipped; the recorded result and writes put in place */
	SYSCALL_RUN_OK,      /* run for real where it succeeded (it builds the address
			      * space or the signal or thread state), else emulated */
	SYSCALL_RUN,         /* always run (brk, rt_sigreturn) */
	SYSCALL_FORK,        /* makes a process: emulated, no child made */
	SYSCALL_CLONE,       /* a process or a thread, by its flags */
	SYSCALL_SHM,         /* attaches (shmat) or detaches (shmdt) System V shared
			      * memory: where it succeeded, a replay, which has no
			      * segment, maps or unmaps a shared anonymous mapping of
			      * its own there, holding the bytes the recording read
			      * at the attach (sys_replay.c) */
	SYSCALL_UNSUPPORTED, /* where it succeeded, a replay cannot reproduce it */
};

/* The description language of one written range. */
enum sc_len {
	SC_NONE,       /* (the end of the list) */
	SC_FIXED,      /* size bytes at arg */
	SC_RESULT,     /* result bytes at arg; at most arg arg2 where arg2 != SC_NOARG */
	SC_RESULT_N,   /* result elements of size bytes, at most arg arg2 of them */
	SC_ARG_N,      /* arg arg2 elements of size bytes */
	SC_PTR_U32,    /* *(u32 *)arg arg2 bytes (read after the call) */
	SC_IOV,        /* an iovec array at arg, arg arg2 entries, filled with
			* result bytes in order */
	SC_BITS,       /* a bitmap of arg arg2 bits, in 64-bit words (fd_set, nodemask) */
	SC_PAGES,      /* one byte per page of arg arg2 bytes (mincore) */
};
#define SC_NOARG 0xff

enum sc_when {
	SC_OK,      /* where the call succeeded (result >= 0) */
	SC_ALWAYS,  /* whatever the result (nanosleep's rest, select's sets) */
	SC_POS,     /* where the result is > 0 */
};

struct sc_write {
	uint8_t len;   /* enum sc_len */
	uint8_t arg;   /* the argument holding the address (0..5) */
	uint8_t arg2;  /* the argument the length depends on */
	uint8_t when;  /* enum sc_when */
	uint32_t size;
};

/* One call as a writes function sees it. */
struct sc_call {
	uint64_t nr;
	const uint64_t *args;
	int64_t result;
	sc_read_fn read_mem;
	void *ctx;
	struct sc_range *r;
	int n, max;
};

struct syscall_desc {
	const char *name;          /* NULL: a hole in the kernel's table */
	uint8_t replay;            /* enum syscall_replay */
	bool maps;                 /* changes the address space */
	bool nosys;                /* not implemented on x86-64 (ENOSYS) */
	struct sc_write w[4];      /* what it writes, in this language ... */
	/* ... or, for sub-commands, a function: 0, or -1 where the case at
	 * hand is unknown. sub names that case's argument in messages. */
	int (*special)(struct sc_call *c);
	bool never_unknown;        /* special describes every case (mmap) */
	const char *sub;           /* "request", "command", "option" */
	uint8_t sub_arg;
	const char *why;           /* SYSCALL_UNSUPPORTED (and CLONE's threads): why */
};

/* The entry of nr, or NULL for a number beyond the table or a hole. */
const struct syscall_desc *syscall_desc(uint64_t nr);
/* Its name, or NULL. */
const char *syscall_name(uint64_t nr);

/* "statfs (137)", "ioctl (16, request 0x1234)" where args are given and
 * the syscall has sub-commands, "syscall 999" for a number not in the
 * table. */
void syscall_label(uint64_t nr, const uint64_t *args, char *buf, size_t len);

/* Fill out[0..max) with the ranges syscall nr (args, completed with
 * result) wrote; read_mem reads structures the call used (iovecs,
 * msghdr). Returns the number of ranges, or -1 when the table cannot say
 * (unknown). Ranges beyond max are dropped. */
int syscall_writes(uint64_t nr, const uint64_t args[6], int64_t result, sc_read_fn read_mem,
		   void *ctx, struct sc_range *out, int max);

/* What syscall nr (args), in progress, may write whatever it returns:
 * syscall_writes with the largest result (SYSCALL_MAX_RESULT; the
 * table bounds a result by the count argument it has). The event recorder
 * leaves these ranges out of a STATE point's digest for the calls other
 * threads are in: when their writes land, the recording cannot tell, and
 * a replay makes them when those threads run next. -1: unknown. */
#define SYSCALL_MAX_RESULT (1ll << 30)
int syscall_may_write(uint64_t nr, const uint64_t args[6], sc_read_fn read_mem, void *ctx,
		      struct sc_range *out, int max);

/* Can syscall_writes find nr's case unknown? Only for a number the table
 * does not describe or one described by a function (ioctl, fcntl, ...,
 * shmat: a segment whose size the kernel does not tell ptrev) that can:
 * what a recorder asks before it describes a call at its entry. */
bool syscall_may_be_unknown(uint64_t nr);

/* Does the syscall change the address space (mappings, protections)? */
bool syscall_changes_maps(uint64_t nr);

/* Does the event recorder let the thread keep the CPU from the syscall's
 * entry to its return, and a replay complete it as soon as the thread's
 * run ends at its entry? Those that change the address space and really
 * run again in a replay (mmap, munmap, mprotect, brk, ...): the kernel
 * places a mapping where the other threads' calls left room, so their
 * order must be one the replay can repeat, and another thread must see
 * them done where the recorded one did (its STATE points digest the
 * mappings). They never block. */
bool syscall_keeps_cpu(uint64_t nr);

/* How a replay treats it (EMULATE for a number not in the table). */
enum syscall_replay syscall_replay_kind(uint64_t nr);

/* Why a replay cannot reproduce nr where it succeeded, or NULL where it
 * can (for a clone: why not a new thread). */
const char *syscall_unsupported_why(uint64_t nr);

#endif
