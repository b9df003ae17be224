/* Helpers shared by the inferior-control files (inferior*.c, breakpoints.c,
 * debugregs.c). Not a public interface: only server/ includes this. */
#ifndef PTREV_INFERIOR_INTERNAL_H
#define PTREV_INFERIOR_INTERNAL_H

#include "ptrev/inferior.h"

/* Thread table (inferior.c). */
struct inf_thread *inf_add_thread(struct inferior *inf, pid_t tid);
void inf_remove_thread(struct inferior *inf, pid_t tid);
/* The process is gone: drop threads, close /proc/PID/mem, mark exited. */
void inf_mark_gone(struct inferior *inf);
/* Stop every running thread (inferior_wait.c). */
void inf_stop_all(struct inferior *inf);

/* Raw memory access, int3 bytes included (inferior_mem.c). */
ssize_t inf_mem_read_raw(struct inferior *inf, uint64_t addr, void *buf, size_t len);
ssize_t inf_mem_write_raw(struct inferior *inf, uint64_t addr, const void *buf, size_t len);

/* Software breakpoints (breakpoints.c). */
struct sw_breakpoint *inf_find_swbreak(struct inferior *inf, uint64_t addr);
/* Put the original bytes back everywhere and forget all breakpoints. */
void inf_remove_all_swbreaks(struct inferior *inf);

/* Debug registers (debugregs.c). */
/* Program DR0-3/DR7 of one thread from inf->hw / inf->dr7. */
int inf_dr_apply_thread(struct inferior *inf, pid_t tid);
/* Read DR6 of a thread; 0 when it cannot be read. */
uint64_t inf_dr_read_dr6(pid_t tid);
void inf_dr_clear_dr6(pid_t tid);
/* Clear DR7 and DR0-3 of one thread (detach). */
void inf_dr_clear_thread(pid_t tid);

/* Program counter of a stopped thread (inferior_regs.c). */
int inf_get_pc(pid_t tid, uint64_t *pc);
int inf_set_pc(pid_t tid, uint64_t pc);

#endif
