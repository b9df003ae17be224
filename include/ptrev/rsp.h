/* GDB remote serial protocol: framing, checksums, acks, escaping.
 *
 * Two layers. The reader is a pure byte-at-a-time state machine (no I/O) so
 * it can be unit-tested and fuzzed. The connection owns two file descriptors
 * (stdin/stdout for --stdio, one socket for --listen) and does the I/O,
 * acknowledgements and QStartNoAckMode. */
#ifndef PTREV_RSP_H
#define PTREV_RSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrev/strbuf.h"

/* Largest packet payload we accept, and what qSupported advertises as
 * PacketSize (in hex). Larger packets are discarded and answered E01. */
#define RSP_MAX_PACKET 0x4000

enum rsp_event {
	RSP_EV_NONE,       /* byte consumed, nothing complete yet */
	RSP_EV_PACKET,     /* a whole packet with a good checksum is in payload */
	RSP_EV_BAD_CHECKSUM, /* a whole packet arrived with a wrong checksum */
	RSP_EV_OVERSIZED,  /* a whole packet arrived but exceeded RSP_MAX_PACKET */
	RSP_EV_ACK,        /* '+' */
	RSP_EV_NAK,        /* '-' */
	RSP_EV_INTERRUPT,  /* 0x03 outside a packet: gdb's Ctrl-C */
};

struct rsp_reader {
	int state;         /* private */
	uint8_t sum;       /* running checksum of the payload bytes */
	int csum_hi;       /* private */
	size_t len;        /* payload bytes so far (raw: escapes are kept) */
	bool overflow;
	char payload[RSP_MAX_PACKET + 1]; /* NUL-terminated once complete */
};

void rsp_reader_init(struct rsp_reader *r);
/* Feed one byte. Returns the event it completes. After RSP_EV_PACKET the
 * payload (raw, with '}' escapes still in place) is r->payload[0..r->len). */
enum rsp_event rsp_reader_feed(struct rsp_reader *r, uint8_t byte);
/* True between a '$' and the end of its checksum. */
bool rsp_reader_in_packet(const struct rsp_reader *r);

/* Frame payload as $payload#cs into out (appended). Payload is sent as given:
 * callers that send binary data escape it first with rsp_escape_binary. */
void rsp_frame(struct strbuf *out, const void *payload, size_t n);

/* Escape binary data for a reply: '#', '$', '}' and '*' become '}' x^0x20. */
void rsp_escape_binary(struct strbuf *out, const void *data, size_t n);
/* Undo '}' escapes in place (X and vFile:pwrite payloads). Returns the new
 * length, or (size_t)-1 if the data ends in a lone '}'. */
size_t rsp_unescape_binary(char *data, size_t n);

/* A connection to gdb. */
struct rsp_conn {
	int rfd, wfd;
	bool noack;        /* after QStartNoAckMode */
	bool closed;       /* peer went away (EOF or error) */
	uint8_t inbuf[4096];
	size_t inpos, inlen;
	struct rsp_reader reader;
	struct strbuf out; /* scratch for framing */
	/* private: an rsp_event (packet, oversized packet or interrupt) that
	 * arrived while rsp_conn_send waited for an ack; the next rsp_conn_recv
	 * hands it out. */
	int pending;
};

void rsp_conn_init(struct rsp_conn *c, int rfd, int wfd);
void rsp_conn_destroy(struct rsp_conn *c);   /* does not close the fds */

enum rsp_recv {
	RSP_RECV_PACKET,    /* *pkt and *len point into c->reader.payload */
	RSP_RECV_INTERRUPT, /* Ctrl-C */
	RSP_RECV_TIMEOUT,   /* nothing complete within timeout_ms */
	RSP_RECV_CLOSED,    /* connection closed or failed */
};
/* Wait up to timeout_ms (-1 = forever, 0 = only what is already readable)
 * for the next packet or interrupt. Acks ('+'/'-') are sent for received
 * packets while ack mode is on; bad checksums are NAKed and skipped;
 * oversized packets are answered E01 and skipped. In no-ack mode nobody
 * would resend, so a packet with a bad checksum is delivered (as gdbserver
 * does). *pkt stays valid until the next rsp_conn_recv; sending replies in
 * between does not disturb it. */
enum rsp_recv rsp_conn_recv(struct rsp_conn *c, const char **pkt, size_t *len,
			    int timeout_ms);
/* True if unread bytes (or a packet or interrupt that arrived while waiting
 * for an ack) are already buffered: poll() on rfd would miss them. */
bool rsp_conn_has_buffered(const struct rsp_conn *c);
/* Send one packet; in ack mode wait for '+' and resend on '-'.
 * Returns 0, or -1 if the connection is closed. */
int rsp_conn_send(struct rsp_conn *c, const void *payload, size_t n);
int rsp_conn_send_str(struct rsp_conn *c, const char *s);
/* Send a notification ("%Stop:T05...#cs" in non-stop mode): framed as a
 * packet but with '%', and gdb sends no ack for it. 0, or -1 if closed. */
int rsp_conn_notify(struct rsp_conn *c, const char *payload, size_t n);

#endif
