/* Decoding a raw Intel PT stream from any tool and printing the instruction
 * history exactly as libipt's `ptxed --no-inst --check --raw` prints it
 * (`ptrev decode --raw`, whose command line is server/cli/decode_cmd.c). */
#ifndef PTREV_RAW_DECODE_H
#define PTREV_RAW_DECODE_H

#include <intel-pt.h>

/* Where the code the trace ran comes from, as the command line gives it:
 *   image_binary  FILE[:OFF[-END]]:ADDR   a raw binary loaded at ADDR
 *   image_pages   ADDRFILE:DUMPFILE       little-endian u64 page addresses
 *                                         + 4 KiB pages
 *   image_elf     FILE[:BIAS]             an ELF's PT_LOAD segments at
 *                                         p_vaddr + BIAS */
enum image_kind { image_binary, image_pages, image_elf };

struct image_arg {
	enum image_kind kind;
	const char *value;
};

struct raw_decode_args {
	const char *pt_path;          /* the PT stream (raw bytes) */
	struct image_arg *images;
	int n_images;
	int have_cpu;                 /* errata for cpu (as ptxed --cpu) */
	struct pt_cpu cpu;
	int count_only;               /* print only `instructions: N`, `errors: N` */
};

/* Decode and print on stdout; messages on stderr. Returns the process exit
 * status: 0 when the trace decoded without errors, 1 on unreadable input
 * or any decode error. */
int raw_decode(const struct raw_decode_args *args);

#endif
