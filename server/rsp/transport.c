/* TCP transport for --listen: parse HOST:PORT, listen, accept one gdb.
 * Loopback by default, because a debug server lets its client run any code
 * as us: listening anywhere else must be the user's explicit choice. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 (meson passes it; direct gcc builds may not) */
#endif
#include "ptrev/transport.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DEFAULT_HOST "127.0.0.1"
#define DEFAULT_SPEC "127.0.0.1:1234"

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || errlen == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Split spec into host and port strings (both NUL-terminated, in the
 * caller's buffers). Returns false with a message for malformed specs. */
static bool split_spec(const char *spec, char *host, size_t hostlen,
		       char *port, size_t portlen, char *err, size_t errlen)
{
	const char *port_str, *host_start = spec;
	size_t host_n;

	if (spec[0] == '[') {
		/* [IPv6]:PORT: the brackets keep the address's colons apart
		 * from the port separator. */
		const char *close = strchr(spec, ']');
		if (!close) {
			set_err(err, errlen, "bad listen address '%s': missing ']'", spec);
			return false;
		}
		if (close[1] != ':') {
			set_err(err, errlen,
				"bad listen address '%s': missing port (expected [HOST]:PORT)", spec);
			return false;
		}
		host_n = (size_t)(close - spec - 1);
		if (host_n == 0) {
			set_err(err, errlen, "bad listen address '%s': empty host", spec);
			return false;
		}
		host_start = spec + 1;
		port_str = close + 2;
	} else {
		/* The port follows the last colon: a bare IPv6 address
		 * (::1:1234) works too, as with gdbserver. */
		const char *colon = strrchr(spec, ':');
		if (!colon) {
			host_n = 0;
			port_str = spec;
		} else {
			host_n = (size_t)(colon - spec);
			port_str = colon + 1;
		}
	}

	if (host_n == 0) {
		snprintf(host, hostlen, "%s", DEFAULT_HOST);
	} else {
		if (host_n >= hostlen) {
			set_err(err, errlen, "bad listen address '%s': host name too long",
				spec);
			return false;
		}
		memcpy(host, host_start, host_n);
		host[host_n] = '\0';
	}

	/* Digits only: getaddrinfo would accept service names and
	 * strtoul would accept signs and spaces. */
	size_t digits = strspn(port_str, "0123456789");
	if (digits == 0 || port_str[digits] != '\0') {
		if (*port_str == '\0' || port_str == spec)
			set_err(err, errlen, "bad listen address '%s': missing port "
				"(expected HOST:PORT)", spec);
		else
			set_err(err, errlen, "bad listen address '%s': port '%s' "
				"is not a number", spec, port_str);
		return false;
	}
	unsigned long pnum = digits > 5 ? 65536 : strtoul(port_str, NULL, 10);
	if (pnum > 65535) {
		set_err(err, errlen, "bad listen address '%s': port %s is out of "
			"range (0-65535)", spec, port_str);
		return false;
	}
	snprintf(port, portlen, "%lu", pnum);
	return true;
}

/* "HOST:PORT" (IPv6 as "[ADDR]:PORT") of a bound socket. */
static bool format_bound(int fd, char *bound, size_t boundlen, char *err,
			 size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char host[NI_MAXHOST], serv[NI_MAXSERV];
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		set_err(err, errlen, "getsockname: %s", strerror(errno));
		return false;
	}
	int rc = getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, serv,
			     sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
	if (rc != 0) {
		set_err(err, errlen, "getnameinfo: %s", gai_strerror(rc));
		return false;
	}
	if (bound && boundlen) {
		if (ss.ss_family == AF_INET6)
			snprintf(bound, boundlen, "[%s]:%s", host, serv);
		else
			snprintf(bound, boundlen, "%s:%s", host, serv);
	}
	return true;
}

static int listen_on(const struct addrinfo *ai, int *saved_errno)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			ai->ai_protocol);
	if (fd < 0) {
		*saved_errno = errno;
		return -1;
	}
	/* A restarted server must not wait out TIME_WAIT on its port. */
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 1) < 0) {
		*saved_errno = errno;
		close(fd);
		return -1;
	}
	return fd;
}

int transport_listen(const char *spec, char *bound, size_t boundlen,
		     char *err, size_t errlen)
{
	char host[256], port[8];
	if (bound && boundlen)
		bound[0] = '\0';
	if (!spec)
		spec = DEFAULT_SPEC;
	if (!*spec) {
		set_err(err, errlen, "empty listen address (expected HOST:PORT)");
		return -1;
	}
	if (!split_spec(spec, host, sizeof host, port, sizeof port, err, errlen))
		return -1;

	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		/* gdbserver's words, which GDB's testsuite waits for */
		set_err(err, errlen, "listen host '%s': cannot resolve name: %s", host,
			rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -1;
	}

	int fd = -1, last_errno = 0;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
		fd = listen_on(ai, &last_errno);
	freeaddrinfo(res);
	if (fd < 0) {
		if (last_errno == EADDRINUSE)
			/* gdbserver's words: GDB's testsuite tries the next
			 * port when it reads them */
			set_err(err, errlen, "cannot listen on %s: Can't bind address: "
				"Address already in use.", spec);
		else
			set_err(err, errlen, "cannot listen on %s: %s", spec,
				strerror(last_errno));
		return -1;
	}
	if (!format_bound(fd, bound, boundlen, err, errlen)) {
		close(fd);
		return -1;
	}
	return fd;
}

int transport_accept(int listen_fd, char *err, size_t errlen)
{
	int fd;
	do
		fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		set_err(err, errlen, "accept: %s", strerror(errno));
		return -1;
	}
	/* The protocol is many tiny request/reply packets: Nagle's delay
	 * would add up to tens of milliseconds to each. (Only speed is at
	 * stake, so a failure is not an error.) */
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

void transport_peer(int fd, char *out, size_t outlen)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof sa;
	char host[NI_MAXHOST], port[NI_MAXSERV];
	if (getpeername(fd, (struct sockaddr *)&sa, &len) != 0 ||
	    getnameinfo((struct sockaddr *)&sa, len, host, sizeof host, port, sizeof port,
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(out, outlen, "an unknown host");
		return;
	}
	snprintf(out, outlen, "host %s, port %s", host, port);
}
