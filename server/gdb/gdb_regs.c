/* Register packets: g, G, p, P for the thread selected with Hg. */
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

bool gdb_read_regfile(struct gdb_server *s, pid_t tid, struct amd64_regfile *rf)
{
	memset(rf, 0, sizeof *rf);
	if (!s->have_inferior || s->inf.exited)
		return false;
	if (inferior_get_regs(&s->inf, tid, &rf->gpr) != 0)
		return false;
	size_t n = sizeof rf->xsave;
	if (inferior_get_xstate(&s->inf, tid, rf->xsave, &n) != 0)
		return false;
	rf->xsave_len = n;
	rf->xcr0 = amd64_xcr0_from_xsave(rf->xsave, n);
	if (!s->layout)
		s->layout = amd64_layout_for(rf->xcr0);
	return true;
}

static bool write_regfile(struct gdb_server *s, pid_t tid, const struct amd64_regfile *rf)
{
	return inferior_set_regs(&s->inf, tid, &rf->gpr) == 0 &&
	       inferior_set_xstate(&s->inf, tid, rf->xsave, rf->xsave_len) == 0;
}

static pid_t current_tid(struct gdb_server *s)
{
	if (s->have_inferior && !s->inf.exited && !inferior_thread(&s->inf, s->g_tid) &&
	    s->inf.nthreads)
		s->g_tid = s->inf.threads[0].tid;
	return s->g_tid;
}

bool gdb_regs_packet(struct gdb_server *s, char *pkt, size_t len)
{
	/* A regfile holds a whole XSAVE area: too big for the stack. */
	struct amd64_regfile *rf = malloc(sizeof *rf);
	if (!rf || !gdb_read_regfile(s, current_tid(s), rf)) {
		free(rf);
		strbuf_puts(&s->reply, "E01");
		return true;
	}
	const char *p = pkt + 1, *end = pkt + len;
	uint64_t regnum;
	uint8_t raw[64];
	switch (pkt[0]) {
	case 'g':
		amd64_g_packet(s->layout, rf, NULL, &s->reply);
		break;
	case 'G':
		if (amd64_G_packet(s->layout, rf, p, (size_t)(end - p)) &&
		    write_regfile(s, s->g_tid, rf))
			strbuf_puts(&s->reply, "OK");
		else
			strbuf_puts(&s->reply, "E01");
		break;
	case 'p': {
		int size;
		if (!hex_parse_u64(&p, end, &regnum) || p != end || regnum > 10000 ||
		    (size = amd64_reg_read(s->layout, rf, (int)regnum, raw)) < 0)
			strbuf_puts(&s->reply, "E01");
		else
			strbuf_hex(&s->reply, raw, (size_t)size);
		break;
	}
	case 'P': {
		int size;
		if (!hex_parse_u64(&p, end, &regnum) || *p++ != '=' || regnum > 10000 ||
		    (size = amd64_reg_size(s->layout, (int)regnum)) < 0 ||
		    (size_t)size > sizeof raw || end - p != 2 * size ||
		    !hex_decode(p, (size_t)size, raw) ||
		    amd64_reg_write(s->layout, rf, (int)regnum, raw) < 0 ||
		    !write_regfile(s, s->g_tid, rf))
			strbuf_puts(&s->reply, "E01");
		else
			strbuf_puts(&s->reply, "OK");
		break;
	}
	}
	free(rf);
	return true;
}
