/* Benchmark inferior for bench/record_bench.sh: a loop of ordinary integer
 * code (calls, indirect calls, conditional branches, memory), between
 * main and bench_end() so that gdb's `record full` can record exactly that
 * part. ITERATIONS (argv[1]) scales it. */
#include <stdio.h>
#include <stdlib.h>

static unsigned f0(unsigned x) { return x * 3 + 1; }
static unsigned f1(unsigned x) { return x >> 1; }
static unsigned f2(unsigned x) { return x ^ 0x5a5a; }

__attribute__((noinline)) void bench_end(unsigned x)
{
	printf("%u\n", x);
}

int main(int argc, char **argv)
{
	unsigned (*fs[3])(unsigned) = { f0, f1, f2 };
	unsigned buf[64] = {0};
	unsigned x = 7, n = argc > 1 ? (unsigned)atoi(argv[1]) : 20000;

	for (unsigned i = 0; i < n; i++) {
		x = fs[(x + i) % 3](x);
		buf[i % 64] += x;
		if (x & 1)
			x += buf[(x >> 3) % 64];
	}
	bench_end(x);
	return 0;
}
