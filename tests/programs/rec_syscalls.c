/* Recorder test: syscalls whose results and written memory the event log
 * must hold (pipe2, write, read, getpid, clock_gettime, getrandom), and an
 * rdtsc (trapped and emulated by the sw recorder). clock_gettime goes
 * through syscall(): the vDSO's retry loop would make the instruction
 * count depend on timing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

int main(void)
{
	int p[2];
	char buf[16] = {0};
	struct timespec ts;
	unsigned char rnd[8];
	unsigned long long t;

	if (pipe2(p, O_CLOEXEC) != 0)
		return 1;
	if (write(p[1], "recorded", 8) != 8)
		return 1;
	if (read(p[0], buf, sizeof buf) != 8)
		return 1;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
		return 1;
	t = __rdtsc();
	printf("%s pid %d t %d\n", buf, (int)getpid(), t != 0);
	return 0;
}
