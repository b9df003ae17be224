/* A syscall ptrev's syscall table does not describe, which writes memory:
 * TIOCGLCKTRMIOS on a pseudo-terminal (an old 'T' ioctl whose number
 * does not carry its size) fills a struct termios with the terminal's
 * locked modes. The struct is filled with 0x5a first, so the bytes the
 * kernel wrote differ from what was there; the program prints them
 * (tests/reverse/unknown_syscall.py). */
#include <fcntl.h>
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

int main(void)
{
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
	printf("%ld %u\n", result, sum);
	done();
	return 0;
}
