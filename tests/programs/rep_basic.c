/* Replayer test inferior (tests/replay): every kind of input a replay must
 * reproduce from the event log. It prints its AT_RANDOM bytes first so the
 * test knows them even from a recording that lacks them. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

long g_sum;              /* a global the test reads */
unsigned char *g_heap;   /* malloc'd: the test reads through it */
volatile int g_sig;

static void on_ill(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	(void)si;
	uc->uc_mcontext.gregs[REG_RIP] += 2; /* past the ud2 */
	g_sig += sig;
}

static long recurse(int n)
{
	volatile long pad[4];
	pad[0] = n;
	pad[3] = n * 3;
	if (n == 0)
		return 1;
	return n * recurse(n - 1) + pad[0] - pad[3];
}

/* Reads stack memory it never wrote: whatever the calls before left. */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
static __attribute__((noinline)) long uninit(void)
{
	volatile long junk[8];
	long s = 0;
	for (int i = 0; i < 8; i++)
		s += junk[i];
	return s;
}

int main(int argc, char **argv)
{
	unsigned char *ar = (unsigned char *)getauxval(AT_RANDOM);
	char line[64], buf[64];
	int p[2];

	for (int i = 0; i < 16; i++)
		snprintf(line + 2 * i, 3, "%02x", ar[i]);
	line[32] = '\n';
	write(1, line, 33);

	int fd = open(argc > 1 ? argv[1] : "/etc/hostname", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : 0;
	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	g_heap = malloc(256);
	memset(g_heap, 0, 256);
	memcpy(g_heap, buf, (size_t)n);
	for (ssize_t i = 0; i < n; i++)
		g_sum += buf[i] * (i + 1);

	if (pipe(p) == 0) {
		write(p[1], "pipe!", 5);
		n = read(p[0], g_heap + 128, 16);
		g_sum += n;
		close(p[0]);
		close(p[1]);
	}

	g_sum += getpid();
	struct timespec ts;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	g_sum += ts.tv_nsec;
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof rnd, 0) == sizeof rnd)
		memcpy(g_heap + 64, rnd, sizeof rnd);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_ill;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGILL, &sa, NULL);
	__asm__ volatile("ud2");

	g_sum += recurse(12);
	g_sum += uninit();
	snprintf(line, sizeof line, "sum %ld sig %d\n", g_sum, g_sig);
	write(1, line, strlen(line));
	return 0;
}
