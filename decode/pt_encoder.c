/* PT emission for the sw backend with libipt's packet encoder (see
 * pt_encoder.h for which packets and why). */
#include "ptrev/pt_encoder.h"

#include <intel-pt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RETSTACK_SIZE 64          /* libipt's pt_retstack_size */
#define TNT8_BITS 6
#define TNT64_BITS 47
#define SINK_CHUNK (64 * 1024)

struct ptenc {
	struct ptenc_config cfg;

	/* libipt writes one packet at a time into scratch; we append it to
	 * buf. (Its encoder works on a fixed buffer; ours grows.) */
	struct pt_encoder *pkt;
	uint8_t scratch[32];

	uint8_t *buf;
	size_t len, cap;
	uint64_t handed;           /* bytes already given to the sink */

	bool started, ended, failed;
	bool enabled;              /* PacketEn: between TIP.PGE and TIP.PGD */
	bool mode_since_psb;       /* a MODE.exec was written since last PSB */
	uint64_t last_ip;          /* IP-compression reference (0 after PSB) */
	uint64_t psb_offset;       /* offset of the last PSB */
	bool psb_next;             /* ptenc_psb_next: one before the next step */

	uint64_t tnt;              /* pending TNT bits, oldest most significant */
	unsigned tnt_n;

	uint64_t tsc, tsc_written;

	/* RET-compression call stack, kept as libipt's decoder keeps it. */
	uint64_t ret[RETSTACK_SIZE];
	unsigned ret_head;         /* slot of the next push */
	unsigned ret_depth;

	struct ptenc_stats stats;
	char err[160];
};

static int fail(struct ptenc *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct ptenc *e, const char *fmt, ...)
{
	va_list ap;

	if (!e->failed) {
		va_start(ap, fmt);
		vsnprintf(e->err, sizeof e->err, fmt, ap);
		va_end(ap);
		e->failed = true;
	}
	return -1;
}

/* ---- output ---- */

static int hand_to_sink(struct ptenc *e)
{
	if (!e->cfg.sink || e->len == 0)
		return 0;
	if (e->cfg.sink(e->cfg.sink_arg, e->buf, e->len) != 0)
		return fail(e, "trace sink failed");
	e->handed += e->len;
	e->len = 0;
	return 0;
}

static int append(struct ptenc *e, const uint8_t *p, size_t n)
{
	if (e->len + n > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 4096;
		uint8_t *nb;
		while (cap < e->len + n)
			cap *= 2;
		nb = realloc(e->buf, cap);
		if (!nb)
			return fail(e, "out of memory");
		e->buf = nb;
		e->cap = cap;
	}
	memcpy(e->buf + e->len, p, n);
	e->len += n;
	e->stats.bytes += n;
	if (e->len >= SINK_CHUNK)
		return hand_to_sink(e);
	return 0;
}

static int emit(struct ptenc *e, const struct pt_packet *pkt)
{
	int n;

	if (e->failed)
		return -1;
	if (pt_enc_sync_set(e->pkt, 0) < 0)
		return fail(e, "libipt encoder: cannot rewind");
	n = pt_enc_next(e->pkt, pkt);
	if (n < 0)
		return fail(e, "libipt encoder: %s (packet type %d)",
			    pt_errstr(pt_errcode(n)), (int)pkt->type);
	return append(e, e->scratch, (size_t)n);
}

uint64_t ptenc_offset(const struct ptenc *e)
{
	return e->handed + e->len;
}

/* ---- packets ---- */

/* The shortest IP compression that decodes to ip against last_ip, preferring
 * updates over sign extension at equal size, as hardware does. */
static enum pt_ip_compression ip_compression(uint64_t ip, uint64_t last)
{
	uint64_t diff = ip ^ last;
	uint64_t sext48 = (uint64_t)((int64_t)(ip << 16) >> 16);

	if ((diff >> 16) == 0)
		return pt_ipc_update_16;
	if ((diff >> 32) == 0)
		return pt_ipc_update_32;
	if ((diff >> 48) == 0)
		return pt_ipc_update_48;
	if (sext48 == ip)
		return pt_ipc_sext_48;
	return pt_ipc_full;
}

static int emit_ip(struct ptenc *e, enum pt_packet_type type, uint64_t ip,
		   bool suppressed)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof pkt);
	pkt.type = type;
	if (suppressed) {
		/* The last IP stays as it was (SDM: a suppressed IP does not
		 * update Last IP), and libipt agrees. */
		pkt.payload.ip.ipc = pt_ipc_suppressed;
	} else {
		pkt.payload.ip.ipc = ip_compression(ip, e->last_ip);
		pkt.payload.ip.ip = ip; /* the encoder writes the low bytes */
		e->last_ip = ip;
	}
	return emit(e, &pkt);
}

static int emit_simple(struct ptenc *e, enum pt_packet_type type)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof pkt);
	pkt.type = type;
	return emit(e, &pkt);
}

static int emit_tsc(struct ptenc *e)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof pkt);
	pkt.type = ppt_tsc;
	pkt.payload.tsc.tsc = e->tsc & ((1ull << 56) - 1); /* 7-byte payload */
	e->tsc_written = e->tsc;
	return emit(e, &pkt);
}

static int emit_mode_exec(struct ptenc *e)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof pkt);
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	e->mode_since_psb = true;
	return emit(e, &pkt);
}

static int emit_tnt(struct ptenc *e, enum pt_packet_type type, uint64_t bits,
		    unsigned n)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof pkt);
	pkt.type = type;
	pkt.payload.tnt.bit_size = (uint8_t)n;
	pkt.payload.tnt.payload = bits;
	return emit(e, &pkt);
}

/* Write out the pending TNT bits. libipt consumes a TNT payload from its
 * most significant bit, so the oldest branch goes first. */
static int flush_tnt(struct ptenc *e)
{
	unsigned n = e->tnt_n;
	uint64_t bits = e->tnt;
	int rc = 0;

	if (n == 0)
		return 0;
	e->tnt = 0;
	e->tnt_n = 0;
	/* A TNT-64 costs 8 bytes; TNT-8s cost one byte per 6 bits, so a
	 * TNT-64 only pays for a (nearly) full run. */
	if (e->cfg.tnt64 && (n + TNT8_BITS - 1) / TNT8_BITS >= 8)
		return emit_tnt(e, ppt_tnt_64, bits, n);
	while (n > 0 && rc == 0) {
		unsigned chunk = n % TNT8_BITS ? n % TNT8_BITS : TNT8_BITS;
		n -= chunk;
		rc = emit_tnt(e, ppt_tnt_8, (bits >> n) & ((1ull << chunk) - 1),
			      chunk);
	}
	return rc;
}

static int add_tnt(struct ptenc *e, bool taken)
{
	unsigned cap = e->cfg.tnt64 ? TNT64_BITS : TNT8_BITS;

	e->tnt = (e->tnt << 1) | (taken ? 1u : 0u);
	e->tnt_n++;
	e->stats.tnt_bits++;
	if (e->tnt_n == cap)
		return flush_tnt(e);
	return 0;
}

static int emit_tip(struct ptenc *e, uint64_t ip)
{
	/* TNT bits of earlier branches precede the TIP in program order. */
	if (flush_tnt(e) < 0)
		return -1;
	e->stats.tips++;
	return emit_ip(e, ppt_tip, ip, false);
}

/* ---- RET-compression stack (libipt's pt_retstack rule) ---- */

static void ret_push(struct ptenc *e, uint64_t ip)
{
	e->ret[e->ret_head] = ip;
	e->ret_head = (e->ret_head + 1) % RETSTACK_SIZE;
	if (e->ret_depth < RETSTACK_SIZE)
		e->ret_depth++;  /* else the oldest entry was overwritten */
}

static bool ret_top_is(const struct ptenc *e, uint64_t ip)
{
	unsigned top = (e->ret_head + RETSTACK_SIZE - 1) % RETSTACK_SIZE;
	return e->ret_depth > 0 && e->ret[top] == ip;
}

static void ret_pop(struct ptenc *e)
{
	e->ret_head = (e->ret_head + RETSTACK_SIZE - 1) % RETSTACK_SIZE;
	e->ret_depth--;
}

/* ---- PSB+ ---- */

static int emit_psb(struct ptenc *e, uint64_t ip)
{
	if (flush_tnt(e) < 0)
		return -1;
	e->psb_offset = ptenc_offset(e);
	e->stats.psbs++;
	/* PSB resets the last IP to zero; we also empty the call stack so
	 * every PSB is a self-contained decoding start (see header). */
	e->last_ip = 0;
	e->ret_depth = 0;
	e->mode_since_psb = false;
	if (emit_simple(e, ppt_psb) < 0)
		return -1;
	if (e->tsc && emit_tsc(e) < 0)
		return -1;
	if (e->enabled) {
		if (emit_mode_exec(e) < 0 ||
		    emit_ip(e, ppt_fup, ip, false) < 0)
			return -1;
	}
	return emit_simple(e, ppt_psbend);
}

/* ---- public API ---- */

void ptenc_psb_next(struct ptenc *e)
{
	e->psb_next = true;
}

struct ptenc *ptenc_new(const struct ptenc_config *cfg)
{
	struct ptenc *e = calloc(1, sizeof *e);
	struct pt_config pc;

	if (!e)
		return NULL;
	if (cfg)
		e->cfg = *cfg;
	if (e->cfg.psb_period == 0)
		e->cfg.psb_period = PTENC_DEFAULT_PSB_PERIOD;
	pt_config_init(&pc);
	pc.begin = e->scratch;
	pc.end = e->scratch + sizeof e->scratch;
	e->pkt = pt_alloc_encoder(&pc);
	if (!e->pkt) {
		free(e);
		return NULL;
	}
	return e;
}

void ptenc_free(struct ptenc *e)
{
	if (!e)
		return;
	pt_free_encoder(e->pkt);
	free(e->buf);
	free(e);
}

void ptenc_set_time(struct ptenc *e, uint64_t tsc)
{
	e->tsc = tsc;
}

int ptenc_begin(struct ptenc *e, uint64_t ip, uint64_t tsc)
{
	if (e->failed)
		return -1;
	if (e->started)
		return fail(e, "ptenc_begin called twice");
	e->started = true;
	e->tsc = tsc;
	/* Packet generation is still off (we are "in the kernel" until the
	 * first user instruction): a PSB+ without FUP/MODE.exec. */
	if (emit_psb(e, 0) < 0)
		return -1;
	return ptenc_enable(e, ip);
}

int ptenc_enable(struct ptenc *e, uint64_t ip)
{
	if (e->failed)
		return -1;
	if (!e->started || e->ended)
		return fail(e, "ptenc_enable outside begin/end");
	if (e->enabled)
		return 0;
	if (e->tsc && e->tsc != e->tsc_written && emit_tsc(e) < 0)
		return -1;
	/* Hardware writes MODE.exec before TIP.PGE when none was written
	 * since the last PSB; libipt needs it to know the mode. */
	if (!e->mode_since_psb && emit_mode_exec(e) < 0)
		return -1;
	e->enabled = true;
	e->stats.enables++;
	return emit_ip(e, ppt_tip_pge, ip, false);
}

static int disable(struct ptenc *e, bool fup, uint64_t ip)
{
	if (flush_tnt(e) < 0)
		return -1;
	if (fup && emit_ip(e, ppt_fup, ip, false) < 0)
		return -1;
	e->enabled = false;
	e->stats.disables++;
	/* The IP is suppressed: the target lies in the kernel. */
	return emit_ip(e, ppt_tip_pgd, 0, true);
}

int ptenc_interrupt(struct ptenc *e, uint64_t ip)
{
	if (e->failed)
		return -1;
	if (!e->started || e->ended)
		return fail(e, "ptenc_interrupt outside begin/end");
	if (!e->enabled)
		return 0;
	return disable(e, true, ip);
}

int ptenc_step(struct ptenc *e, uint64_t ip, const struct insn_info *info,
	       uint64_t next_ip)
{
	uint64_t fall = ip + info->len;
	int rc = 0;

	if (e->failed)
		return -1;
	if (!e->started || e->ended)
		return fail(e, "ptenc_step outside begin/end");
	if (info->kind == INSN_OTHER && next_ip == ip)
		return 0; /* one iteration of a REP instruction */
	if (!e->enabled && ptenc_enable(e, ip) < 0)
		return -1;
	if ((e->psb_next || ptenc_offset(e) - e->psb_offset >= e->cfg.psb_period) &&
	    emit_psb(e, ip) < 0)
		return -1;
	e->psb_next = false;

	switch (info->kind) {
	case INSN_OTHER:
		if (next_ip != fall)
			goto bad_next;
		break;
	case INSN_COND:
		/* A branch to the next instruction looks the same taken or
		 * not; we call it not taken. */
		if (next_ip == info->target && next_ip != fall)
			rc = add_tnt(e, true);
		else if (next_ip == fall)
			rc = add_tnt(e, false);
		else
			goto bad_next;
		break;
	case INSN_JMP:
		if (next_ip != info->target)
			goto bad_next;
		break;
	case INSN_CALL:
		if (next_ip != info->target)
			goto bad_next;
		/* libipt does not push calls to the next instruction (the
		 * call/pop idiom of position-independent code). */
		if (info->target != fall)
			ret_push(e, fall);
		break;
	case INSN_CALL_IND:
		ret_push(e, fall);
		rc = emit_tip(e, next_ip);
		break;
	case INSN_JMP_IND:
	case INSN_FAR:
		rc = emit_tip(e, next_ip);
		break;
	case INSN_RET:
		if (ret_top_is(e, next_ip)) {
			ret_pop(e);
			e->stats.rets_compressed++;
			rc = add_tnt(e, true);
		} else {
			/* libipt's decoder does not pop on an uncompressed
			 * RET, so neither do we. */
			e->stats.rets_uncompressed++;
			rc = emit_tip(e, next_ip);
		}
		break;
	case INSN_SYSCALL:
	case INSN_INT:
		rc = disable(e, false, 0);
		break;
	default:
		return fail(e, "unknown instruction kind %d", (int)info->kind);
	}
	if (rc < 0)
		return -1;
	e->stats.insns++;
	return 1;

bad_next:
	return fail(e, "%s at %#llx (len %u) cannot continue at %#llx",
		    insn_kind_name(info->kind), (unsigned long long)ip,
		    info->len, (unsigned long long)next_ip);
}

int ptenc_end(struct ptenc *e, uint64_t ip)
{
	if (e->failed)
		return -1;
	if (!e->started)
		return fail(e, "ptenc_end before ptenc_begin");
	if (e->ended)
		return 0;
	if (e->enabled && disable(e, true, ip) < 0)
		return -1;
	if (flush_tnt(e) < 0)
		return -1;
	e->ended = true;
	return hand_to_sink(e);
}

int ptenc_flush(struct ptenc *e)
{
	if (e->failed)
		return -1;
	return hand_to_sink(e);
}

const uint8_t *ptenc_data(const struct ptenc *e, size_t *len)
{
	*len = e->len;
	return e->buf;
}

bool ptenc_enabled(const struct ptenc *e)
{
	return e->enabled;
}

const struct ptenc_stats *ptenc_stats(const struct ptenc *e)
{
	return &e->stats;
}

const char *ptenc_error(const struct ptenc *e)
{
	return e->failed ? e->err : NULL;
}
