/* Live recording with the event backend (tests/reverse/live_event.py): a
 * computation without syscalls that gdb interrupts (Ctrl-C), then a read
 * of stdin that blocks until the test writes a line. What it prints tells
 * the run went on right after both. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile unsigned long spins;

__attribute__((noinline)) unsigned long mix(unsigned long i)
{
	return (i * 2654435761ul) >> 7 & 15;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;
	char line[64];
	for (unsigned long i = 0; i < n; i++)
		spins += mix(i);
	ssize_t got = read(0, line, sizeof line - 1);
	printf("spins=%lu read=%zd\n", spins, got);
	return 0;
}
