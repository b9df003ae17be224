/* A worker thread that a signal interrupts while it computes between
 * syscalls: a timer aimed at it alone (SIGEV_THREAD_ID) fires about a
 * third into its first round of work (60 us of some 170 here), while the
 * worker runs its own code (a timer of its CPU time would be checked at
 * scheduler ticks only, milliseconds late). The event
 * recorder holds it to the worker's next syscall and delivers it there,
 * before the syscall (tests/reverse/tail_threads.py). The main thread
 * waits in pthread_join. Prints how many rounds the worker had made when
 * the handler ran, and how many in all. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORK 250000ul

static volatile sig_atomic_t fired;
static volatile unsigned long rounds;
static unsigned long seen;

static void on_usr1(int sig)
{
	(void)sig;
	seen = rounds;
	fired = 1;
}

static void *worker(void *arg)
{
	volatile unsigned long x = 1;
	struct sigevent ev;
	timer_t timer;
	struct itimerspec when = {.it_value = {0, 60000}}; /* 60 us */
	(void)arg;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	ev._sigev_un._tid = gettid(); /* sigev_notify_thread_id */
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0 ||
	    timer_settime(timer, 0, &when, NULL) != 0) {
		perror("timer");
		return NULL;
	}
	while (!fired) {
		for (unsigned long i = 0; i < WORK; i++)
			x = x * 3 + i;
		rounds++;
		getppid();
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	signal(SIGUSR1, on_usr1);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	printf("seen=%lu rounds=%lu\n", seen, rounds);
	return 0;
}
