/* rdtsc in a loop: every value is trapped (PR_SET_TSC), logged and given
 * back in a replay. The loop runs until 2000 distinct values went by and
 * prints a digest of them and the last one. */
#include <stdio.h>
#include <x86intrin.h>

unsigned long long last, digest;

int main(void)
{
	for (int i = 0; i < 2000; i++) {
		last = __rdtsc();
		digest = digest * 31 + last;
	}
	unsigned aux;
	last = __rdtscp(&aux);
	printf("last=%llu digest=%llu\n", last, digest);
	return 0;
}
