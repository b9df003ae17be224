/* Unit tests of the TCP transport: listening, the bound address string,
 * the loopback default, and clear errors for bad listen addresses. */
#include "ptrev/transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../check.h"

/* The port of a "HOST:PORT" / "[HOST]:PORT" string, or -1. */
static int port_of(const char *bound)
{
	const char *colon = strrchr(bound, ':');
	if (!colon || !colon[1])
		return -1;
	return atoi(colon + 1);
}

/* Connect to 127.0.0.1 or ::1 at port, accept through the transport, and
 * check that bytes flow both ways and that Nagle is off. */
static void check_connect(int lfd, int family, int port)
{
	int cfd = socket(family, SOCK_STREAM, 0);
	CHECK(cfd >= 0);
	int rc;
	if (family == AF_INET) {
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)port)};
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		rc = connect(cfd, (struct sockaddr *)&sa, sizeof sa);
	} else {
		struct sockaddr_in6 sa = {.sin6_family = AF_INET6,
					  .sin6_port = htons((uint16_t)port),
					  .sin6_addr = IN6ADDR_LOOPBACK_INIT};
		rc = connect(cfd, (struct sockaddr *)&sa, sizeof sa);
	}
	CHECK(rc == 0);
	char err[256] = "";
	int afd = transport_accept(lfd, err, sizeof err);
	CHECK(afd >= 0);
	if (afd < 0) {
		fprintf(stderr, "accept: %s\n", err);
		close(cfd);
		return;
	}
	int nodelay = 0;
	socklen_t sl = sizeof nodelay;
	CHECK(getsockopt(afd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &sl) == 0);
	CHECK(nodelay != 0);
	CHECK(write(cfd, "$g#67", 5) == 5);
	char buf[8] = "";
	CHECK(read(afd, buf, sizeof buf) == 5 && memcmp(buf, "$g#67", 5) == 0);
	CHECK(write(afd, "+", 1) == 1);
	CHECK(read(cfd, buf, 1) == 1 && buf[0] == '+');
	close(afd);
	close(cfd);
}

static void test_listen_ipv4(void)
{
	char bound[128], err[256];
	int fd = transport_listen("127.0.0.1:0", bound, sizeof bound, err, sizeof err);
	CHECK(fd >= 0);
	if (fd < 0) {
		fprintf(stderr, "listen: %s\n", err);
		return;
	}
	/* Port 0 picks a free port, and the bound string names it. */
	CHECK(strncmp(bound, "127.0.0.1:", 10) == 0);
	int port = port_of(bound);
	CHECK(port > 0 && port < 65536);
	check_connect(fd, AF_INET, port);

	/* The port is now taken: a second listener says so. */
	char spec[64];
	snprintf(spec, sizeof spec, "127.0.0.1:%d", port);
	err[0] = '\0';
	int fd2 = transport_listen(spec, bound, sizeof bound, err, sizeof err);
	CHECK(fd2 < 0);
	CHECK(strstr(err, "in use") != NULL);
	if (fd2 >= 0)
		close(fd2);
	close(fd);

	/* After the listener closes, the same port can be reused at once
	 * (SO_REUSEADDR), even with a connection in TIME_WAIT. */
	fd = transport_listen(spec, bound, sizeof bound, err, sizeof err);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

/* ":PORT", "PORT" and "localhost:PORT" all stay on loopback. */
static void test_default_host(void)
{
	const char *specs[] = {":0", "0", "localhost:0"};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		char bound[128] = "", err[256] = "";
		int fd = transport_listen(specs[i], bound, sizeof bound, err, sizeof err);
		CHECK(fd >= 0);
		if (fd < 0) {
			fprintf(stderr, "listen %s: %s\n", specs[i], err);
			continue;
		}
		bool loopback = strncmp(bound, "127.", 4) == 0 ||
				strncmp(bound, "[::1]:", 6) == 0;
		if (!loopback)
			fprintf(stderr, "%s bound to %s, not loopback\n", specs[i], bound);
		CHECK(loopback);
		if (i < 2)
			CHECK(strncmp(bound, "127.0.0.1:", 10) == 0);
		close(fd);
	}
}

static void expect_error(const char *spec, const char *want)
{
	char bound[128] = "x", err[256] = "";
	int fd = transport_listen(spec, bound, sizeof bound, err, sizeof err);
	if (fd >= 0 || strstr(err, want) == NULL) {
		fprintf(stderr, "spec '%s': fd %d, error '%s', want an error with '%s'\n",
			spec, fd, err, want);
		failures++;
	}
	if (fd >= 0)
		close(fd);
}

static void test_bad_specs(void)
{
	expect_error("", "empty");
	expect_error("127.0.0.1:", "missing port");
	expect_error("localhost", "missing port");
	expect_error("127.0.0.1:http", "not a number");
	expect_error("127.0.0.1:-1", "not a number");
	expect_error("127.0.0.1: 80", "not a number");
	expect_error("127.0.0.1:65536", "out of range");
	expect_error("127.0.0.1:99999999999999999999", "out of range");
	/* gdbserver's: what is before the last colon is the host */
	expect_error("tcp8:123:0", "cannot resolve name");
	expect_error("[::1", "missing ']'");
	expect_error("[::1]", "[HOST]:PORT");
	expect_error("[]:0", "empty host");
	expect_error("no-such-host.invalid:0", "cannot resolve");
	/* An address this machine does not have. */
	expect_error("192.0.2.1:0", "cannot listen");
}

static void test_listen_ipv6(void)
{
	/* Skip this part where the machine has no IPv6 loopback. */
	int probe = socket(AF_INET6, SOCK_STREAM, 0);
	if (probe < 0) {
		printf("no IPv6: skipping the IPv6 part\n");
		return;
	}
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6,
				  .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	int ok = bind(probe, (struct sockaddr *)&sa, sizeof sa) == 0;
	close(probe);
	if (!ok) {
		printf("no IPv6 loopback: skipping the IPv6 part\n");
		return;
	}
	char bound[128], err[256];
	int fd = transport_listen("[::1]:0", bound, sizeof bound, err, sizeof err);
	CHECK(fd >= 0);
	if (fd < 0) {
		fprintf(stderr, "listen [::1]:0: %s\n", err);
		return;
	}
	CHECK(strncmp(bound, "[::1]:", 6) == 0);
	int port = port_of(bound);
	CHECK(port > 0);
	check_connect(fd, AF_INET6, port);
	close(fd);
	/* Without brackets, as gdbserver takes it: the port after the last
	 * colon. */
	fd = transport_listen("::1:0", bound, sizeof bound, err, sizeof err);
	CHECK(fd >= 0 && strncmp(bound, "[::1]:", 6) == 0);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	test_listen_ipv4();
	test_default_host();
	test_bad_specs();
	test_listen_ipv6();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("all transport checks passed\n");
	return 0;
}
