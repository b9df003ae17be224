/* Thread switches in the history: two workers take turns at a shared
 * counter with an atomic fetch-and-add, each in its own function (bump_a
 * only ever runs in worker A, bump_b in worker B, bump_s in B's SIGUSR1
 * handler, which A sends it half-way and waits for). order[k] is the
 * function that drew ticket k, so the string the program prints at the end
 * is the true global order of the bumps, whatever the scheduler did: the
 * oracle for where reverse-continue and continue must stop, and in which
 * thread. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#define BUMPS 10

static char order[4 * BUMPS];
static int counter;
static int got_signal;
static int arrived;
static pthread_t thread_b;

__attribute__((noinline)) void bump_a(void)
{
	order[__atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST)] = 'a';
}

__attribute__((noinline)) void bump_b(void)
{
	order[__atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST)] = 'b';
}

__attribute__((noinline)) void bump_s(void)
{
	order[__atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST)] = 's';
}

static void on_usr1(int sig)
{
	(void)sig;
	bump_s();
	__atomic_store_n(&got_signal, 1, __ATOMIC_SEQ_CST);
}

/* Some work between bumps, so that the turns interleave. */
static unsigned spin(unsigned n)
{
	volatile unsigned x = 0;
	for (unsigned i = 0; i < n; i++)
		x += i;
	return x;
}

/* Both workers start bumping together, once both have arrived. */
static void wait_for_go(void)
{
	__atomic_add_fetch(&arrived, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&arrived, __ATOMIC_SEQ_CST) < 2)
		sched_yield();
}

static void *worker_a(void *arg)
{
	(void)arg;
	wait_for_go();
	for (int i = 0; i < BUMPS; i++) {
		spin(60);
		bump_a();
		if (i == BUMPS / 2) {
			/* Wait for the handler, so that nothing comes between
			 * the signal's delivery and bump_s. */
			pthread_kill(thread_b, SIGUSR1);
			while (!__atomic_load_n(&got_signal, __ATOMIC_SEQ_CST))
				sched_yield();
		}
	}
	return NULL;
}

static void *worker_b(void *arg)
{
	(void)arg;
	wait_for_go();
	for (int i = 0; i < BUMPS; i++) {
		spin(45);
		bump_b();
	}
	/* Stay until the signal came, so that it always comes. */
	while (!__atomic_load_n(&got_signal, __ATOMIC_SEQ_CST))
		sched_yield();
	return NULL;
}

/* Where a test stops once both workers are gone. */
__attribute__((noinline)) void joined(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	pthread_t a;

	signal(SIGUSR1, on_usr1);
	pthread_create(&thread_b, NULL, worker_b, NULL);
	pthread_create(&a, NULL, worker_a, NULL);
	pthread_join(a, NULL);
	pthread_join(thread_b, NULL);
	joined();
	printf("order %.*s\n", counter, order);
	return 0;
}
