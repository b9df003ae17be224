/* The vDSO and replay. Its clock functions read kernel data (the vvar page)
 * that no syscall log holds, so once a recorded program called into it, a
 * replay would compute other times: every later position is unavailable.
 * Recordings made with the vDSO hidden (META vdso=hidden, see
 * include/ptrev/start_state.h) never enter it; the replay process gets
 * the same treatment at launch. The entry points come from the recorded
 * copy of the vDSO image (CODE record), searched for in the history. */
#include "replayer_internal.h"

#include <elf.h>
#include <string.h>

#define MAX_ENTRIES 64

/* Function symbols of the vDSO image at base (bytes/len: its copy). */
static size_t vdso_entries(uint64_t base, const uint8_t *img, size_t len,
			   uint64_t *out, size_t max)
{
	Elf64_Ehdr eh;
	size_t n = 0;

	if (len < sizeof eh)
		return 0;
	memcpy(&eh, img, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > len ||
	    (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > len - eh.e_shoff)
		return 0;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		memcpy(&sh, img + eh.e_shoff + i * sizeof sh, sizeof sh);
		if (sh.sh_type != SHT_DYNSYM || sh.sh_offset > len ||
		    sh.sh_size > len - sh.sh_offset)
			continue;
		for (uint64_t o = 0; o + sizeof(Elf64_Sym) <= sh.sh_size; o += sizeof(Elf64_Sym)) {
			Elf64_Sym sym;
			memcpy(&sym, img + sh.sh_offset + o, sizeof sym);
			if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			/* Linked at 0 (offsets) on current kernels. */
			uint64_t a = sym.st_value < len ? base + sym.st_value : sym.st_value;
			if (n < max)
				out[n++] = a;
		}
	}
	return n;
}

void rp_vdso_scan(struct replayer *r)
{
	const struct trace_data *td = r->td;
	const char *v = trace_meta(td, "vdso");
	uint64_t addrs[MAX_ENTRIES], found;
	size_t n = 0;

	if (v && strcmp(v, "hidden") == 0) {
		r->vdso_hidden = true;
		return;
	}
	if (r->vdso_first != UINT64_MAX)
		return;
	for (size_t i = 0; i < td->nmmaps && !n; i++) {
		if (strcmp(td->mmaps[i].path, "[vdso]") != 0)
			continue;
		for (size_t j = 0; j < td->ncode && !n; j++)
			if (td->code[j].addr == td->mmaps[i].start)
				n = vdso_entries(td->mmaps[i].start, td->code[j].bytes,
						 td->code[j].len, addrs, MAX_ENTRIES);
	}
	if (!n)
		return;
	uint64_t count = history_insn_count(r->h);
	if (history_next_exec(r->h, r->vdso_searched, addrs, n, &found) == 1)
		r->vdso_first = found;
	r->vdso_searched = count;
}
