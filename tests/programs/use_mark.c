/* A program that calls a library (libmark.so, found through
 * LD_LIBRARY_PATH) and keeps what it returned (tests/reverse/
 * replaced_binary.py). Built twice: use_mark and use_mark_b (OTHER_BUILD:
 * other code, another build-id). */
#include <stdio.h>
#include <unistd.h>

int mark_scale(int x);

static int seen[8];

static void after(int i)
{
#ifdef OTHER_BUILD
	seen[i] += 1000;
#else
	(void)i;
#endif
	getppid();
}

int main(void)
{
	for (int i = 0; i < 8; i++) {
		seen[i] = mark_scale(i);
		after(i);
	}
	printf("seen[7]=%d\n", seen[7]);
	return 0;
}
