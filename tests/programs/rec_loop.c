/* Recorder test: a loop long enough for hundreds of PSBs with a small PSB
 * period (about 400k instructions, indirect calls give TIPs). */
#include <stdio.h>

static unsigned f0(unsigned x) { return x * 3 + 1; }
static unsigned f1(unsigned x) { return x >> 1; }
static unsigned f2(unsigned x) { return x ^ 0x5a5a; }

int main(void)
{
	unsigned (*fs[3])(unsigned) = { f0, f1, f2 };
	unsigned x = 7;
	for (unsigned i = 0; i < 11500; i++)
		x = fs[(x + i) % 3](x);
	printf("%u\n", x);
	return 0;
}
