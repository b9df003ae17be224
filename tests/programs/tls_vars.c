/* thread_local.py's inferior: thread-local variables of the program's own
 * and libc's (errno) with other values in each of two threads, each
 * stopping at here() while its values stand. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

__thread int tls_var = 7;
__thread char tls_name[16] = "main";

__attribute__((noinline)) void here(void)
{
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	tls_var = 99;
	tls_name[0] = 'W';
	errno = 42;
	here();
	return arg;
}

int main(void)
{
	tls_var = 11;
	errno = 5;
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	here();
	printf("%d %s\n", tls_var, tls_name);
	return 0;
}
