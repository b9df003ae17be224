/* A thread's state at a point no event marks, in a form two processes can
 * compare: how the event recorder describes the place where it stopped a
 * thread (to deliver a signal to a thread that makes no syscall, or to let
 * another thread run: a STATE record), and how a replay recognises that
 * place again.
 *
 * The description: all general registers (the next instruction at rip),
 * and 64-bit FNV-1a digests of XMM0-15 and MXCSR, of the stack from 128
 * bytes below rsp (the red zone) up to 64 KiB above it (within its
 * mapping), and of every writable private mapping's bytes in address
 * order ([vvar] and [vsyscall] excepted; shared mappings are left out:
 * another process may change them; so are mappings larger than 256 MiB,
 * reservations far bigger than what a program touches, such as sanitizer
 * shadows, which would take seconds to hours to read; and so is each
 * thread's dead stack, below its red zone, in a mapping that holds one
 * thread's rsp and no other's).
 *
 * Why the dead stack is left out: it holds what no longer belongs to the
 * program, and not always the same bytes in two runs of the same code.
 * glibc's lazy-binding trampoline saves the vector registers below rsp
 * with XSAVEC, which writes a component only if the CPU tracks it as in
 * use (XINUSE); the CPU may track zeroed XMM registers as in use or not,
 * depending on what the kernel or hypervisor did with the FPU meanwhile.
 * Seen here: one replay in three found 56 bytes below main's stack frame
 * different from the recording (the XSAVE header and XMM area the
 * trampoline had left), so a STATE point was never found. What the
 * program can see, its live stack and the rest of its memory, is the
 * same.
 *
 * A replay arms a hardware breakpoint at rip after the thread's previous
 * event and stops at the first hit whose state matches, cheapest first
 * (registers, vectors, stack, all memory).
 *
 * Why that is sound: between two events the thread executes
 * deterministically (no syscall, signal or rdtsc in between: those are
 * events), and with one thread on the CPU at a time nothing else changes
 * its memory but the syscalls other threads are in, whose ranges are left
 * out (skip), so the sequence of states it passes through, outside those
 * ranges, is the same in the recording and in the replay. The first state in that sequence equal
 * to the recorded one is the recorded point unless an earlier state is
 * equal to it in everything the description covers. Two such states either
 * differ only where the description does not look (x87 registers, the
 * upper halves of vector registers, the contents of shared memory, of
 * mappings larger than 256 MiB, of the ranges left out or of the kernel's
 * own structures) or are
 * the same state, in which case the
 * thread was in a loop that changes nothing and either choice continues
 * identically (the history then shows fewer iterations of that loop than
 * the recording ran). Digests collide with a chance of about 2^-64.
 *
 * What it costs: the recorder reads all writable memory once per point
 * (milliseconds for tens of megabytes). A replay traps at every execution
 * of rip between the previous event and the point: cheap when rip is
 * outside a hot loop, one trap (~25 us here) per iteration inside one. */
#ifndef PTREV_STATE_DIGEST_H
#define PTREV_STATE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#define FNV64_INIT 0xcbf29ce484222325ull
uint64_t fnv1a64(uint64_t h, const void *p, size_t n);

/* state_digest.flags: the dead stacks are left out of mem_hash (every
 * description taken now; descriptions taken before had 0). */
#define STATE_DIGEST_LIVE_STACKS 1u
/* ...and the dynamic loader's writable data is left out of it. Taken so
 * where rdtsc does not trap (ptrev/tsc_trap.h): ld.so keeps there the TSC
 * time its relocations took (relocate_time), which the program reads
 * unseen there and every replay has otherwise, so no point of a
 * dynamically linked program would be found again. Nothing a loop
 * changes lives there (dlopen goes through syscalls). */
#define STATE_DIGEST_NO_LOADER_DATA 2u
/* ...and glibc's copy of what CPUID told it (ptrev/cpuid_copy.h): it
 * holds the APIC ID of the CPU that asked, which some hypervisors change
 * under the program. Every description taken now. */
#define STATE_DIGEST_NO_CPUID_COPY 4u

struct state_digest {
	uint64_t flags;
	uint64_t vec_hash;
	uint64_t stack_lo, stack_hi;
	uint64_t stack_hash;
	uint64_t mem_bytes;
	uint64_t mem_hash;
	/* Ranges left out of the stack and memory digests, nskip (address,
	 * length) pairs: what the syscalls other threads are in may write.
	 * The recorder cannot know whether such a write has landed when it
	 * describes a point (a read on a pipe completes while another thread
	 * runs), and a replay makes it only when that thread runs next; the
	 * replay leaves the same ranges out. Not owned. */
	const uint64_t *skip;
	size_t nskip;
};

/* What the event recorder knows of the other threads that ptrace cannot
 * tell it: the stack pointers of threads that are inside syscalls (not
 * stopped; a replay has them stopped at their entries, with the same
 * rsp), tids[i] with rsps[i]; and the ranges to leave out (skip). */
struct state_view {
	const pid_t *tids;
	const uint64_t *rsps;
	size_t n;
	const uint64_t *skip;
	size_t nskip;
};

/* Describe thread tid of process pid (stopped under ptrace, registers
 * regs; the other threads' stacks are told by view where it names them,
 * else by the registers of those that are stopped under ptrace too; view
 * may be NULL). memfd: /proc/PID/mem open for reading. 0, or -1 with
 * err. */
int state_digest_take(pid_t pid, pid_t tid, int memfd, const struct user_regs_struct *regs,
		      const struct state_view *view, struct state_digest *out, char *err,
		      size_t errlen);

/* Does thread tid (stopped, registers regs) stand where want_regs and want
 * describe? Registers are compared as a replay has them: the resume and
 * trap flags and orig_rax are not compared (a breakpoint hit sets RF, and
 * orig_rax says only how the thread last entered the kernel); memory as
 * want->flags says it was hashed, want->skip left out. 1 yes, 0 no, -1 when the state cannot
 * be read (err). */
int state_digest_matches(pid_t pid, pid_t tid, int memfd, const struct user_regs_struct *regs,
			 const struct user_regs_struct *want_regs, const struct state_digest *want,
			 char *err, size_t errlen);

#endif
