/* Memory packets: m, M (hex) and x, X (binary), for the thread selected
 * with Hg (at a past position the target refuses writes: the past cannot
 * be changed). */
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

/* Parse "ADDR,LEN" and return a pointer past it. */
static const char *parse_range(const char *p, const char *end, uint64_t *addr, uint64_t *len)
{
	if (!hex_parse_u64(&p, end, addr) || p >= end || *p++ != ',' ||
	    !hex_parse_u64(&p, end, len))
		return NULL;
	return p;
}

bool gdb_mem_packet(struct gdb_server *s, char *pkt, size_t len)
{
	const char *end = pkt + len;
	uint64_t addr, n;
	const char *p = parse_range(pkt + 1, end, &addr, &n);
	if (!p) {
		strbuf_puts(&s->reply, "E01");
		return true;
	}
	switch (pkt[0]) {
	case 'm':
	case 'x': {
		if (p != end) {
			strbuf_puts(&s->reply, "E01");
			break;
		}
		/* Keep the reply within PacketSize (hex doubles, escapes may). */
		uint64_t max = (RSP_MAX_PACKET - 8) / 2;
		if (n > max)
			n = max;
		uint8_t *buf = malloc(n ? n : 1);
		ssize_t got = buf ? target_read_memory(s->target, s->g_tid, addr, buf, n) : -1;
		if (got < 0 || (got == 0 && n > 0)) {
			strbuf_puts(&s->reply, "E01");
		} else if (pkt[0] == 'm') {
			strbuf_hex(&s->reply, buf, (size_t)got);
		} else {
			strbuf_putc(&s->reply, 'b');
			rsp_escape_binary(&s->reply, buf, (size_t)got);
		}
		free(buf);
		break;
	}
	case 'M': {
		if (p >= end || *p++ != ':' || (uint64_t)(end - p) != 2 * n) {
			strbuf_puts(&s->reply, "E01");
			break;
		}
		uint8_t *buf = malloc(n ? n : 1);
		if (buf && hex_decode(p, n, buf) &&
		    target_write_memory(s->target, s->g_tid, addr, buf, n) == (ssize_t)n)
			strbuf_puts(&s->reply, "OK");
		else
			strbuf_puts(&s->reply, "E01");
		free(buf);
		break;
	}
	case 'X': {
		if (p >= end || *p++ != ':') {
			strbuf_puts(&s->reply, "E01");
			break;
		}
		char *data = (char *)p;
		size_t got = rsp_unescape_binary(data, (size_t)(end - p));
		if (got == (size_t)-1 || got != n ||
		    target_write_memory(s->target, s->g_tid, addr, data, n) != (ssize_t)n)
			strbuf_puts(&s->reply, "E01");
		else
			strbuf_puts(&s->reply, "OK");
		break;
	}
	}
	return true;
}
