/* Breakpoint and watchpoint packets: Z/z TYPE,ADDR,KIND. */
#include <string.h>

#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

bool gdb_break_packet(struct gdb_server *s, char *pkt, size_t len)
{
	const char *p = pkt + 1, *end = pkt + len;
	uint64_t type, addr, kind;
	bool insert = pkt[0] == 'Z';
	if (!hex_parse_u64(&p, end, &type) || p >= end || *p++ != ',' ||
	    !hex_parse_u64(&p, end, &addr) || p >= end || *p++ != ',' ||
	    !hex_parse_u64(&p, end, &kind) || (p != end && *p != ';')) {
		strbuf_puts(&s->reply, "E01");
		return true;
	}
	if (type > 4)
		return false; /* unknown type: empty reply */
	if (!s->have_inferior || s->inf.exited) {
		strbuf_puts(&s->reply, "E01");
		return true;
	}
	int r;
	if (type == 0) {
		r = insert ? inferior_insert_swbreak(&s->inf, addr)
			   : inferior_remove_swbreak(&s->inf, addr);
	} else {
		/* For Z1 the kind is the breakpoint length (1 on x86); for
		 * watchpoints it is the watched length. */
		int n = type == 1 ? 1 : (int)(kind > 64 ? 65 : kind);
		r = insert ? inferior_insert_hwpoint(&s->inf, (int)type, addr, n)
			   : inferior_remove_hwpoint(&s->inf, (int)type, addr, n);
	}
	if (r == -2)
		return false; /* unsupported type (read watchpoints): empty */
	strbuf_puts(&s->reply, r == 0 ? "OK" : "E01");
	return true;
}
