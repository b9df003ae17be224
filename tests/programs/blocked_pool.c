/* A pool of two workers that block every signal, as xz's and many thread
 * pools' workers do, each in a tight arithmetic loop with no syscall:
 * the event recorder stops the running one at a STATE point inside the
 * loop when the other has waited a time slice, and a replay finds that
 * point with runs timed by the thread's CPU clock, whose SIGPROF such a
 * thread would keep pending (tests/reverse/blocked_threads.py). argv[1]:
 * iterations per worker. Prints both results. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long iterations, sums[2];

static void *work(void *arg)
{
	unsigned long me = (unsigned long)arg, h = 0x9e3779b97f4a7c15ul ^ me;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	for (unsigned long i = 0; i < iterations; i++)
		h = (h ^ i) * 0x100000001b3ul;
	sums[me] = h;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t workers[2];
	iterations = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	for (unsigned long w = 0; w < 2; w++)
		pthread_create(&workers[w], NULL, work, (void *)w);
	for (int w = 0; w < 2; w++)
		pthread_join(workers[w], NULL);
	printf("%lu %lu\n", sums[0], sums[1]);
	return 0;
}
