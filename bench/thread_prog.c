/* Recording-benchmark inferior for threads: `thread_prog T N` runs T
 * threads that each do N iterations of the same arithmetic loop, so that
 * `1 2N` and `2 N` execute the same work in one thread or in two. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static void *work(void *arg)
{
	unsigned long n = (unsigned long)arg, x = 0;
	for (unsigned long i = 0; i < n; i++)
		x += i * 7 + (x >> 3);
	__atomic_add_fetch(&sink, x, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	int t = argc > 1 ? atoi(argv[1]) : 2;
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000;
	pthread_t th[16];

	if (t < 1 || t > 16)
		return 2;
	for (int i = 1; i < t; i++)
		pthread_create(&th[i], NULL, work, (void *)n);
	work((void *)n);
	for (int i = 1; i < t; i++)
		pthread_join(th[i], NULL);
	printf("%lu\n", sink);
	return 0;
}
