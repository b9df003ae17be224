/* Replayer watchpoint inferior (tests/replay, watch case): one global,
 * g_watch, written in every way a reverse watchpoint must find, each write
 * with a new value (the test finds writes by comparing memory) and long
 * stretches without any (bisection has work to do), and read elsewhere. */
#include <string.h>
#include <unistd.h>

volatile long g_watch;
long g_sink;

static __attribute__((noinline)) void set_in_func(long v)
{
	g_watch = v;
}

static __attribute__((noinline)) long busy(int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += i ^ (s >> 3);
	return s;
}

int main(void)
{
	/* Through a pointer: a real call to libc's memcpy, not a move. */
	void *(*volatile copy)(void *, const void *, size_t) = memcpy;
	long v;
	int p[2];

	for (int i = 1; i <= 5; i++)
		g_watch = i * 11;               /* same instruction, five times */
	g_sink += busy(3000);
	g_sink += g_watch;                      /* a read */
	set_in_func(1000);
	g_sink += busy(2000);
	v = 2000;
	copy((void *)&g_watch, &v, sizeof v);
	if (pipe(p) == 0) {
		v = 3000;
		write(p[1], &v, sizeof v);
		read(p[0], (void *)&g_watch, sizeof v); /* the kernel writes it */
	}
	g_sink += busy(4000) + g_watch;         /* a read */
	for (int i = 0; i < 3; i++) {
		g_watch += 7;
		g_sink += busy(500);
	}
	return (int)(g_sink & 1);
}
