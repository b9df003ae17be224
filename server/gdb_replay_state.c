/* What gdb sees at a past position (PC-level replay): the PC from the
 * history, every other register unavailable, read-only memory from the
 * recording, writable memory refused. Never the live values: they belong to
 * the present, not to this position. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_history.h"
#include "ptrev/gdb_server.h"
#include "ptrev/gdb_signals.h"
#include "ptrev/hex.h"

/* XCR0 of this machine: a saved recording has no process to ask, and is
 * replayed on the machine's own register layout. */
static uint64_t host_xcr0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

const struct amd64_layout *gdb_layout(struct gdb_server *s)
{
	if (!s->layout && s->hist && !s->have_inferior)
		s->layout = amd64_layout_for(host_xcr0());
	return s->layout;
}

void gdb_replay_regs_packet(struct gdb_server *s, char *pkt, size_t len)
{
	struct gdb_hist_thread *t = gdb_replay_thread(s);
	const struct amd64_layout *l = gdb_layout(s);
	uint64_t pc;
	if (!t || !l) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	bool have_pc = gdb_history_pc(t, &pc);
	if (pkt[0] == 'G' || pkt[0] == 'P') {
		strbuf_puts(&s->reply, "E01"); /* the past cannot be changed */
		return;
	}
	int nregs = amd64_reg_count(l);
	if (pkt[0] == 'g') {
		struct amd64_regfile *rf = calloc(1, sizeof *rf);
		bool *avail = calloc((size_t)nregs, sizeof *avail);
		if (!rf || !avail) {
			free(rf);
			free(avail);
			strbuf_puts(&s->reply, "E01");
			return;
		}
		rf->gpr.rip = have_pc ? pc : 0;
		avail[AMD64_RIP_REGNUM] = have_pc;
		amd64_g_packet(l, rf, avail, &s->reply);
		free(rf);
		free(avail);
		return;
	}
	/* p N */
	const char *p = pkt + 1, *end = pkt + len;
	uint64_t regnum;
	int size;
	if (!hex_parse_u64(&p, end, &regnum) || p != end || regnum > 10000 ||
	    (size = amd64_reg_size(l, (int)regnum)) < 0) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	if (regnum == AMD64_RIP_REGNUM && have_pc) {
		uint8_t raw[8];
		for (int i = 0; i < 8; i++)
			raw[i] = (uint8_t)(pc >> (8 * i));
		strbuf_hex(&s->reply, raw, 8);
		return;
	}
	for (int i = 0; i < size; i++)
		strbuf_puts(&s->reply, "xx");
}

void gdb_replay_mem_packet(struct gdb_server *s, char *pkt, size_t len)
{
	if (pkt[0] == 'M' || pkt[0] == 'X' || !s->hist) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	const char *p = pkt + 1, *end = pkt + len;
	uint64_t addr, n;
	if (!hex_parse_u64(&p, end, &addr) || p >= end || *p++ != ',' ||
	    !hex_parse_u64(&p, end, &n) || p != end) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	uint64_t max = (RSP_MAX_PACKET - 8) / 2;
	if (n > max)
		n = max;
	uint8_t *buf = malloc(n ? n : 1);
	size_t got = buf ? code_memory_read(s->hist->mem, addr, buf, n) : 0;
	if (got == 0 && n > 0) {
		strbuf_puts(&s->reply, "E01");
	} else if (pkt[0] == 'm') {
		strbuf_hex(&s->reply, buf, got);
	} else {
		strbuf_putc(&s->reply, 'b');
		rsp_escape_binary(&s->reply, buf, got);
	}
	free(buf);
}

void gdb_replay_initial_stop(struct gdb_server *s)
{
	struct gdb_hist_thread *t = gdb_replay_thread(s);
	if (!t) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	/* The stop that ended the recording: its signal for a crash, else a
	 * plain stop where the history ends. */
	int sig = SIGTRAP;
	const struct trace_data *td = s->hist->td;
	if (td->complete && td->end.status_kind == 1)
		sig = td->end.status;
	strbuf_printf(&s->reply, "T%02x", gdb_signal_from_host(sig) & 0xff);
	uint64_t pc;
	if (gdb_history_pc(t, &pc)) {
		uint8_t raw[8];
		for (int i = 0; i < 8; i++)
			raw[i] = (uint8_t)(pc >> (8 * i));
		strbuf_printf(&s->reply, "%02x:", AMD64_RIP_REGNUM);
		strbuf_hex(&s->reply, raw, 8);
		strbuf_putc(&s->reply, ';');
	}
	strbuf_puts(&s->reply, "thread:");
	gdb_format_thread_id(s, &s->reply, t->tid);
	strbuf_putc(&s->reply, ';');
}
