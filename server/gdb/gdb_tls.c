/* Thread-local variables (qGetTLSAddr), found the way libthread_db finds
 * them, without libthread_db.
 *
 * gdb asks for the address of offset in module lm's TLS block of a thread
 * (lm: the module's link_map, which gdb knows from the library list). On
 * x86-64 glibc the thread pointer (fs_base) is the thread's struct
 * pthread, which holds the thread's dtv; dtv[modid] points to the
 * module's block, modid being a field of the link_map. Where those fields
 * lie is glibc's private business, so glibc describes them for
 * libthread_db in read-only descriptors exported by libc
 * (_thread_db_link_map_l_tls_modid, _thread_db_pthread_dtvp,
 * _thread_db_dtv_dtv, _thread_db_dtv_t_pointer_val: each three 32-bit
 * words, the field's size in bits, its count and its offset). ptrev asks
 * gdb where they are through the qSymbol exchange, as gdbserver's
 * libthread_db does, reads them from the program's memory and follows
 * them. A block not allocated yet (a module loaded later whose TLS no
 * code of this thread has touched) is an error, as for libthread_db. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

static const char *const names[GDB_TLS_SYMBOLS] = {
	"_thread_db_link_map_l_tls_modid",
	"_thread_db_pthread_dtvp",
	"_thread_db_dtv_dtv",
	"_thread_db_dtv_t_pointer_val",
};

enum { MODID, DTVP, DTV, POINTER_VAL };

/* The qSymbol request for the first descriptor from k on not known yet,
 * or OK. */
static void ask_from(struct gdb_server *s, size_t k)
{
	for (; k < GDB_TLS_SYMBOLS; k++) {
		if (!s->tls_sym[k]) {
			strbuf_puts(&s->reply, "qSymbol:");
			strbuf_hex(&s->reply, names[k], strlen(names[k]));
			return;
		}
	}
	strbuf_puts(&s->reply, "OK");
}

void gdb_tls_symbol_packet(struct gdb_server *s, const char *pkt)
{
	/* "qSymbol::" (gdb has new symbols: ask), or
	 * "qSymbol:VALUE:HEXNAME" (the answer; VALUE empty when unknown). */
	const char *p = pkt + 8, *colon = strchr(p, ':');
	if (!colon) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	if (colon == p && colon[1] == '\0') {
		ask_from(s, 0);
		return;
	}
	char name[64];
	size_t hexlen = strlen(colon + 1), n = hexlen / 2;
	size_t k = GDB_TLS_SYMBOLS;
	if (hexlen % 2 == 0 && n < sizeof name && hex_decode(colon + 1, n, (uint8_t *)name)) {
		name[n] = '\0';
		for (k = 0; k < GDB_TLS_SYMBOLS && strcmp(names[k], name) != 0; k++)
			;
	}
	if (k == GDB_TLS_SYMBOLS) {
		strbuf_puts(&s->reply, "OK"); /* not ours: nothing more to ask */
		return;
	}
	uint64_t v = 0;
	if (colon > p && hex_parse_u64(&p, colon, &v) && p == colon)
		s->tls_sym[k] = v;
	ask_from(s, k + 1);
}

void gdb_tls_forget(struct gdb_server *s)
{
	memset(s->tls_sym, 0, sizeof s->tls_sym);
}

static bool read_u64(struct gdb_server *s, pid_t tid, uint64_t addr, uint64_t *v)
{
	return target_read_memory(s->target, tid, addr, v, sizeof *v) == (ssize_t)sizeof *v;
}

/* A descriptor: the field's size in bits, count, offset. */
struct field {
	uint32_t bits, count, offset;
};

static bool read_field(struct gdb_server *s, pid_t tid, int k, struct field *f)
{
	uint32_t w[3];
	if (!s->tls_sym[k] ||
	    target_read_memory(s->target, tid, s->tls_sym[k], w, sizeof w) != (ssize_t)sizeof w)
		return false;
	f->bits = w[0];
	f->count = w[1];
	f->offset = w[2];
	return true;
}

/* The address, or 0 with the reason in why. */
static uint64_t tls_address(struct gdb_server *s, pid_t tid, uint64_t offset, uint64_t lm,
			    const char **why)
{
	struct field modid, dtvp, dtv, val;
	if (!read_field(s, tid, MODID, &modid) || !read_field(s, tid, DTVP, &dtvp) ||
	    !read_field(s, tid, DTV, &dtv) || !read_field(s, tid, POINTER_VAL, &val) ||
	    modid.bits != 64 || dtvp.bits != 64 || val.bits != 64 || dtv.bits < 64) {
		*why = "glibc's thread_db descriptors are not known (no libc, or not yet loaded)";
		return 0;
	}
	struct amd64_regfile *rf = malloc(sizeof *rf);
	int got = rf ? target_fetch_registers(s->target, tid, rf) : -1;
	uint64_t tp = rf ? rf->gpr.fs_base : 0;
	free(rf);
	if (got != TARGET_REGS_FULL && got != TARGET_REGS_BEFORE_SYSCALL) {
		*why = "the thread's registers are unavailable here";
		return 0;
	}
	uint64_t id, table, block;
	if (!read_u64(s, tid, lm + modid.offset, &id) || !read_u64(s, tid, tp + dtvp.offset, &table) ||
	    !read_u64(s, tid, table + id * (dtv.bits / 8) + val.offset, &block)) {
		*why = "the thread's dtv cannot be read";
		return 0;
	}
	if (id == 0 || block == 0 || block == UINT64_MAX) {
		*why = "the module's TLS block is not allocated in this thread";
		return 0;
	}
	return block + offset;
}

void gdb_tls_address_packet(struct gdb_server *s, const char *pkt)
{
	/* qGetTLSAddr:THREAD-ID,OFFSET,LM */
	const char *p = pkt + 12, *end;
	pid_t pid, tid;
	uint64_t offset, lm;
	const char *comma = strchr(p, ',');
	if (!comma || !gdb_parse_thread_id(p, &end, &pid, &tid) || end != comma || tid <= 0) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	p = comma + 1;
	if (!hex_parse_u64(&p, p + strlen(p), &offset) || *p++ != ',' ||
	    !hex_parse_u64(&p, p + strlen(p), &lm) || *p) {
		strbuf_puts(&s->reply, "E01");
		return;
	}
	const char *why = NULL;
	uint64_t addr = tls_address(s, tid, offset, lm, &why);
	if (!addr) {
		if (s->debug)
			fprintf(stderr, "ptrev: qGetTLSAddr for thread %d: %s\n", (int)tid, why);
		strbuf_puts(&s->reply, "E01");
		return;
	}
	strbuf_printf(&s->reply, "%llx", (unsigned long long)addr);
}
