/* Pieces of `ptrev decode --raw` shared between decode/raw_*.c only. */
#ifndef PTREV_DECODE_RAW_INTERNAL_H
#define PTREV_DECODE_RAW_INTERNAL_H

#include <intel-pt.h>
#include <stdint.h>
#include <stdio.h>

/* Every message a user sees starts with this. */
#define RAW_PROG "ptrev decode"

/* ---- raw_image.c: the memory the traced code ran from ---------------- */

/* Each loader adds sections to @image through @iscache and returns 0, or
 * prints one line to stderr naming the problem and returns -1. */

/* FILE[:OFFSET[-END]]:ADDR, ptxed's --raw syntax: FILE's bytes (or the
 * OFFSET..END part of them) at virtual address ADDR. */
int raw_image_add_binary(struct pt_image_section_cache *iscache,
			 struct pt_image *image, const char *arg);

/* ADDRFILE:DUMPFILE: ADDRFILE holds little-endian u64 page addresses,
 * DUMPFILE the 4 KiB pages in the same order (kAFL/Nyx dumps). */
int raw_image_add_pages(struct pt_image_section_cache *iscache,
			struct pt_image *image, const char *arg);

/* FILE[:BIAS]: every PT_LOAD segment's file bytes at p_vaddr + BIAS. */
int raw_image_add_elf(struct pt_image_section_cache *iscache,
		      struct pt_image *image, const char *arg);

/* Parses a whole string as an unsigned number (C prefixes 0x/0 honoured).
 * Returns 0 on success, -1 if @s is empty, has trailing text or overflows. */
int raw_parse_u64(const char *s, uint64_t *value);

/* ---- raw_print.c: ptxed's line formats --------------------------------- */

/* A buffered writer: when @quiet it only counts, so that --count and the
 * line output always agree. */
struct raw_out {
	FILE *file;
	int quiet;
	uint64_t instructions;	/* instruction lines */
	uint64_t errors;	/* error lines: config, sync, decode, check */
	/* Optional text appended to each instruction line (`ptrev decode
	 * FILE --insn`); NULL for plain ptxed lines. It writes at most @room
	 * bytes (no newline) at @dst and returns how many it wrote. */
	size_t (*annotate)(void *arg, const struct pt_insn *insn, char *dst,
			   size_t room);
	void *annotate_arg;
	size_t used;
	char buf[1 << 16];
};

void raw_out_init(struct raw_out *out, FILE *file, int quiet);
void raw_out_flush(struct raw_out *out);

/* `[? ]%016x` for one decoded instruction (then the annotation, if any). */
void raw_print_insn(struct raw_out *out, const struct pt_insn *insn);
/* `[event]` as ptxed prints it with default options. */
void raw_print_event(struct raw_out *out, const struct pt_event *event);
/* `[end of trace]`. */
void raw_print_end_of_trace(struct raw_out *out);
/* `[OFFSET, IP: KIND: TEXT]`; @have_offset 0 prints ptxed's
 * "could not determine offset" form. */
void raw_print_error(struct raw_out *out, int have_offset, uint64_t offset,
		     int offset_errcode, uint64_t ip, const char *kind,
		     int errcode);
/* `[OFFSET, IP: check error: TEXT]` from ptxed's --check. */
void raw_print_check_error(struct raw_out *out, uint64_t offset, uint64_t ip,
			   const char *text);

/* ---- raw_loop.c: ptxed's decode loop ------------------------------------ */

struct raw_loop_result {
	int synced;		/* at least one PSB was found */
};

/* Decodes the whole trace with @decoder exactly as ptxed's instruction
 * decoder loop does (resync at the next PSB after an error). */
void raw_decode_loop(struct pt_insn_decoder *decoder, struct raw_out *out,
		     struct raw_loop_result *result);

#endif
