/* Keeping a test and everything it starts on one CPU.
 *
 * cpuid is not recorded, and what it answers can differ between the CPUs of
 * one machine: leaf 1's EBX holds the APIC id, and on a hybrid Intel CPU the
 * cache leaves (2 and 4) differ between its core kinds. Static glibc's start
 * reads them (init_cacheinfo, intel_check_word) and takes other branches on
 * another CPU. A test that compares two runs of one program (two steppers,
 * a recording and an independent stepper, a recording and its replay) keeps
 * them on one CPU, so that this known gap does not show as a mismatch: CI
 * on a hybrid CPU saw the insn and block-hw steppers differ by 204
 * instructions in intel_check_word before the first syscall. ptrev binds a
 * recording to the CPU it starts on; a child inherits this binding. */
#ifndef PTREV_TESTS_ONE_CPU_H
#define PTREV_TESTS_ONE_CPU_H

#include <sched.h>

static inline void stay_on_one_cpu(void)
{
	cpu_set_t one;
	int cpu = sched_getcpu();
	CPU_ZERO(&one);
	CPU_SET(cpu >= 0 ? cpu : 0, &one);
	sched_setaffinity(0, sizeof one, &one);
}

#endif
