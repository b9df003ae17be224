/* Where the XSAVE state components sit in the buffer ptrace hands out
 * (NT_X86_XSTATE, always the standard, non-compacted format): at the
 * offsets CPUID leaf 0xD reports for this CPU, which differ between CPUs
 * (PKRU at 2432 without AVX-512; opmask at 832 on AMD with AVX-512, where
 * Intel's layout has 1088). Below the register layout (amd64_tdesc.c) and
 * the register reader (amd64_regs.c), which both need it. */
#include "amd64_layout.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* End of the XSAVE header: no component starts before it. */
#define XS_HEADER_END 576

void amd64_layout_init_xsave_offsets(struct amd64_layout *l)
{
	/* Standard offsets of every CPU so far; CPUID overrides when it answers. */
	static const uint32_t def_off[XFEAT_COUNT] = {
		[XFEAT_AVX] = 576, [XFEAT_OPMASK] = 1088, [XFEAT_ZMM_HI256] = 1152,
		[XFEAT_HI16_ZMM] = 1664, [XFEAT_PKRU] = 2688,
	};
	static const uint32_t def_size[XFEAT_COUNT] = {
		[XFEAT_AVX] = 256, [XFEAT_OPMASK] = 64, [XFEAT_ZMM_HI256] = 512,
		[XFEAT_HI16_ZMM] = 1024, [XFEAT_PKRU] = 8,
	};
	for (int c = 0; c < XFEAT_COUNT; c++) {
		l->comp_off[c] = def_off[c];
		l->comp_size[c] = def_size[c];
	}
#if defined(__x86_64__) || defined(__i386__)
	/* This CPU's CPUID describes this layout only if the CPU supports every
	 * component in it (e.g. PKRU sits at 2432, not 2688, on CPUs without
	 * AVX-512). A layout for some other machine's XCR0 keeps the standard
	 * offsets. */
	unsigned eax, ebx, ecx, edx;
	if (!__get_cpuid_count(0xd, 0, &eax, &ebx, &ecx, &edx))
		return;
	uint64_t host = eax | (uint64_t)edx << 32;
	if (l->xcr0 & ~host)
		return;
	for (int c = 2; c < XFEAT_COUNT; c++) {
		if (!def_size[c] || !(l->xcr0 & XMASK(c)))
			continue;
		/* Sub-leaf c of leaf 0xD: EAX = size, EBX = offset. */
		if (__get_cpuid_count(0xd, (unsigned)c, &eax, &ebx, &ecx, &edx) &&
		    eax != 0 && ebx >= XS_HEADER_END && ebx + eax <= AMD64_XSAVE_MAX) {
			l->comp_off[c] = ebx;
			l->comp_size[c] = eax;
		}
	}
#endif
}
