/* Searches over the history: the previous/next execution of any of a set
 * of addresses (decoding only segments whose Bloom filter admits one), and
 * the events recorded between instructions. */
#include "history_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- address sets ---- */

struct addr_set {
	const uint64_t *addrs;
	size_t n;
	uint64_t *sorted;      /* for larger sets: binary search */
	unsigned *pos;         /* two Bloom bit positions per address */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int set_init(struct addr_set *s, const uint64_t *addrs, size_t n)
{
	memset(s, 0, sizeof *s);
	s->addrs = addrs;
	s->n = n;
	s->pos = malloc(2 * n * sizeof *s->pos);
	if (!s->pos)
		return -1;
	for (size_t i = 0; i < n; i++)
		hist_bloom_pos(addrs[i] >> HIST_LINE_SHIFT, &s->pos[2 * i],
			       &s->pos[2 * i + 1]);
	if (n > 8) {
		s->sorted = malloc(n * sizeof *s->sorted);
		if (!s->sorted) {
			free(s->pos);
			return -1;
		}
		memcpy(s->sorted, addrs, n * sizeof *addrs);
		qsort(s->sorted, n, sizeof *s->sorted, cmp_u64);
	}
	return 0;
}

static void set_free(struct addr_set *s)
{
	free(s->sorted);
	free(s->pos);
}

static bool set_has(const struct addr_set *s, uint64_t ip)
{
	if (s->sorted)
		return bsearch(&ip, s->sorted, s->n, sizeof ip, cmp_u64) != NULL;
	for (size_t i = 0; i < s->n; i++)
		if (s->addrs[i] == ip)
			return true;
	return false;
}

static bool bit(const struct hist_seg *seg, unsigned b)
{
	return (seg->bloom[b / 64] >> (b % 64)) & 1;
}

/* May segment seg execute any address of the set? (No false negatives.) */
static bool may_contain(const struct hist_seg *seg, const struct addr_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (bit(seg, s->pos[2 * i]) && bit(seg, s->pos[2 * i + 1]))
			return true;
	return false;
}

/* ---- previous / next execution ---- */

int history_prev_exec(struct history *h, uint64_t n, const uint64_t *addrs,
		      size_t naddr, uint64_t *found)
{
	return history_prev_exec_since(h, 0, n, addrs, naddr, found);
}

int history_prev_exec_since(struct history *h, uint64_t lo, uint64_t n, const uint64_t *addrs,
			    size_t naddr, uint64_t *found)
{
	struct addr_set set;
	int rc = 0;
	long k;

	if (n > h->ninsn)
		n = h->ninsn;
	if (n <= lo || naddr == 0)
		return 0;
	if (set_init(&set, addrs, naddr) < 0)
		return -1;
	for (k = history_segment_of(h, n - 1); k >= 0 && rc == 0; k--) {
		const struct hist_seg *seg = &h->seg[k];
		const uint64_t *ips;
		uint64_t i;

		if (seg->pub.first_insn + seg->pub.ninsn <= lo)
			break;
		if (seg->pub.ninsn == 0 || !may_contain(seg, &set))
			continue;
		ips = hist_segment_ips(h, (size_t)k);
		if (!ips) {
			rc = -1;
			break;
		}
		i = n - seg->pub.first_insn;
		if (i > seg->pub.ninsn)
			i = seg->pub.ninsn;
		while (i-- > 0 && seg->pub.first_insn + i >= lo) {
			if (set_has(&set, ips[i])) {
				*found = seg->pub.first_insn + i;
				rc = 1;
				break;
			}
		}
	}
	set_free(&set);
	return rc;
}

int history_next_exec(struct history *h, uint64_t n, const uint64_t *addrs,
		      size_t naddr, uint64_t *found)
{
	struct addr_set set;
	int rc = 0;
	long k;

	if (n >= h->ninsn || naddr == 0)
		return 0;
	if (set_init(&set, addrs, naddr) < 0)
		return -1;
	for (k = history_segment_of(h, n); (size_t)k < h->nseg && rc == 0;
	     k++) {
		const struct hist_seg *seg = &h->seg[k];
		const uint64_t *ips;
		uint64_t i;

		if (seg->pub.ninsn == 0 || !may_contain(seg, &set))
			continue;
		ips = hist_segment_ips(h, (size_t)k);
		if (!ips) {
			rc = -1;
			break;
		}
		i = n > seg->pub.first_insn ? n - seg->pub.first_insn : 0;
		for (; i < seg->pub.ninsn; i++) {
			if (set_has(&set, ips[i])) {
				*found = seg->pub.first_insn + i;
				rc = 1;
				break;
			}
		}
	}
	set_free(&set);
	return rc;
}

/* ---- events ---- */

/* First index in v with v[i] >= x. */
static size_t lower_bound(const struct hist_u64vec *v, uint64_t x)
{
	size_t lo = 0, hi = v->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v->v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

unsigned history_events_before(const struct history *h, uint64_t n)
{
	unsigned flags = 0;

	for (int i = 0; i < HIST_EVKINDS; i++) {
		size_t j = lower_bound(&h->ev[i], n);
		if (j < h->ev[i].n && h->ev[i].v[j] == n)
			flags |= 1u << i;
	}
	return flags;
}

int history_prev_event(const struct history *h, uint64_t n, unsigned mask,
		       uint64_t *found)
{
	int rc = 0;

	for (int i = 0; i < HIST_EVKINDS; i++) {
		size_t j;
		if (!(mask & (1u << i)))
			continue;
		j = lower_bound(&h->ev[i], n + 1); /* first > n */
		if (j > 0 && (!rc || h->ev[i].v[j - 1] > *found)) {
			*found = h->ev[i].v[j - 1];
			rc = 1;
		}
	}
	return rc;
}

int history_next_event(const struct history *h, uint64_t n, unsigned mask,
		       uint64_t *found)
{
	int rc = 0;

	for (int i = 0; i < HIST_EVKINDS; i++) {
		size_t j;
		if (!(mask & (1u << i)))
			continue;
		j = lower_bound(&h->ev[i], n);
		if (j < h->ev[i].n && (!rc || h->ev[i].v[j] < *found)) {
			*found = h->ev[i].v[j];
			rc = 1;
		}
	}
	return rc;
}
