/* <symbol+offset> for the addresses of a recording, as gdb shows them:
 * the ELF symbol tables (.symtab, else .dynsym) of every executable
 * mapping's file, relocated by the mapping's load bias, and of vDSO images
 * found in the recorded code bytes. */
#include "trace_internal.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct sym {
	uint64_t addr;		/* link-time address */
	uint64_t size;
	const char *name;	/* points into the module's ELF */
	int rank;		/* lower is preferred at equal addresses */
};

/* One ELF at one load bias; several mappings may share it. */
struct module {
	char *key;		/* path, or "[vdso]" */
	uint64_t bias;		/* runtime address - link-time address */
	int fd;			/* -1 for an in-memory image */
	uint8_t *copy;		/* in-memory image (owned) */
	Elf *elf;
	struct sym *syms;
	size_t nsyms;
};

struct range {
	uint64_t start, end;
	uint64_t offset;	/* file offset of start */
	size_t module;
};

struct trace_symbols {
	struct module *mods;
	size_t nmods;
	struct range *ranges;	/* sorted by start */
	size_t nranges;
};

/* ---- reading one ELF's symbols ------------------------------------------ */

static int sym_rank(const GElf_Sym *s)
{
	int type = GELF_ST_TYPE(s->st_info), bind = GELF_ST_BIND(s->st_info);
	int rank = type == STT_FUNC ? 0 : type == STT_GNU_IFUNC ? 1 : 2;

	rank = rank * 3 + (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2);
	return rank * 2 + (s->st_size ? 0 : 1);
}

static int by_addr_rank(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->name, y->name);
}

/* Is @s the name of code (a function or a label in an executable
 * section)? */
static int is_code_symbol(Elf *elf, const GElf_Sym *s, const char *name)
{
	int type = GELF_ST_TYPE(s->st_info);
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return 0;
	if (!name || !*name || !strncmp(name, ".L", 2))
		return 0;
	if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE)
		return 0;
	scn = elf_getscn(elf, s->st_shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* Adds the code symbols of the first section of type @type. */
static int read_symtab(struct module *mod, GElf_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(mod->elf, scn))) {
		Elf_Data *data;
		size_t i, count;
		struct sym *syms;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			return 0;
		count = sh.sh_size / sh.sh_entsize;
		syms = calloc(count ? count : 1, sizeof(*syms));
		if (!syms)
			return -1;
		mod->syms = syms;
		for (i = 0; i < count; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(data, (int)i, &s))
				continue;
			name = elf_strptr(mod->elf, sh.sh_link, s.st_name);
			if (!is_code_symbol(mod->elf, &s, name))
				continue;
			syms[mod->nsyms].addr = s.st_value;
			syms[mod->nsyms].size = s.st_size;
			syms[mod->nsyms].name = name;
			syms[mod->nsyms].rank = sym_rank(&s);
			mod->nsyms++;
		}
		return 0;
	}
	return 0;
}

/* Sorted by address; at each address only the preferred name stays. */
static void sort_symbols(struct module *mod)
{
	size_t i, n = 0;

	qsort(mod->syms, mod->nsyms, sizeof(*mod->syms), by_addr_rank);
	for (i = 0; i < mod->nsyms; i++) {
		if (n && mod->syms[n - 1].addr == mod->syms[i].addr)
			continue;
		mod->syms[n++] = mod->syms[i];
	}
	mod->nsyms = n;
}

/* The load bias of the mapping of file offset @offset at @start, from the
 * PT_LOAD segment that holds that offset. Returns 0, or -1 if none does. */
static int load_bias(Elf *elf, uint64_t start, uint64_t offset,
		     uint64_t *bias)
{
	size_t phnum = 0, i;

	if (elf_getphdrnum(elf, &phnum) < 0)
		return -1;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !ph.p_filesz)
			continue;
		/* Mappings start at page boundaries, segments need not. */
		if ((ph.p_offset & ~(uint64_t)0xfff) <= offset &&
		    offset < ph.p_offset + ph.p_filesz) {
			*bias = start - (ph.p_vaddr - ph.p_offset + offset);
			return 0;
		}
	}
	return -1;
}

/* ---- the modules of a recording ------------------------------------------ */

static void module_free(struct module *mod)
{
	free(mod->syms);
	if (mod->elf)
		elf_end(mod->elf);
	if (mod->fd >= 0)
		close(mod->fd);
	free(mod->copy);
	free(mod->key);
}

/* The recorded code bytes at @addr as far as they go, if they are an ELF
 * image (a vDSO): a private copy for libelf, or NULL. */
static uint8_t *code_image(const struct trace_data *td, uint64_t addr,
			   size_t *len)
{
	size_t i;

	for (i = 0; i < td->ncode; i++) {
		const struct trace_code *c = &td->code[i];
		uint8_t *copy;

		if (c->addr != addr || c->len < SELFMAG ||
		    memcmp(c->bytes, ELFMAG, SELFMAG))
			continue;
		copy = malloc(c->len);
		if (copy) {
			memcpy(copy, c->bytes, c->len);
			*len = c->len;
		}
		return copy;
	}
	return NULL;
}

/* Opens the ELF behind mapping @m into @mod; -1 when there is none. */
static int module_open(struct module *mod, const struct trace_data *td,
		       const struct trace_mmap *m)
{
	mod->fd = -1;
	if (trace_mmap_is_file(m)) {
		const struct trace_file_copy *c;

		/* The file if it is the recorded build (names from another
		 * build would be lies), else the recording's copy of it. */
		if (trace_image_file_source(td, m, &c, NULL, 0) < 0)
			return -1;
		if (c) {
			mod->copy = malloc(c->size ? (size_t)c->size : 1);
			if (!mod->copy)
				return -1;
			memcpy(mod->copy, c->bytes, (size_t)c->size);
			mod->elf = elf_memory((char *)mod->copy, (size_t)c->size);
		} else {
			mod->fd = open(m->path, O_RDONLY | O_CLOEXEC);
			if (mod->fd < 0)
				return -1;
			mod->elf = elf_begin(mod->fd, ELF_C_READ_MMAP, NULL);
		}
	} else if (m->path[0] == '[') {
		size_t len = 0;

		mod->copy = code_image(td, m->start, &len);
		if (!mod->copy)
			return -1;
		mod->elf = elf_memory((char *)mod->copy, len);
	}
	if (!mod->elf || elf_kind(mod->elf) != ELF_K_ELF)
		return -1;
	return 0;
}

/* The module for mapping @m (an existing one, a new one, or none: -1). */
static long module_for(struct trace_symbols *s, const struct trace_data *td,
		       const struct trace_mmap *m)
{
	struct module mod = {0}, *grown;
	size_t i;

	if (module_open(&mod, td, m) < 0 ||
	    load_bias(mod.elf, m->start, m->offset, &mod.bias) < 0) {
		module_free(&mod);
		return -1;
	}
	for (i = 0; i < s->nmods; i++) {
		if (s->mods[i].bias == mod.bias && !strcmp(s->mods[i].key,
							  m->path)) {
			module_free(&mod);
			return (long)i;
		}
	}
	mod.key = strdup(m->path);
	if (!mod.key || read_symtab(&mod, SHT_SYMTAB) < 0 ||
	    (!mod.nsyms && read_symtab(&mod, SHT_DYNSYM) < 0)) {
		module_free(&mod);
		return -1;
	}
	sort_symbols(&mod);
	grown = realloc(s->mods, (s->nmods + 1) * sizeof(*grown));
	if (!grown) {
		module_free(&mod);
		return -1;
	}
	s->mods = grown;
	s->mods[s->nmods] = mod;
	return (long)s->nmods++;
}

static int range_by_start(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Was this mapping reported before (maps are re-reported after changes)? */
static int seen(const struct trace_symbols *s, const struct trace_mmap *m)
{
	size_t i;

	for (i = 0; i < s->nranges; i++) {
		const struct range *r = &s->ranges[i];

		if (r->start == m->start && r->end == m->end &&
		    r->offset == m->offset &&
		    !strcmp(s->mods[r->module].key, m->path))
			return 1;
	}
	return 0;
}

struct trace_symbols *trace_symbols_load(const struct trace_data *td)
{
	struct trace_symbols *s = calloc(1, sizeof(*s));
	size_t i;

	if (!s)
		return NULL;
	elf_version(EV_CURRENT);
	s->ranges = calloc(td->nmmaps + 1, sizeof(*s->ranges));
	if (!s->ranges) {
		free(s);
		return NULL;
	}
	for (i = 0; i < td->nmmaps; i++) {
		const struct trace_mmap *m = &td->mmaps[i];
		long mod;

		if (!(m->prot & PROT_EXEC) || m->end <= m->start ||
		    seen(s, m))
			continue;
		mod = module_for(s, td, m);
		if (mod < 0)
			continue;
		s->ranges[s->nranges].start = m->start;
		s->ranges[s->nranges].end = m->end;
		s->ranges[s->nranges].offset = m->offset;
		s->ranges[s->nranges].module = (size_t)mod;
		s->nranges++;
	}
	qsort(s->ranges, s->nranges, sizeof(*s->ranges), range_by_start);
	return s;
}

void trace_symbols_free(struct trace_symbols *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nmods; i++)
		module_free(&s->mods[i]);
	free(s->mods);
	free(s->ranges);
	free(s);
}

/* ---- lookup ----------------------------------------------------------------- */

static const struct range *find_range(const struct trace_symbols *s,
				      uint64_t ip)
{
	size_t lo = 0, hi = s->nranges, i;

	/* The last range starting at or before @ip... */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ranges[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ...or, as mappings may nest (re-reported parts of a mapping), any
	 * earlier one that holds it. */
	for (i = lo; i > 0; i--) {
		if (ip < s->ranges[i - 1].end)
			return &s->ranges[i - 1];
	}
	return NULL;
}

int trace_symbols_lookup(const struct trace_symbols *s, uint64_t ip,
			 const char **name, uint64_t *offset)
{
	const struct range *r = s ? find_range(s, ip) : NULL;
	const struct module *mod;
	size_t lo = 0, hi;
	uint64_t link;
	const struct sym *sym;

	if (!r)
		return -1;
	mod = &s->mods[r->module];
	link = ip - mod->bias;
	hi = mod->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mod->syms[mid].addr <= link)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	sym = &mod->syms[lo - 1];
	if (sym->size && link - sym->addr >= sym->size)
		return -1;
	*name = sym->name;
	*offset = link - sym->addr;
	return 0;
}
