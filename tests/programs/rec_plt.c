/* Recorder test: calls through function pointers and, this program being
 * dynamically linked, through the PLT into libc (lazy binding on the first
 * call). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }

int main(int argc, char **argv)
{
	int (*ops[3])(int, int) = { add, sub, mul };
	int acc = (int)strlen(argv[0]);

	(void)argc;
	for (int i = 0; i < 30; i++)
		acc = ops[i % 3](acc, i) & 0xffff;
	acc += atoi("7");
	printf("%d\n", acc);
	puts("done");
	return 0;
}
