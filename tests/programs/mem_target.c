/* The stopped process tests/unit/test_mem_diff.c compares the memory of
 * (a program of its own, never sanitized: a sanitizer's shadow mappings
 * are too big to copy). It says where its buffer is and stops. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static unsigned char buf[16384] __attribute__((aligned(4096)));

int main(void)
{
	printf("%p\n", (void *)buf);
	fflush(stdout);
	raise(SIGSTOP);
	for (;;)
		pause();
}
