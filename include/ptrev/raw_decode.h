/* `ptrev decode --raw PT ...`: decode a raw Intel PT stream from any tool and
 * print the instruction history exactly as libipt's
 * `ptxed --no-inst --check --raw` prints it. */
#ifndef PTREV_RAW_DECODE_H
#define PTREV_RAW_DECODE_H

/* argv[0] is "decode", argv[1] is "--raw", the rest as the user gave them:
 *   --raw PT                 the PT stream (raw bytes, any tool)
 *   --image FILE[:OFF[-END]]:ADDR   a raw binary loaded at ADDR
 *   --pages ADDRFILE:DUMPFILE       little-endian u64 page addresses + 4 KiB pages
 *   --elf FILE[:BIAS]        an ELF's PT_LOAD segments at p_vaddr + BIAS
 *   --cpu F/M[/S]            errata for that cpu (as ptxed --cpu)
 *   --count                  print only `instructions: N` and `errors: N`
 * Returns the process exit status: 0 when the trace decoded without errors,
 * 1 on bad arguments, unreadable input, or any decode error. */
int decode_raw_main(int argc, char **argv);

#endif
