/* Decoded segments: the IP of every instruction of a segment, decoded with
 * libipt's instruction decoder from the segment's PSB (or an earlier one
 * when it needs call-stack context), kept in a small LRU cache. */
#include "history_internal.h"

#include <stdlib.h>
#include <string.h>

int hist_cache_init(struct history *h)
{
	unsigned n = h->cfg.cache_segments ? h->cfg.cache_segments : 8;

	h->cache = calloc(n, sizeof *h->cache);
	if (!h->cache)
		return -1;
	h->ncache = n;
	for (unsigned i = 0; i < n; i++)
		h->cache[i].seg = -1;
	return 0;
}

void hist_cache_free(struct history *h)
{
	for (unsigned i = 0; i < h->ncache; i++)
		free(h->cache[i].ips);
	free(h->cache);
}

/* Decode from segment `from`'s PSB, skip the instructions of the segments
 * before k and keep k's. Returns 0, or a negative pt_error_code. */
static int decode_from(struct history *h, size_t from, size_t k,
		       uint64_t *ips)
{
	const struct history_segment *s = &h->seg[k].pub;
	uint64_t skip = s->first_insn - h->seg[from].pub.first_insn, n = 0;
	struct pt_config cfg;
	struct pt_insn_decoder *dec;
	int status;

	hist_config(h, &cfg);
	dec = pt_insn_alloc_decoder(&cfg);
	if (!dec)
		return -pte_nomem;
	status = pt_insn_set_image(dec, h->cfg.image);
	if (status >= 0)
		status = pt_insn_sync_set(dec, h->seg[from].pub.offset);
	while (status >= 0 && n < s->ninsn) {
		struct pt_insn insn;

		while (status & pts_event_pending) {
			struct pt_event ev;
			status = pt_insn_event(dec, &ev, sizeof ev);
			if (status < 0)
				break;
		}
		if (status < 0)
			break;
		status = pt_insn_next(dec, &insn, sizeof insn);
		if (status < 0)
			break;
		if (skip > 0)
			skip--;
		else
			ips[n++] = insn.ip;
	}
	pt_insn_free_decoder(dec);
	if (n == s->ninsn)
		return 0;
	return status < 0 ? status : -pte_internal;
}

static int decode_segment(struct history *h, size_t k, uint64_t *ips)
{
	for (;;) {
		size_t from = h->seg[k].decode_from;
		int rc = decode_from(h, from, k, ips);

		h->decodes++;
		if (rc == 0)
			return 0;
		/* The index pass decoded it, so only missing call-stack
		 * context can make this fail: start earlier. */
		if (rc != -pte_retstack_empty || from == 0 ||
		    k - from >= HISTORY_MAX_BACK || h->seg[from].pub.gap_before)
			return -1;
		h->seg[k].decode_from = from - 1;
	}
}

const uint64_t *hist_segment_ips(struct history *h, size_t k)
{
	const struct history_segment *s = &h->seg[k].pub;
	struct hist_cache_entry *victim = &h->cache[0];
	uint64_t *ips;

	for (unsigned i = 0; i < h->ncache; i++) {
		struct hist_cache_entry *e = &h->cache[i];
		/* The open segment changes as the trace grows. */
		if (e->seg == (long)k && e->first == s->first_insn &&
		    e->n == s->ninsn) {
			e->stamp = ++h->clock;
			return e->ips;
		}
		if (e->stamp < victim->stamp)
			victim = e;
	}
	ips = malloc((s->ninsn ? s->ninsn : 1) * sizeof *ips);
	if (!ips)
		return NULL;
	if (decode_segment(h, k, ips) < 0) {
		free(ips);
		return NULL;
	}
	free(victim->ips);
	victim->seg = (long)k;
	victim->first = s->first_insn;
	victim->n = s->ninsn;
	victim->ips = ips;
	victim->stamp = ++h->clock;
	return ips;
}

int history_ip_at(struct history *h, uint64_t n, uint64_t *ip)
{
	long k = history_segment_of(h, n);
	const uint64_t *ips;

	if (k < 0)
		return -1;
	ips = hist_segment_ips(h, (size_t)k);
	if (!ips)
		return -1;
	*ip = ips[n - h->seg[k].pub.first_insn];
	return 0;
}
