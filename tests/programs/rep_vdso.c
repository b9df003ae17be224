/* Replayer test inferior: reads the clock through glibc, i.e. through the
 * vDSO when the kernel provides one (no syscall, nothing in the log). It
 * prints whether it saw a vDSO, then the time's low digits. */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

volatile long g_work;

int main(void)
{
	char line[64];
	struct timespec ts;

	snprintf(line, sizeof line, "vdso %d\n", getauxval(AT_SYSINFO_EHDR) != 0);
	write(1, line, strlen(line));
	for (int i = 0; i < 100; i++)
		g_work += i;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (int i = 0; i < 100; i++)
		g_work += ts.tv_nsec % 7;
	snprintf(line, sizeof line, "%ld\n", ts.tv_nsec % 1000);
	write(1, line, strlen(line));
	return 0;
}
