/* The amd64 register file as gdb numbers it, and the target description
 * (target.xml) that tells gdb that numbering.
 *
 * Feature sets follow the XSAVE components enabled in XCR0, as gdbserver
 * does: core + sse + linux (orig_rax) + segments (fs_base, gs_base) always;
 * avx, avx512 and pkeys when XCR0 has them. Registers are numbered in the
 * order the XML lists them; `g` sends them all in that order. */
#ifndef PTREV_AMD64_REGS_H
#define PTREV_AMD64_REGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#include "ptrev/amd64_regfile.h"
#include "ptrev/strbuf.h"

/* Everything gdb needs to know about the layout for a given XCR0. */
struct amd64_layout;
const struct amd64_layout *amd64_layout_for(uint64_t xcr0);

/* target.xml for this layout (static storage, NUL-terminated). */
const char *amd64_tdesc_xml(const struct amd64_layout *l);
int amd64_reg_count(const struct amd64_layout *l);
/* Size in bytes of register regnum, or -1 if out of range. */
int amd64_reg_size(const struct amd64_layout *l, int regnum);
/* Register number of rip, rsp, rbp (for expedited registers in stop replies). */
enum {
	AMD64_RCX_REGNUM = 2, AMD64_RBP_REGNUM = 6, AMD64_RSP_REGNUM = 7, AMD64_R11_REGNUM = 11,
	AMD64_RIP_REGNUM = 16
};

/* Raw little-endian value of regnum into out (amd64_reg_size bytes).
 * Returns the size, or -1 for an unknown register. Components whose XSTATE_BV
 * bit is clear read as their initial values (e.g. fctrl 0x37f, mxcsr 0x1f80). */
int amd64_reg_read(const struct amd64_layout *l, const struct amd64_regfile *rf,
		   int regnum, uint8_t *out);
/* Store regnum from raw bytes; marks the XSAVE component in use. */
int amd64_reg_write(const struct amd64_layout *l, struct amd64_regfile *rf,
		    int regnum, const uint8_t *in);

/* Append the whole `g` reply (hex of every register in order). avail, when
 * not NULL, has one flag per register; unavailable ones are sent as "xx"
 * bytes, which gdb shows as <unavailable>. */
void amd64_g_packet(const struct amd64_layout *l, const struct amd64_regfile *rf,
		    const bool *avail, struct strbuf *out);
/* Parse a `G` payload (hex) into rf. Returns false on malformed input. */
bool amd64_G_packet(const struct amd64_layout *l, struct amd64_regfile *rf,
		    const char *hex, size_t len);

#endif
