/* A program that ends with a syscall no replay can reproduce (io_setup:
 * Linux AIO, whose ring the kernel maps and writes) after some work in two
 * threads: a replay of its event recording stops at io_setup's entry and
 * serves everything before it (tests/reverse/cut_replay.py). The worker
 * adds to `total` between syscalls, says it is done and blocks reading a
 * pipe that nobody writes until main has set up its AIO context; main
 * waits for it with sched_yield (how often is the run's: nothing shown
 * depends on it), then sets it up. */
#include <linux/aio_abi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fds[2];
static volatile int total;
static volatile int worker_done;

static void add_round(int i)
{
	total += i;
}

static void *worker(void *arg)
{
	char c;
	(void)arg;
	for (int i = 1; i <= 5; i++) {
		add_round(i);
		getppid();
	}
	worker_done = 1;
	if (read(fds[0], &c, 1) != 1)
		return NULL;
	return NULL;
}

static long setup_ring(unsigned events, int add)
{
	aio_context_t ctx = 0;
	/* Every argument register given (zeros past the two io_setup
	 * takes): syscall() loads all six, and what the caller left in the
	 * others is the run's (the test compares registers there). */
	if (syscall(SYS_io_setup, events, &ctx, 0, 0, 0, 0) != 0)
		return -1;
	return add + total + (ctx != 0);
}

int main(void)
{
	pthread_t t;
	int rounds = 0;
	if (pipe(fds) != 0 || pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	while (!worker_done) {
		sched_yield();
		rounds++;
	}
	long seen = setup_ring(8, 0);
	if (write(fds[1], "x", 1) != 1 || pthread_join(t, NULL) != 0)
		return 1;
	printf("total=%d seen=%ld\n", total, seen);
	return 0;
}
