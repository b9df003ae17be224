/* Two threads that each run a tight arithmetic loop, no syscall inside:
 * with one thread on the CPU at a time the event recorder stops the
 * running one at a STATE point inside the loop whenever the other has
 * waited a time slice, and a replay finds such a point by a trap at every
 * pass of its PC (tests/reverse/state_hot_loop.py). argv[1]: iterations
 * per thread; argv[2], where given: the loop is the inner one of two, of
 * that many iterations, and the outer loop's counter is a global (no
 * register or stack word tells which outer pass the thread is in: what
 * the replay's prediction of passes cannot see, replay/event_skip.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long n, inner, result[2];
static volatile unsigned long outer[2];

static void *loop(void *arg)
{
	unsigned long me = (unsigned long)arg, x = me;
	if (inner) {
		for (outer[me] = 0; outer[me] < n / inner; outer[me]++)
			/* The shift's count is in cl: rcx, where the outer
			 * loop's compare left the counter, changes too. */
			for (unsigned long i = 0; i < inner; i++)
				x = x * 6364136223846793005ul + (i >> (x & 7));
	} else {
		for (unsigned long i = 0; i < n; i++)
			x = x * 6364136223846793005ul + i;
	}
	result[me] = x;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	inner = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	pthread_create(&t, NULL, loop, (void *)1ul);
	loop((void *)0ul);
	pthread_join(t, NULL);
	printf("%lu %lu\n", result[0], result[1]);
	return 0;
}
