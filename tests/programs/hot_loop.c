/* Two threads that each run a tight arithmetic loop, no syscall inside:
 * with one thread on the CPU at a time the event recorder stops the
 * running one at a STATE point inside the loop whenever the other has
 * waited a time slice, and a replay finds such a point by a trap at every
 * pass of its PC (tests/reverse/state_hot_loop.py). argv[1]: iterations
 * per thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long n, result[2];

static void *loop(void *arg)
{
	unsigned long me = (unsigned long)arg, x = me;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + i;
	result[me] = x;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	pthread_create(&t, NULL, loop, (void *)1ul);
	loop((void *)0ul);
	pthread_join(t, NULL);
	printf("%lu %lu\n", result[0], result[1]);
	return 0;
}
