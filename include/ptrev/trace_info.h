/* `ptrev info FILE`: a summary of a .ptrev recording, one `key: value`
 * item per line (format in docs/trace-format.md, "ptrev info"). */
#ifndef PTREV_TRACE_INFO_H
#define PTREV_TRACE_INFO_H

#include <stdint.h>
#include <stdio.h>

#include "ptrev/trace_file.h"

/* argv[0] = "info", argv[1] = FILE. Prints the summary on stdout and
 * returns 0; on a bad file prints `ptrev info: FILE: <reason>` on stderr
 * and returns 1; on a usage error returns 2. */
int trace_info_main(int argc, char **argv);

/* The summary of an already read recording (path is only printed). */
void trace_info_print(FILE *out, const char *path, const struct trace_data *td);

/* PSB packets in a PT stream, counted with libipt's packet decoder
 * (resynchronising at the next PSB after a decode error). */
uint64_t trace_count_psb(const uint8_t *pt, size_t len);

#endif
