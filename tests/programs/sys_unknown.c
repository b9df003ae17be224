/* A syscall ptrev's syscall table does not describe, which writes memory:
 * TIOCGLCKTRMIOS on a pseudo-terminal (an old 'T' ioctl whose number
 * does not carry its size) fills a struct termios with the terminal's
 * locked modes. The struct is filled with 0x5a first, so the bytes the
 * kernel wrote differ from what was there; the program prints them
 * (tests/reverse/unknown_syscall.py). With an argument, a second thread
 * lives (blocked in read) while the call is made. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define TIOCGLCKTRMIOS_NR 0x5456

static unsigned char locked[60];
static long result = -2;

__attribute__((noinline)) void done(void)
{
	__asm__ volatile("");
}

static int wake[2];

static void *waiter(void *arg)
{
	char c;
	return read(wake[0], &c, 1) == 1 ? arg : NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	(void)argv;
	if (argc > 1 && (pipe(wake) != 0 || pthread_create(&t, NULL, waiter, NULL) != 0))
		return 4;
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0)
		return 2;
	int s = open(ptsname(m), O_RDWR | O_NOCTTY);
	if (s < 0)
		return 3;
	memset(locked, 0x5a, sizeof locked);
	result = ioctl(s, TIOCGLCKTRMIOS_NR, locked);
	unsigned sum = 0;
	for (size_t i = 0; i < sizeof locked; i++)
		sum = sum * 31 + locked[i];
	if (argc > 1 && (write(wake[1], "x", 1) != 1 || pthread_join(t, NULL) != 0))
		return 5;
	printf("%ld %u\n", result, sum);
	done();
	return 0;
}
