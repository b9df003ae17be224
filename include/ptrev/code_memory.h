/* Memory a recording can vouch for without re-executing anything: code and
 * other read-only bytes (recorded CODE bytes, and non-writable mappings of
 * files whose build-id still matches). Writable data is not here: its
 * value at a past position is unknown until it is re-executed. */
#ifndef PTREV_CODE_MEMORY_H
#define PTREV_CODE_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrev/trace_file.h"

struct code_memory;

/* Index the recording's read-only memory. td must outlive the result. */
struct code_memory *code_memory_new(const struct trace_data *td);
void code_memory_free(struct code_memory *cm);
/* Read up to len bytes at addr: returns the number of bytes read from the
 * start (0 when addr is not in read-only recorded memory). */
size_t code_memory_read(struct code_memory *cm, uint64_t addr, void *buf, size_t len);

#endif
