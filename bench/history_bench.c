/* History index benchmark (`meson test --benchmark -C BUILD history_bench`).
 *
 * A synthetic thread of N instructions (default 10 million; argv[1]) made
 * with the sw PT encoder over a small code buffer (bench/history_synth.h),
 * then, in one process and over the same trace and image:
 *  - a plain libipt pt_insn_next loop over the whole trace (the baseline:
 *    "decoding the whole history");
 *  - the index build (history_append of the whole trace), and the same in
 *    64 KiB appends as a live server would feed it;
 *  - latency at the end of history of `ip at N` (reverse-stepi) and of
 *    `previous execution of A before the end` (reverse-continue), for an
 *    address the loop runs often and for one that ran only once, near the
 *    start; each with a cold cache, then warm.
 * Each latency is printed also as a fraction of the full decode. */
#include "ptrev/history.h"
#include "history_synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t full_decode(const uint8_t *data, size_t len,
			    struct pt_image *image)
{
	struct pt_config cfg;
	struct pt_insn_decoder *dec;
	uint64_t n = 0;
	int status;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)data;
	cfg.end = (uint8_t *)data + len;
	dec = pt_insn_alloc_decoder(&cfg);
	pt_insn_set_image(dec, image);
	status = pt_insn_sync_forward(dec);
	while (status >= 0) {
		struct pt_insn insn;
		while (status & pts_event_pending) {
			struct pt_event ev;
			status = pt_insn_event(dec, &ev, sizeof ev);
			if (status < 0)
				break;
		}
		if (status < 0 || (status & pts_eos))
			break;
		status = pt_insn_next(dec, &insn, sizeof insn);
		if (status < 0)
			break;
		n++;
	}
	pt_insn_free_decoder(dec);
	return n;
}

static struct history *build(struct pt_image *image, const uint8_t *data,
			     size_t len, size_t chunk)
{
	struct history_config cfg = {0};
	struct history *h;

	cfg.image = image;
	h = history_new(&cfg);
	for (size_t off = 0; off < len; off += chunk)
		if (history_append(h, data + off,
				   len - off < chunk ? len - off : chunk) < 0)
			abort();
	return h;
}

int main(int argc, char **argv)
{
	uint64_t ninsn = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000000;
	struct pt_image_section_cache *isc;
	struct pt_image *image = synth_image(&isc);
	struct synth_truth t;
	struct ptenc *e;
	const uint8_t *data;
	size_t len;
	double t0, full, idx, idx_chunked;
	uint64_t n, ip, found, end;
	struct history *h;
	int bad = 0;

	t0 = now();
	e = synth_run(ninsn, 42, PTENC_DEFAULT_PSB_PERIOD, 1000, 0, &t);
	data = ptenc_data(e, &len);
	printf("history_bench: %llu instructions, %zu bytes of PT "
	       "(made in %.2f s)\n", (unsigned long long)t.n, len, now() - t0);

	t0 = now();
	n = full_decode(data, len, image);
	full = now() - t0;
	printf("full decode (pt_insn_next loop): %.3f s, %.1f M insn/s\n",
	       full, (double)n / full / 1e6);
	if (n != t.n)
		bad = printf("FAIL: full decode gave %llu instructions\n",
			     (unsigned long long)n);

	t0 = now();
	h = build(image, data, len, len);
	idx = now() - t0;
	printf("index build, one append: %.3f s, %.1f M insn/s "
	       "(%.2fx the pt_insn_next loop), %zu segments\n", idx,
	       (double)history_insn_count(h) / idx / 1e6, full / idx,
	       history_segment_count(h));
	{
		struct history *g;
		t0 = now();
		g = build(image, data, len, 65536);
		idx_chunked = now() - t0;
		printf("index build, 64 KiB appends: %.3f s, %.1f M insn/s\n",
		       idx_chunked,
		       (double)history_insn_count(g) / idx_chunked / 1e6);
		if (history_insn_count(g) != history_insn_count(h))
			bad = printf("FAIL: chunked index differs\n");
		history_free(g);
	}
	end = history_insn_count(h);
	if (end != t.n)
		bad = printf("FAIL: index has %llu instructions\n",
			     (unsigned long long)end);

	/* reverse-stepi at the end: ip at end-1, cold then warm. */
	for (int warm = 0; warm < 2 && end > 0; warm++) {
		double dt;
		t0 = now();
		if (history_ip_at(h, end - 1, &ip) < 0 || ip != t.ip[end - 1])
			bad = printf("FAIL: ip at the end\n");
		dt = now() - t0;
		printf("ip at N (end, %s): %.1f us = %.2e of the full decode\n",
		       warm ? "warm" : "cold", dt * 1e6, dt / full);
	}

	/* reverse-continue at the end: to an address the loop runs all the
	 * time, to one on the syscall path (every ~1000 iterations), and to
	 * one never run (it goes back to the start of history: every
	 * segment's filter is asked, none decoded). */
	{
		static const struct { const char *what; uint64_t addr; } q[3] = {
			{"loop address", SYNTH_BASE + 0x12},
			{"syscall-path address", SYNTH_BASE + 0x16},
			{"never-run address", SYNTH_NEVER}};
		for (int k = 0; k < 3; k++) {
			for (int warm = 0; warm < 2; warm++) {
				uint64_t before = history_decode_count(h);
				double dt;
				int rc;
				t0 = now();
				rc = history_prev_exec(h, end, &q[k].addr, 1,
						       &found);
				dt = now() - t0;
				printf("previous execution of the %s before "
				       "the end (%s, found %s, %llu segment "
				       "decodes): %.1f us = %.2e of the full "
				       "decode\n", q[k].what,
				       warm ? "warm" : "cold",
				       rc == 1 ? "yes" : "no",
				       (unsigned long long)(history_decode_count(h) - before),
				       dt * 1e6, dt / full);
				if (rc != (k < 2) ||
				    (rc == 1 && t.ip[found] != q[k].addr))
					bad = printf("FAIL: previous execution\n");
			}
		}
	}
	history_free(h);
	ptenc_free(e);
	synth_truth_free(&t);
	pt_image_free(image);
	pt_iscache_free(isc);
	return bad ? 1 : 0;
}
