/* State of the history index shared by decode/history*.c: index building
 * (history_index.c, at the bottom), the cache of decoded segments
 * (history_cache.c), the searches (history_search.c) and the object's
 * life (history.c, at the top). */
#ifndef PTREV_DECODE_HISTORY_INTERNAL_H
#define PTREV_DECODE_HISTORY_INTERNAL_H

#include "ptrev/history.h"

/* Per-segment Bloom filter over 64-byte code lines, two probes. 2048 bits
 * keep false positives rare for the few hundred lines a segment of a few
 * KiB of trace touches. */
#define HIST_LINE_SHIFT 6
#define HIST_BLOOM_BITS 2048
#define HIST_BLOOM_WORDS (HIST_BLOOM_BITS / 64)

enum { HIST_EVKINDS = 4 }; /* one sorted array per enum history_event bit */

struct hist_seg {
	struct history_segment pub;
	uint64_t bloom[HIST_BLOOM_WORDS];
	unsigned nsu;          /* status-update events its PSB+ yields */
	size_t decode_from;    /* segment whose PSB a decode starts at */
	size_t evmark[HIST_EVKINDS]; /* event array lengths at its start */
};

struct hist_u64vec {
	uint64_t *v;
	size_t n, cap;
};

struct hist_cache_entry {
	long seg;              /* -1: empty */
	uint64_t first, n;     /* the segment's numbers when decoded */
	uint64_t *ips;
	uint64_t stamp;
};

struct history {
	struct history_config cfg;
	uint8_t *buf;
	size_t len, cap;
	size_t scan_pos;       /* where the PSB search resumes */

	struct hist_seg *seg;
	size_t nseg, segcap;
	size_t nfinal;         /* segments [0, nfinal) are indexed for good */
	bool sealed;           /* no bytes will follow (history_seal) */
	uint64_t ninsn;

	struct hist_u64vec ev[HIST_EVKINDS];

	struct hist_cache_entry *cache;
	unsigned ncache;
	uint64_t clock, decodes;
};

/* history_index.c */
void hist_config(const struct history *h, struct pt_config *cfg);

/* history_cache.c: the IPs of segment k's instructions (owned by the
 * cache, valid until the next cache call), or NULL (out of memory, or the
 * segment no longer decodes as indexed). Set up and freed by history.c. */
const uint64_t *hist_segment_ips(struct history *h, size_t k);
int hist_cache_init(struct history *h);
void hist_cache_free(struct history *h);

/* history_search.c */
static inline void hist_bloom_pos(uint64_t line, unsigned *a, unsigned *b)
{
	*a = (unsigned)((line * 0x9e3779b97f4a7c15ull) >> 53);
	*b = (unsigned)(((line ^ (line >> 29)) * 0xc2b2ae3d27d4eb4full) >> 53);
}

#endif
