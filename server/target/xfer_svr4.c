/* qXfer:libraries-svr4:read: the dynamic linker's list of loaded objects,
 * read straight from the inferior so gdb need not walk it packet by packet.
 *
 * The path to the list: auxv AT_PHDR/AT_PHNUM -> the program headers
 * (PT_PHDR gives the load bias of a PIE, PT_DYNAMIC the dynamic section) ->
 * DT_DEBUG -> struct r_debug -> r_map -> struct link_map chain.
 * The document matches gdbserver 13 byte for byte: the main program's
 * link_map is reported as main-lm and not listed, entries with an empty name
 * are skipped, lmid is the address of the namespace's r_debug, and further
 * namespaces follow r_debug_extended.r_next when r_version >= 2.
 *
 * Everything here reads memory the inferior may have scribbled on, so every
 * walk is bounded and every failed read simply ends the list. Only 64-bit
 * (amd64) inferiors are handled. */
#include "ptrev/target_xfer.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/hex.h"

/* Limits against garbage: far beyond anything real. */
#define SVR4_MAX_PHNUM 1024
#define SVR4_MAX_DYN 65536
#define SVR4_MAX_ENTRIES 10000    /* link_map entries, all namespaces */
#define SVR4_MAX_NAMESPACES 1024
#define SVR4_NAME_MAX 4095        /* gdbserver reads PATH_MAX - 1 bytes */

/* Field offsets in glibc's 64-bit structures (link.h). */
enum {
	R_VERSION_OFF = 0,
	R_MAP_OFF = 8,
	R_NEXT_OFF = 40, /* struct r_debug_extended */
	L_ADDR_OFF = 0,
	L_NAME_OFF = 8,
	L_LD_OFF = 16,
	L_NEXT_OFF = 24,
	L_PREV_OFF = 32,
};

struct mem {
	xfer_read_mem_fn read;
	void *ctx;
};

static bool read_exact(const struct mem *m, uint64_t addr, void *buf, size_t len)
{
	return m->read(m->ctx, addr, buf, len) == (ssize_t)len;
}

static bool read_ptr(const struct mem *m, uint64_t addr, uint64_t *out)
{
	return read_exact(m, addr, out, sizeof *out);
}

/* AT_PHDR and AT_PHNUM from the auxv (/proc/PID/auxv, or a recorded copy). */
static bool find_phdrs(const struct strbuf *auxv_in, uint64_t *phdr, uint64_t *phnum)
{
	const struct strbuf auxv = *auxv_in;
	*phdr = 0;
	*phnum = 0;
	for (size_t off = 0; off + sizeof(Elf64_auxv_t) <= auxv.len;
	     off += sizeof(Elf64_auxv_t)) {
		Elf64_auxv_t a;
		memcpy(&a, auxv.data + off, sizeof a);
		if (a.a_type == AT_NULL)
			break;
		if (a.a_type == AT_PHDR)
			*phdr = a.a_un.a_val;
		else if (a.a_type == AT_PHNUM)
			*phnum = a.a_un.a_val;
	}
	return *phdr != 0 && *phnum != 0 && *phnum <= SVR4_MAX_PHNUM;
}

/* Run-time address of the program's dynamic section, or 0 if there is none
 * (a static program) or it cannot be found. */
static uint64_t find_dynamic(const struct strbuf *auxv, const struct mem *m, uint64_t *dyn_size)
{
	uint64_t phdr_addr, phnum;
	if (!find_phdrs(auxv, &phdr_addr, &phnum))
		return 0;
	Elf64_Phdr *ph = calloc(phnum, sizeof *ph);
	if (!ph)
		return 0;
	uint64_t dynamic = 0;
	if (!read_exact(m, phdr_addr, ph, phnum * sizeof *ph))
		goto out;

	/* The load bias is where PT_PHDR landed minus where it was linked.
	 * Without PT_PHDR there is no bias to trust; real programs with a
	 * DT_DEBUG always have one (gdbserver relies on the same). */
	bool have_bias = false;
	uint64_t bias = 0;
	for (uint64_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_PHDR) {
			bias = phdr_addr - ph[i].p_vaddr;
			have_bias = true;
			break;
		}
	}
	if (!have_bias)
		goto out;
	for (uint64_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_DYNAMIC) {
			dynamic = ph[i].p_vaddr + bias;
			*dyn_size = ph[i].p_memsz;
			break;
		}
	}
out:
	free(ph);
	return dynamic;
}

/* Address of struct r_debug from DT_DEBUG. Returns false if the program has
 * no DT_DEBUG at all; *r_debug is 0 while ld.so has not filled it in yet. */
static bool find_r_debug(const struct strbuf *auxv, const struct mem *m, uint64_t *r_debug)
{
	uint64_t dyn_size = 0;
	uint64_t dyn = find_dynamic(auxv, m, &dyn_size);
	if (dyn == 0)
		return false;
	uint64_t n = dyn_size / sizeof(Elf64_Dyn);
	if (n == 0 || n > SVR4_MAX_DYN)
		n = SVR4_MAX_DYN;
	for (uint64_t i = 0; i < n; i++) {
		Elf64_Dyn d;
		if (!read_exact(m, dyn + i * sizeof d, &d, sizeof d))
			return false;
		if (d.d_tag == DT_NULL)
			return false;
		if (d.d_tag == DT_DEBUG) {
			*r_debug = d.d_un.d_val;
			return true;
		}
	}
	return false;
}

/* The NUL-terminated string at addr, up to SVR4_NAME_MAX bytes; a read
 * failure ends it where readable memory ends (as a read of /proc/PID/mem
 * would). Reads stay within pages so a name near an unmapped page works. */
static void read_name(const struct mem *m, uint64_t addr, struct strbuf *name)
{
	strbuf_reset(name);
	while (name->len < SVR4_NAME_MAX) {
		char buf[256];
		size_t want = sizeof buf;
		uint64_t to_page_end = 4096 - (addr & 4095);
		if (want > to_page_end)
			want = (size_t)to_page_end;
		if (want > SVR4_NAME_MAX - name->len)
			want = SVR4_NAME_MAX - name->len;
		ssize_t got = m->read(m->ctx, addr, buf, want);
		if (got <= 0)
			return;
		size_t len = strnlen(buf, (size_t)got);
		strbuf_append(name, buf, len);
		if (len < (size_t)got || (size_t)got < want)
			return;
		addr += (uint64_t)got;
	}
}

/* Lists one namespace's link_map chain from lm onwards. prev is the entry
 * expected in lm's l_prev: a mismatch means a corrupted (or concurrently
 * changing) list, and the list ends there, as in gdbserver. */
static void walk_link_maps(const struct mem *m, uint64_t lmid, uint64_t lm,
			   uint64_t prev, int *budget, struct strbuf *out)
{
	struct strbuf name = STRBUF_INIT;
	while (lm != 0 && *budget > 0) {
		uint64_t l_name, l_addr, l_ld, l_next, l_prev;
		if (!read_ptr(m, lm + L_NAME_OFF, &l_name) ||
		    !read_ptr(m, lm + L_ADDR_OFF, &l_addr) ||
		    !read_ptr(m, lm + L_LD_OFF, &l_ld) ||
		    !read_ptr(m, lm + L_PREV_OFF, &l_prev) ||
		    !read_ptr(m, lm + L_NEXT_OFF, &l_next))
			break;
		if (l_prev != prev)
			break;
		(*budget)--;
		read_name(m, l_name, &name);
		/* Unnamed entries (e.g. ld.so's own before it is named) are
		 * left out, as gdbserver does. */
		if (name.len > 0) {
			strbuf_puts(out, "<library name=\"");
			strbuf_xml_escaped(out, strbuf_str(&name));
			strbuf_printf(out, "\" lm=\"0x%" PRIx64 "\" l_addr=\"0x%" PRIx64
				      "\" l_ld=\"0x%" PRIx64 "\" lmid=\"0x%" PRIx64 "\"/>",
				      lm, l_addr, l_ld, lmid);
		}
		prev = lm;
		lm = l_next;
	}
	strbuf_free(&name);
}

/* gdb's incremental form: "start=ADDR;prev=ADDR;lmid=ADDR" in any order,
 * unknown keys skipped. Returns false on a malformed address. */
static bool parse_annex(const char *annex, uint64_t *start, uint64_t *prev,
			uint64_t *lmid)
{
	const char *p = annex ? annex : "";
	while (*p) {
		const char *eq = strchr(p, '=');
		if (!eq)
			break;
		size_t klen = (size_t)(eq - p);
		const char *val = eq + 1;
		const char *end = strchr(val, ';');
		if (!end)
			end = val + strlen(val);
		uint64_t *dst = NULL;
		if (klen == 5 && memcmp(p, "start", 5) == 0)
			dst = start;
		else if (klen == 4 && memcmp(p, "prev", 4) == 0)
			dst = prev;
		else if (klen == 4 && memcmp(p, "lmid", 4) == 0)
			dst = lmid;
		if (dst) {
			uint64_t v = 0;
			const char *q = val;
			/* An empty value reads as 0, as gdbserver's decoder does. */
			if (q < end && (!hex_parse_u64(&q, end, &v) || q != end))
				return false;
			*dst = v;
		}
		p = *end ? end + 1 : end;
	}
	return true;
}

int xfer_libraries_svr4(pid_t pid, xfer_read_mem_fn read_mem, void *ctx,
			const char *annex, struct strbuf *out)
{
	struct strbuf auxv = STRBUF_INIT;
	if (xfer_auxv(pid, &auxv) != 0) {
		strbuf_free(&auxv);
		return -ENOENT;
	}
	int r = xfer_libraries_svr4_auxv(auxv.data, auxv.len, read_mem, ctx, annex, out);
	strbuf_free(&auxv);
	return r;
}

int xfer_libraries_svr4_auxv(const void *auxv_bytes, size_t auxv_len, xfer_read_mem_fn read_mem,
			     void *ctx, const char *annex, struct strbuf *out)
{
	struct strbuf auxv = {(char *)auxv_bytes, auxv_len, auxv_len};
	struct mem m = {read_mem, ctx};
	uint64_t start = 0, prev = 0, lmid = 0;
	if (!parse_annex(annex, &start, &prev, &lmid))
		return -EINVAL;

	int budget = SVR4_MAX_ENTRIES;
	if (start != 0) {
		/* gdb already knows the list up to prev: continue from start
		 * within the namespace it names. */
		strbuf_puts(out, "<library-list-svr4 version=\"1.0\">");
		walk_link_maps(&m, lmid, start, prev, &budget, out);
		strbuf_puts(out, "</library-list-svr4>");
		return 0;
	}

	uint64_t r_debug = 0;
	if (!find_r_debug(&auxv, &m, &r_debug))
		return -ENOENT; /* static program: gdbserver answers E01 */

	strbuf_puts(out, "<library-list-svr4 version=\"1.0\"");
	bool header_open = true;
	for (int ns = 0; r_debug != 0 && ns < SVR4_MAX_NAMESPACES; ns++) {
		int32_t version;
		uint64_t lm;
		if (!read_exact(&m, r_debug + R_VERSION_OFF, &version, sizeof version) ||
		    version < 1 || !read_ptr(&m, r_debug + R_MAP_OFF, &lm))
			break;
		uint64_t lm_prev = 0;
		if (ns == 0) {
			/* The first entry of the base namespace is the program
			 * itself: gdb gets it as main-lm, not as a library. */
			if (lm != 0)
				strbuf_printf(out, " main-lm=\"0x%" PRIx64 "\">", lm);
			else
				strbuf_putc(out, '>');
			header_open = false;
			if (lm == 0)
				break;
			lm_prev = lm;
			if (!read_ptr(&m, lm + L_NEXT_OFF, &lm))
				break;
		}
		walk_link_maps(&m, r_debug, lm, lm_prev, &budget, out);
		if (version < 2 ||
		    !read_ptr(&m, r_debug + R_NEXT_OFF, &r_debug))
			break;
	}
	/* gdbserver would leave the start tag unterminated if r_debug turns
	 * out unreadable; we keep the document well-formed instead. */
	if (header_open)
		strbuf_putc(out, '>');
	strbuf_puts(out, "</library-list-svr4>");
	return 0;
}
