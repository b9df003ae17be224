/* unrecorded_insns.py: rdrand's values decide how much the program
 * writes, so that a replay, which gets other values, goes differently at
 * its first write. Prints "no rdrand" (and writes nothing more) where the
 * CPU has none. */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 30))) {
		puts("no rdrand");
		return 0;
	}
	char buf[1024];
	memset(buf, '.', sizeof buf);
	for (int i = 0; i < 3; i++) {
		unsigned long long v = 0;
		unsigned char ok = 0;
		__asm__ volatile("rdrand %0; setc %1" : "=r"(v), "=qm"(ok));
		if (ok && write(1, buf, 1 + v % 1000) < 0)
			return 1;
	}
	return 0;
}
