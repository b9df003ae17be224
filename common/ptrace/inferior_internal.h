/* Helpers shared by the inferior-control files of the ptrace layer
 * (common/ptrace/inferior*.c, breakpoints.c, debugregs.c) and by no one
 * else: what other folders may use is in include/ptrev/inferior.h and
 * include/ptrev/inferior_raw.h. */
#ifndef PTREV_COMMON_PTRACE_INFERIOR_INTERNAL_H
#define PTREV_COMMON_PTRACE_INFERIOR_INTERNAL_H

#include "ptrev/inferior.h"
#include "ptrev/inferior_raw.h"

/* A thread that has just been traced (clone, PTRACE_ATTACH) into the
 * table, its first SIGSTOP collected (a signal that comes first stays
 * pending for gdb); false if it died meanwhile (inferior_wait.c). */
bool inf_collect_new_thread(struct inferior *inf, pid_t tid);

/* inf->memfd on /proc/PID/mem, closing the one there was: a new process
 * (launch, attach, the followed fork child) or its new memory after an
 * exec, the file being bound to the memory it was opened on
 * (inferior_mem.c). -1 when it cannot be opened: PEEKDATA is used then. */
void inf_open_memfd(struct inferior *inf);

/* inf is gone (inferior_destroy): no other inferior's wait hands it the
 * statuses of its threads any more, and its stash is freed
 * (inferior_wait.c). */
void inf_forget(struct inferior *inf);

/* Stop every running thread (inferior_wait.c). */
void inf_stop_all(struct inferior *inf);

/* Write each software breakpoint's original byte into the memory of
 * process pid, a copy of inf's (a fork child) or one that inf's int3s went
 * into (a vfork child's parent) (breakpoints.c). */
void inf_swbreaks_restore_in(const struct inferior *inf, pid_t pid);

/* Put the original bytes back everywhere and forget all software
 * breakpoints (breakpoints.c; detach). */
void inf_remove_all_swbreaks(struct inferior *inf);

/* Clear DR7 and DR0-3 of one thread (debugregs.c; detach). */
void inf_dr_clear_thread(pid_t tid);

/* Program counter of a stopped thread (inferior_regs.c). */
int inf_get_pc(pid_t tid, uint64_t *pc);
int inf_set_pc(pid_t tid, uint64_t pc);

#endif
