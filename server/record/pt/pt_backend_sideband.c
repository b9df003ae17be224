/* Decoding the perf records an intel_pt event writes to its data ring:
 * which code got mapped (MMAP/MMAP2), name changes and execs (COMM), task
 * birth and death (FORK/EXIT), where PT data landed and whether some was
 * lost (AUX), when tracing began (ITRACE_START), dropped records (LOST).
 * Layouts: linux/perf_event.h; every record ends with the sample_id
 * trailer when the event has sample_id_all. */
#include "ptrev/pt_backend.h"

#include <string.h>

size_t pt_sb_trailer_size(uint64_t st)
{
	size_t n = 0;
	if (st & PERF_SAMPLE_TID)
		n += 8;
	if (st & PERF_SAMPLE_TIME)
		n += 8;
	if (st & PERF_SAMPLE_ID)
		n += 8;
	if (st & PERF_SAMPLE_STREAM_ID)
		n += 8;
	if (st & PERF_SAMPLE_CPU)
		n += 8;
	if (st & PERF_SAMPLE_IDENTIFIER)
		n += 8;
	return n;
}

/* A bounded reader over the record body. */
struct cursor {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static void take(struct cursor *c, void *out, size_t n)
{
	if (c->bad || c->left < n) {
		c->bad = true;
		memset(out, 0, n);
		return;
	}
	memcpy(out, c->p, n);
	c->p += n;
	c->left -= n;
}

static uint32_t u32(struct cursor *c)
{
	uint32_t v;
	take(c, &v, sizeof(v));
	return v;
}

static uint64_t u64(struct cursor *c)
{
	uint64_t v;
	take(c, &v, sizeof(v));
	return v;
}

/* A NUL-terminated string padded to 8 bytes, all inside the body. */
static const char *str(struct cursor *c)
{
	if (c->bad)
		return NULL;
	const uint8_t *nul = memchr(c->p, 0, c->left);
	if (!nul) {
		c->bad = true;
		return NULL;
	}
	const char *s = (const char *)c->p;
	size_t used = (size_t)(nul - c->p) + 1;
	used = (used + 7) & ~(size_t)7;
	if (used > c->left)
		used = c->left;
	c->p += used;
	c->left -= used;
	return s;
}

static void parse_trailer(const uint8_t *t, uint64_t st, struct pt_sb_event *ev)
{
	struct cursor c = { t, pt_sb_trailer_size(st), false };
	if (st & PERF_SAMPLE_TID) {
		ev->sid_pid = u32(&c);
		ev->sid_tid = u32(&c);
	}
	if (st & PERF_SAMPLE_TIME)
		ev->sid_time = u64(&c);
	ev->has_sample_id = true;
}

int pt_sb_parse(const struct perf_event_header *h, bool sample_id_all, uint64_t sample_type,
		struct pt_sb_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = h->type;
	ev->misc = h->misc;
	if (h->size < sizeof(*h))
		return -1;
	size_t body = h->size - sizeof(*h);
	/* Every kernel-made record but SAMPLE carries the trailer. */
	size_t trailer = sample_id_all && h->type != PERF_RECORD_SAMPLE
		? pt_sb_trailer_size(sample_type) : 0;
	if (body < trailer)
		return -1;
	body -= trailer;
	const uint8_t *p = (const uint8_t *)(h + 1);
	struct cursor c = { p, body, false };

	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		ev->kind = PT_SB_MMAP;
		ev->pid = u32(&c);
		ev->tid = u32(&c);
		ev->addr = u64(&c);
		ev->len = u64(&c);
		ev->pgoff = u64(&c);
		if (h->type == PERF_RECORD_MMAP2) {
			if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				uint8_t hdr[4], id[20];
				take(&c, hdr, sizeof(hdr));
				take(&c, id, sizeof(id));
				ev->build_id_len = hdr[0] > 20 ? 20 : hdr[0];
				memcpy(ev->build_id, id, ev->build_id_len);
			} else {
				ev->maj = u32(&c);
				ev->min = u32(&c);
				ev->ino = u64(&c);
				(void)u64(&c); /* ino_generation */
			}
			ev->prot = u32(&c);
			ev->flags = u32(&c);
		}
		ev->name = str(&c);
		break;
	case PERF_RECORD_COMM:
		ev->kind = PT_SB_COMM;
		ev->pid = u32(&c);
		ev->tid = u32(&c);
		ev->name = str(&c);
		ev->comm_exec = (h->misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		ev->kind = h->type == PERF_RECORD_EXIT ? PT_SB_EXIT : PT_SB_FORK;
		ev->pid = u32(&c);
		ev->ppid = u32(&c);
		ev->tid = u32(&c);
		ev->ptid = u32(&c);
		(void)u64(&c); /* time, as in the trailer */
		break;
	case PERF_RECORD_AUX:
		ev->kind = PT_SB_AUX;
		ev->aux_offset = u64(&c);
		ev->aux_size = u64(&c);
		ev->aux_flags = u64(&c);
		ev->truncated = (ev->aux_flags & PERF_AUX_FLAG_TRUNCATED) != 0;
		ev->overwrite = (ev->aux_flags & PERF_AUX_FLAG_OVERWRITE) != 0;
		ev->partial = (ev->aux_flags & PERF_AUX_FLAG_PARTIAL) != 0;
		ev->collision = (ev->aux_flags & PERF_AUX_FLAG_COLLISION) != 0;
		break;
	case PERF_RECORD_ITRACE_START:
		ev->kind = PT_SB_ITRACE_START;
		ev->pid = u32(&c);
		ev->tid = u32(&c);
		break;
	case PERF_RECORD_LOST:
		ev->kind = PT_SB_LOST;
		(void)u64(&c); /* id */
		ev->lost = u64(&c);
		break;
	default:
		ev->kind = PT_SB_OTHER;
		break;
	}
	if (c.bad)
		return -1;
	if (trailer)
		parse_trailer(p + body, sample_type, ev);
	return 0;
}
