/* How gdb reaches us: a TCP listener (loopback unless the user names another
 * address) or the stdio pair. */
#ifndef PTREV_TRANSPORT_H
#define PTREV_TRANSPORT_H

#include <stddef.h>

/* Parse "HOST:PORT", ":PORT" or "PORT" (HOST defaults to 127.0.0.1; "[::1]:P"
 * for IPv6) and listen there. Port 0 picks a free port. On success returns
 * the listening fd and writes the bound address as "HOST:PORT" into bound.
 * On failure returns -1 with a message in err. */
int transport_listen(const char *spec, char *bound, size_t boundlen,
		     char *err, size_t errlen);
/* Accept one connection (blocking); returns the fd or -1. Disables Nagle so
 * that small packets are not delayed. */
int transport_accept(int listen_fd, char *err, size_t errlen);
/* "host H, port P" of a connection's peer, as gdbserver names it when gdb
 * connects; "an unknown host" where the socket does not say. */
void transport_peer(int fd, char *out, size_t outlen);

#endif
