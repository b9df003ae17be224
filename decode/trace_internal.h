/* Pieces of `ptrev decode FILE` shared between decode/trace_*.c (and the
 * history index, which decodes the same recordings against the same code). */
#ifndef PTREV_DECODE_TRACE_INTERNAL_H
#define PTREV_DECODE_TRACE_INTERNAL_H

#include <intel-pt.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrev/elf_build_id.h"
#include "ptrev/trace_file.h"
#include "ptrev/trace_image.h"

/* Is this mapping's code in a file we can load (a path, not "" or
 * "[vdso]")? */
int trace_mmap_is_file(const struct trace_mmap *m);


/* ---- trace_symbols.c: <symbol+offset> for an address ------------------- */

struct trace_symbols;

/* Symbols of every executable mapping's ELF (mapped files, and vDSO images
 * found in the recorded code). Files without symbols just contribute none;
 * returns NULL only when out of memory. */
struct trace_symbols *trace_symbols_load(const struct trace_data *td);
void trace_symbols_free(struct trace_symbols *syms);

/* The symbol at or before @ip in the same mapped object: its name (owned
 * by @syms) and @ip's offset from it. Returns 0, or -1 when none is known
 * (no symbols, or @ip past the end of a sized symbol). */
int trace_symbols_lookup(const struct trace_symbols *syms, uint64_t ip,
			 const char **name, uint64_t *offset);

#endif
