/* The ptrace side of a block stepper: let a stopped thread run natively
 * until it is about to execute the instruction at a given address (the end
 * of its basic block, block_cache.h), with one breakpoint for the run:
 *
 *   BSTEP_INT3  an int3 byte written at the address for the run only, and
 *               lifted at the thread's next stop, whatever it is. The
 *               cheapest here (bench/stop_cost: a debug register stop
 *               costs 1.2-1.4 times as much in a VM). Only when nothing
 *               else can meet the byte meanwhile: no other task sharing
 *               the memory may run (a thread, a CLONE_VM child), none may
 *               copy it (fork) and the caller must not read the code there
 *               until the stop (the byte is in memory; a MAP_SHARED
 *               writable mapping would show it to other processes too).
 *   BSTEP_HW    a debug register of the thread (an execution breakpoint):
 *               private to the thread, nothing written to memory. The
 *               caller names a slot its own points (gdb's) do not use and
 *               the DR7 bits they need. The register stays armed after the
 *               run (re-arming costs a write; loops stop at the same
 *               address again): before the thread executes that address by
 *               other means, bstep_before_step; before someone else drives
 *               the thread, bstep_disarm.
 *
 * The caller owns waiting (its event loop sees every thread's stops):
 * after bstep_run, the thread's next waitpid status, whatever it is, goes
 * to bstep_stopped before anything reads the thread's memory or registers.
 * What ran is then every instruction from the start up to the thread's IP.
 * The caller must also keep the run's instructions to ones that fall
 * through (a control transfer or syscall before the address and the thread
 * never gets there), and must never run a thread to the address it stands
 * at (an execution breakpoint there fires at once, an int3 executes first).
 * A thread that dies during a run leaves the int3 with the dead memory. */
#ifndef PTREV_BLOCK_STEP_H
#define PTREV_BLOCK_STEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

enum bstep_mech { BSTEP_INT3 = 1, BSTEP_HW = 2 };

/* EFLAGS' resume flag: set by the kernel when a thread stops at an
 * execution breakpoint, so that it executes the instruction there when it
 * goes on; the CPU clears it once an instruction completes. */
#define BSTEP_EFLAGS_RF 0x10000ull

struct bstep;

/* Block stepping for the threads of process pid (opens its memory for
 * writing). NULL with a message in err. */
struct bstep *bstep_new(pid_t pid, char *err, size_t errlen);
void bstep_free(struct bstep *b);
/* The process has a new address space (execve): reopen its memory and
 * forget every thread's debug registers (the kernel cleared them). 0/-1. */
int bstep_exec(struct bstep *b);

/* Let stopped thread tid run (PTRACE_CONT, no signal) until it is about to
 * execute the instruction at stop_ip, by how. slot and base_dr7 are for
 * BSTEP_HW (DR7 becomes base_dr7 | our slot's bits); with BSTEP_INT3 a
 * register still armed from an earlier run is disarmed to base_dr7 first.
 * 0, or -1 with errno (the thread was not resumed, nothing is left
 * written). */
int bstep_run(struct bstep *b, pid_t tid, uint64_t stop_ip, enum bstep_mech how,
	      int slot, uint64_t base_dr7);

/* The next waitpid status of a thread run by bstep_run, and its registers
 * as PTRACE_GETREGS gave them (ignored unless it stopped). Lifts the int3.
 * Returns 1 when the run ended at stop_ip by our breakpoint (regs->rip is
 * stop_ip: rewound and written back after an int3; after a debug register
 * hit the kernel has set RF in regs->eflags), 0 for any other stop or the
 * thread's end (then it is forgotten), -1 when the registers cannot be
 * written back. A thread not in a run: 0. */
int bstep_stopped(struct bstep *b, pid_t tid, int wstatus, struct user_regs_struct *regs);

/* Is thread tid in a run (bstep_run issued, bstep_stopped not yet)? */
bool bstep_running(const struct bstep *b, pid_t tid);

/* Thread tid, stopped at regs->rip, is about to execute that instruction
 * by a single step (or other means than a run). If our debug register is
 * armed there it would stop the thread first: it is disarmed (DR7 :=
 * base_dr7), even where the thread stopped there by it and has RF, which
 * should carry the step over it (in some VMs the register fires again
 * under RF now and then). Where the instruction saves EFLAGS (saves_flags:
 * syscall puts them in r11, int and far transfers in a frame the program
 * can see), RF that our hit left is cleared (regs written back). 0/-1. */
int bstep_before_step(struct bstep *b, pid_t tid, struct user_regs_struct *regs,
		      bool saves_flags, uint64_t base_dr7);

/* Stopped thread tid is handed to someone else, or its caller's points
 * changed: our debug register off (DR7 := base_dr7, the caller's bits
 * only), if armed. 0/-1. */
int bstep_disarm(struct bstep *b, pid_t tid, uint64_t base_dr7);

/* Thread tid is gone (or will never be run again): forget it. */
void bstep_forget(struct bstep *b, pid_t tid);

#endif
