/* Consuming the two rings of a perf event: the AUX area (raw PT bytes) and
 * the data ring (sideband records). The kernel is the producer, we are the
 * consumer; heads and tails are free-running byte counters, positions in
 * the buffer are counter modulo size (sizes are powers of two).
 *
 * Ordering, as perf_event_open(2) prescribes: read the head with acquire
 * semantics (the kernel's smp_rmb pairing: no data read may be hoisted
 * above it), copy, then publish the tail with release semantics (smp_mb:
 * our reads finish before the kernel may overwrite the bytes). */
#include "ptrev/pt_backend.h"

#include <string.h>

static uint64_t load_acquire(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_release(__u64 *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Give sink the len bytes that start at counter `from` in a ring of size
 * bytes: one piece, or two when they run past the end of the buffer. */
static int copy_out(const uint8_t *buf, uint64_t size, uint64_t from, uint64_t len,
		    pt_sink_fn sink, void *ctx)
{
	uint64_t off = from & (size - 1);
	uint64_t first = len < size - off ? len : size - off;
	if (first && sink(ctx, buf + off, (size_t)first) < 0)
		return -1;
	if (len > first && sink(ctx, buf, (size_t)(len - first)) < 0)
		return -1;
	return 0;
}

int64_t pt_aux_drain(struct pt_ring *r, pt_sink_fn sink, void *ctx, uint64_t *lost)
{
	if (lost)
		*lost = 0;
	uint64_t head = load_acquire(&r->pc->aux_head);
	if (r->aux_overwrite) {
		/* The kernel ignores aux_tail here and writes round and round:
		 * of everything since our last look, only the newest aux_size
		 * bytes are still in the buffer. */
		if (head < r->aux_seen)
			return -1;
		uint64_t len = head - r->aux_seen, from = r->aux_seen;
		if (len > r->aux_size) {
			if (lost)
				*lost = len - r->aux_size;
			from = head - r->aux_size;
			len = r->aux_size;
		}
		if (copy_out(r->aux, r->aux_size, from, len, sink, ctx) < 0)
			return -1;
		r->aux_seen = head;
		return (int64_t)len;
	}
	uint64_t tail = r->pc->aux_tail; /* only we write it */
	if (head < tail || head - tail > r->aux_size)
		return -1;
	uint64_t len = head - tail;
	if (copy_out(r->aux, r->aux_size, tail, len, sink, ctx) < 0)
		return -1;
	store_release(&r->pc->aux_tail, head);
	return (int64_t)len;
}

/* Reassembles a record that wraps; perf_event_header.size is a u16, so
 * no record is larger than this. */
struct scratch_sink {
	uint8_t *buf;
	size_t used;
};

static int to_scratch(void *ctx, const void *buf, size_t len)
{
	struct scratch_sink *s = ctx;
	memcpy(s->buf + s->used, buf, len);
	s->used += len;
	return 0;
}

int pt_data_drain(struct pt_ring *r, pt_record_fn fn, void *ctx)
{
	_Alignas(8) uint8_t scratch[65536];
	uint64_t head = load_acquire(&r->pc->data_head);
	uint64_t tail = r->pc->data_tail;
	if (head < tail || head - tail > r->data_size)
		return -1;
	int count = 0, rc = 0;
	while (tail < head) {
		uint64_t off = tail & (r->data_size - 1);
		struct perf_event_header h;
		struct scratch_sink s = { (uint8_t *)&h, 0 };
		if (head - tail < sizeof(h)) {
			rc = -1;
			break;
		}
		copy_out(r->data, r->data_size, tail, sizeof(h), to_scratch, &s);
		if (h.size < sizeof(h) || h.size > head - tail) {
			rc = -1;
			break;
		}
		const struct perf_event_header *rec;
		/* Records are 8-byte aligned in the ring; one that runs past
		 * the end is copied together so the parser sees it whole. */
		if (off + h.size <= r->data_size && (off & 7) == 0) {
			rec = (const struct perf_event_header *)(r->data + off);
		} else {
			s = (struct scratch_sink){ scratch, 0 };
			copy_out(r->data, r->data_size, tail, h.size, to_scratch, &s);
			rec = (const struct perf_event_header *)scratch;
		}
		if (fn(ctx, rec) < 0) {
			rc = -1;
			break;
		}
		tail += h.size;
		count++;
	}
	/* Release what was consumed, even on error: the bad record stays, so
	 * a caller that gives up does not spin on it; one that retries sees
	 * the same error. */
	store_release(&r->pc->data_tail, tail);
	return rc < 0 ? -1 : count;
}
