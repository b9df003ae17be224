#include <signal.h>
#include <stddef.h>

#include "ptrev/cli.h"
#include "ptrev/inferior.h"

int main(int argc, char **argv)
{
	/* A recording written past the file size limit must fail with EFBIG
	 * (ptrev says so and the program goes on), not kill ptrev; what ptrev
	 * starts gets SIGXFSZ as ptrev was given it. */
	struct sigaction ign, old;
	ign.sa_handler = SIG_IGN;
	ign.sa_flags = 0;
	sigemptyset(&ign.sa_mask);
	if (sigaction(SIGXFSZ, &ign, &old) == 0)
		inferior_note_xfsz(old.sa_handler == SIG_IGN);
	return cli_main(argc, argv);
}
