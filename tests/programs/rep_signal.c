/* Replayer test inferior: signals the replay must deliver itself. A
 * self-sent SIGUSR1 (raise: its tgkill is emulated, so the replay injects
 * the recorded signal) and a timer's SIGALRM interrupting pause() (the
 * kernel turns pause's -ERESTARTNOHAND into -EINTR for the handler). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

volatile int g_sig, g_count;
long g_ret, g_errno;

static void on_signal(int sig)
{
	g_sig += sig;
	g_count++;
}

int main(void)
{
	struct sigaction sa;
	struct itimerval it;
	char line[64];

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	raise(SIGUSR1);
	memset(&it, 0, sizeof it);
	it.it_value.tv_usec = 2000;
	setitimer(ITIMER_REAL, &it, NULL);
	g_ret = pause();
	g_errno = errno;
	snprintf(line, sizeof line, "sig %d count %d ret %ld errno %ld\n", g_sig,
		 g_count, g_ret, g_errno);
	write(1, line, strlen(line));
	return 0;
}
