/* Two threads hand a token back and forth through a user-space flag, no
 * futex and no syscall while they wait: with one thread on the CPU at a
 * time, the event recorder must preempt a spinning thread (a STATE point)
 * for the other to run. Each side counts how long it spun; main prints
 * the counts, which a replay must reproduce. */
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 3

volatile int turn;          /* 0: main's, 1: the worker's */
volatile unsigned long spins[2];

static void wait_for(int me)
{
	while (turn != me) {
		spins[me]++;
		__builtin_ia32_pause();
	}
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		wait_for(1);
		turn = 0;
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		turn = 1;
		wait_for(0);
	}
	pthread_join(t, NULL);
	printf("spins=%lu,%lu\n", spins[0], spins[1]);
	return 0;
}
