/* Unit tests of the remote serial protocol: the pure packet reader, framing
 * and escaping, and struct rsp_conn over a socketpair (the test plays gdb). */
#include "ptrev/rsp.h"

#include <errno.h>
#include <signal.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

/* ---- reader ---------------------------------------------------------- */

/* Feed n bytes; collect the events that are not RSP_EV_NONE into evs (as
 * characters: P packet, C bad checksum, O oversized, + ack, - nak, I
 * interrupt) and the payloads of packets, '|'-separated, into payloads. */
static void feed_all(struct rsp_reader *r, const void *data, size_t n,
		     char *evs, size_t evlen, struct strbuf *payloads)
{
	const uint8_t *p = data;
	size_t e = 0;
	for (size_t i = 0; i < n; i++) {
		char c = 0;
		switch (rsp_reader_feed(r, p[i])) {
		case RSP_EV_NONE: break;
		case RSP_EV_PACKET:
			c = 'P';
			CHECK(r->payload[r->len] == '\0');
			if (payloads) {
				strbuf_append(payloads, r->payload, r->len);
				strbuf_putc(payloads, '|');
			}
			break;
		case RSP_EV_BAD_CHECKSUM: c = 'C'; break;
		case RSP_EV_OVERSIZED: c = 'O'; break;
		case RSP_EV_ACK: c = '+'; break;
		case RSP_EV_NAK: c = '-'; break;
		case RSP_EV_INTERRUPT: c = 'I'; break;
		}
		if (c && e + 1 < evlen)
			evs[e++] = c;
	}
	evs[e] = '\0';
}

static struct rsp_reader reader; /* big: keep it off the stack */

static void expect_events(const char *input, size_t n, const char *want_evs,
			  const char *want_payloads)
{
	char evs[64];
	struct strbuf pl = STRBUF_INIT;
	rsp_reader_init(&reader);
	feed_all(&reader, input, n, evs, sizeof evs, &pl);
	if (strcmp(evs, want_evs) != 0 ||
	    strcmp(strbuf_str(&pl), want_payloads) != 0) {
		fprintf(stderr, "input %.*s: events '%s' payloads '%s', want '%s' '%s'\n",
			(int)n, input, evs, strbuf_str(&pl), want_evs, want_payloads);
		failures++;
	}
	strbuf_free(&pl);
}

#define EXPECT(lit, evs, payloads) expect_events(lit, sizeof(lit) - 1, evs, payloads)

static void test_reader_basic(void)
{
	EXPECT("$#00", "P", "|");
	EXPECT("$g#67", "P", "g|");
	EXPECT("$qSupported#37", "P", "qSupported|");
	/* Checksum digits in either case. */
	EXPECT("$vMustReplyEmpty#3A", "P", "vMustReplyEmpty|");
	EXPECT("+$vMustReplyEmpty#3a", "+P", "vMustReplyEmpty|");
	/* Acks, NAKs and interrupts between packets; other noise ignored. */
	EXPECT("+-\x03", "+-I", "");
	EXPECT("xyz\n+\r", "+", "");
	EXPECT("$g#67\x03$c#63", "PIP", "g|c|");
	/* Bad checksums: wrong value, non-hex digits. */
	EXPECT("$g#68", "C", "");
	EXPECT("$g#zz", "C", "");
	EXPECT("$g#68$g#67", "CP", "g|");
	/* 0x03, '+' and '-' inside a packet are payload bytes. */
	EXPECT("$a\x03+-#bc", "P", "a\x03+-|");
	/* gdb's resync: '$' mid-packet (or mid-checksum) starts over. */
	EXPECT("$garbage$g#67", "P", "g|");
	EXPECT("$m0,4#$g#67", "P", "g|");
	EXPECT("$m0,4#f$g#67", "P", "g|");
	/* Escapes and '*' are kept raw: only binary handlers undo them. */
	EXPECT("$X0,1:}]#f9", "P", "X0,1:}]|");
}

/* Feed the same stream whole and byte by byte across separate calls:
 * the reader must keep its state between calls. */
static void test_reader_split(void)
{
	const char *stream = "+$m401000,40#22$c#63-";
	char evs[16];
	struct strbuf pl = STRBUF_INIT;
	rsp_reader_init(&reader);
	char all[64] = "";
	for (size_t i = 0; i < strlen(stream); i++) {
		feed_all(&reader, stream + i, 1, evs, sizeof evs, &pl);
		strcat(all, evs);
	}
	CHECK(strcmp(all, "+PP-") == 0);
	CHECK(strcmp(strbuf_str(&pl), "m401000,40|c|") == 0);

	/* Split at every position into two feeds. */
	for (size_t cut = 0; cut <= strlen(stream); cut++) {
		char e1[16], e2[16];
		strbuf_reset(&pl);
		rsp_reader_init(&reader);
		feed_all(&reader, stream, cut, e1, sizeof e1, &pl);
		feed_all(&reader, stream + cut, strlen(stream) - cut, e2, sizeof e2, &pl);
		char both[40];
		snprintf(both, sizeof both, "%s%s", e1, e2);
		CHECK(strcmp(both, "+PP-") == 0);
		CHECK(strcmp(strbuf_str(&pl), "m401000,40|c|") == 0);
	}
	strbuf_free(&pl);
}

static void test_reader_oversized(void)
{
	struct strbuf s = STRBUF_INIT;
	/* Exactly RSP_MAX_PACKET bytes is fine. */
	struct strbuf big = STRBUF_INIT;
	for (int i = 0; i < RSP_MAX_PACKET; i++)
		strbuf_putc(&big, 'a');
	rsp_frame(&s, big.data, big.len);
	char evs[16];
	rsp_reader_init(&reader);
	feed_all(&reader, s.data, s.len, evs, sizeof evs, NULL);
	CHECK(strcmp(evs, "P") == 0);
	CHECK(reader.len == RSP_MAX_PACKET);

	/* One byte more: consumed to its end, reported, and the reader goes on
	 * with the next packet. */
	strbuf_putc(&big, 'a');
	strbuf_reset(&s);
	rsp_frame(&s, big.data, big.len);
	strbuf_puts(&s, "\x03$g#67");
	rsp_reader_init(&reader);
	struct strbuf pl = STRBUF_INIT;
	feed_all(&reader, s.data, s.len, evs, sizeof evs, &pl);
	CHECK(strcmp(evs, "OIP") == 0);
	CHECK(strcmp(strbuf_str(&pl), "g|") == 0);

	/* Oversized with a damaged checksum: the checksum error wins. */
	strbuf_reset(&s);
	rsp_frame(&s, big.data, big.len);
	s.data[s.len - 1] ^= 1;
	rsp_reader_init(&reader);
	feed_all(&reader, s.data, s.len, evs, sizeof evs, NULL);
	CHECK(strcmp(evs, "C") == 0);
	strbuf_free(&s);
	strbuf_free(&big);
	strbuf_free(&pl);
}

/* ---- framing and escaping -------------------------------------------- */

static void test_frame(void)
{
	struct strbuf s = STRBUF_INIT;
	rsp_frame(&s, "OK", 2);
	CHECK(strcmp(strbuf_str(&s), "$OK#9a") == 0);
	strbuf_reset(&s);
	rsp_frame(&s, "", 0);
	CHECK(strcmp(strbuf_str(&s), "$#00") == 0);
	strbuf_reset(&s);
	/* The checksum wraps modulo 256 and is two lowercase digits. */
	rsp_frame(&s, "\xff\xff", 2);
	CHECK(s.len == 6 && memcmp(s.data, "$\xff\xff#fe", 6) == 0);
	/* Appends. */
	strbuf_reset(&s);
	strbuf_putc(&s, '+');
	rsp_frame(&s, "E01", 3);
	CHECK(strcmp(strbuf_str(&s), "+$E01#a6") == 0);
	strbuf_free(&s);
}

static void test_escape(void)
{
	struct strbuf s = STRBUF_INIT;
	const char raw[] = "a#b$c}d*e\x03";
	rsp_escape_binary(&s, raw, sizeof raw - 1);
	CHECK(s.len == 14);
	CHECK(memcmp(s.data, "a}\x03" "b}\x04" "c}]d}\x0a" "e\x03", 14) == 0);

	/* Round trip of every byte value. */
	uint8_t all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (uint8_t)i;
	strbuf_reset(&s);
	rsp_escape_binary(&s, all, sizeof all);
	CHECK(s.len == 256 + 4);
	CHECK(memchr(s.data, '$', s.len) == NULL);
	CHECK(memchr(s.data, '#', s.len) == NULL);
	CHECK(memchr(s.data, '*', s.len) == NULL);
	size_t n = rsp_unescape_binary(s.data, s.len);
	CHECK(n == 256 && memcmp(s.data, all, 256) == 0);

	/* Through a framed packet and the reader, as an X packet travels. */
	strbuf_reset(&s);
	struct strbuf esc = STRBUF_INIT;
	strbuf_puts(&esc, "X1000,100:");
	rsp_escape_binary(&esc, all, sizeof all);
	rsp_frame(&s, esc.data, esc.len);
	char evs[8];
	rsp_reader_init(&reader);
	feed_all(&reader, s.data, s.len, evs, sizeof evs, NULL);
	CHECK(strcmp(evs, "P") == 0);
	CHECK(reader.len == esc.len && memcmp(reader.payload, esc.data, esc.len) == 0);
	n = rsp_unescape_binary(reader.payload + 10, reader.len - 10);
	CHECK(n == 256 && memcmp(reader.payload + 10, all, 256) == 0);

	/* A lone '}' at the end is an error; an empty input is fine. */
	char bad[] = "ab}";
	CHECK(rsp_unescape_binary(bad, 3) == (size_t)-1);
	CHECK(rsp_unescape_binary(bad, 0) == 0);
	char esc_brace[] = "}]}]";
	CHECK(rsp_unescape_binary(esc_brace, 4) == 2 && memcmp(esc_brace, "}}", 2) == 0);
	strbuf_free(&s);
	strbuf_free(&esc);
}

/* ---- connection over a socketpair ------------------------------------ */

struct pair {
	int gdb;              /* the test's end: plays gdb */
	int fd;               /* the server's end */
	struct rsp_conn *c;
};

static struct rsp_conn conn; /* big: keep it off the stack */

static void pair_open(struct pair *p)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		perror("socketpair");
		exit(1);
	}
	p->gdb = sv[0];
	p->fd = sv[1];
	p->c = &conn;
	rsp_conn_init(p->c, p->fd, p->fd);
}

static void pair_close(struct pair *p)
{
	rsp_conn_destroy(p->c);
	if (p->gdb >= 0)
		close(p->gdb);
	close(p->fd);
}

static void gdb_write(struct pair *p, const char *s)
{
	size_t n = strlen(s);
	if (write(p->gdb, s, n) != (ssize_t)n) {
		perror("write");
		exit(1);
	}
}

static void gdb_write_packet(struct pair *p, const char *payload)
{
	struct strbuf s = STRBUF_INIT;
	rsp_frame(&s, payload, strlen(payload));
	gdb_write(p, s.data);
	strbuf_free(&s);
}

/* Everything the server has written so far (waits briefly for it). */
static void gdb_read_all(struct pair *p, struct strbuf *out)
{
	strbuf_reset(out);
	char buf[4096];
	struct pollfd pfd = {.fd = p->gdb, .events = POLLIN};
	while (poll(&pfd, 1, 50) > 0) {
		ssize_t r = read(p->gdb, buf, sizeof buf);
		if (r <= 0)
			break;
		strbuf_append(out, buf, (size_t)r);
	}
}

static bool recv_packet(struct pair *p, const char *want, int timeout_ms)
{
	const char *pkt;
	size_t len;
	enum rsp_recv r = rsp_conn_recv(p->c, &pkt, &len, timeout_ms);
	if (r != RSP_RECV_PACKET) {
		fprintf(stderr, "recv: got %d, want packet '%s'\n", r, want);
		return false;
	}
	if (len != strlen(want) || memcmp(pkt, want, len) != 0 || pkt[len] != '\0') {
		fprintf(stderr, "recv: got '%.*s', want '%s'\n", (int)len, pkt, want);
		return false;
	}
	return true;
}

static enum rsp_recv recv_any(struct pair *p, int timeout_ms)
{
	const char *pkt;
	size_t len;
	return rsp_conn_recv(p->c, &pkt, &len, timeout_ms);
}

static void test_conn_ack_mode(void)
{
	struct pair p;
	struct strbuf seen = STRBUF_INIT;
	pair_open(&p);

	/* gdb's opening '+' is ignored; the packet is acked. */
	gdb_write(&p, "+$qSupported:swbreak+#8b");
	CHECK(recv_packet(&p, "qSupported:swbreak+", 1000));
	gdb_read_all(&p, &seen);
	CHECK(strcmp(strbuf_str(&seen), "+") == 0);

	/* A reply waits for the '+' (already queued here). */
	gdb_write(&p, "+");
	CHECK(rsp_conn_send_str(p.c, "OK") == 0);
	gdb_read_all(&p, &seen);
	CHECK(strcmp(strbuf_str(&seen), "$OK#9a") == 0);

	/* Resend on '-'. */
	gdb_write(&p, "-+");
	CHECK(rsp_conn_send_str(p.c, "S05") == 0);
	gdb_read_all(&p, &seen);
	CHECK(strcmp(strbuf_str(&seen), "$S05#b8$S05#b8") == 0);

	/* A bad checksum is NAKed and skipped; the resent packet gets through. */
	gdb_write(&p, "$g#00$g#67");
	CHECK(recv_packet(&p, "g", 1000));
	gdb_read_all(&p, &seen);
	CHECK(strcmp(strbuf_str(&seen), "-+") == 0);

	/* Bytes that arrive with a packet are kept for the next call. */
	gdb_write(&p, "$m0,1#fa$c#63\x03");
	CHECK(recv_packet(&p, "m0,1", 1000));
	CHECK(rsp_conn_has_buffered(p.c));
	CHECK(recv_packet(&p, "c", 0));
	CHECK(recv_any(&p, 0) == RSP_RECV_INTERRUPT);
	CHECK(!rsp_conn_has_buffered(p.c));
	CHECK(recv_any(&p, 0) == RSP_RECV_TIMEOUT);
	gdb_read_all(&p, &seen);
	CHECK(strcmp(strbuf_str(&seen), "++") == 0);

	/* The payload pointer survives sending a reply. */
	gdb_write(&p, "$vCont;c#a8");
	const char *pkt;
	size_t len;
	CHECK(rsp_conn_recv(p.c, &pkt, &len, 1000) == RSP_RECV_PACKET);
	gdb_write(&p, "+");
	CHECK(rsp_conn_send_str(p.c, "T05") == 0);
	CHECK(len == 7 && memcmp(pkt, "vCont;c", 7) == 0);
	gdb_read_all(&p, &seen);

	/* QStartNoAckMode as the server does it: reply OK in ack mode, then
	 * stop acking. gdb acks the OK; a later stray '+' is ignored. */
	gdb_write_packet(&p, "QStartNoAckMode");
	CHECK(recv_packet(&p, "QStartNoAckMode", 1000));
	gdb_write(&p, "+");
	CHECK(rsp_conn_send_str(p.c, "OK") == 0);
	p.c->noack = true;
	gdb_read_all(&p, &seen);
	CHECK(strcmp(strbuf_str(&seen), "+$OK#9a") == 0);
	gdb_write(&p, "+$g#67");
	CHECK(recv_packet(&p, "g", 1000));
	gdb_read_all(&p, &seen);
	CHECK(seen.len == 0);

	strbuf_free(&seen);
	pair_close(&p);
}

static void test_conn_noack_mode(void)
{
	struct pair p;
	struct strbuf seen = STRBUF_INIT;
	pair_open(&p);
	p.c->noack = true;

	gdb_write(&p, "$g#67");
	CHECK(recv_packet(&p, "g", 1000));
	/* No ack wait: send returns with nothing from gdb. */
	CHECK(rsp_conn_send_str(p.c, "OK") == 0);
	gdb_read_all(&p, &seen);
	CHECK(strcmp(strbuf_str(&seen), "$OK#9a") == 0);

	/* A bad checksum is delivered (nobody would resend), not NAKed. */
	gdb_write(&p, "$g#00");
	CHECK(recv_packet(&p, "g", 1000));
	gdb_read_all(&p, &seen);
	CHECK(seen.len == 0);

	/* Oversized: E01 and the session goes on. */
	struct strbuf big = STRBUF_INIT, framed = STRBUF_INIT;
	strbuf_putc(&big, 'X');
	for (int i = 0; i < RSP_MAX_PACKET + 100; i++)
		strbuf_putc(&big, '0');
	rsp_frame(&framed, big.data, big.len);
	gdb_write(&p, framed.data);
	gdb_write(&p, "$g#67");
	CHECK(recv_packet(&p, "g", 1000));
	gdb_read_all(&p, &seen);
	CHECK(strcmp(strbuf_str(&seen), "$E01#a6") == 0);
	strbuf_free(&big);
	strbuf_free(&framed);

	strbuf_free(&seen);
	pair_close(&p);
}

static void test_conn_oversized_ack_mode(void)
{
	struct pair p;
	struct strbuf seen = STRBUF_INIT;
	pair_open(&p);

	struct strbuf big = STRBUF_INIT, framed = STRBUF_INIT;
	for (int i = 0; i < RSP_MAX_PACKET * 2; i++)
		strbuf_putc(&big, 'q');
	rsp_frame(&framed, big.data, big.len);
	gdb_write(&p, framed.data);
	/* gdb acks our E01, then goes on. */
	gdb_write(&p, "+$g#67");
	CHECK(recv_packet(&p, "g", 1000));
	gdb_read_all(&p, &seen);
	CHECK(strcmp(strbuf_str(&seen), "+$E01#a6+") == 0);
	strbuf_free(&big);
	strbuf_free(&framed);
	strbuf_free(&seen);
	pair_close(&p);
}

/* What arrives while a reply waits for its ack is not lost. */
static void test_conn_events_during_ack_wait(void)
{
	struct pair p;
	struct strbuf seen = STRBUF_INIT;
	pair_open(&p);

	/* Ctrl-C races the stop reply: kept, and the ack still awaited. */
	gdb_write(&p, "\x03+");
	CHECK(rsp_conn_send_str(p.c, "T05") == 0);
	CHECK(rsp_conn_has_buffered(p.c));
	CHECK(recv_any(&p, 0) == RSP_RECV_INTERRUPT);
	CHECK(recv_any(&p, 0) == RSP_RECV_TIMEOUT);
	gdb_read_all(&p, &seen);

	/* A packet gdb had half sent when we replied: completed, acked at
	 * once (gdb waits for that ack before acking us), handed out later. */
	gdb_write(&p, "$m12");
	CHECK(recv_any(&p, 0) == RSP_RECV_TIMEOUT);
	gdb_write(&p, "34,2#");
	gdb_write(&p, "95+");
	CHECK(rsp_conn_send_str(p.c, "S05") == 0);
	gdb_read_all(&p, &seen);
	CHECK(strcmp(strbuf_str(&seen), "$S05#b8+") == 0);
	CHECK(rsp_conn_has_buffered(p.c));
	CHECK(recv_packet(&p, "m1234,2", 0));
	gdb_read_all(&p, &seen);
	CHECK(seen.len == 0); /* acked once only */

	/* A new packet instead of an ack: gdb has moved on. */
	gdb_write(&p, "$g#67");
	CHECK(rsp_conn_send_str(p.c, "OK") == 0);
	CHECK(recv_packet(&p, "g", 0));
	gdb_read_all(&p, &seen);
	CHECK(strcmp(strbuf_str(&seen), "$OK#9a+") == 0);

	strbuf_free(&seen);
	pair_close(&p);
}

static long elapsed_ms(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

static void test_conn_timeout(void)
{
	struct pair p;
	pair_open(&p);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(recv_any(&p, 100) == RSP_RECV_TIMEOUT);
	long ms = elapsed_ms(&t0);
	CHECK(ms >= 90 && ms < 2000);

	/* A partial packet then a timeout; the rest completes it. */
	gdb_write(&p, "$qAtt");
	CHECK(recv_any(&p, 20) == RSP_RECV_TIMEOUT);
	gdb_write(&p, "ached#8f");
	CHECK(recv_packet(&p, "qAttached", 20));

	/* timeout 0 only polls. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(recv_any(&p, 0) == RSP_RECV_TIMEOUT);
	CHECK(elapsed_ms(&t0) < 50);
	pair_close(&p);
}

static void test_conn_closed(void)
{
	struct pair p;
	pair_open(&p);
	/* A last packet before the peer closes is still delivered. */
	gdb_write(&p, "$k#6b");
	close(p.gdb);
	p.gdb = -1;
	CHECK(recv_packet(&p, "k", 1000));
	CHECK(recv_any(&p, 1000) == RSP_RECV_CLOSED);
	CHECK(p.c->closed);
	CHECK(recv_any(&p, -1) == RSP_RECV_CLOSED);
	/* Writing to a closed socket: an error, not SIGPIPE. */
	CHECK(rsp_conn_send_str(p.c, "OK") == -1);
	pair_close(&p);

	/* Peer closes while a reply waits for its ack. */
	pair_open(&p);
	close(p.gdb);
	p.gdb = -1;
	CHECK(rsp_conn_send_str(p.c, "OK") == -1);
	CHECK(p.c->closed);
	pair_close(&p);

	/* Peer closes after reading our reply but before acking it. */
	pair_open(&p);
	shutdown(p.gdb, SHUT_WR);
	CHECK(rsp_conn_send_str(p.c, "OK") == -1);
	CHECK(recv_any(&p, 0) == RSP_RECV_CLOSED);
	pair_close(&p);
}

/* --stdio talks over pipes, which are not sockets. */
static void test_conn_pipes(void)
{
	int to_srv[2], from_srv[2];
	if (pipe(to_srv) < 0 || pipe(from_srv) < 0) {
		perror("pipe");
		exit(1);
	}
	rsp_conn_init(&conn, to_srv[0], from_srv[1]);
	CHECK(write(to_srv[1], "$g#67+", 6) == 6);
	CHECK(rsp_conn_recv(&conn, &(const char *){0}, &(size_t){0}, 1000) ==
	      RSP_RECV_PACKET);
	CHECK(rsp_conn_send_str(&conn, "OK") == 0);
	char buf[16] = "";
	CHECK(read(from_srv[0], buf, sizeof buf - 1) == 7);
	CHECK(strcmp(buf, "+$OK#9a") == 0);
	close(to_srv[1]);
	CHECK(rsp_conn_recv(&conn, &(const char *){0}, &(size_t){0}, 1000) ==
	      RSP_RECV_CLOSED);
	/* Reader gone: EPIPE (SIGPIPE ignored, as the server does). */
	close(from_srv[0]);
	conn.closed = false;
	signal(SIGPIPE, SIG_IGN);
	CHECK(rsp_conn_send_str(&conn, "OK") == -1);
	signal(SIGPIPE, SIG_DFL);
	rsp_conn_destroy(&conn);
	close(to_srv[0]);
	close(from_srv[1]);
}

int main(void)
{
	/* SIGPIPE stays fatal here: socket writes must not raise it. */
	test_reader_basic();
	test_reader_split();
	test_reader_oversized();
	test_frame();
	test_escape();
	test_conn_ack_mode();
	test_conn_noack_mode();
	test_conn_oversized_ack_mode();
	test_conn_events_during_ack_wait();
	test_conn_timeout();
	test_conn_closed();
	test_conn_pipes();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("all rsp checks passed\n");
	return 0;
}
