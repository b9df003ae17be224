/* The x86 debug registers of one thread, through PTRACE_PEEKUSER/POKEUSER.
 *
 * DR0-DR3 hold addresses; DR7 enables them: local-enable bit 2*i, and at
 * bit 16+4*i two R/W bits (00 execute, 01 write, 11 read or write) then two
 * LEN bits (00 1 byte, 01 2, 11 4, 10 8); DR6 says which one trapped. A
 * register watches a naturally aligned 1/2/4/8-byte range, so a range is
 * split into aligned pieces, one register each.
 *
 * Kept apart from the inferior's hardware points (inferior.h, which keeps
 * slots for gdb's Z1-Z4 and writes them to every thread) because the
 * replayer programs the registers of processes that are no inferior: a
 * hardware breakpoint to run to a position, data watches while it
 * re-executes. One encoding and one way to the registers for both. */
#ifndef PTREV_DEBUGREGS_H
#define PTREV_DEBUGREGS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* Kinds of point, in gdb's Z numbering. x86 has no read-only watch: a
 * DR_READ piece is programmed as DR_ACCESS. */
enum { DR_EXEC = 1, DR_WRITE = 2, DR_READ = 3, DR_ACCESS = 4 };

struct dr_piece {
	uint64_t addr;
	int len;        /* 1, 2, 4 or 8; addr a multiple of it */
};

/* Split [addr, addr+len) into naturally aligned pieces, largest first.
 * Returns their number, or -1 if more than four would be needed. */
int inf_dr_split(uint64_t addr, uint64_t len, struct dr_piece out[4]);

/* The DR7 bits that enable register `slot` (0-3) for a point of `kind`
 * (DR_*) and length len (1, 2, 4, 8; 1 for DR_EXEC). OR them together. */
uint64_t inf_dr7_slot(int slot, int kind, int len);

/* Write debug register n (0-3 an address, 6 the status, 7 the control) of
 * stopped thread tid. 0, or -1 with errno: ENODEV for a DR7 that enables
 * a register where they do not trap (inf_dr_traps). */
int inf_dr_write(pid_t tid, int n, uint64_t value);
/* The same, whether the registers trap or not (a test's, to show they
 * do not). */
int inf_dr_write_raw(pid_t tid, int n, uint64_t value);

/* Do the debug registers of this machine trap? Some hypervisors accept
 * them and never raise their #DB (debugregs_probe.c). Asked once, by a
 * traced child; call it before tracing anything else (cli_main does), as
 * its child could be taken by a waitpid(-1) of another thread.
 * PTREV_DEBUG_REGISTERS=0 answers no without asking (tests), =1 yes. */
bool inf_dr_traps(void);
/* inf_dr_write's errno told: ENODEV says the registers do not trap. */
const char *inf_dr_strerror(int err);

/* Debug register n (0-3, 6, 7) of stopped thread tid; 0 when it cannot
 * be read. */
uint64_t inf_dr_read(pid_t tid, int n);
/* DR6 of a thread (which debug register trapped); 0 when it cannot be
 * read. Cleared after a trap, as the CPU never clears it. */
uint64_t inf_dr_read_dr6(pid_t tid);
void inf_dr_clear_dr6(pid_t tid);
/* Was the SIGTRAP that stopped tid at ip an execution breakpoint's (one
 * armed at ip, the caller knows) whose #DB came without DR6 bits? Some
 * VMs lose DR6 now and then (an Intel Xeon guest here: 1 run in 10 of a
 * small program under the block stepper); the kernel then takes the #DB
 * for an ICEBP (INT1) instruction's and says TRAP_BRKPT. An INT1 of the
 * program's own traps after itself: its byte is right before ip; under
 * some hypervisors (an AMD EPYC guest, kernel 6.18) ip is the INT1's own
 * address, its byte at ip. Or the
 * kernel saw a register's bit but found no breakpoint of the thread's
 * for it, and says TRAP_HWBKPT with no bit in the thread's DR6 (and no
 * RF set: seen in the same VM). */
bool inf_dr_lost_exec_hit(pid_t tid, uint64_t ip);
/* ...or one whose #DB came with a stale single-step bit (BS) instead of
 * the register's? The same VM does that too (11 to 43 hits in one
 * event replay of a hot loop's recording): the kernel then says
 * TRAP_TRACE. Only for a thread the tracer resumed to run (PTRACE_CONT,
 * PTRACE_SYSCALL), not stepped: a step's end says the same. A program
 * that sets TF itself (eflags: as the thread stands) gets its own traps:
 * no such hit. */
bool inf_dr_stale_step_hit(pid_t tid, uint64_t eflags);
/* Either: the SIGTRAP that stopped tid (resumed to run, standing with
 * regs) is a debug register's #DB whose DR6 the VM got wrong. */
bool inf_dr_lost_hit(pid_t tid, const struct user_regs_struct *regs);

#endif
