/* Recorder test: three threads, each single-stepped with its own stream.
 * To keep every thread's instruction path independent of scheduling, no
 * thread waits for another: the workers and then main leave with the bare
 * exit syscall (the process ends when the last one does); output uses
 * write(2), which takes no lock. */
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *worker(void *arg)
{
	const char *msg = arg;
	unsigned sum = 0;
	for (int i = 0; i < 200; i++)
		sum += (unsigned)i * msg[0];
	if (write(1, msg, 3) != 3 || sum == 1)
		syscall(SYS_exit, 1);
	syscall(SYS_exit, 0);
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, worker, "a1\n");
	pthread_create(&b, NULL, worker, "b2\n");
	syscall(SYS_exit, 0);
	return 0;
}
