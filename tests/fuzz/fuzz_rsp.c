/* libFuzzer harness for everything that parses bytes from gdb: the packet
 * reader, binary unescaping, hex parsing, and framing round trips.
 * Built and run by run_fuzz.sh; any crash, sanitizer report or failed
 * invariant (abort) is a finding.
 *
 * Further targets link in by defining one of the weak hooks below (e.g. the
 * server's packet dispatcher, gdb_server_fuzz_one): add its source files to
 * EXTRA_SOURCES in run_fuzz.sh and it runs on every input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/hex.h"
#include "ptrev/rsp.h"
#include "ptrev/strbuf.h"

/* Optional targets, called only when linked in. */
void gdb_server_fuzz_one(const uint8_t *data, size_t n) __attribute__((weak));

#define REQUIRE(cond)                                                       \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond,   \
				__FILE__, __LINE__);                        \
			abort();                                            \
		}                                                           \
	} while (0)

static struct rsp_reader reader;

static uint8_t checksum(const char *p, size_t n)
{
	uint8_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum = (uint8_t)(sum + (uint8_t)p[i]);
	return sum;
}

/* A reader that has just taken RSP_MAX_PACKET payload bytes: one more and
 * the packet is oversized. Built once; copying it is far cheaper than
 * feeding 16 KiB on every input. */
static const struct rsp_reader *full_reader(void)
{
	static struct rsp_reader full;
	static int ready;
	if (!ready) {
		rsp_reader_init(&full);
		rsp_reader_feed(&full, '$');
		for (int i = 0; i < RSP_MAX_PACKET; i++)
			rsp_reader_feed(&full, 'a');
		REQUIRE(full.len == RSP_MAX_PACKET && !full.overflow);
		ready = 1;
	}
	return &full;
}

/* Arbitrary bytes through the reader, from a given state: every event must
 * leave it in a sane state, and every accepted packet must really carry a
 * good checksum. */
static void fuzz_reader(const struct rsp_reader *start, const uint8_t *data,
			size_t n)
{
	if (start)
		memcpy(&reader, start, sizeof reader);
	else
		rsp_reader_init(&reader);
	for (size_t i = 0; i < n; i++) {
		enum rsp_event ev = rsp_reader_feed(&reader, data[i]);
		REQUIRE(reader.len <= RSP_MAX_PACKET);
		if (ev == RSP_EV_PACKET) {
			REQUIRE(reader.payload[reader.len] == '\0');
			REQUIRE(!reader.overflow);
			REQUIRE(memchr(reader.payload, '$', reader.len) == NULL);
			REQUIRE(memchr(reader.payload, '#', reader.len) == NULL);
			/* data[i-1], data[i] are the checksum digits: the
			 * shortest packet is "$#xx", or "#xx" after start. */
			REQUIRE(i >= (start ? 2u : 3u));
			int hi = hex_digit(data[i - 1]), lo = hex_digit(data[i]);
			REQUIRE(hi >= 0 && lo >= 0);
			REQUIRE(checksum(reader.payload, reader.len) == (uint8_t)(hi << 4 | lo));
		}
		if (ev != RSP_EV_NONE)
			REQUIRE(!rsp_reader_in_packet(&reader));
	}
}

/* The input (less '$' and '#') as the tail of a packet that already holds
 * RSP_MAX_PACKET bytes: consumed to its end, reported oversized if any byte
 * was left, and the next packet comes through. */
static void fuzz_oversized(const uint8_t *data, size_t n)
{
	memcpy(&reader, full_reader(), sizeof reader);
	uint8_t sum = reader.sum;
	size_t extra = 0;
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '$' || data[i] == '#')
			continue;
		REQUIRE(rsp_reader_feed(&reader, data[i]) == RSP_EV_NONE);
		sum = (uint8_t)(sum + data[i]);
		extra++;
	}
	REQUIRE(reader.len == RSP_MAX_PACKET && reader.overflow == (extra > 0));
	static const char digits[] = "0123456789abcdef";
	REQUIRE(rsp_reader_feed(&reader, '#') == RSP_EV_NONE);
	REQUIRE(rsp_reader_feed(&reader, (uint8_t)digits[sum >> 4]) == RSP_EV_NONE);
	enum rsp_event ev = rsp_reader_feed(&reader, (uint8_t)digits[sum & 15]);
	REQUIRE(ev == (extra ? RSP_EV_OVERSIZED : RSP_EV_PACKET));
	const char next[] = "$g#67";
	for (size_t i = 0; i < sizeof next - 1; i++)
		ev = rsp_reader_feed(&reader, (uint8_t)next[i]);
	REQUIRE(ev == RSP_EV_PACKET && reader.len == 1 && reader.payload[0] == 'g');
}

/* Unescaping never grows the data and never reads past it. */
static void fuzz_unescape(const uint8_t *data, size_t n)
{
	char *copy = malloc(n ? n : 1);
	REQUIRE(copy);
	memcpy(copy, data, n);
	size_t m = rsp_unescape_binary(copy, n);
	REQUIRE(m == (size_t)-1 || m <= n);
	free(copy);
}

/* Hex parsing on exactly the bytes given (no terminator to lean on). */
static void fuzz_hex(const uint8_t *data, size_t n)
{
	char *copy = malloc(n ? n : 1);
	REQUIRE(copy);
	memcpy(copy, data, n);
	const char *p = copy, *end = copy + n;
	/* Walk the input as the packet handlers do: numbers and separators. */
	while (p < end) {
		uint64_t v;
		const char *before = p;
		if (hex_parse_u64(&p, end, &v)) {
			REQUIRE(p > before && p <= end && p - before <= 16);
		} else {
			REQUIRE(p == before);
			p++;
		}
	}
	size_t half = n / 2;
	uint8_t *bytes = malloc(half ? half : 1);
	REQUIRE(bytes);
	if (hex_decode(copy, half, bytes)) {
		/* Decoding then encoding gives the digits back, lowercased. */
		char *again = malloc(2 * half + 1);
		REQUIRE(again);
		hex_encode(bytes, half, again);
		for (size_t i = 0; i < 2 * half; i++)
			REQUIRE(hex_digit((unsigned char)again[i]) ==
				hex_digit((unsigned char)copy[i]));
		free(again);
	}
	free(bytes);
	free(copy);
}

/* Escape, frame, read back, unescape: must give the input back. */
static void fuzz_round_trip(const uint8_t *data, size_t n)
{
	struct strbuf esc = STRBUF_INIT, pkt = STRBUF_INIT;
	rsp_escape_binary(&esc, data, n);
	if (esc.len > RSP_MAX_PACKET) {
		strbuf_free(&esc);
		return;
	}
	/* Noise, an ack and an interrupt before the packet are not part of it. */
	strbuf_puts(&pkt, "x+\x03");
	rsp_frame(&pkt, esc.data, esc.len);
	rsp_reader_init(&reader);
	int packets = 0;
	for (size_t i = 0; i < pkt.len; i++) {
		enum rsp_event ev = rsp_reader_feed(&reader, (uint8_t)pkt.data[i]);
		REQUIRE(ev != RSP_EV_BAD_CHECKSUM && ev != RSP_EV_OVERSIZED);
		if (ev == RSP_EV_PACKET) {
			packets++;
			REQUIRE(i == pkt.len - 1);
		}
	}
	REQUIRE(packets == 1);
	REQUIRE(reader.len == esc.len &&
		(esc.len == 0 || memcmp(reader.payload, esc.data, esc.len) == 0));
	size_t m = rsp_unescape_binary(reader.payload, reader.len);
	REQUIRE(m == n && (n == 0 || memcmp(reader.payload, data, n) == 0));
	strbuf_free(&esc);
	strbuf_free(&pkt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	fuzz_reader(NULL, data, n);
	fuzz_reader(full_reader(), data, n);
	fuzz_oversized(data, n);
	fuzz_unescape(data, n);
	fuzz_hex(data, n);
	fuzz_round_trip(data, n);
	if (gdb_server_fuzz_one)
		gdb_server_fuzz_one(data, n);
	return 0;
}
