/* Two threads take strict turns at step() under one mutex and condition
 * variable, so the global order of the steps is the same in every run, and
 * the thread that waits is always inside pthread_cond_wait called from one
 * of the program's own lines (wait_for). Every stop at step() therefore has
 * one true state, in both threads, whatever the scheduler did: a live run
 * under gdbserver, going forwards, is the oracle for a replay going either
 * way (tests/reverse/thread_diff.py). started() and marker() bracket the
 * turns with the worker already waiting. */
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 3
#define DONE 2

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int turn = 1;
static long results[2][ROUNDS];
static int steps_taken;

__attribute__((noinline)) long step(int me, int round)
{
	long acc = me * 100 + round;
	for (int k = 0; k < 20 + round; k++)
		acc = acc * 7 % 1000003 + k;
	results[me][round] = acc; /* stop: every local set */
	steps_taken++;
	return acc;
}

__attribute__((noinline)) void started(void) { __asm__ volatile(""); }
__attribute__((noinline)) void marker(void) { __asm__ volatile(""); }

static void wait_for(int who)
{
	while (turn != who)
		pthread_cond_wait(&changed, &lock);
}

static void pass_to(int who)
{
	turn = who;
	pthread_cond_broadcast(&changed);
}

/* Each round: wait for my turn, step, give the turn to the other. */
static long take_turns(int me)
{
	long sum = 0;
	for (int round = 0; round < ROUNDS; round++) {
		wait_for(me);
		sum += step(me, round);
		pass_to(1 - me);
	}
	return sum;
}

static void *worker(void *arg)
{
	long sum = 0;
	(void)arg;
	pthread_mutex_lock(&lock);
	sum = take_turns(1);
	wait_for(DONE);
	pthread_mutex_unlock(&lock);
	return (void *)sum;
}

int main(void)
{
	pthread_t t;
	long sum = 0;
	void *theirs = NULL;
	pthread_mutex_lock(&lock);
	pthread_create(&t, NULL, worker, NULL);
	/* The worker moves first: it exists, and waits, from here on. */
	wait_for(0);
	started();
	sum = take_turns(0);
	marker();
	pass_to(DONE);
	pthread_mutex_unlock(&lock);
	pthread_join(t, &theirs);
	printf("%ld %ld %d\n", sum, (long)theirs, steps_taken);
	return 0;
}
