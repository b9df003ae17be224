/* Recorder test: AVX-512 (EVEX) instructions, executed only where cpuid
 * says AVX-512F is there; elsewhere the SSE path runs. The first line of
 * output says which. */
#include <cpuid.h>
#include <stdio.h>

static int have_avx512f(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	if (!(b & (1u << 16)))
		return 0;
	/* The OS must save the ZMM state too (XCR0 bits 1,2,5,6,7). */
	__get_cpuid(1, &a, &b, &c, &d);
	if (!(c & (1u << 27)))
		return 0;
	unsigned lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (lo & 0xe6) == 0xe6;
}

__attribute__((target("avx512f"), noinline)) static int sum_avx512(const int *v)
{
	int out[16];
	__asm__ volatile(
		"vmovdqu32 (%1), %%zmm0\n\t"
		"vpaddd %%zmm0, %%zmm0, %%zmm1\n\t"
		"movw $0x5555, %%ax\n\t"
		"kmovw %%eax, %%k1\n\t"
		"vpaddd %%zmm1, %%zmm0, %%zmm0%{%%k1%}\n\t"
		"vmovdqu32 %%zmm0, (%0)\n\t"
		"vzeroupper\n\t"
		: : "r"(out), "r"(v) : "rax", "k1", "xmm0", "xmm1", "memory");
	int s = 0;
	for (int i = 0; i < 16; i++)
		s += out[i];
	return s;
}

__attribute__((noinline)) static int sum_plain(const int *v)
{
	int s = 0;
	for (int i = 0; i < 16; i++)
		s += (i % 2 == 0) ? 3 * v[i] : v[i];
	return s;
}

int main(void)
{
	int v[16];
	for (int i = 0; i < 16; i++)
		v[i] = i + 1;
	if (have_avx512f())
		printf("avx512f %d\n", sum_avx512(v));
	else
		printf("no-avx512f %d\n", sum_plain(v));
	return 0;
}
