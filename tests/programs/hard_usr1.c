/* A computation that a signal from another process interrupts (argv[1]:
 * SIGUSR1 or SIGINT, each with a handler): the program says its pid and
 * that it is ready, then computes without a syscall until the handler
 * runs. The handler notes the count and the interrupted registers; main
 * prints them. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

volatile unsigned long count;
volatile sig_atomic_t fired;
unsigned long seen;
unsigned long long at_rip, at_rsp;

void on_signal(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	(void)sig;
	(void)si;
	seen = count;
	at_rip = (unsigned long long)uc->uc_mcontext.gregs[REG_RIP];
	at_rsp = (unsigned long long)uc->uc_mcontext.gregs[REG_RSP];
	fired = 1;
}

int main(int argc, char **argv)
{
	int sig = argc > 1 && strcmp(argv[1], "int") == 0 ? SIGINT : SIGUSR1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(sig, &sa, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!fired) {
		count += count % 7 + 1;
		__builtin_ia32_pause();
	}
	printf("seen=%lu rip=%#llx rsp=%#llx\n", seen, at_rip, at_rsp);
	return 0;
}
