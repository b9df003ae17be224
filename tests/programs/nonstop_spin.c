/* non_stop.py's inferior: a thread that spins, counting, until told to
 * stop, while the main thread stops at a breakpoint. In non-stop mode
 * the spinner goes on counting while the main thread stands there. With
 * an argument, every signal is blocked in both threads first (a debugger
 * cannot stop them with one). */
#include <pthread.h>
#include <signal.h>

volatile unsigned long spins;
volatile int go_on = 1;

static void *spinner(void *arg)
{
	while (go_on)
		spins++;
	return arg;
}

__attribute__((noinline)) void stop_here(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void finished(void)
{
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		sigset_t all;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, NULL); /* the spinner inherits it */
	}
	pthread_t t;
	if (pthread_create(&t, NULL, spinner, NULL) != 0)
		return 1;
	while (spins < 1000)
		;
	stop_here();
	/* Until the debugger clears go_on. */
	pthread_join(t, NULL);
	finished();
	return 0;
}
