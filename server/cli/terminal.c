/* The terminal given to the program ptrev serves, as gdbserver gives it:
 * the program runs in its own process group (common/ptrace/inferior.c), so
 * without this a program that reads its terminal or changes its settings
 * (tcsetattr, TCSETSW) would be stopped with SIGTTIN/SIGTTOU. ptrev then
 * ignores those two itself, since it writes to the same terminal from a
 * background group, and gives the terminal back when it exits. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "ptrev/cli.h"

static pid_t saved_foreground = -1;

static void take_terminal_back(void)
{
	if (saved_foreground > 0)
		tcsetpgrp(STDERR_FILENO, saved_foreground);
}

void cli_give_terminal(pid_t pgrp)
{
	/* Only a terminal ptrev holds in the foreground: started in the
	 * background (`ptrev serve ... &`), the terminal stays the shell's. */
	if (!isatty(STDERR_FILENO) || tcgetpgrp(STDERR_FILENO) != getpgrp())
		return;
	signal(SIGTTOU, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	pid_t old = tcgetpgrp(STDERR_FILENO);
	if (tcsetpgrp(STDERR_FILENO, pgrp) != 0)
		return;
	if (saved_foreground < 0)
		atexit(take_terminal_back);
	saved_foreground = old;
}
