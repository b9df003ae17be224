/* What gdb sees at a past position (PC-level replay): the PC from the
 * history, every other register unavailable, read-only memory from the
 * recording, writable memory refused. Never the live values: they belong to
 * the present, not to this position. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrev/gdb_history.h"
#include "ptrev/gdb_server.h"
#include "ptrev/gdb_signals.h"
#include "ptrev/hex.h"
#include "ptrev/replayer.h"
#include "ptrev/sw_engine.h"

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

/* Bring the replayer to t's position. True when the full state there is
 * known; otherwise the reason was printed once and only the PC level is. */
static bool full_state(struct gdb_server *s, struct gdb_hist_thread *t)
{
	char why[512];
	if (!s->replayer && !s->replayer_failed) {
		s->replayer = replayer_new(s->hist->td, why, sizeof why);
		if (!s->replayer) {
			s->replayer_failed = true;
			fprintf(stderr, "ptrev: no full state in the past (%s); "
				"showing the PC and read-only memory only\n", why);
			return false;
		}
		if (replayer_warning(s->replayer))
			fprintf(stderr, "ptrev: %s\n", replayer_warning(s->replayer));
	}
	if (!s->replayer)
		return false;
	if (s->replay_state != 0 && s->replay_tid == t->tid && s->replay_pos == t->pos)
		return s->replay_state == 1;
	if (s->engine && replayer_sync(s->replayer) != 0) {
		s->replay_state = 0;
		return false;
	}
	s->replay_tid = t->tid;
	s->replay_pos = t->pos;
	if (replayer_seek(s->replayer, t->tid, t->pos, why, sizeof why) == 0) {
		s->replay_state = 1;
		return true;
	}
	s->replay_state = -1;
	fprintf(stderr, "ptrev: state at instruction %llu unavailable: %s\n",
		(unsigned long long)t->pos, why);
	return false;
}

bool gdb_replay_ensure_replayer(struct gdb_server *s)
{
	char why[512];
	if (!s->replayer && !s->replayer_failed && s->hist) {
		s->replayer = replayer_new(s->hist->td, why, sizeof why);
		if (!s->replayer) {
			s->replayer_failed = true;
			fprintf(stderr, "ptrev: no full state in the past (%s)\n", why);
		}
	}
	if (s->replayer && s->engine)
		replayer_sync(s->replayer);
	return s->replayer != NULL;
}

void gdb_replay_free(struct gdb_server *s)
{
	if (s->replayer)
		replayer_free(s->replayer);
	s->replayer = NULL;
	s->replayer_failed = false;
	s->replay_state = 0;
}

static bool full_regfile(struct gdb_server *s, struct gdb_hist_thread *t,
			 struct amd64_regfile *rf)
{
	if (!full_state(s, t))
		return false;
	memset(rf, 0, sizeof *rf);
	size_t n = sizeof rf->xsave;
	if (replayer_get_regs(s->replayer, &rf->gpr) != 0 ||
	    replayer_get_xstate(s->replayer, rf->xsave, &n) != 0)
		return false;
	rf->xsave_len = n;
	rf->xcr0 = amd64_xcr0_from_xsave(rf->xsave, n);
	return true;
}

bool gdb_replay_regfile(struct gdb_server *s, struct amd64_regfile *rf)
{
	struct gdb_hist_thread *t = gdb_replay_thread(s);
	return t && full_regfile(s, t, rf);
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
	bool have_pc = gdb_history_pc_of(s->hist, t, &pc);
	if (pkt[0] == 'G' || pkt[0] == 'P') {
		strbuf_puts(&s->reply, "E01"); /* the past cannot be changed */
		return;
	}
	int nregs = amd64_reg_count(l);
	struct amd64_regfile *full = malloc(sizeof *full);
	if (full && full_regfile(s, t, full)) {
		if (pkt[0] == 'g') {
			amd64_g_packet(l, full, NULL, &s->reply);
		} else {
			const char *q = pkt + 1, *qend = pkt + len;
			uint64_t regnum;
			uint8_t raw[64];
			int size;
			if (!hex_parse_u64(&q, qend, &regnum) || q != qend || regnum > 10000 ||
			    (size = amd64_reg_read(l, full, (int)regnum, raw)) < 0)
				strbuf_puts(&s->reply, "E01");
			else
				strbuf_hex(&s->reply, raw, (size_t)size);
		}
		free(full);
		return;
	}
	free(full);
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
		gdb_put_reg64(&s->reply, pc);
		return;
	}
	for (int i = 0; i < size; i++)
		strbuf_puts(&s->reply, "xx");
}

ssize_t gdb_replay_read_mem(struct gdb_server *s, uint64_t addr, void *buf, size_t len)
{
	struct gdb_hist_thread *t = gdb_replay_thread(s);
	if (!t)
		return -1;
	if (full_state(s, t))
		return replayer_read_mem(s->replayer, addr, buf, len);
	size_t got = code_memory_read(s->hist->mem, addr, buf, len);
	return got ? (ssize_t)got : -1;
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
	size_t got = 0;
	struct gdb_hist_thread *t = gdb_replay_thread(s);
	if (buf && t && full_state(s, t)) {
		ssize_t r = replayer_read_mem(s->replayer, addr, buf, n);
		got = r > 0 ? (size_t)r : 0;
	} else if (buf) {
		got = code_memory_read(s->hist->mem, addr, buf, n);
	}
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
	gdb_history_stop_reply(s, t, sig, NULL);
}

bool gdb_replay_proc_open(struct gdb_server *s, char *pkt)
{
	char *hex = pkt + 11, *comma = strchr(hex, ',');
	if (!comma || (comma - hex) % 2 || comma - hex > 512)
		return false;
	char path[257];
	size_t n = (size_t)(comma - hex) / 2;
	if (!hex_decode(hex, n, (uint8_t *)path))
		return false;
	path[n] = '\0';
	int pid, tid, used = 0;
	bool maps = (sscanf(path, "/proc/%d/task/%d/maps%n", &pid, &tid, &used) == 2 ||
		     sscanf(path, "/proc/%d/maps%n", &pid, &used) == 1) && path[used] == '\0';
	if (!maps || pid != s->inf.pid)
		return false;
	/* The mappings as the recording last saw them. */
	char tmpl[] = "/tmp/ptrev-maps-XXXXXX";
	int fd = mkstemp(tmpl);
	if (fd < 0)
		return false;
	FILE *f = fdopen(fd, "w");
	const struct trace_data *td = s->hist->td;
	for (size_t i = 0; f && i < td->nmmaps; i++) {
		const struct trace_mmap *m = &td->mmaps[i];
		bool unmapped = false;
		for (size_t j = 0; j < td->nmunmaps && !unmapped; j++)
			unmapped = td->munmaps[j].start <= m->start && td->munmaps[j].end >= m->end &&
				   (td->munmaps[j].tid != m->tid || td->munmaps[j].pos >= m->pos);
		if (unmapped)
			continue;
		fprintf(f, "%llx-%llx %c%c%cp %08llx 00:00 0 %s\n", (unsigned long long)m->start,
			(unsigned long long)m->end, m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-',
			m->prot & 4 ? 'x' : '-', (unsigned long long)m->offset, m->path);
	}
	if (f)
		fclose(f);
	/* Open it through the ordinary vFile path; unlinked at once, the
	 * open file stays readable. */
	struct strbuf rewritten = STRBUF_INIT;
	strbuf_puts(&rewritten, "vFile:open:");
	strbuf_hex(&rewritten, tmpl, strlen(tmpl));
	strbuf_puts(&rewritten, comma);
	bool ok = vfile_handle(&s->vfs, rewritten.data, rewritten.len, &s->reply);
	unlink(tmpl);
	strbuf_free(&rewritten);
	return ok;
}
