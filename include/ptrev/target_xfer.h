/* Objects gdb reads from the target with qXfer, built from /proc and the
 * inferior's memory. Each returns the whole object; the server slices it
 * by the requested offset and length. */
#ifndef PTREV_TARGET_XFER_H
#define PTREV_TARGET_XFER_H

#include <stdint.h>
#include <sys/types.h>

#include "ptrev/strbuf.h"

/* Reads inferior memory; returns bytes read or -1. */
typedef ssize_t (*xfer_read_mem_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* qXfer:auxv:read — raw bytes of /proc/PID/auxv. Returns 0 or -errno. */
int xfer_auxv(pid_t pid, struct strbuf *out);
/* qXfer:exec-file:read — the executable's absolute path (/proc/PID/exe).
 * Returns 0 or -errno. */
int xfer_exec_file(pid_t pid, struct strbuf *out);
/* qXfer:libraries-svr4:read — <library-list-svr4> from the dynamic
 * linker's r_debug/link_map chain (found via AT_PHDR -> PT_DYNAMIC ->
 * DT_DEBUG), as gdbserver writes it. annex may hold "start=..;prev=.."
 * (gdb's incremental form) or be empty. Returns 0 or -errno. */
int xfer_libraries_svr4(pid_t pid, xfer_read_mem_fn read_mem, void *ctx,
			const char *annex, struct strbuf *out);
/* The same with the auxv given (a recording's copy) instead of a pid. */
int xfer_libraries_svr4_auxv(const void *auxv, size_t auxv_len, xfer_read_mem_fn read_mem,
			     void *ctx, const char *annex, struct strbuf *out);

#endif
