/* Two workers each add up 0..999 into their own slot of `shared`, call
 * finished(id), and worker 1 then, once worker 0 has finished too, writes
 * through a null pointer: the program dies of SIGSEGV while the main
 * thread waits in pthread_join (a syscall that never returns). At every
 * finished(id), shared[id] is 499500, whatever the scheduler did: an
 * oracle for the state of a multi-threaded crash recording in the past.
 * Both finished() calls are always in the recording (worker 1 crashing
 * first, on a loaded machine, left worker 0's out: thread_state's
 * second reverse-continue then found none). */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

long shared[2];
int *volatile bad;
static volatile int zero_finished;

__attribute__((noinline)) void finished(long id)
{
	__asm__ volatile("" : : "r"(id) : "memory");
}

static void *worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < 1000; i++) {
		shared[id] += i;
		if (i % 100 == 0)
			usleep(100);
	}
	finished(id);
	if (id == 0)
		zero_finished = 1;
	if (id == 1) {
		while (!zero_finished)
			usleep(100);
		*bad = (int)(shared[0] + shared[1]);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("not reached\n");
	return 0;
}
