/* Private to amd64_tdesc.c and amd64_regs.c: the concrete shape of
 * struct amd64_layout. amd64_tdesc.c decides which registers gdb sees (names,
 * sizes, types, numbering, XML); amd64_regs.c decides where each one lives in
 * user_regs_struct or the XSAVE buffer. The storage class + index below is the
 * only thing the two sides share. */
#ifndef PTREV_SERVER_AMD64_LAYOUT_H
#define PTREV_SERVER_AMD64_LAYOUT_H

#include <stdint.h>

#include "ptrev/amd64_regs.h"

/* XSAVE state components (bit numbers in XCR0 / XSTATE_BV). */
enum {
	XFEAT_X87 = 0,
	XFEAT_SSE = 1,
	XFEAT_AVX = 2,
	XFEAT_OPMASK = 5,
	XFEAT_ZMM_HI256 = 6,
	XFEAT_HI16_ZMM = 7,
	XFEAT_PKRU = 9,
	XFEAT_COUNT = 10,
};
#define XMASK(f) (1ull << (f))
#define XMASK_AVX512 (XMASK(XFEAT_OPMASK) | XMASK(XFEAT_ZMM_HI256) | XMASK(XFEAT_HI16_ZMM))

/* Where a register's value is kept. */
enum amd64_storage {
	AMD64_S_USER,   /* a field of user_regs_struct; idx: enum amd64_user_field */
	AMD64_S_ST,     /* x87 data register in the FXSAVE area; idx 0..7 */
	AMD64_S_X87CTL, /* x87 control/status; idx: enum amd64_x87ctl */
	AMD64_S_XMM,    /* idx 0..15 legacy area, 16..31 Hi16_ZMM */
	AMD64_S_MXCSR,
	AMD64_S_YMMH,   /* bits 128..255; idx 0..15 AVX, 16..31 Hi16_ZMM */
	AMD64_S_ZMMH,   /* bits 256..511; idx 0..15 ZMM_Hi256, 16..31 Hi16_ZMM */
	AMD64_S_K,      /* opmask k0..k7 */
	AMD64_S_PKRU,
};

enum amd64_user_field {
	UF_RAX, UF_RBX, UF_RCX, UF_RDX, UF_RSI, UF_RDI, UF_RBP, UF_RSP,
	UF_R8, UF_R9, UF_R10, UF_R11, UF_R12, UF_R13, UF_R14, UF_R15,
	UF_RIP, UF_EFLAGS, UF_CS, UF_SS, UF_DS, UF_ES, UF_FS, UF_GS,
	UF_ORIG_RAX, UF_FS_BASE, UF_GS_BASE,
	UF_COUNT,
};

/* In gdb's order: fctrl fstat ftag fiseg fioff foseg fooff fop. */
enum amd64_x87ctl {
	X87_FCTRL, X87_FSTAT, X87_FTAG, X87_FISEG,
	X87_FIOFF, X87_FOSEG, X87_FOOFF, X87_FOP,
};

struct amd64_reg_desc {
	char name[12];
	uint16_t bitsize;
	const char *type;  /* gdb type name */
	const char *group; /* NULL: gdb's default */
	uint8_t storage;   /* enum amd64_storage */
	uint8_t idx;
	uint8_t feature;   /* index into the layout's feature list */
};

#define AMD64_MAX_REGS 160
#define AMD64_MAX_FEATURES 8

struct amd64_layout {
	uint64_t xcr0;        /* the feature bits this layout describes */
	int nregs;
	struct amd64_reg_desc regs[AMD64_MAX_REGS];
	int nfeatures;
	const char *feature_names[AMD64_MAX_FEATURES];
	/* Standard-format XSAVE offset and size of each component (CPUID 0xD). */
	uint32_t comp_off[XFEAT_COUNT];
	uint32_t comp_size[XFEAT_COUNT];
	char *xml;
};

/* Fill comp_off/comp_size from CPUID (amd64_xsave.c). */
void amd64_layout_init_xsave_offsets(struct amd64_layout *l);

#endif
