/* Recorder test: setjmp/longjmp, a return that is no RET (and RETs whose
 * call-stack entries were abandoned). */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;

__attribute__((noinline)) static void deep(int n)
{
	if (n == 0)
		longjmp(env, 5);
	else if (n > 0)
		deep(n - 1);
}

int main(void)
{
	volatile int rounds = 0;
	int v = setjmp(env);
	if (rounds++ < 3)
		deep(10);
	printf("%d %d\n", v, rounds);
	return 0;
}
