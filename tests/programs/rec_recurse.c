/* Recorder test: recursion deeper than the 64-entry RET-compression stack,
 * so that some RETs are compressed and the deep ones are not. */
#include <stdio.h>

__attribute__((noinline)) static int depth(int n)
{
	if (n == 0)
		return 0;
	return depth(n - 1) + 1;
}

int main(void)
{
	printf("%d\n", depth(100));
	return 0;
}
