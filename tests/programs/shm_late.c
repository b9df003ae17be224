/* A program that ends with a syscall no replay can reproduce (shmat: SysV
 * shared memory, which another process may write) after some work in two
 * threads: a replay of its event recording stops at shmat's entry and
 * serves everything before it (tests/reverse/cut_replay.py). The worker
 * adds to `total` between syscalls, says it is done and blocks reading a
 * pipe that nobody writes until main has attached the segment; main waits
 * for it with sched_yield (how often is the run's: nothing shown depends
 * on it), then attaches. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/shm.h>
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

static int *attach_segment(int id, int add)
{
	int *p = shmat(id, NULL, 0);
	if (p == (void *)-1)
		return NULL;
	p[0] = add + total;
	return p;
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
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	int *p = id < 0 ? NULL : attach_segment(id, 1);
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
	if (write(fds[1], "x", 1) != 1 || pthread_join(t, NULL) != 0)
		return 1;
	printf("total=%d seen=%d\n", total, p ? p[0] : -1);
	return 0;
}
