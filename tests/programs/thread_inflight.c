/* Threads whose syscalls complete while another thread has the CPU: a
 * reader blocks in read() on a pipe into a buffer on its stack; a writer
 * writes a byte, which completes the read at once in the kernel, then
 * computes without a syscall; a third thread computes all along. The
 * event recorder stops the computing threads at STATE points while the
 * reader's read has returned (its buffer written) or is still blocked (its
 * thread not stopped); a replay completes the read only when the reader
 * runs next, so the points must leave out what the read may write and
 * tell the reader's stack from its entry (tests/reverse/thread_maps.py).
 * Prints the bytes' sum and the two computations' results. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define ROUNDS 6
#define SPIN 300ul
/* The computation's body is long and straight (16 x 16 x 16 steps), so
 * that any one instruction of it, where a STATE point may fall, runs only
 * SPIN times per round: a replay traps at every pass of the point's PC. */
#define S1 x = x * 6364136223846793005ul + i;
#define S16 S1 S1 S1 S1 S1 S1 S1 S1 S1 S1 S1 S1 S1 S1 S1 S1
#define S256 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16
#define S4096 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256 S256

static int fds[2];
static unsigned long got, spun[2];

static unsigned long spin(unsigned long seed)
{
	volatile unsigned long x = seed;
	for (unsigned long i = 0; i < SPIN; i++) {
		S4096
	}
	return x;
}

static void *reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		char buf[64] = {0};
		if (read(fds[0], buf, 1) != 1)
			return NULL;
		got += (unsigned char)buf[0];
	}
	return NULL;
}

static void *computer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++)
		spun[1] += spin(spun[1] + (unsigned long)i);
	return NULL;
}

int main(void)
{
	pthread_t r, c;
	if (pipe(fds) < 0)
		return 1;
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&c, NULL, computer, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		char b = (char)('a' + i);
		if (write(fds[1], &b, 1) != 1)
			return 1;
		spun[0] += spin(spun[0] + (unsigned long)i);
	}
	pthread_join(r, NULL);
	pthread_join(c, NULL);
	printf("%lu %lu %lu\n", got, spun[0], spun[1]);
	return 0;
}
