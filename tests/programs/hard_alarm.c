/* A syscall-free loop that only SIGALRM from setitimer ends: the signal
 * arrives while the thread runs its own code, so the event recorder must
 * stop it where it is (a STATE point) to deliver it. The handler notes
 * the loop's count and the interrupted registers (its ucontext); main
 * prints them, which a replay must show identically at the handler. Each
 * iteration pauses (as spin loops do) to keep the history small.
 * argv[1] "slow": each iteration also calls work(), some 20 us of
 * arithmetic (a loop whose head is passed rarely). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>

volatile unsigned long count;
volatile sig_atomic_t fired;
unsigned long seen;
unsigned long long at_rip, at_rsp, at_rax;
unsigned long sink;

__attribute__((noinline)) unsigned long work(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

void on_alarm(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	(void)sig;
	(void)si;
	seen = count;
	at_rip = (unsigned long long)uc->uc_mcontext.gregs[REG_RIP];
	at_rsp = (unsigned long long)uc->uc_mcontext.gregs[REG_RSP];
	at_rax = (unsigned long long)uc->uc_mcontext.gregs[REG_RAX];
	fired = 1;
}

int main(int argc, char **argv)
{
	int slow = argc > 1 && strcmp(argv[1], "slow") == 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 0}, {0, 300}};
	setitimer(ITIMER_REAL, &it, NULL);
	while (!fired) {
		count++;
		if (slow)
			sink = work(sink);
		__builtin_ia32_pause();
	}
	printf("seen=%lu rip=%#llx rsp=%#llx rax=%#llx\n", seen, at_rip, at_rsp, at_rax);
	return 0;
}
