/* Events every recorder writes the same way, whatever runs the program:
 * a syscall with the memory it wrote, read back from the process after it
 * returned, and the frame the kernel wrote on the stack for a signal
 * handler. (The sw backend, which single-steps, and the event backend,
 * which runs natively between events, both write these.) */
#ifndef PTREV_RECORD_EVENTS_H
#define PTREV_RECORD_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "ptrev/mem_diff.h"
#include "ptrev/syscall_table.h"
#include "ptrev/trace_file.h"

/* Write the SYSCALL record of the syscall whose entry registers are entry
 * (number in orig_rax for a syscall-entry stop, rax before a single step:
 * nr says which), that returned result, at position pos of thread tid; the
 * memory it wrote (syscall_table.h) is read back with read_mem. Where the
 * table cannot say, what changed since watch was taken at the entry
 * (record_syscall_watch) is taken instead; without it the record says its
 * writes are unknown. kept_cpu: no other thread ran meanwhile (the
 * record's flag). 0, or -1 when the writer failed. */
int record_syscall(struct trace_writer *w, pid_t tid, uint64_t pos, uint64_t nr,
		   const struct user_regs_struct *entry, int64_t result, sc_read_fn read_mem,
		   void *ctx, struct mem_diff *watch, bool kept_cpu);

/* At the entry of syscall nr (entry registers as above) in process pid: a
 * copy of its writable memory (mem_diff.h) when the syscall table cannot
 * describe the call and no other thread of the program runs its own code
 * until it returns (one_thread: the event recorder keeps the CPU for such
 * a call; another thread's syscall in progress may still complete
 * meanwhile, and its writes are then taken for this call's too, which a
 * replay repeats with the same bytes); NULL otherwise. mem_diff_free it after
 * record_syscall. */
struct mem_diff *record_syscall_watch(pid_t pid, uint64_t nr, const struct user_regs_struct *entry,
				      bool one_thread, sc_read_fn read_mem, void *ctx);

/* Write the SIGFRAME record of the handler that thread tid just entered
 * with stack pointer rsp (the signal's position pos): the rt_sigframe and
 * the FPU/XSAVE area above it, read with read_mem. A frame that cannot be
 * read is left out (a replay then uses its own). 0, or -1 when the writer
 * failed. */
int record_sigframe(struct trace_writer *w, pid_t tid, uint64_t pos, uint64_t rsp,
		    sc_read_fn read_mem, void *ctx);

#endif
