/* A program whose last stretch is one long computation, a loop with no
 * call and no syscall, before it prints its result
 * (tests/reverse/last_loop.py): where the history of a recording's end
 * begins inside that stretch (no PC in the loop is rare), and how the
 * loop's last passes are reached once the whole history is made.
 * argv[1]: iterations (200000). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) static void report(unsigned long x)
{
	char line[64];
	int n = snprintf(line, sizeof line, "x=%lu\n", x);
	if (write(1, line, (size_t)n) != n)
		exit(1);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000, x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + i;
	report(x);
	return 0;
}
