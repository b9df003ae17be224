/* Prints the XSAVE components (by name) that this CPU lays out at other
 * offsets than the fixed ones gdb 13 and gdbserver 13 assume (Intel's:
 * opmask 1088, zmm_hi256 1152, hi16_zmm 1664, pkru 2688), one per line.
 * The kernel's ptrace XSAVE buffer follows CPUID leaf 0xD, so on such a
 * CPU (AMD with AVX-512, any CPU with PKRU but no AVX-512) gdbserver 13
 * shows other bytes for those registers than the CPU holds: the
 * differential tests (tests/e2e/gdb_diff.py) do not compare their values. */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>

int main(void)
{
	static const struct {
		unsigned comp, offset;
		const char *name;
	} fixed[] = {
		{5, 1088, "opmask"}, {6, 1152, "zmm_hi256"}, {7, 1664, "hi16_zmm"}, {9, 2688, "pkru"},
	};
	unsigned a, b, c, d;
	if (!__get_cpuid_count(0xd, 0, &a, &b, &c, &d))
		return 0;
	uint64_t xcr0 = a | (uint64_t)d << 32;
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if ((xcr0 >> fixed[i].comp & 1) && __get_cpuid_count(0xd, fixed[i].comp, &a, &b, &c, &d) &&
		    b != fixed[i].offset)
			printf("%s\n", fixed[i].name);
	return 0;
}
