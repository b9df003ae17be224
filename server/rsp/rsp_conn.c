/* A connection to gdb: reading with timeouts, acknowledgements, resending on
 * '-', and replying E01 to packets too large for us. The packet grammar
 * itself lives in rsp_packet.c. */
#include "ptrev/rsp.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* How long rsp_conn_send waits for gdb's '+' before assuming the packet
 * arrived anyway. gdb acks as soon as it reads a packet, so this only
 * matters for a broken peer; better a delay than a server that hangs. */
#define RSP_ACK_TIMEOUT_MS 10000
/* A peer that NAKs everything gets this many resends, then we move on. */
#define RSP_MAX_RESENDS 50

void rsp_conn_init(struct rsp_conn *c, int rfd, int wfd)
{
	c->rfd = rfd;
	c->wfd = wfd;
	c->noack = false;
	c->closed = false;
	c->inpos = 0;
	c->inlen = 0;
	rsp_reader_init(&c->reader);
	strbuf_init(&c->out);
	c->pending = RSP_EV_NONE;
}

void rsp_conn_destroy(struct rsp_conn *c)
{
	strbuf_free(&c->out);
}

bool rsp_conn_has_buffered(const struct rsp_conn *c)
{
	return c->inpos < c->inlen || c->pending != RSP_EV_NONE;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline (-1 = no deadline), for poll(). */
static int remaining_ms(int64_t deadline)
{
	if (deadline < 0)
		return -1;
	int64_t left = deadline - now_ms();
	if (left <= 0)
		return 0;
	return left > 1000000 ? 1000000 : (int)left;
}

static int64_t deadline_after(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

/* Write all of buf. Sockets get MSG_NOSIGNAL so a vanished peer is an
 * error return, not SIGPIPE; for pipes (--stdio) the server ignores SIGPIPE.
 * Returns 0, or -1 after marking the connection closed. */
static int write_all(struct rsp_conn *c, const void *buf, size_t n)
{
	const char *p = buf;
	bool is_socket = true;
	if (c->closed)
		return -1;
	while (n > 0) {
		ssize_t w = is_socket ? send(c->wfd, p, n, MSG_NOSIGNAL)
				      : write(c->wfd, p, n);
		if (w < 0 && is_socket && errno == ENOTSOCK) {
			is_socket = false;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = {.fd = c->wfd, .events = POLLOUT};
			poll(&pfd, 1, -1);
			continue;
		}
		if (w <= 0) {
			c->closed = true;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read whatever is available into the (empty) input buffer, waiting until
 * deadline. Returns 1 if bytes arrived, 0 on timeout, -1 when the peer has
 * gone (the connection is then marked closed). */
static int fill(struct rsp_conn *c, int64_t deadline)
{
	c->inpos = 0;
	c->inlen = 0;
	if (c->closed)
		return -1;
	for (;;) {
		struct pollfd pfd = {.fd = c->rfd, .events = POLLIN};
		int pr = poll(&pfd, 1, remaining_ms(deadline));
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			c->closed = true;
			return -1;
		}
		if (pr == 0)
			return 0;
		ssize_t r = read(c->rfd, c->inbuf, sizeof c->inbuf);
		if (r > 0) {
			c->inlen = (size_t)r;
			return 1;
		}
		if (r < 0 && (errno == EINTR || errno == EAGAIN ||
			      errno == EWOULDBLOCK))
			continue;
		c->closed = true; /* EOF or a real error */
		return -1;
	}
}

static int send_ack(struct rsp_conn *c, char ack)
{
	if (c->noack)
		return 0;
	return write_all(c, &ack, 1);
}

/* Wait for gdb's '+' after sending c->out. Returns 0 when acked (or when the
 * peer has clearly moved on), 1 to resend, -1 if the connection is closed.
 *
 * gdb should send nothing but the ack here. If a packet it had started
 * before our reply finishes now, or it presses Ctrl-C, that event is kept in
 * c->pending for the next rsp_conn_recv. A '$' between packets means gdb
 * is already talking again, which it only does after reading our reply, so
 * it counts as the ack and is left in the buffer. */
static int wait_for_ack(struct rsp_conn *c)
{
	int64_t deadline = deadline_after(RSP_ACK_TIMEOUT_MS);
	for (;;) {
		while (c->inpos < c->inlen) {
			uint8_t b = c->inbuf[c->inpos];
			if (rsp_reader_in_packet(&c->reader)) {
				c->inpos++;
				enum rsp_event ev = rsp_reader_feed(&c->reader, b);
				if (ev == RSP_EV_PACKET || ev == RSP_EV_OVERSIZED) {
					/* Ack it now: gdb will not ack
					 * our reply until its packet is
					 * acked. */
					c->pending = ev;
					if (send_ack(c, '+') < 0)
						return -1;
				} else if (ev == RSP_EV_BAD_CHECKSUM &&
					   send_ack(c, '-') < 0) {
					return -1; /* (only ack mode gets here) */
				}
				continue;
			}
			if (b == '+') {
				c->inpos++;
				return 0;
			}
			if (b == '-') {
				c->inpos++;
				return 1;
			}
			if (b == '$' || (b == 0x03 && c->pending != RSP_EV_NONE))
				return 0; /* leave it for rsp_conn_recv */
			c->inpos++;
			if (b == 0x03)
				c->pending = RSP_EV_INTERRUPT;
			/* other bytes between packets are noise */
		}
		int r = fill(c, deadline);
		if (r < 0)
			return -1;
		if (r == 0)
			return 0; /* no ack in time: assume it arrived */
	}
}

int rsp_conn_send(struct rsp_conn *c, const void *payload, size_t n)
{
	if (c->closed)
		return -1;
	strbuf_reset(&c->out);
	rsp_frame(&c->out, payload, n);
	for (int attempt = 0;; attempt++) {
		if (write_all(c, c->out.data, c->out.len) < 0)
			return -1;
		if (c->noack)
			return 0;
		int r = wait_for_ack(c);
		if (r <= 0)
			return r;
		if (attempt == RSP_MAX_RESENDS)
			return 0;
	}
}

int rsp_conn_send_str(struct rsp_conn *c, const char *s)
{
	return rsp_conn_send(c, s, strlen(s));
}

int rsp_conn_notify(struct rsp_conn *c, const char *payload, size_t n)
{
	if (c->closed)
		return -1;
	strbuf_reset(&c->out);
	rsp_frame(&c->out, payload, n);
	c->out.data[0] = '%'; /* a notification: framed the same, never acked */
	return write_all(c, c->out.data, c->out.len) < 0 ? -1 : 0;
}

/* React to one complete reader event. Returns true (with *out set) when it
 * is something for the caller. A failed write of an ack only marks the
 * connection closed: packets that already arrived are still handed out, and
 * the next read reports the close. */
static bool handle_event(struct rsp_conn *c, enum rsp_event ev,
			 enum rsp_recv *out)
{
	switch (ev) {
	case RSP_EV_PACKET:
		send_ack(c, '+');
		*out = RSP_RECV_PACKET;
		return true;
	case RSP_EV_BAD_CHECKSUM:
		if (c->noack) {
			*out = RSP_RECV_PACKET; /* nobody would resend it */
			return true;
		}
		send_ack(c, '-');
		return false;
	case RSP_EV_OVERSIZED:
		/* The packet arrived whole, just too big to keep: ack it so
		 * gdb does not resend, and refuse it so gdb does not wait. */
		if (send_ack(c, '+') == 0)
			rsp_conn_send_str(c, "E01");
		return false;
	case RSP_EV_INTERRUPT:
		*out = RSP_RECV_INTERRUPT;
		return true;
	case RSP_EV_NONE:
	case RSP_EV_ACK:  /* stray acks: e.g. gdb acks our OK to */
	case RSP_EV_NAK:  /* QStartNoAckMode, and its initial '+' */
		return false;
	}
	return false;
}

enum rsp_recv rsp_conn_recv(struct rsp_conn *c, const char **pkt, size_t *len,
			    int timeout_ms)
{
	int64_t deadline = deadline_after(timeout_ms);
	enum rsp_recv res;
	*pkt = NULL;
	*len = 0;
	for (;;) {
		if (c->pending != RSP_EV_NONE) {
			/* Already acked while rsp_conn_send waited. */
			enum rsp_event ev = c->pending;
			c->pending = RSP_EV_NONE;
			if (ev == RSP_EV_PACKET) {
				res = RSP_RECV_PACKET;
				goto out;
			}
			if (ev == RSP_EV_INTERRUPT)
				return RSP_RECV_INTERRUPT;
			if (ev == RSP_EV_OVERSIZED)
				rsp_conn_send_str(c, "E01");
			continue; /* send may have left a new pending event */
		}
		while (c->inpos < c->inlen) {
			enum rsp_event ev =
				rsp_reader_feed(&c->reader, c->inbuf[c->inpos++]);
			if (handle_event(c, ev, &res))
				goto out;
			if (c->pending != RSP_EV_NONE)
				break; /* the E01 reply's ack wait saw more */
		}
		if (c->pending != RSP_EV_NONE)
			continue;
		int r = fill(c, deadline);
		if (r < 0)
			return RSP_RECV_CLOSED;
		if (r == 0)
			return RSP_RECV_TIMEOUT;
	}
out:
	if (res == RSP_RECV_PACKET) {
		*pkt = c->reader.payload;
		*len = c->reader.len;
	}
	return res;
}
