/* Full-state reverse debugging against gdb's own `record full`: a pipe,
 * write, getpid, clock_gettime, getrandom, the heap, a signal handler and
 * recursion. Values that differ between two runs (the pid, the time, the
 * random bytes) live in statics no `info locals` shows; locals only hold
 * whether the calls worked. Static, non-PIE, no stack protector: the same
 * addresses and stack contents under ptrev and under gdb. */
#include <signal.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct node {
	int value;
	struct node *next;
};

volatile int counter;
static int handled;
static struct timespec ts;
static unsigned char rnd[8];
static pid_t pid;

static void on_usr1(int sig)
{
	handled += sig;
	counter += 100;
}

__attribute__((noinline)) static int depth(int n)
{
	int local = n * 2;
	if (n == 0)
		return 0;
	return depth(n - 1) + local;
}

__attribute__((noinline)) static void before_signal(void)
{
	counter += 1000;
}

__attribute__((noinline)) static void marker(int total)
{
	counter = total;
}

int main(void)
{
	int fds[2];
	char buf[16] = {0};
	if (pipe(fds) != 0)
		return 1;
	ssize_t put = write(fds[1], "hello pipe", 10);
	ssize_t got = read(fds[0], buf, sizeof buf);
	pid = getpid();
	int pid_ok = pid > 0;
	int ts_ok = syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) == 0;
	int rnd_ok = getrandom(rnd, sizeof rnd, 0) == (ssize_t)sizeof rnd;
	struct node *head = NULL;
	for (int i = 0; i < 4; i++) {
		struct node *n = malloc(sizeof *n);
		n->value = i * 10;
		n->next = head;
		head = n;
		counter++;
	}
	before_signal();
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	int r = depth(5);
	int total = r + (int)got + (int)put + pid_ok + ts_ok + rnd_ok + head->value + handled;
	marker(total);
	return 0;
}
