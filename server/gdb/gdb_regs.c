/* Register packets: g, G, p, P for the thread selected with Hg. What the
 * target does not know where the program stands (a past position where
 * only the PC is known; rcx and r11 before a syscall instruction that a
 * held process has run) is sent as "xx" bytes: gdb shows <unavailable>. */
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

const struct amd64_layout *gdb_layout(struct gdb_server *s)
{
	if (!s->layout) {
		/* Without a target (fuzzing) or a readable thread: plain SSE. */
		uint64_t xcr0 = target_xcr0(s->target);
		s->layout = amd64_layout_for(xcr0 ? xcr0 : 0x3);
	}
	return s->layout;
}

/* Is register regnum among what fetch_registers' answer knows? */
static bool known_reg(int known, int regnum)
{
	switch (known) {
	case TARGET_REGS_FULL:
		return true;
	case TARGET_REGS_PC:
		return regnum == AMD64_RIP_REGNUM;
	case TARGET_REGS_BEFORE_SYSCALL:
		return regnum != AMD64_RCX_REGNUM && regnum != AMD64_R11_REGNUM;
	default:
		return false;
	}
}

/* The g reply when only some registers are known. */
static void partial_g(struct gdb_server *s, const struct amd64_regfile *rf, int known)
{
	const struct amd64_layout *l = gdb_layout(s);
	int n = amd64_reg_count(l);
	bool *avail = calloc((size_t)n, sizeof *avail);
	if (!avail) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	for (int i = 0; i < n; i++)
		avail[i] = known_reg(known, i);
	amd64_g_packet(l, rf, avail, &s->reply);
	free(avail);
}

static void read_one(struct gdb_server *s, const struct amd64_regfile *rf, int known,
		     const char *p, const char *end)
{
	const struct amd64_layout *l = gdb_layout(s);
	uint64_t regnum;
	uint8_t raw[64];
	int size;
	if (!hex_parse_u64(&p, end, &regnum) || p != end || regnum > 10000 ||
	    (size = amd64_reg_size(l, (int)regnum)) < 0) {
		strbuf_puts(&s->reply, "E01");
	} else if (known_reg(known, (int)regnum)) {
		amd64_reg_read(l, rf, (int)regnum, raw);
		strbuf_hex(&s->reply, raw, (size_t)size);
	} else {
		for (int i = 0; i < size; i++)
			strbuf_puts(&s->reply, "xx");
	}
}

bool gdb_regs_packet(struct gdb_server *s, char *pkt, size_t len)
{
	/* A regfile holds a whole XSAVE area: too big for the stack. */
	struct amd64_regfile *rf = malloc(sizeof *rf);
	int known = rf ? target_fetch_registers(s->target, s->g_tid, rf) : -1;
	if (known < 0) {
		free(rf);
		strbuf_puts(&s->reply, "E01");
		return true;
	}
	const struct amd64_layout *l = gdb_layout(s);
	const char *p = pkt + 1, *end = pkt + len;
	uint64_t regnum;
	uint8_t raw[64];
	switch (pkt[0]) {
	case 'g':
		if (known == TARGET_REGS_FULL)
			amd64_g_packet(l, rf, NULL, &s->reply);
		else
			partial_g(s, rf, known);
		break;
	case 'G':
		if (known == TARGET_REGS_FULL && amd64_G_packet(l, rf, p, (size_t)(end - p)) &&
		    target_store_registers(s->target, s->g_tid, rf) == 0)
			strbuf_puts(&s->reply, "OK");
		else
			strbuf_puts(&s->reply, "E01");
		break;
	case 'p':
		read_one(s, rf, known, p, end);
		break;
	case 'P': {
		int size;
		if (known != TARGET_REGS_FULL ||
		    !hex_parse_u64(&p, end, &regnum) || *p++ != '=' || regnum > 10000 ||
		    (size = amd64_reg_size(l, (int)regnum)) < 0 ||
		    (size_t)size > sizeof raw || end - p != 2 * size ||
		    !hex_decode(p, (size_t)size, raw) ||
		    amd64_reg_write(l, rf, (int)regnum, raw) < 0 ||
		    target_store_registers(s->target, s->g_tid, rf) != 0)
			strbuf_puts(&s->reply, "E01");
		else
			strbuf_puts(&s->reply, "OK");
		break;
	}
	}
	free(rf);
	return true;
}
