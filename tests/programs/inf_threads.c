/* Inferior for test_inferior: a short-lived spawner thread starts 4 workers
 * (so new threads are also created by a thread other than the leader); each
 * worker calls worker_bp() once, all at about the same time; they then spin
 * until main calls main_bp(), after which everyone finishes and the process
 * exits 5. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>

#define NWORKERS 4

static pthread_barrier_t start;
static volatile int done;
volatile int hits;

__attribute__((noinline)) void worker_bp(void)
{
	__sync_fetch_and_add(&hits, 1);
}

__attribute__((noinline)) void main_bp(void)
{
	done = 1;
}

static void *worker(void *arg)
{
	pthread_barrier_wait(&start);
	worker_bp();
	while (!done)
		sched_yield();
	return NULL;
}

static pthread_t th[NWORKERS];

static void *spawner(void *arg)
{
	for (int i = 0; i < NWORKERS; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	return NULL;
}

int main(void)
{
	dprintf(1, "worker_bp=%p main_bp=%p hits=%p\n", (void *)worker_bp, (void *)main_bp,
		(void *)&hits);
	raise(SIGTRAP);
	pthread_barrier_init(&start, NULL, NWORKERS + 1);
	pthread_t sp;
	pthread_create(&sp, NULL, spawner, NULL);
	pthread_join(sp, NULL);
	pthread_barrier_wait(&start);
	while (hits < NWORKERS)
		sched_yield();
	main_bp();
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(th[i], NULL);
	return hits == NWORKERS ? 5 : 6;
}
