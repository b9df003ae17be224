/* A SIGALRM that becomes pending while gdb holds the program
 * (tests/e2e/cases/alarm_pending.gdb): alarm(1), then gdb waits two
 * seconds before it resumes. The kernel delivers the signal as the thread
 * is resumed, so the handler runs before anything else gdb resumed it for
 * (a function gdb calls, a `next`), under gdbserver and under ptrev's
 * recorders alike. */
#include <signal.h>
#include <unistd.h>

static volatile int count;

static void handler(int sig)
{
	(void)sig;
	count += 10;
}

__attribute__((noinline)) static void bump(void)
{
	count++;
}

int main(void)
{
	signal(SIGALRM, handler);
	alarm(1);
	count++; /* first */
	alarm(1);
	count++; /* second */
	bump();
	return count;
}
