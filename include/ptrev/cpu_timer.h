/* A stop after a thread's own CPU time (common/ptrace/cpu_timer.c): the
 * kernel's task-clock software event (perf_event_open; no PMU needed) on
 * the traced thread, which signals the thread itself when the time is
 * used. A tracer that stops a thread with a signal of its own after a
 * wall-clock wait can be late by milliseconds where its CPU is taken (a
 * loaded machine, a VM's host), and the thread runs on meanwhile; this
 * stop comes on the thread's own CPU, on time to tens of microseconds
 * whatever the tracer does. Where the kernel refuses the event (a
 * container's seccomp, perf_event_paranoid) there is none. */
#ifndef PTREV_CPU_TIMER_H
#define PTREV_CPU_TIMER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The signal it sends (suppressed by the tracer at its signal-delivery
 * stop: the program never sees it). */
#define CPU_TIMER_SIGNAL SIGPROF

/* A timer for thread tid, not armed: a file descriptor, or -1 (errno)
 * where there is none. */
int cpu_timer_open(pid_t tid);

/* Arm it to stop the thread after ns more of its CPU time (the kernel's
 * shortest is 10 us), once. 0, or -1. */
int cpu_timer_arm(int fd, uint64_t ns);

/* Disarm it. Its signal, if it came meanwhile, stays pending at the
 * thread: cpu_timer_pending says. */
void cpu_timer_disarm(int fd);

/* Is si (a signal-delivery stop's) the timer fd's signal? */
bool cpu_timer_is(int fd, const siginfo_t *si);

/* Disarm and close (fd -1: nothing). */
void cpu_timer_close(int fd);

/* A counter of thread tid's own CPU time, counting from now (the same
 * task-clock event, never signalling): a file descriptor, or -1 (errno).
 * A stretch's time measured so leaves out its tracer's (ptrace stops on
 * a CPU both share) and the wait for the CPU. */
int cpu_clock_open(pid_t tid);
/* Its count in ns (0 where it cannot be read). */
uint64_t cpu_clock_read(int fd);

/* Is signal sig pending at thread tid (its own or its process's)? */
bool cpu_timer_pending(pid_t tid, int sig);

/* The signal reaches a thread only where the thread does not block it,
 * and threads that block every signal are common (xz's workers, thread
 * pools): there it stays pending and the thread runs on. For as long as
 * the timer may signal, traced thread tid (stopped) lets it through
 * (PTRACE_SETSIGMASK): true when its mask was changed, *saved the mask
 * to put back with cpu_timer_mask_back at its next stop, before it runs
 * anything of its own (a syscall there would see the changed mask). */
bool cpu_timer_let_through(pid_t tid, uint64_t *saved);
/* 0, or -1 (errno; ESRCH: the thread is gone). */
int cpu_timer_mask_back(pid_t tid, uint64_t saved);

#endif
