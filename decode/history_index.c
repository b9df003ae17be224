/* History index building: find the PSBs in the growing trace, decode once
 * with libipt's block decoder, and give each segment its instruction count,
 * code-line Bloom filter and events (see ptrev/history.h for the rules). */
#include "history_internal.h"

#include <stdlib.h>
#include <string.h>

#define PSB_LEN 16
#define MAX_HEADER_PACKETS 64

static const uint8_t psb_pattern[PSB_LEN] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};

void hist_config(const struct history *h, struct pt_config *cfg)
{
	pt_config_init(cfg);
	cfg->begin = h->buf;
	cfg->end = h->buf + h->len;
	cfg->cpu = h->cfg.cpu;
	if (cfg->cpu.vendor != pcv_unknown)
		(void)pt_cpu_errata(&cfg->errata, &cfg->cpu);
}

/* ---- small helpers ---- */

static int vec_push(struct hist_u64vec *v, uint64_t x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		uint64_t *nv = realloc(v->v, cap * sizeof *nv);
		if (!nv)
			return -1;
		v->v = nv;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return 0;
}

static int kind_index(unsigned ev)
{
	return __builtin_ctz(ev);
}

static int add_event(struct history *h, unsigned ev)
{
	return vec_push(&h->ev[kind_index(ev)], h->ninsn);
}

/* [from, to]: a block's first and last instruction, which are contiguous
 * in memory because blocks end at every jump and call (see decode_run). */
static void bloom_add_range(struct hist_seg *s, uint64_t from, uint64_t to)
{
	if (to < from || ((to - from) >> HIST_LINE_SHIFT) > 4096) {
		/* Cannot happen for a contiguous block; stay correct. */
		memset(s->bloom, 0xff, sizeof s->bloom);
		return;
	}
	for (uint64_t line = from >> HIST_LINE_SHIFT;
	     line <= to >> HIST_LINE_SHIFT; line++) {
		unsigned a, b;
		hist_bloom_pos(line, &a, &b);
		s->bloom[a / 64] |= 1ull << (a % 64);
		s->bloom[b / 64] |= 1ull << (b % 64);
	}
}

/* ---- finding segment starts ---- */

struct psb_info {
	uint64_t tsc, ip;
	unsigned nsu;
};

enum { HDR_OK, HDR_INCOMPLETE, HDR_BAD };

static uint64_t fup_ip(const struct pt_packet_ip *p)
{
	/* The last IP is zero after a PSB, so updates keep only their
	 * low bytes. */
	switch (p->ipc) {
	case pt_ipc_update_16: return p->ip & 0xffffull;
	case pt_ipc_update_32: return p->ip & 0xffffffffull;
	case pt_ipc_update_48: return p->ip & 0xffffffffffffull;
	case pt_ipc_sext_48:
		return (uint64_t)((int64_t)(p->ip << 16) >> 16);
	case pt_ipc_full: return p->ip;
	default: return 0;
	}
}

/* Read the PSB+ at off: its TSC, FUP IP, and how many status-update events
 * libipt will report for it (one per MODE, CBR, PIP, VMCS packet). */
static int read_header(struct pt_packet_decoder *d, uint64_t off,
		       struct psb_info *out)
{
	struct pt_packet pkt;

	memset(out, 0, sizeof *out);
	if (pt_pkt_sync_set(d, off) < 0)
		return HDR_BAD;
	for (int i = 0; i < MAX_HEADER_PACKETS; i++) {
		int rc = pt_pkt_next(d, &pkt, sizeof pkt);
		if (rc == -pte_eos)
			return HDR_INCOMPLETE;
		if (rc < 0)
			return HDR_BAD;
		if (i == 0 && pkt.type != ppt_psb)
			return HDR_BAD;
		switch (pkt.type) {
		case ppt_psbend:
			return HDR_OK;
		case ppt_tsc:
			out->tsc = pkt.payload.tsc.tsc;
			break;
		case ppt_fup:
			out->ip = fup_ip(&pkt.payload.ip);
			break;
		case ppt_mode:
		case ppt_cbr:
		case ppt_pip:
		case ppt_vmcs:
			out->nsu++;
			break;
		case ppt_ovf:
		case ppt_tip:
		case ppt_tip_pge:
		case ppt_tip_pgd:
		case ppt_tnt_8:
		case ppt_tnt_64:
			return HDR_BAD;
		default:
			break;
		}
	}
	return HDR_BAD;
}

static int add_segment(struct history *h, uint64_t off,
		       const struct psb_info *pi)
{
	struct hist_seg *s;

	if (h->nseg == h->segcap) {
		size_t cap = h->segcap ? h->segcap * 2 : 64;
		struct hist_seg *ns = realloc(h->seg, cap * sizeof *ns);
		if (!ns)
			return -1;
		h->seg = ns;
		h->segcap = cap;
	}
	if (h->nseg > 0)
		h->seg[h->nseg - 1].pub.complete = true;
	s = &h->seg[h->nseg];
	memset(s, 0, sizeof *s);
	s->pub.offset = off;
	s->pub.tsc = pi->tsc;
	s->pub.psb_ip = pi->ip;
	/* Bytes before the first PSB cannot be decoded: a gap. */
	s->pub.gap_before = h->nseg == 0 && off > 0;
	s->nsu = pi->nsu;
	s->decode_from = h->nseg;
	h->nseg++;
	return 0;
}

/* Search the bytes not searched yet for PSBs whose PSB+ is complete. */
static int scan_psbs(struct history *h)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	int rc = 0;

	hist_config(h, &cfg);
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d)
		return -1;
	while (h->scan_pos + PSB_LEN <= h->len) {
		const uint8_t *p = memmem(h->buf + h->scan_pos,
					  h->len - h->scan_pos, psb_pattern,
					  PSB_LEN);
		struct psb_info pi;
		uint64_t off;
		int hdr;

		if (!p) {
			h->scan_pos = h->len - (PSB_LEN - 1);
			break;
		}
		off = (uint64_t)(p - h->buf);
		hdr = read_header(d, off, &pi);
		if (hdr == HDR_INCOMPLETE) {
			h->scan_pos = off; /* again when more bytes come */
			break;
		}
		h->scan_pos = off + (hdr == HDR_OK ? PSB_LEN : 1);
		/* A PSB written while tracing was off yields no status
		 * update: no decoder event marks it, so it starts no
		 * segment. */
		if (hdr == HDR_OK && (h->nseg == 0 || pi.nsu > 0) &&
		    add_segment(h, off, &pi) < 0) {
			rc = -1;
			break;
		}
	}
	pt_pkt_free_decoder(d);
	return rc;
}

/* ---- decoding ---- */

struct run {
	size_t start;          /* segment whose PSB the decoder synced at */
	size_t first_new;      /* segments before this one are final */
	size_t cur;            /* segment being decoded */
	uint64_t su;           /* status updates seen since the sync */
	uint64_t su_next;      /* ... at which segment cur+1 begins */
	uint64_t confirmed;    /* open segment: insns up to last disable */
	size_t evconfirmed[HIST_EVKINDS];
};

static void enter_segment(struct history *h, struct run *r, size_t k)
{
	struct hist_seg *s = &h->seg[k];

	if (k + 1 < h->nseg)
		r->su_next += h->seg[k].nsu;
	r->cur = k;
	if (k < r->first_new)
		return;
	s->pub.first_insn = h->ninsn;
	s->pub.ninsn = 0;
	memset(s->bloom, 0, sizeof s->bloom);
	for (int i = 0; i < HIST_EVKINDS; i++)
		s->evmark[i] = h->ev[i].n;
	r->confirmed = h->ninsn;
	for (int i = 0; i < HIST_EVKINDS; i++)
		r->evconfirmed[i] = h->ev[i].n;
}

static bool is_open(const struct history *h, size_t k)
{
	return k + 1 == h->nseg;
}

static void confirm(struct history *h, struct run *r)
{
	r->confirmed = h->ninsn;
	for (int i = 0; i < HIST_EVKINDS; i++)
		r->evconfirmed[i] = h->ev[i].n;
}

static int on_event(struct history *h, struct run *r, const struct pt_event *ev)
{
	bool mine = r->cur >= r->first_new;

	if (ev->status_update) {
		r->su++;
		while (r->cur + 1 < h->nseg && r->su > r->su_next)
			enter_segment(h, r, r->cur + 1);
		return 0;
	}
	if (!mine)
		return 0;
	switch (ev->type) {
	case ptev_enabled:
		return add_event(h, HISTORY_EV_ENABLED);
	case ptev_disabled:
		if (add_event(h, HISTORY_EV_DISABLED) < 0)
			return -1;
		confirm(h, r);
		return 0;
	case ptev_async_disabled:
		if (add_event(h, HISTORY_EV_ASYNC) < 0)
			return -1;
		confirm(h, r);
		return 0;
	case ptev_overflow:
		return add_event(h, HISTORY_EV_GAP);
	default:
		return 0;
	}
}

/* Decode from segment `start`'s PSB to the end of the bytes, giving
 * segments first_new.. their numbers. Returns 0 when done, 1 when the
 * decode must restart at segment *restart (after a gap, or earlier for
 * missing call-stack context), -1 when out of memory. */
static int decode_run(struct history *h, size_t start, size_t first_new,
		      size_t *restart)
{
	struct pt_config cfg;
	struct pt_block_decoder *dec;
	struct run r;
	int status;

	memset(&r, 0, sizeof r);
	r.start = start;
	r.first_new = first_new;
	hist_config(h, &cfg);
	/* Blocks follow direct jumps and calls unless told not to; the
	 * Bloom filter wants address ranges. */
	cfg.flags.variant.block.end_on_call = 1;
	cfg.flags.variant.block.end_on_jump = 1;
	dec = pt_blk_alloc_decoder(&cfg);
	if (!dec)
		return -1;
	if (pt_blk_set_image(dec, h->cfg.image) < 0) {
		pt_blk_free_decoder(dec);
		return -1;
	}
	enter_segment(h, &r, start);
	status = pt_blk_sync_set(dec, h->seg[start].pub.offset);
	if (start >= first_new && h->seg[start].pub.gap_before &&
	    add_event(h, HISTORY_EV_GAP) < 0)
		goto nomem;
	for (;;) {
		struct pt_block blk;

		while (status >= 0 && (status & pts_event_pending)) {
			struct pt_event ev;
			size_t before = r.cur;
			status = pt_blk_event(dec, &ev, sizeof ev);
			if (status < 0)
				break;
			if (on_event(h, &r, &ev) < 0)
				goto nomem;
			/* A gap event belongs at the start of a segment
			 * that follows one. */
			for (size_t k = before + 1; k <= r.cur; k++)
				if (k >= first_new && h->seg[k].pub.gap_before &&
				    add_event(h, HISTORY_EV_GAP) < 0)
					goto nomem;
		}
		if (status < 0 || (status & pts_eos))
			break;
		status = pt_blk_next(dec, &blk, sizeof blk);
		if (status < 0)
			break; /* a partial block is never counted */
		if (blk.ninsn == 0 || r.cur < first_new)
			continue;
		bloom_add_range(&h->seg[r.cur], blk.ip, blk.end_ip);
		h->seg[r.cur].pub.ninsn += blk.ninsn;
		h->ninsn += blk.ninsn;
	}
	pt_blk_free_decoder(dec);

	if ((status < 0 || (status & pts_eos)) && !is_open(h, r.cur)) {
		/* A complete segment failed. A compressed RET whose CALL
		 * lies before the sync point (hardware traces) is decoded
		 * again from an earlier PSB; anything else leaves a gap and
		 * decoding resumes at the next segment. */
		size_t k = r.cur, from = h->seg[k].decode_from;
		if (status == -pte_retstack_empty && k >= first_new &&
		    from > 0 && k - from < HISTORY_MAX_BACK &&
		    !h->seg[from].pub.gap_before) {
			h->seg[k].decode_from = from - 1;
			h->ninsn = h->seg[k].pub.first_insn;
			for (int i = 0; i < HIST_EVKINDS; i++)
				h->ev[i].n = h->seg[k].evmark[i];
			*restart = from - 1;
			return 1;
		}
		h->seg[k + 1].pub.gap_before = true;
		*restart = k + 1;
		return 1;
	}
	/* The open segment keeps only what a disable event confirmed, unless
	 * no bytes will follow: then every block decoded counts. */
	if (r.cur >= first_new && !h->sealed) {
		struct hist_seg *s = &h->seg[r.cur];
		s->pub.ninsn = r.confirmed - s->pub.first_insn;
		h->ninsn = r.confirmed;
		for (int i = 0; i < HIST_EVKINDS; i++)
			h->ev[i].n = r.evconfirmed[i];
	}
	return 0;

nomem:
	pt_blk_free_decoder(dec);
	return -1;
}

/* Index segments from the first non-final one to the end of the bytes. */
static int index_tail(struct history *h)
{
	size_t k = h->nfinal, start;

	if (k >= h->nseg)
		return 0;
	/* Forget what the open segment had (it is decoded again). */
	h->ninsn = h->seg[k].pub.first_insn;
	for (int i = 0; i < HIST_EVKINDS; i++)
		h->ev[i].n = h->seg[k].evmark[i];
	start = h->seg[k].decode_from;
	for (;;) {
		size_t restart = 0;
		int rc = decode_run(h, start, k, &restart);
		if (rc <= 0) {
			if (rc < 0)
				return -1;
			break;
		}
		if (restart > k)
			k = restart; /* resync after a gap */
		start = restart;
	}
	h->nfinal = h->nseg - 1;
	return 0;
}

/* ---- public ---- */

int history_append(struct history *h, const uint8_t *data, size_t len)
{
	if (len == 0)
		return 0;
	if (h->len + len > h->cap) {
		size_t cap = h->cap ? h->cap : 65536;
		uint8_t *nb;
		while (cap < h->len + len)
			cap *= 2;
		nb = realloc(h->buf, cap);
		if (!nb)
			return -1;
		h->buf = nb;
		h->cap = cap;
	}
	memcpy(h->buf + h->len, data, len);
	h->len += len;
	if (scan_psbs(h) < 0)
		return -1;
	return index_tail(h);
}

int history_seal(struct history *h)
{
	if (h->sealed)
		return 0;
	h->sealed = true;
	return index_tail(h);
}

uint64_t history_insn_count(const struct history *h)
{
	return h->ninsn;
}

size_t history_segment_count(const struct history *h)
{
	return h->nseg;
}

const struct history_segment *history_segment(const struct history *h,
					      size_t i)
{
	if (i >= h->nseg)
		return NULL;
	return &h->seg[i].pub;
}

long history_segment_of(const struct history *h, uint64_t n)
{
	size_t lo = 0, hi = h->nseg;

	if (n >= h->ninsn)
		return -1;
	/* The last segment whose first instruction is <= n and that has
	 * instructions. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->seg[mid].pub.first_insn <= n)
			lo = mid;
		else
			hi = mid;
	}
	while (lo > 0 && h->seg[lo].pub.ninsn == 0)
		lo--;
	return (long)lo;
}

uint64_t history_decode_count(const struct history *h)
{
	return h->decodes;
}
