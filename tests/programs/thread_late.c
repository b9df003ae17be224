/* A breakpoint's last hit far back in a multi-threaded program's history,
 * but not at its start (tests/reverse/tail_threads.py): the main thread
 * and a worker hand a token back and forth ROUNDS times through two pipes
 * (each handoff a blocking read: a switch of the recorded thread order),
 * the worker computing a little each round; in round LATE only it calls
 * late_mark(), the one writer of late_value. Going back to late_mark from
 * the end crosses the rounds after it, most of the recording. The worker
 * reads each round's number into inbox, a write by the kernel, and the
 * main thread ends it with -1 there. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* `thread_late [ROUNDS [LATE]]`: 120 and 80 by default (the tests);
 * bench/threads_search_bench.sh makes it longer. */
static int rounds = 120, late = 80;

static int to_worker[2], to_main[2];
static long late_value;
static long total;
static int inbox; /* written by the kernel: the worker's read() */

__attribute__((noinline)) void late_mark(int round, long acc)
{
	late_value = acc + round; /* the one write */
}

static long compute(int round)
{
	long acc = round;
	for (int k = 0; k < 200; k++)
		acc = acc * 31 % 1000003 + k;
	return acc;
}

static void *worker(void *arg)
{
	(void)arg;
	while (read(to_worker[0], &inbox, sizeof inbox) == sizeof inbox && inbox >= 0) {
		int round = inbox;
		long acc = compute(round);
		if (round == late)
			late_mark(round, acc);
		total += acc;
		if (write(to_main[1], &round, sizeof round) != sizeof round)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		late = atoi(argv[2]);
	if (pipe(to_worker) != 0 || pipe(to_main) != 0 ||
	    pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	for (int round = 0; round < rounds; round++) {
		int back;
		if (write(to_worker[1], &round, sizeof round) != sizeof round ||
		    read(to_main[0], &back, sizeof back) != sizeof back || back != round)
			return 2;
	}
	int stop = -1;
	if (write(to_worker[1], &stop, sizeof stop) != sizeof stop)
		return 3;
	pthread_join(t, NULL);
	printf("late_value=%ld total=%ld\n", late_value, total);
	return 0;
}
