/* Which amd64 registers gdb sees, and the target.xml that tells it.
 *
 * The register set follows the XSAVE components enabled in XCR0, in the order
 * gdbserver uses (gdb/arch/amd64.c): core, sse, linux, segments, then avx,
 * avx512 and pkeys when enabled. gdb numbers registers in document order and
 * reads the `g` packet in that order, so the order here *is* the protocol.
 * Names, sizes, types and groups are the facts of gdb's
 * features/i386/64bit-*.xml. MPX (XCR0 bits 3-4) is not described: Linux
 * dropped MPX support in 5.6, so no current kernel enables it. */
#include "amd64_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/strbuf.h"

enum feature_id {
	F_CORE, F_SSE, F_LINUX, F_SEGMENTS, F_AVX, F_AVX512, F_PKEYS,
};

static const char *const feature_xml_name[] = {
	[F_CORE] = "org.gnu.gdb.i386.core",
	[F_SSE] = "org.gnu.gdb.i386.sse",
	[F_LINUX] = "org.gnu.gdb.i386.linux",
	[F_SEGMENTS] = "org.gnu.gdb.i386.segments",
	[F_AVX] = "org.gnu.gdb.i386.avx",
	[F_AVX512] = "org.gnu.gdb.i386.avx512",
	[F_PKEYS] = "org.gnu.gdb.i386.pkeys",
};

static void write_xml(struct strbuf *sb, const struct amd64_layout *l,
		      const enum feature_id *fid);

struct builder {
	struct amd64_layout *l;
	enum feature_id fid[AMD64_MAX_FEATURES];
};

static void begin_feature(struct builder *b, enum feature_id f)
{
	struct amd64_layout *l = b->l;
	b->fid[l->nfeatures] = f;
	l->feature_names[l->nfeatures] = feature_xml_name[f];
	l->nfeatures++;
}

static void add(struct builder *b, const char *name, int bits, const char *type,
		const char *group, enum amd64_storage s, int idx)
{
	struct amd64_layout *l = b->l;
	struct amd64_reg_desc *r = &l->regs[l->nregs++];
	snprintf(r->name, sizeof r->name, "%s", name);
	r->bitsize = (uint16_t)bits;
	r->type = type;
	r->group = group;
	r->storage = (uint8_t)s;
	r->idx = (uint8_t)idx;
	r->feature = (uint8_t)(l->nfeatures - 1);
}

/* Sixteen registers named PREFIX<i>SUFFIX for i in [first, first+16). */
static void add16(struct builder *b, const char *prefix, const char *suffix,
		  int first, int bits, const char *type, enum amd64_storage s)
{
	for (int i = first; i < first + 16; i++) {
		char name[12];
		snprintf(name, sizeof name, "%s%d%s", prefix, i, suffix);
		add(b, name, bits, type, NULL, s, i);
	}
}

static void build_core(struct builder *b)
{
	static const char *const gpr[16] = {
		"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	};
	static const char *const seg[6] = { "cs", "ss", "ds", "es", "fs", "gs" };
	static const char *const ctl[8] = {
		"fctrl", "fstat", "ftag", "fiseg", "fioff", "foseg", "fooff", "fop",
	};

	begin_feature(b, F_CORE);
	for (int i = 0; i < 16; i++) {
		/* rbp and rsp are pointers to gdb; the rest plain integers. */
		const char *type = (i == 6 || i == 7) ? "data_ptr" : "int64";
		add(b, gpr[i], 64, type, NULL, AMD64_S_USER, UF_RAX + i);
	}
	add(b, "rip", 64, "code_ptr", NULL, AMD64_S_USER, UF_RIP);
	add(b, "eflags", 32, "i386_eflags", NULL, AMD64_S_USER, UF_EFLAGS);
	for (int i = 0; i < 6; i++)
		add(b, seg[i], 32, "int32", NULL, AMD64_S_USER, UF_CS + i);
	for (int i = 0; i < 8; i++) {
		char name[8];
		snprintf(name, sizeof name, "st%d", i);
		add(b, name, 80, "i387_ext", NULL, AMD64_S_ST, i);
	}
	for (int i = 0; i < 8; i++)
		add(b, ctl[i], 32, "int", "float", AMD64_S_X87CTL, X87_FCTRL + i);
}

static void build(struct amd64_layout *l)
{
	struct builder b = { .l = l };

	build_core(&b);

	begin_feature(&b, F_SSE);
	add16(&b, "xmm", "", 0, 128, "vec128", AMD64_S_XMM);
	add(&b, "mxcsr", 32, "i386_mxcsr", "vector", AMD64_S_MXCSR, 0);

	begin_feature(&b, F_LINUX);
	add(&b, "orig_rax", 64, "int", NULL, AMD64_S_USER, UF_ORIG_RAX);

	begin_feature(&b, F_SEGMENTS);
	add(&b, "fs_base", 64, "int", NULL, AMD64_S_USER, UF_FS_BASE);
	add(&b, "gs_base", 64, "int", NULL, AMD64_S_USER, UF_GS_BASE);

	if (l->xcr0 & XMASK(XFEAT_AVX)) {
		begin_feature(&b, F_AVX);
		add16(&b, "ymm", "h", 0, 128, "uint128", AMD64_S_YMMH);
	}
	if (l->xcr0 & XMASK_AVX512) {
		begin_feature(&b, F_AVX512);
		add16(&b, "xmm", "", 16, 128, "vec128", AMD64_S_XMM);
		add16(&b, "ymm", "h", 16, 128, "uint128", AMD64_S_YMMH);
		for (int i = 0; i < 8; i++) {
			char name[4];
			snprintf(name, sizeof name, "k%d", i);
			add(&b, name, 64, "uint64", NULL, AMD64_S_K, i);
		}
		add16(&b, "zmm", "h", 0, 256, "v2ui128", AMD64_S_ZMMH);
		add16(&b, "zmm", "h", 16, 256, "v2ui128", AMD64_S_ZMMH);
	}
	if (l->xcr0 & XMASK(XFEAT_PKRU)) {
		begin_feature(&b, F_PKEYS);
		add(&b, "pkru", 32, "uint32", NULL, AMD64_S_PKRU, 0);
	}

	l->xml = NULL;
	amd64_layout_init_xsave_offsets(l);

	/* The XML needs the feature ids, which only the builder knows. */
	struct strbuf sb = STRBUF_INIT;
	write_xml(&sb, l, b.fid);
	l->xml = sb.data; /* owned by the cached layout for the process lifetime */
}

/* ---- XML ---------------------------------------------------------------- */

struct flag_bit {
	const char *name;
	int bit;
};

static void write_flags(struct strbuf *sb, const char *id,
			const struct flag_bit *f, size_t n)
{
	strbuf_printf(sb, "<flags id=\"%s\" size=\"4\">\n", id);
	for (size_t i = 0; i < n; i++)
		strbuf_printf(sb, " <field name=\"%s\" start=\"%d\" end=\"%d\" type=\"bool\"/>\n",
			      f[i].name, f[i].bit, f[i].bit);
	strbuf_puts(sb, "</flags>\n");
}

static void write_eflags_type(struct strbuf *sb)
{
	/* Bit 1 is the always-one reserved bit; gdb names it "". */
	static const struct flag_bit f[] = {
		{"CF", 0}, {"", 1}, {"PF", 2}, {"AF", 4}, {"ZF", 6}, {"SF", 7},
		{"TF", 8}, {"IF", 9}, {"DF", 10}, {"OF", 11}, {"NT", 14},
		{"RF", 16}, {"VM", 17}, {"AC", 18}, {"VIF", 19}, {"VIP", 20},
		{"ID", 21},
	};
	write_flags(sb, "i386_eflags", f, sizeof f / sizeof f[0]);
}

static void write_mxcsr_type(struct strbuf *sb)
{
	static const struct flag_bit f[] = {
		{"IE", 0}, {"DE", 1}, {"ZE", 2}, {"OE", 3}, {"UE", 4}, {"PE", 5},
		{"DAZ", 6}, {"IM", 7}, {"DM", 8}, {"ZM", 9}, {"OM", 10},
		{"UM", 11}, {"PM", 12}, {"FZ", 15},
	};
	write_flags(sb, "i386_mxcsr", f, sizeof f / sizeof f[0]);
}

/* The 128-bit vector view shared by xmm0-15 (sse) and xmm16-31 (avx512);
 * each feature defines its own copy, as gdb's feature files do. */
static void write_vec128_type(struct strbuf *sb)
{
	static const struct {
		const char *vec_id, *elem;
		int count;
		const char *field;
	} v[] = {
		{"v8bf16", "bfloat16", 8, "v8_bfloat16"},
		{"v8h", "ieee_half", 8, "v8_half"},
		{"v4f", "ieee_single", 4, "v4_float"},
		{"v2d", "ieee_double", 2, "v2_double"},
		{"v16i8", "int8", 16, "v16_int8"},
		{"v8i16", "int16", 8, "v8_int16"},
		{"v4i32", "int32", 4, "v4_int32"},
		{"v2i64", "int64", 2, "v2_int64"},
	};
	size_t n = sizeof v / sizeof v[0];
	for (size_t i = 0; i < n; i++)
		strbuf_printf(sb, "<vector id=\"%s\" type=\"%s\" count=\"%d\"/>\n",
			      v[i].vec_id, v[i].elem, v[i].count);
	strbuf_puts(sb, "<union id=\"vec128\">\n");
	for (size_t i = 0; i < n; i++)
		strbuf_printf(sb, " <field name=\"%s\" type=\"%s\"/>\n", v[i].field,
			      v[i].vec_id);
	strbuf_puts(sb, " <field name=\"uint128\" type=\"uint128\"/>\n</union>\n");
}

static void write_feature_types(struct strbuf *sb, enum feature_id f)
{
	switch (f) {
	case F_CORE:
		write_eflags_type(sb);
		break;
	case F_SSE:
		write_vec128_type(sb);
		write_mxcsr_type(sb);
		break;
	case F_AVX512:
		write_vec128_type(sb);
		strbuf_puts(sb, "<vector id=\"v2ui128\" type=\"uint128\" count=\"2\"/>\n");
		break;
	default:
		break;
	}
}

static void write_xml(struct strbuf *sb, const struct amd64_layout *l,
		      const enum feature_id *fid)
{
	strbuf_puts(sb, "<?xml version=\"1.0\"?>\n"
			"<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
			"<target version=\"1.0\">\n"
			"<architecture>i386:x86-64</architecture>\n"
			"<osabi>GNU/Linux</osabi>\n");
	int r = 0;
	for (int f = 0; f < l->nfeatures; f++) {
		strbuf_printf(sb, "<feature name=\"%s\">\n", l->feature_names[f]);
		write_feature_types(sb, fid[f]);
		for (; r < l->nregs && l->regs[r].feature == f; r++) {
			const struct amd64_reg_desc *d = &l->regs[r];
			strbuf_printf(sb, "<reg name=\"%s\" bitsize=\"%d\" type=\"%s\" regnum=\"%d\"",
				      d->name, d->bitsize, d->type, r);
			if (d->group)
				strbuf_printf(sb, " group=\"%s\"", d->group);
			strbuf_puts(sb, "/>\n");
		}
		strbuf_puts(sb, "</feature>\n");
	}
	strbuf_puts(sb, "</target>\n");
}

/* ---- public ------------------------------------------------------------- */

/* Only these XCR0 bits change what gdb sees; x87 and SSE are always there. */
#define LAYOUT_BITS (XMASK(XFEAT_AVX) | XMASK_AVX512 | XMASK(XFEAT_PKRU))

const struct amd64_layout *amd64_layout_for(uint64_t xcr0)
{
	/* One layout per distinct feature set, built on first use and kept for
	 * the life of the process (callers hold plain pointers to them). */
	static struct amd64_layout *cache[16];
	uint64_t key = (xcr0 & LAYOUT_BITS) | XMASK(XFEAT_X87) | XMASK(XFEAT_SSE);

	for (size_t i = 0; i < sizeof cache / sizeof cache[0]; i++) {
		if (cache[i] && cache[i]->xcr0 == key)
			return cache[i];
		if (!cache[i]) {
			struct amd64_layout *l = calloc(1, sizeof *l);
			if (!l)
				return NULL;
			l->xcr0 = key;
			build(l);
			cache[i] = l;
			return l;
		}
	}
	return NULL; /* more than 16 distinct XCR0 values: cannot happen on one host */
}

const char *amd64_tdesc_xml(const struct amd64_layout *l)
{
	return l->xml ? l->xml : "";
}

int amd64_reg_count(const struct amd64_layout *l)
{
	return l->nregs;
}

int amd64_reg_size(const struct amd64_layout *l, int regnum)
{
	if (regnum < 0 || regnum >= l->nregs)
		return -1;
	return l->regs[regnum].bitsize / 8;
}
