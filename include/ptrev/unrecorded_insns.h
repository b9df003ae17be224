/* Instructions whose results an event recording cannot hold on a CPU
 * without CPUID faulting: rdrand, rdseed and rdpid return values the
 * kernel gives the recorder no stop for. A replay that runs one goes
 * differently from the recording, and shows it only later, at a syscall
 * whose arguments differ. Where the recording's code holds such an
 * instruction, the replay's message names it as the likely cause.
 * Implemented in decode/unrecorded_insns.c. */
#ifndef PTREV_UNRECORDED_INSNS_H
#define PTREV_UNRECORDED_INSNS_H

#include <stddef.h>

#include "ptrev/trace_file.h"

/* How many such instructions the bytes hold: 0F C7 followed by a ModRM
 * byte with mod 11 and reg 6 or 7 (rdrand, rdseed; rdpid with its F3),
 * an encoding compilers emit for nothing else. A byte scan: it may count
 * bytes that are not an instruction's start, which for a hint is fine. */
size_t unrecorded_insns_count(const unsigned char *code, size_t len);

/* A note for the message of a replay of td that went differently: the
 * executable files it mapped (the files themselves, or the recording's
 * copies) that hold such instructions, e.g. "the program's code holds
 * rdrand, rdseed or rdpid (libstdc++.so.6: 5), ...". Empty (returns 0)
 * where none does; else its length. */
size_t unrecorded_insns_note(const struct trace_data *td, char *out, size_t len);

#endif
