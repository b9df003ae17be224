/* Keeping gdb waiting while `ptrev replay --stdio` opens a recording
 * (ptrev/cli.h). gdb starts the pipe command and at once sends its first
 * packet (qSupported), then waits for the ack, giving up after about 6 s
 * of silence (remotetimeout 2 s, three tries) and going on with a broken
 * session. Opening an event recording re-executes it to its end, which
 * takes as long as its syscalls' stops do (seconds per hundred thousand).
 * gdb's wait for an ack passes over a byte that is neither an ack nor a
 * packet's start, each one restarting its timeout (remote.c, putpkt: the
 * "Junk" case): so one '\n' at once and then every half second, until
 * the session begins. Each 2 s of silence makes gdb send qSupported
 * again, and ptrev answers every copy: gdb then takes the second answer
 * for the next packet's ("Remote replied unexpectedly to
 * 'vMustReplyEmpty'"). A first byte after a second, on a loaded machine
 * with ptrev's own start and its reading of the file before it, came too
 * late once. */
#include "ptrev/cli.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct cli_keepalive {
	pthread_t thread;
	int fd;
	atomic_bool stop;
};

/* Sleep about half a second, in steps that notice stop. */
static bool wait_a_while(struct cli_keepalive *k)
{
	for (int i = 0; i < 5 && !atomic_load(&k->stop); i++) {
		struct timespec ts = {0, 100000000};
		nanosleep(&ts, NULL);
	}
	return !atomic_load(&k->stop);
}

static void *run(void *arg)
{
	struct cli_keepalive *k = arg;
	do {
		/* Never block on a reader that does not read: a byte is only
		 * worth sending where the pipe has room. */
		struct pollfd p = {.fd = k->fd, .events = POLLOUT};
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) && write(k->fd, "\n", 1) < 0)
			break;
	} while (wait_a_while(k));
	return NULL;
}

struct cli_keepalive *cli_keepalive_start(int fd)
{
	struct cli_keepalive *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	k->fd = fd;
	if (pthread_create(&k->thread, NULL, run, k) != 0) {
		free(k);
		return NULL;
	}
	return k;
}

void cli_keepalive_stop(struct cli_keepalive *k)
{
	if (!k)
		return;
	atomic_store(&k->stop, true);
	pthread_join(k->thread, NULL);
	free(k);
}
