/* `ptrev decode FILE [--insn]`: the instruction history of a .ptrev
 * recording, printed in the line format of libipt's `ptxed --no-inst
 * --check` (the same lines as `ptrev decode --raw`):
 *
 *   0000000000401000            one line per instruction, its IP in %016x
 *   [enabled] [disabled] ...    events in brackets, as ptxed prints them
 *   [OFF, IP: error: TEXT]      decode errors, as ptxed prints them
 *
 * A recording with several threads prints each thread's history in turn,
 * in the order the threads were created (their TRACE_REC_THREAD records;
 * threads without one last), each preceded by a line `[thread TID]` (TID
 * in decimal). A recording of one thread has no such line, so its output
 * is exactly ptxed's.
 *
 * With --insn each instruction line goes on with the instruction's symbol
 * and its AT&T disassembly (gdb's default syntax), two spaces apart:
 *
 *   0000000000401000  <_start+0>  xor %ebp, %ebp
 *   0000000000401002  <_start+2>  call 0x401159 <cmain+0>
 *
 * The symbol (`<NAME+DECIMAL-OFFSET>`, left out where none is known) comes
 * from the ELF symbol table of the mapped file (.symtab, else .dynsym),
 * relocated by the mapping's load bias; a vDSO's from its own ELF image in
 * the recorded code bytes. Direct branch targets get the same annotation.
 *
 * The code decoded against is rebuilt from the recording's sideband: every
 * executable mapping's file (whose GNU build-id must equal the recorded one)
 * and the recorded code bytes (vDSO, anonymous code). Code that is nowhere
 * to be found is never invented: libipt reports "no memory mapped". */
#ifndef PTREV_TRACE_DECODE_H
#define PTREV_TRACE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/trace_file.h"

/* Print the history of the recording td (read from path, named in
 * messages) on stdout (insn: with symbols and disassembly); messages on
 * stderr. Returns the process exit status: 0 when every thread decoded
 * without errors, 1 for code that cannot be loaded (missing file, file
 * changed since recording, mappings that overlap over time), or any
 * decode error. */
int trace_decode_print(const struct trace_data *td, const char *path, bool insn);

/* Decodes the history of thread @tid (0: every thread, summed) without
 * printing it: *insns gets the number of instructions, *errors the number
 * of decode errors (the error lines `ptrev decode` would print). Returns 0,
 * or -1 with a message in @err when the code image cannot be built or
 * there is no PT for @tid. */
int trace_decode_count(const struct trace_data *td, pid_t tid,
		       uint64_t *insns, uint64_t *errors, char *err,
		       size_t errlen);

#endif
