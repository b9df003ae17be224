/* TSC values left on the stack before the program's entry, found again
 * by the program later (tests/reverse/loader_tsc.py). The dynamic loader
 * times its relocations with rdtsc and leaves the values below the entry's
 * stack pointer; work's IFUNC resolver, which the loader calls while it
 * relocates this program, leaves a few thousand more where they outlast
 * libc's start. look then sums what lies in its own uninitialised frame:
 * the sum depends on the TSC values read before main, which no replay
 * reads again where rdtsc does not trap, and the program prints it. */
#include <stdint.h>
#include <stdio.h>
#include <x86intrin.h>

#define LEFT 4096

static __attribute__((noinline)) void leave_tsc(void)
{
	volatile uint64_t deep[LEFT / 2];
	for (int i = 0; i < LEFT / 2; i++)
		deep[i] = __rdtsc();
	(void)deep[0];
}

static int work_impl(int v)
{
	return 2 * v + 1;
}

/* Called by the loader, before the entry point, to resolve work. */
static int (*resolve_work(void))(int)
{
	leave_tsc();
	return work_impl;
}

int work(int v) __attribute__((ifunc("resolve_work")));

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
static __attribute__((noinline)) uint64_t look(void)
{
	volatile uint64_t left[LEFT]; /* never written: what lies there */
	uint64_t sum = 0;
	for (int i = 0; i < LEFT; i++)
		sum = sum * 31 + left[i];
	return sum; /* line of the sum */
}

int main(void)
{
	uint64_t sum = look();
	printf("left %llu work %d\n", (unsigned long long)sum, work(3));
	return 0;
}
