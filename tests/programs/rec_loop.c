/* Recorder test: a loop long enough for hundreds of PSBs with a small PSB
 * period (about 400k instructions, indirect calls give TIPs). argv[1], if
 * given, is the number of iterations instead of 11500 (a run long enough
 * to be stopped in the middle, whatever the recorder's speed). */
#include <stdio.h>
#include <stdlib.h>

static unsigned f0(unsigned x) { return x * 3 + 1; }
static unsigned f1(unsigned x) { return x >> 1; }
static unsigned f2(unsigned x) { return x ^ 0x5a5a; }

int main(int argc, char **argv)
{
	unsigned (*fs[3])(unsigned) = { f0, f1, f2 };
	unsigned x = 7, n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 11500;
	for (unsigned i = 0; i < n; i++)
		x = fs[(x + i) % 3](x);
	printf("%u\n", x);
	return 0;
}
