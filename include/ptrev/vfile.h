/* gdb's host I/O packets (vFile:*) so that gdb reads the program and its
 * libraries through the connection, exactly as with gdbserver. */
#ifndef PTREV_VFILE_H
#define PTREV_VFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ptrev/strbuf.h"

#define VFILE_MAX_FDS 64

struct vfile_state {
	int fds[VFILE_MAX_FDS]; /* host fds handed to gdb; -1 = free */
	pid_t fs_pid;           /* vFile:setfs: 0 = our filesystem */
};

void vfile_init(struct vfile_state *vs);
void vfile_close_all(struct vfile_state *vs);
/* Handle one packet starting with "vFile:". Appends the reply payload
 * (already escaped where binary) to reply. Returns false if the packet is
 * not a vFile operation we know (the server then replies empty). */
bool vfile_handle(struct vfile_state *vs, char *pkt, size_t len, struct strbuf *reply);

#endif
