/* The inferior below its all-stop bookkeeping, for code that runs the
 * inferior's threads with an event loop of its own instead of
 * inferior_resume/inferior_wait: the recorders (server/record/sw steps every
 * instruction and stops at gdb's breakpoints itself; server/record/pt waits
 * for the process while perf traces it).
 *
 * Such a loop sees every clone, exit and trap first, so it must keep the
 * inferior's tables true for inferior.h's functions used around it (register
 * and memory access, detach, the next inferior_wait): it adds and removes
 * threads, marks the process gone, copies the debug registers to a new
 * thread and reads DR6 to tell a watchpoint's trap from a step. And it steps
 * threads over gdb's int3 bytes itself, so it reads the breakpoint table
 * and writes memory without the int3 hiding inferior_write_mem does. */
#ifndef PTREV_INFERIOR_RAW_H
#define PTREV_INFERIOR_RAW_H

#include "ptrev/debugregs.h"
#include "ptrev/inferior.h"

/* Thread table (inferior_threads.c). A thread the loop has seen start or
 * end; adding a known one returns it, NULL only out of memory. */
struct inf_thread *inf_add_thread(struct inferior *inf, pid_t tid);
void inf_remove_thread(struct inferior *inf, pid_t tid);
/* The process is gone: drop threads, breakpoints and debug-register slots,
 * close /proc/PID/mem, mark it exited. */
void inf_mark_gone(struct inferior *inf);

/* Memory as it is, our int3 bytes included (inferior_mem.c). */
ssize_t inf_mem_read_raw(struct inferior *inf, uint64_t addr, void *buf, size_t len);
ssize_t inf_mem_write_raw(struct inferior *inf, uint64_t addr, const void *buf, size_t len);

/* gdb's software breakpoint at addr (its saved original byte), or NULL
 * (breakpoints.c). */
struct sw_breakpoint *inf_find_swbreak(struct inferior *inf, uint64_t addr);

/* Program DR0-3/DR7 of one thread from the inferior's hardware points
 * (debugregs.c): a new thread does not inherit them from its creator.
 * DR6 (which one trapped) is read and cleared with debugregs.h. */
int inf_dr_apply_thread(struct inferior *inf, pid_t tid);
/* Did one of the inferior's hardware points stop thread tid (its SIGTRAP
 * just seen)? Then *e becomes STOP_HWBREAK or STOP_WATCH (with the address
 * and type gdb asked for), and DR6 is cleared. */
bool inf_dr_hit(struct inferior *inf, pid_t tid, struct stop_event *e);
/* A fork (or vfork) made child: collect its first stop (unless stop_seen:
 * an event loop that took it for a new thread's), take the breakpoints out
 * of its memory (a vfork's: out of the memory it shares with the parent,
 * until inf_vfork_done puts them back), give it rdtsc back when the parent
 * has it trapped (untrap_tsc), and let it go (inferior_fork.c). */
void inf_fork_child_release(struct inferior *inf, pid_t child, bool vfork, bool stop_seen,
			    bool untrap_tsc);
void inf_vfork_done(struct inferior *inf);
/* The same for a recorder with no gdb and so no breakpoints (the event
 * recorder): the child's first stop collected unless stop_seen, rdtsc
 * given back, the child let go untraced. */
void ptrace_fork_child_let_go(pid_t child, bool stop_seen);
/* The same child kept stopped for gdb, which was told of the fork: its
 * memory cleaned as above (rdtsc given back where a recorder trapped it),
 * inf->fork_child set until inferior_detach_fork_child. */
void inf_fork_child_hold(struct inferior *inf, pid_t child, bool vfork, bool stop_seen,
			 bool untrap_tsc);
/* A vfork child kept as a process (vfork_parent set) has exec'd or ended:
 * the int3s it had are put back to their bytes in the parent's memory,
 * which it shared (its own table forgets them). */
void inf_vfork_child_done(struct inferior *inf);
/* After PTRACE_EVENT_EXEC: one thread (the pid), no breakpoints, debug
 * registers or memory file of the old program. */
void inf_after_exec(struct inferior *inf);

#endif
