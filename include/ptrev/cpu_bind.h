/* Tracer and tracee on one CPU (common/ptrace/cpu_bind.c). */
#ifndef PTREV_CPU_BIND_H
#define PTREV_CPU_BIND_H

#include <sched.h>
#include <sys/types.h>

/* Bind ptrev and the traced process pid (and so the threads it makes) to
 * the CPU ptrev runs on, one of those it may use. What is recorded or
 * replayed runs one thread at a time and stops for ptrace at every event:
 * each stop wakes the other side, which across two CPUs of a VM is an
 * inter-processor interrupt (measured here: 20,000 syscalls recorded by
 * the event backend in 2.8 s spread over two CPUs, 0.8 s on one). rr binds
 * the same way. Nothing is changed where only one CPU is allowed. 0, or
 * -1 with errno (the processes are then left as they were). */
int cpu_bind_tracer_and(pid_t pid);

/* The same on CPU cpu where ptrev may use it: a replay runs on the CPU
 * its recording ran on, because a program can read which CPU it is on
 * without a syscall, and keeps what it read (static glibc keeps CPUID
 * leaf 1, whose EBX holds the CPU's APIC id, in writable memory that a
 * STATE point's digest covers: a replay on the other CPU of two never
 * found the points). 1 bound on cpu, 0 bound as cpu_bind_tracer_and
 * (cpu -1, or not one ptrev may use), -1 with errno. */
int cpu_bind_tracer_and_on(pid_t pid, int cpu);
/* The calling (tracer) thread alone on cpu, where ptrev may use it, before
 * it starts a program that is to run there: the child starts on its
 * parent thread's CPUs, and a thread that stood elsewhere (a background
 * job's) would otherwise run it there until cpu_bind_tracer_and_on. */
void cpu_bind_tracer_on(int cpu);

/* The one CPU the calling thread is bound to, or -1 (not bound to one):
 * what a recording says it ran on (META cpu_index). */
int cpu_bind_index(void);

/* For a second tracer thread of ptrev (a background materialisation):
 * let the calling thread run on the CPUs ptrev could use but those the
 * thread that made it is bound to, where there are others; the processes
 * it then starts inherit that, and cpu_bind_tracer_and binds them with it.
 * Where there is no other CPU it may run where ptrev could. 0, or -1 with
 * errno. */
int cpu_bind_thread_elsewhere(void);

/* While the tracee computes on the CPU they share, for a wait that must
 * end on time (a tracee stopped after a given run: the tracer's timer
 * waits on a CPU the tracee does not leave, and the tracee, ahead in the
 * scheduler's eyes, may keep it for milliseconds): the calling thread
 * moved to the other CPUs ptrev may use (cpu_bind_thread_elsewhere),
 * its own set kept in *saved for cpu_bind_step_back. 0, or -1. */
int cpu_bind_step_aside(cpu_set_t *saved);
void cpu_bind_step_back(const cpu_set_t *saved);

/* Give a process that leaves ptrev's control (a fork child let go) the
 * CPUs the program had before cpu_bind_tracer_and. */
void cpu_bind_release(pid_t pid);

#endif
