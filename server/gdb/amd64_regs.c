/* Where each amd64 register gdb sees lives: struct user_regs_struct
 * (PTRACE_GETREGS) or the XSAVE buffer Linux hands out as NT_X86_XSTATE, and
 * the `g`/`G` packets built from them.
 *
 * XSAVE facts used here (Intel SDM vol. 1, ch. 13; Linux's xstate regset):
 * - bytes 0..511 are the FXSAVE ("legacy") area: x87 control words, ST0-7 in
 *   16-byte slots at 32, MXCSR at 24, XMM0-15 at 160;
 * - bytes 464..471 (software-reserved) hold XCR0, put there by Linux;
 * - byte 512 starts the XSAVE header, XSTATE_BV first: a clear bit means the
 *   component is in its initial state and its save area must not be trusted;
 * - the other components sit at the offsets CPUID leaf 0xD reports (ptrace
 *   always uses the standard, non-compacted format).
 * Values read back for components in their initial state are those gdbserver
 * reports (gdbserver/i387-fp.cc), so gdb shows the same thing under both. */
#include "amd64_layout.h"

#include <stddef.h>
#include <string.h>

#include "ptrev/hex.h"

#define FX_FCW 0
#define FX_FSW 2
#define FX_FTW 4 /* abridged tag: one "not empty" bit per physical register */
#define FX_FOP 6
#define FX_FIP 8
#define FX_FCS 12
#define FX_FDP 16
#define FX_FDS 20
#define FX_MXCSR 24
#define FX_ST0 32
#define FX_XMM0 160
#define XS_XSTATE_BV 512

#define FCW_INIT 0x037f
#define MXCSR_INIT 0x1f80

/* ---- small helpers ------------------------------------------------------ */

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void put_le(uint8_t *p, int n, uint64_t v)
{
	for (int i = 0; i < n; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* Components the buffer says are in use. A buffer without an XSAVE header
 * (plain FXSAVE) has x87 and SSE live; an empty one has nothing live. */
static uint64_t xstate_bv(const struct amd64_regfile *rf)
{
	if (rf->xsave_len >= XS_XSTATE_BV + 8)
		return get_le(rf->xsave + XS_XSTATE_BV, 8);
	if (rf->xsave_len >= 512)
		return XMASK(XFEAT_X87) | XMASK(XFEAT_SSE);
	return 0;
}

/* ---- where a register is stored ----------------------------------------- */

static const size_t user_off[UF_COUNT] = {
	[UF_RAX] = offsetof(struct user_regs_struct, rax),
	[UF_RBX] = offsetof(struct user_regs_struct, rbx),
	[UF_RCX] = offsetof(struct user_regs_struct, rcx),
	[UF_RDX] = offsetof(struct user_regs_struct, rdx),
	[UF_RSI] = offsetof(struct user_regs_struct, rsi),
	[UF_RDI] = offsetof(struct user_regs_struct, rdi),
	[UF_RBP] = offsetof(struct user_regs_struct, rbp),
	[UF_RSP] = offsetof(struct user_regs_struct, rsp),
	[UF_R8] = offsetof(struct user_regs_struct, r8),
	[UF_R9] = offsetof(struct user_regs_struct, r9),
	[UF_R10] = offsetof(struct user_regs_struct, r10),
	[UF_R11] = offsetof(struct user_regs_struct, r11),
	[UF_R12] = offsetof(struct user_regs_struct, r12),
	[UF_R13] = offsetof(struct user_regs_struct, r13),
	[UF_R14] = offsetof(struct user_regs_struct, r14),
	[UF_R15] = offsetof(struct user_regs_struct, r15),
	[UF_RIP] = offsetof(struct user_regs_struct, rip),
	[UF_EFLAGS] = offsetof(struct user_regs_struct, eflags),
	[UF_CS] = offsetof(struct user_regs_struct, cs),
	[UF_SS] = offsetof(struct user_regs_struct, ss),
	[UF_DS] = offsetof(struct user_regs_struct, ds),
	[UF_ES] = offsetof(struct user_regs_struct, es),
	[UF_FS] = offsetof(struct user_regs_struct, fs),
	[UF_GS] = offsetof(struct user_regs_struct, gs),
	[UF_ORIG_RAX] = offsetof(struct user_regs_struct, orig_rax),
	[UF_FS_BASE] = offsetof(struct user_regs_struct, fs_base),
	[UF_GS_BASE] = offsetof(struct user_regs_struct, gs_base),
};

/* A register kept verbatim in the XSAVE buffer: which component, where, and
 * how many bytes. Returns false for registers that need conversion (x87
 * control words, MXCSR) or live in user_regs_struct. */
struct xloc {
	int comp;
	uint32_t off;
	int len;
};

static bool xsave_location(const struct amd64_layout *l,
			   const struct amd64_reg_desc *d, struct xloc *x)
{
	int i = d->idx;
	const uint32_t *co = l->comp_off;
	switch (d->storage) {
	case AMD64_S_ST:
		*x = (struct xloc){XFEAT_X87, FX_ST0 + 16u * i, 10};
		return true;
	case AMD64_S_XMM:
		if (i < 16)
			*x = (struct xloc){XFEAT_SSE, FX_XMM0 + 16u * i, 16};
		else /* Hi16_ZMM holds whole 64-byte zmm16-31 */
			*x = (struct xloc){XFEAT_HI16_ZMM, co[XFEAT_HI16_ZMM] + 64u * (i - 16), 16};
		return true;
	case AMD64_S_YMMH:
		if (i < 16)
			*x = (struct xloc){XFEAT_AVX, co[XFEAT_AVX] + 16u * i, 16};
		else
			*x = (struct xloc){XFEAT_HI16_ZMM, co[XFEAT_HI16_ZMM] + 64u * (i - 16) + 16, 16};
		return true;
	case AMD64_S_ZMMH:
		if (i < 16)
			*x = (struct xloc){XFEAT_ZMM_HI256, co[XFEAT_ZMM_HI256] + 32u * i, 32};
		else
			*x = (struct xloc){XFEAT_HI16_ZMM, co[XFEAT_HI16_ZMM] + 64u * (i - 16) + 32, 32};
		return true;
	case AMD64_S_K:
		*x = (struct xloc){XFEAT_OPMASK, co[XFEAT_OPMASK] + 8u * i, 8};
		return true;
	case AMD64_S_PKRU:
		/* The save area is 8 bytes; RDPKRU/WRPKRU use the low 4. */
		*x = (struct xloc){XFEAT_PKRU, co[XFEAT_PKRU], 4};
		return true;
	default:
		return false;
	}
}

/* Legacy-area offset and width of the x87 control words, in gdb's order. */
static const struct {
	uint16_t off;
	uint8_t len;
} x87ctl[8] = {
	[X87_FCTRL] = {FX_FCW, 2}, [X87_FSTAT] = {FX_FSW, 2},
	[X87_FTAG] = {FX_FTW, 1},  [X87_FISEG] = {FX_FCS, 2},
	[X87_FIOFF] = {FX_FIP, 4}, [X87_FOSEG] = {FX_FDS, 2},
	[X87_FOOFF] = {FX_FDP, 4}, [X87_FOP] = {FX_FOP, 2},
};

/* ---- x87 tag word ------------------------------------------------------- */

/* Tag of one 80-bit value: 0 valid, 1 zero, 2 special (NaN, infinity,
 * denormal, unnormal). Empty (3) comes from the abridged tag instead. */
static int x87_tag_of(const uint8_t *v)
{
	unsigned exponent = (unsigned)get_le(v + 8, 2) & 0x7fff;
	bool integer_bit = v[7] & 0x80;
	uint64_t fraction = get_le(v, 8) & ~(1ull << 63);

	if (exponent == 0x7fff)
		return 2;
	if (exponent == 0)
		return (fraction == 0 && !integer_bit) ? 1 : 2;
	return integer_bit ? 0 : 2;
}

/* gdb's ftag is the full 16-bit i387 tag word, indexed by *physical*
 * register; FXSAVE keeps only an "in use" bit per physical register and the
 * ST slots are in stack order, so map through TOP (FSW bits 11..13). */
static uint32_t full_tag_word(const uint8_t *fx)
{
	unsigned top = (get_le(fx + FX_FSW, 2) >> 11) & 7;
	uint32_t tags = 0;
	for (unsigned phys = 0; phys < 8; phys++) {
		int tag = 3;
		if (fx[FX_FTW] & (1u << phys))
			tag = x87_tag_of(fx + FX_ST0 + 16 * ((phys + 8 - top) % 8));
		tags |= (uint32_t)tag << (2 * phys);
	}
	return tags;
}

static uint8_t abridged_tag(uint32_t full)
{
	uint8_t t = 0;
	for (int phys = 0; phys < 8; phys++)
		if (((full >> (2 * phys)) & 3) != 3)
			t |= (uint8_t)(1u << phys);
	return t;
}

/* ---- read ---------------------------------------------------------------- */

static bool in_buffer(const struct amd64_regfile *rf, uint32_t off, int len)
{
	return (size_t)off + (size_t)len <= rf->xsave_len;
}

int amd64_reg_read(const struct amd64_layout *l, const struct amd64_regfile *rf,
		   int regnum, uint8_t *out)
{
	int size = amd64_reg_size(l, regnum);
	if (size < 0)
		return -1;
	const struct amd64_reg_desc *d = &l->regs[regnum];
	uint64_t bv = xstate_bv(rf);
	struct xloc x;

	memset(out, 0, (size_t)size);
	if (d->storage == AMD64_S_USER) {
		const uint8_t *p = (const uint8_t *)&rf->gpr + user_off[d->idx];
		memcpy(out, p, (size_t)size); /* little-endian: low bytes first */
	} else if (xsave_location(l, d, &x)) {
		/* Initial state of every such component is all zeros. */
		if ((bv & XMASK(x.comp)) && in_buffer(rf, x.off, x.len))
			memcpy(out, rf->xsave + x.off, (size_t)x.len);
	} else if (d->storage == AMD64_S_MXCSR) {
		/* MXCSR is saved with either SSE or AVX state. */
		uint64_t v = MXCSR_INIT;
		if ((bv & (XMASK(XFEAT_SSE) | XMASK(XFEAT_AVX))) && in_buffer(rf, FX_MXCSR, 4))
			v = get_le(rf->xsave + FX_MXCSR, 4);
		put_le(out, 4, v);
	} else if (d->storage == AMD64_S_X87CTL) {
		uint64_t v;
		if (!(bv & XMASK(XFEAT_X87)) || !in_buffer(rf, 0, 512)) {
			v = d->idx == X87_FCTRL ? FCW_INIT : d->idx == X87_FTAG ? 0xffff : 0;
		} else if (d->idx == X87_FTAG) {
			v = full_tag_word(rf->xsave);
		} else {
			v = get_le(rf->xsave + x87ctl[d->idx].off, x87ctl[d->idx].len);
			if (d->idx == X87_FOP)
				v &= 0x7ff; /* the opcode has 11 bits */
		}
		put_le(out, 4, v);
	} else {
		return -1;
	}
	return size;
}

/* ---- write --------------------------------------------------------------- */

/* Where a register write would land in the XSAVE buffer, so callers can tell
 * beforehand whether it fits. 0 bytes for user_regs_struct registers. */
static size_t xsave_bytes_needed(const struct amd64_layout *l,
				 const struct amd64_reg_desc *d)
{
	struct xloc x;
	if (d->storage == AMD64_S_USER)
		return 0;
	if (xsave_location(l, d, &x)) {
		size_t end = (size_t)x.off + (size_t)x.len;
		size_t comp_end = x.comp < 2 ? 512 : l->comp_off[x.comp] + l->comp_size[x.comp];
		return end > comp_end ? end : comp_end;
	}
	return 512;
}

/* Put component `comp` in its initial state and mark it in use, so that a
 * write to one of its registers leaves the others reading as before. */
static void activate_component(const struct amd64_layout *l,
			       struct amd64_regfile *rf, int comp)
{
	uint64_t bv = xstate_bv(rf);
	if (bv & XMASK(comp))
		return;
	uint8_t *fx = rf->xsave;
	switch (comp) {
	case XFEAT_X87:
		memset(fx, 0, FX_MXCSR); /* control words and pointers */
		put_le(fx + FX_FCW, 2, FCW_INIT);
		for (int i = 0; i < 8; i++)
			memset(fx + FX_ST0 + 16 * i, 0, 16);
		break;
	case XFEAT_SSE:
		for (int i = 0; i < 16; i++)
			memset(fx + FX_XMM0 + 16 * i, 0, 16);
		if (!(bv & XMASK(XFEAT_AVX)))
			put_le(fx + FX_MXCSR, 4, MXCSR_INIT);
		break;
	default:
		memset(fx + l->comp_off[comp], 0, l->comp_size[comp]);
		break;
	}
	if (rf->xsave_len >= XS_XSTATE_BV + 8)
		put_le(fx + XS_XSTATE_BV, 8, bv | XMASK(comp));
}

int amd64_reg_write(const struct amd64_layout *l, struct amd64_regfile *rf,
		    int regnum, const uint8_t *in)
{
	int size = amd64_reg_size(l, regnum);
	if (size < 0)
		return -1;
	const struct amd64_reg_desc *d = &l->regs[regnum];
	struct xloc x;

	if (xsave_bytes_needed(l, d) > rf->xsave_len)
		return -1; /* no XSAVE buffer to hold it */

	if (d->storage == AMD64_S_USER) {
		uint8_t *p = (uint8_t *)&rf->gpr + user_off[d->idx];
		memset(p, 0, 8); /* 32-bit eflags and selectors zero-extend */
		memcpy(p, in, (size_t)size);
	} else if (xsave_location(l, d, &x)) {
		activate_component(l, rf, x.comp);
		memcpy(rf->xsave + x.off, in, (size_t)x.len);
	} else if (d->storage == AMD64_S_MXCSR) {
		/* Keep SSE or AVX state live, whichever already is, so MXCSR
		 * is not read back as its initial value. */
		if (!(xstate_bv(rf) & (XMASK(XFEAT_SSE) | XMASK(XFEAT_AVX))))
			activate_component(l, rf, XFEAT_SSE);
		memcpy(rf->xsave + FX_MXCSR, in, 4);
	} else if (d->storage == AMD64_S_X87CTL) {
		uint64_t v = get_le(in, 4);
		uint8_t *p = rf->xsave + x87ctl[d->idx].off;
		activate_component(l, rf, XFEAT_X87);
		if (d->idx == X87_FTAG)
			*p = abridged_tag((uint32_t)v);
		else if (d->idx == X87_FOP) /* keep the 5 bits that are not opcode */
			put_le(p, 2, (get_le(p, 2) & ~0x7ffull) | (v & 0x7ff));
		else
			put_le(p, x87ctl[d->idx].len, v);
	} else {
		return -1;
	}
	return size;
}

/* ---- g / G ---------------------------------------------------------------- */

void amd64_g_packet(const struct amd64_layout *l, const struct amd64_regfile *rf,
		    const bool *avail, struct strbuf *out)
{
	uint8_t buf[64];
	for (int r = 0; r < l->nregs; r++) {
		int size = amd64_reg_size(l, r);
		if (avail && !avail[r]) {
			for (int i = 0; i < size; i++)
				strbuf_puts(out, "xx");
			continue;
		}
		amd64_reg_read(l, rf, r, buf);
		strbuf_hex(out, buf, (size_t)size);
	}
}

static size_t g_packet_bytes(const struct amd64_layout *l)
{
	size_t n = 0;
	for (int r = 0; r < l->nregs; r++)
		n += (size_t)amd64_reg_size(l, r);
	return n;
}

bool amd64_G_packet(const struct amd64_layout *l, struct amd64_regfile *rf,
		    const char *hex, size_t len)
{
	size_t total = g_packet_bytes(l);
	if (!hex || len != 2 * total)
		return false;

	/* Validate everything before touching rf: a rejected G changes nothing. */
	uint8_t val[(AMD64_MAX_REGS) * 64];
	if (total > sizeof val || !hex_decode(hex, total, val))
		return false;

	/* Like gdbserver, store only registers whose value changes, so an
	 * untouched component keeps its XSTATE_BV bit (and "init" state). */
	bool change[AMD64_MAX_REGS];
	uint8_t cur[64];
	size_t pos = 0;
	for (int r = 0; r < l->nregs; r++) {
		int size = amd64_reg_size(l, r);
		amd64_reg_read(l, rf, r, cur);
		change[r] = memcmp(cur, val + pos, (size_t)size) != 0;
		if (change[r] && xsave_bytes_needed(l, &l->regs[r]) > rf->xsave_len)
			return false;
		pos += (size_t)size;
	}
	pos = 0;
	for (int r = 0; r < l->nregs; r++) {
		if (change[r])
			amd64_reg_write(l, rf, r, val + pos);
		pos += (size_t)amd64_reg_size(l, r);
	}
	return true;
}
