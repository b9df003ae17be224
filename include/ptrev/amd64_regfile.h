/* The registers of one amd64 thread as ptrace hands them over: the general
 * registers (PTRACE_GETREGS) and the XSAVE area (NT_X86_XSTATE). A type of
 * its own, below everything that moves registers around: the ptrace layer
 * reads it, the replayer and the targets fill it, and only the gdb layer
 * (amd64_regs.h) knows gdb's register numbers inside it. */
#ifndef PTREV_AMD64_REGFILE_H
#define PTREV_AMD64_REGFILE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/user.h>

/* Large enough for any XSAVE layout Linux reports (AVX-512 + PKRU ~2.7 KiB;
 * AMX would need more and is not described to gdb). */
#define AMD64_XSAVE_MAX 16384

struct amd64_regfile {
	struct user_regs_struct gpr;
	uint8_t xsave[AMD64_XSAVE_MAX]; /* NT_X86_XSTATE contents */
	size_t xsave_len;
	uint64_t xcr0;                  /* from the XSAVE sw-reserved bytes */
};

/* XCR0 as the kernel reports it inside an NT_X86_XSTATE buffer (the
 * software-reserved bytes of the legacy area, offset 464). */
static inline uint64_t amd64_xcr0_from_xsave(const uint8_t *xsave, size_t len)
{
	uint64_t v = 0;
	if (!xsave || len < 464 + 8)
		return 0;
	memcpy(&v, xsave + 464, 8);
	return v;
}

#endif
