/* Reverse-execution test (tail_history.py): rounds of computation, each
 * ended by a write and a call to round_done, so that the recording's
 * stretches between events hold real work and a breakpoint in every
 * round. argv[1]: rounds (6), argv[2]: iterations per round (10000). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned total;

/* Called every 256 iterations: code that a long stretch passes rarely,
 * where a tail can begin inside it (event_split.c looks for such a PC). */
__attribute__((noinline)) unsigned fold(unsigned acc, unsigned i)
{
	__asm__ volatile("" ::: "memory");
	return acc ^ (i * 2246822519u) ^ (acc >> 13);
}

__attribute__((noinline)) void round_done(int round, unsigned acc)
{
	total += acc ^ (unsigned)round;
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 6;
	unsigned iters = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 10000;
	for (int round = 0; round < rounds; round++) {
		unsigned acc = (unsigned)round * 2654435761u;
		for (unsigned i = 0; i < iters; i++) {
			acc = (acc << 5) + (acc >> 2) + i;
			if ((i & 255) == 255)
				acc = fold(acc, i);
		}
		char line[64];
		int n = snprintf(line, sizeof line, "round %d: %u\n", round, acc);
		if (write(1, line, (size_t)n) != n)
			return 1;
		round_done(round, acc);
	}
	return (int)(total & 1);
}
