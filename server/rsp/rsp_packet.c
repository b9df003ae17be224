/* The pure part of the remote serial protocol: a byte-at-a-time packet
 * reader, framing and binary escaping. No I/O here, so all of it can be
 * unit-tested and fuzzed. */
#include "ptrev/rsp.h"

#include "ptrev/hex.h"

enum reader_state {
	ST_IDLE = 0,  /* between packets: acks, interrupts, stray bytes */
	ST_PAYLOAD,   /* after '$', collecting payload bytes until '#' */
	ST_CSUM1,     /* after '#', waiting for the first checksum digit */
	ST_CSUM2,     /* waiting for the second checksum digit */
};

void rsp_reader_init(struct rsp_reader *r)
{
	r->state = ST_IDLE;
	r->sum = 0;
	r->csum_hi = 0;
	r->len = 0;
	r->overflow = false;
	r->payload[0] = '\0';
}

bool rsp_reader_in_packet(const struct rsp_reader *r)
{
	return r->state != ST_IDLE;
}

static void start_packet(struct rsp_reader *r)
{
	r->state = ST_PAYLOAD;
	r->sum = 0;
	r->csum_hi = 0;
	r->len = 0;
	r->overflow = false;
}

static enum rsp_event finish_packet(struct rsp_reader *r, int csum_lo)
{
	bool good = r->csum_hi >= 0 && csum_lo >= 0 &&
		    (uint8_t)(r->csum_hi << 4 | csum_lo) == r->sum;
	r->state = ST_IDLE;
	r->payload[r->len] = '\0';
	/* A checksum error says the bytes are damaged, so it wins: gdb resends
	 * and only then do we know whether the packet really is too large. */
	if (!good)
		return RSP_EV_BAD_CHECKSUM;
	if (r->overflow)
		return RSP_EV_OVERSIZED;
	return RSP_EV_PACKET;
}

enum rsp_event rsp_reader_feed(struct rsp_reader *r, uint8_t byte)
{
	switch (r->state) {
	case ST_IDLE:
		switch (byte) {
		case '$':
			start_packet(r);
			return RSP_EV_NONE;
		case '+':
			return RSP_EV_ACK;
		case '-':
			return RSP_EV_NAK;
		case 0x03:
			return RSP_EV_INTERRUPT;
		default:
			return RSP_EV_NONE; /* line noise between packets */
		}
	case ST_PAYLOAD:
		if (byte == '#') {
			r->state = ST_CSUM1;
			return RSP_EV_NONE;
		}
		if (byte == '$') {
			/* '$' cannot occur raw inside a payload (binary data
			 * escapes it), so it means the sender gave up on the
			 * previous packet and started again: resynchronise. */
			start_packet(r);
			return RSP_EV_NONE;
		}
		r->sum = (uint8_t)(r->sum + byte);
		/* Payloads are kept raw: '}' escapes and '*' are only
		 * meaningful to the packet handlers that expect binary data. */
		if (r->len < RSP_MAX_PACKET)
			r->payload[r->len++] = (char)byte;
		else
			r->overflow = true; /* keep consuming up to '#' */
		return RSP_EV_NONE;
	case ST_CSUM1:
		if (byte == '$') {
			start_packet(r);
			return RSP_EV_NONE;
		}
		r->csum_hi = hex_digit(byte);
		r->state = ST_CSUM2;
		return RSP_EV_NONE;
	case ST_CSUM2:
		if (byte == '$') {
			start_packet(r);
			return RSP_EV_NONE;
		}
		return finish_packet(r, hex_digit(byte));
	}
	/* Unreachable unless the private state was corrupted: start over. */
	rsp_reader_init(r);
	return RSP_EV_NONE;
}

void rsp_frame(struct strbuf *out, const void *payload, size_t n)
{
	const uint8_t *p = payload;
	uint8_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum = (uint8_t)(sum + p[i]);
	strbuf_putc(out, '$');
	strbuf_append(out, payload, n);
	strbuf_putc(out, '#');
	strbuf_hex(out, &sum, 1);
}

static bool needs_escape(uint8_t b)
{
	return b == '#' || b == '$' || b == '}' || b == '*';
}

void rsp_escape_binary(struct strbuf *out, const void *data, size_t n)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < n; i++) {
		if (needs_escape(p[i])) {
			strbuf_putc(out, '}');
			strbuf_putc(out, (char)(p[i] ^ 0x20));
		} else {
			strbuf_putc(out, (char)p[i]);
		}
	}
}

size_t rsp_unescape_binary(char *data, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '}') {
			if (++i == n)
				return (size_t)-1;
			data[w++] = (char)(data[i] ^ 0x20);
		} else {
			data[w++] = data[i];
		}
	}
	return w;
}
