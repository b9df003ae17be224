/* Reverse-execution tests: calls from distinct sites, so that the
 * instruction a reverse-continue lands on is identified by the call site a
 * reverse-stepi then reaches. Static and non-PIE: the same addresses under
 * ptrev's recording and under gdb's own `record full`. */
volatile int sink;

__attribute__((noinline)) void hit(int x)
{
	sink += x;
}

__attribute__((noinline)) void done(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	(void)argv;
	for (int i = 0; i < 3; i++)
		hit(i);
	hit(10);
	hit(20);
	if (argc > 1)
		*(volatile int *)0 = 1; /* crash on request */
	done();
	return 0;
}
