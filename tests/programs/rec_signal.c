/* Recorder test: signal deliveries at exact positions. SIGUSR1 by raise()
 * (delivered on the return from tgkill), SIGALRM from an interval timer
 * while blocked in pause() (so its position does not depend on timing). */
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t got_usr1, got_alrm;

static void on_usr1(int sig)
{
	got_usr1 += sig;
}

static void on_alrm(int sig)
{
	got_alrm += sig;
}

int main(void)
{
	struct sigaction sa;
	struct itimerval it;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_alrm;
	sigaction(SIGALRM, &sa, NULL);
	raise(SIGUSR1);
	memset(&it, 0, sizeof it);
	it.it_value.tv_usec = 20000;
	setitimer(ITIMER_REAL, &it, NULL);
	while (!got_alrm)
		pause();
	return got_usr1 == SIGUSR1 ? 0 : 1;
}
