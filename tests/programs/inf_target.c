/* Inferior for test_inferior: one small scenario per argv[1]. Scenarios that
 * need addresses print them ("name=0x..." on one line) and then stop with
 * raise(SIGTRAP), so the test can set breakpoints without reading symbols. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

volatile int counter;
volatile long watched;
volatile char wbuf[32] __attribute__((aligned(16)));
volatile int got_usr1;

__attribute__((noinline)) void bp_here(int i)
{
	counter += i;
}

static void on_usr1(int sig)
{
	got_usr1++;
}

static void handshake(void)
{
	dprintf(1, "bp_here=%p counter=%p watched=%p wbuf=%p\n", (void *)bp_here,
		(void *)&counter, (void *)&watched, (void *)wbuf);
	raise(SIGTRAP);
}

int main(int argc, char **argv, char **envp)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "args")) { /* argv and envp, each NUL-terminated */
		for (int i = 0; i < argc; i++)
			write(1, argv[i], strlen(argv[i]) + 1);
		write(1, "--", 3);
		for (char **e = envp; *e; e++)
			write(1, *e, strlen(*e) + 1);
		return 7;
	}
	if (!strcmp(mode, "bp")) { /* bp_here three times: exit 1+2+3 */
		handshake();
		for (int i = 1; i <= 3; i++)
			bp_here(i);
		return counter;
	}
	if (!strcmp(mode, "watch")) {
		handshake();
		watched = 5;            /* write */
		counter = (int)watched; /* read */
		wbuf[11] = 1;           /* inside wbuf[4..11] */
		bp_here(1);
		return 0;
	}
	if (!strcmp(mode, "signal")) { /* exit 11 if the handler ran */
		signal(SIGUSR1, on_usr1);
		raise(SIGUSR1);
		return got_usr1 == 1 ? 11 : 12;
	}
	if (!strcmp(mode, "segv")) {
		struct rlimit no_core = { 0, 0 };
		setrlimit(RLIMIT_CORE, &no_core);
		*(volatile int *)(uintptr_t)16 = 1;
		return 0;
	}
	if (!strcmp(mode, "spin")) /* runs until interrupted */
		for (;;)
			counter++;
	return 99;
}
