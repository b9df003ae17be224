/* history: the history index against ground truth.
 *
 * Synthetic threads (bench/history_synth.h: emulated control flow over a
 * small code buffer, encoded by the sw PT encoder, with syscalls and
 * signals) give long histories cheaply; tests/programs/ptenc_flow, single-
 * stepped here under ptrace, gives a real one. For each: ip-at-N equals the
 * executed list for every N; previous/next execution equals a brute-force
 * scan for random (N, address set) queries; events sit where the encoder
 * put them; appending in random chunks gives the same index as one append;
 * a corrupted byte gives a gap with correct answers outside it; empty and
 * truncated streams never invent an instruction. */
#include "ptrev/history.h"
#include "ptrev/insn_class.h"
#include "ptrev/pt_encoder.h"
#include "../../bench/history_synth.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void failf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

#define CHECK(cond, ...) do { if (!(cond)) failf(__VA_ARGS__); } while (0)

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(uint64_t n)
{
	return n ? synth_rand(&rng) % n : 0;
}

static struct history *new_history(struct pt_image *image, unsigned cache)
{
	struct history_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.image = image;
	cfg.cache_segments = cache;
	return history_new(&cfg);
}

/* ---- checks against a truth list ---- */

static void check_ips(struct history *h, const uint64_t *ip, uint64_t n,
		      const char *what)
{
	uint64_t got, bad = 0;

	CHECK(history_insn_count(h) == n, "%s: %llu instructions, want %llu",
	      what, (unsigned long long)history_insn_count(h),
	      (unsigned long long)n);
	for (uint64_t i = 0; i < n && i < history_insn_count(h); i++) {
		if (history_ip_at(h, i, &got) < 0 || got != ip[i]) {
			if (bad++ < 3)
				failf("%s: ip at %llu is %#llx, want %#llx", what,
				      (unsigned long long)i,
				      (unsigned long long)got,
				      (unsigned long long)ip[i]);
		}
	}
	CHECK(history_ip_at(h, n, &got) < 0, "%s: ip past the end", what);
}

static void check_searches(struct history *h, const uint64_t *ip, uint64_t n,
			   const uint64_t *pool, size_t npool, int queries,
			   const char *what)
{
	for (int q = 0; q < queries; q++) {
		uint64_t addrs[4], at = rnd(n + 1), want_p = 0, want_n = 0, got;
		size_t na = 1 + rnd(3);
		int wp = 0, wn = 0, rp, rn;

		for (size_t i = 0; i < na; i++)
			addrs[i] = pool[rnd(npool)];
		for (uint64_t i = at; i-- > 0;) {
			for (size_t j = 0; j < na && !wp; j++)
				if (ip[i] == addrs[j]) {
					wp = 1;
					want_p = i;
				}
			if (wp)
				break;
		}
		for (uint64_t i = at; i < n && !wn; i++)
			for (size_t j = 0; j < na; j++)
				if (ip[i] == addrs[j]) {
					wn = 1;
					want_n = i;
					break;
				}
		got = ~0ull;
		rp = history_prev_exec(h, at, addrs, na, &got);
		CHECK(rp == wp && (!wp || got == want_p),
		      "%s: prev of %#llx.. before %llu: %d %llu, want %d %llu",
		      what, (unsigned long long)addrs[0],
		      (unsigned long long)at, rp, (unsigned long long)got, wp,
		      (unsigned long long)want_p);
		/* Bounded below: the same answer where it is at or after
		 * lo, none where it is before. */
		uint64_t lo = rnd(at + 1), got_lo = ~0ull;
		int rl = history_prev_exec_since(h, lo, at, addrs, na, &got_lo);
		int wl = wp && want_p >= lo;
		CHECK(rl == wl && (!wl || got_lo == want_p),
		      "%s: prev of %#llx.. in %llu..%llu: %d %llu, want %d %llu", what,
		      (unsigned long long)addrs[0], (unsigned long long)lo,
		      (unsigned long long)at, rl, (unsigned long long)got_lo, wl,
		      (unsigned long long)want_p);
		got = ~0ull;
		rn = history_next_exec(h, at, addrs, na, &got);
		CHECK(rn == wn && (!wn || got == want_n),
		      "%s: next of %#llx.. from %llu: %d %llu, want %d %llu",
		      what, (unsigned long long)addrs[0],
		      (unsigned long long)at, rn, (unsigned long long)got, wn,
		      (unsigned long long)want_n);
	}
}

static void check_events(struct history *h, const uint8_t *ev, uint64_t n,
			 const char *what)
{
	uint64_t bad = 0, f;

	for (uint64_t i = 0; i <= n; i++) {
		unsigned got = history_events_before(h, i) &
			(HISTORY_EV_ASYNC | HISTORY_EV_DISABLED);
		unsigned want = ev[i] & (HISTORY_EV_ASYNC | HISTORY_EV_DISABLED);
		/* The first enable (ptenc_begin) is an event too; later
		 * ones must match. */
		if (got != want && bad++ < 3)
			failf("%s: events before %llu: %#x, want %#x", what,
			      (unsigned long long)i, got, want);
		if (i > 0 && (history_events_before(h, i) & HISTORY_EV_ENABLED)
		    != (ev[i] & HISTORY_EV_ENABLED) && bad++ < 3)
			failf("%s: enabled before %llu: %#x, want %#x", what,
			      (unsigned long long)i,
			      history_events_before(h, i), ev[i]);
	}
	/* prev/next event agree with the per-instruction flags. */
	for (int q = 0; q < 200; q++) {
		uint64_t at = rnd(n + 1), want = 0;
		int w = 0;
		for (uint64_t i = at + 1; i-- > 0;)
			if (ev[i] & HISTORY_EV_ASYNC) {
				w = 1;
				want = i;
				break;
			}
		CHECK(history_prev_event(h, at, HISTORY_EV_ASYNC, &f) == w &&
		      (!w || f == want), "%s: prev async event from %llu",
		      what, (unsigned long long)at);
		w = 0;
		for (uint64_t i = at; i <= n; i++)
			if (ev[i] & HISTORY_EV_DISABLED) {
				w = 1;
				want = i;
				break;
			}
		CHECK(history_next_event(h, at, HISTORY_EV_DISABLED, &f) == w &&
		      (!w || f == want), "%s: next disabled event from %llu",
		      what, (unsigned long long)at);
	}
}

static void check_segments(struct history *h, const char *what)
{
	uint64_t next = 0;
	size_t n = history_segment_count(h);

	for (size_t i = 0; i < n; i++) {
		const struct history_segment *s = history_segment(h, i);
		CHECK(s->first_insn == next, "%s: segment %zu starts at %llu, "
		      "want %llu", what, i, (unsigned long long)s->first_insn,
		      (unsigned long long)next);
		CHECK(s->complete == (i + 1 < n), "%s: segment %zu complete",
		      what, i);
		next = s->first_insn + s->ninsn;
		if (s->ninsn)
			CHECK(history_segment_of(h, s->first_insn) == (long)i,
			      "%s: segment_of %zu", what, i);
	}
	CHECK(next == history_insn_count(h), "%s: segments hold %llu insns",
	      what, (unsigned long long)next);
}

static bool same_index(struct history *a, struct history *b)
{
	if (history_insn_count(a) != history_insn_count(b) ||
	    history_segment_count(a) != history_segment_count(b))
		return false;
	for (size_t i = 0; i < history_segment_count(a); i++) {
		const struct history_segment *x = history_segment(a, i);
		const struct history_segment *y = history_segment(b, i);
		if (memcmp(x, y, sizeof *x) != 0)
			return false;
	}
	for (uint64_t n = 0; n <= history_insn_count(a); n++)
		if (history_events_before(a, n) != history_events_before(b, n))
			return false;
	return true;
}

/* ---- synthetic threads ---- */

static const uint64_t synth_pool[] = {
	SYNTH_BASE + 0x00, SYNTH_BASE + 0x05, SYNTH_BASE + 0x0a,
	SYNTH_BASE + 0x12, SYNTH_BASE + 0x14, SYNTH_BASE + 0x16,
	SYNTH_BASE + 0x45, SYNTH_BASE + 0x46, SYNTH_HANDLER,
	SYNTH_HANDLER + 3, SYNTH_NEVER, 0x1234};

static void test_synthetic(struct pt_image *image, uint32_t period,
			   uint64_t ninsn, unsigned syscall_every,
			   unsigned signal_every)
{
	struct synth_truth t;
	struct ptenc *e = synth_run(ninsn, period * 7 + ninsn, period,
				    syscall_every, signal_every, &t);
	const uint8_t *data;
	size_t len;
	struct history *h = new_history(image, 4), *g;
	char what[64];

	snprintf(what, sizeof what, "synth psb %u", period);
	data = ptenc_data(e, &len);
	CHECK(history_append(h, data, len) == 0, "%s: append", what);
	check_ips(h, t.ip, t.n, what);
	check_segments(h, what);
	check_events(h, t.ev, t.n, what);
	check_searches(h, t.ip, t.n, synth_pool,
		       sizeof synth_pool / sizeof synth_pool[0], 300, what);
	CHECK(history_segment_count(h) + 1 >= t.npsb,
	      "%s: %zu segments for %zu PSBs", what,
	      history_segment_count(h), t.npsb);
	for (size_t i = 0; i < history_segment_count(h); i++) {
		const struct history_segment *s = history_segment(h, i);
		CHECK(!s->gap_before, "%s: gap before segment %zu", what, i);
		CHECK(i == 0 || (s->psb_ip == t.ip[s->first_insn] &&
				 s->tsc >= 1000),
		      "%s: segment %zu psb ip %#llx tsc %llu", what, i,
		      (unsigned long long)s->psb_ip,
		      (unsigned long long)s->tsc);
	}

	/* Only the segment holding N is decoded for ip at N. */
	if (history_segment_count(h) > 4) {
		uint64_t before = history_decode_count(h), ip;
		history_ip_at(h, 0, &ip);
		history_ip_at(h, history_insn_count(h) - 1, &ip);
		history_ip_at(h, history_insn_count(h) - 1, &ip);
		CHECK(history_decode_count(h) - before <= 2,
		      "%s: %llu decodes for two ip-at queries", what,
		      (unsigned long long)(history_decode_count(h) - before));
		/* An address that never runs is found in no segment. */
		before = history_decode_count(h);
		uint64_t a = SYNTH_NEVER, f;
		CHECK(history_prev_exec(h, history_insn_count(h), &a, 1, &f)
		      == 0, "%s: never-run address found", what);
		CHECK(history_decode_count(h) - before <=
		      history_segment_count(h) / 8,
		      "%s: Bloom filters let %llu of %zu segments through",
		      what, (unsigned long long)(history_decode_count(h) - before),
		      history_segment_count(h));
	}

	/* Incremental appends in random chunks give the same index; at
	 * every point what is known is a prefix of the truth. */
	for (int round = 0; round < 3; round++) {
		size_t off = 0;
		g = new_history(image, 2);
		while (off < len) {
			size_t chunk = 1 + rnd(round == 0 ? 64 : 3 * period);
			uint64_t n, ip;
			if (chunk > len - off)
				chunk = len - off;
			CHECK(history_append(g, data + off, chunk) == 0,
			      "%s: chunk append", what);
			off += chunk;
			n = history_insn_count(g);
			CHECK(n <= t.n, "%s: %llu instructions from a prefix",
			      what, (unsigned long long)n);
			if (n > 0 && n <= t.n) {
				CHECK(history_ip_at(g, n - 1, &ip) == 0 &&
				      ip == t.ip[n - 1],
				      "%s: last ip of a prefix (%llu)", what,
				      (unsigned long long)n);
				uint64_t k = rnd(n);
				CHECK(history_ip_at(g, k, &ip) == 0 &&
				      ip == t.ip[k], "%s: prefix ip at %llu",
				      what, (unsigned long long)k);
			}
		}
		CHECK(same_index(g, h), "%s: chunked index differs (round %d)",
		      what, round);
		history_free(g);
	}

	/* Truncated streams: a prefix of the truth, nothing invented. */
	for (int cut = 0; cut < 12; cut++) {
		size_t l = cut == 0 ? 0 : cut == 1 ? 10 : rnd(len);
		uint64_t n, ip;
		g = new_history(image, 2);
		CHECK(history_append(g, data, l) == 0, "%s: truncated", what);
		n = history_insn_count(g);
		CHECK(n <= t.n && (l > 20 || n == 0),
		      "%s: %llu instructions from %zu bytes", what,
		      (unsigned long long)n, l);
		for (uint64_t i = 0; i < n && i < t.n; i += 1 + rnd(50))
			CHECK(history_ip_at(g, i, &ip) == 0 && ip == t.ip[i],
			      "%s: truncated at %zu: ip at %llu", what, l,
			      (unsigned long long)i);
		check_segments(g, what);
		/* Sealed (no bytes will follow): still a prefix of the
		 * truth, and never less than before. */
		CHECK(history_seal(g) == 0, "%s: seal", what);
		uint64_t sealed = history_insn_count(g);
		CHECK(sealed >= n && sealed <= t.n, "%s: cut at %zu: %llu instructions sealed, "
		      "%llu before", what, l, (unsigned long long)sealed, (unsigned long long)n);
		for (uint64_t i = n; i < sealed && i < t.n; i += 1 + rnd(20))
			CHECK(history_ip_at(g, i, &ip) == 0 && ip == t.ip[i],
			      "%s: sealed at %zu: ip at %llu", what, l, (unsigned long long)i);
		history_free(g);
	}

	history_free(h);
	ptenc_free(e);
	synth_truth_free(&t);
}

/* A stream cut where no disable confirmed anything (one segment, no
 * syscall: a sw recording killed while its thread was in ld.so): nothing
 * while more bytes may come, all but the cut blocks once sealed. */
static void test_sealed(struct pt_image *image)
{
	struct synth_truth t;
	struct ptenc *e = synth_run(20000, 7, 1u << 24, 0, 0, &t);
	size_t len;
	const uint8_t *data = ptenc_data(e, &len);
	struct history *g = new_history(image, 2);
	uint64_t ip;

	CHECK(len > 64 && history_append(g, data, len - 32) == 0, "sealed: append");
	CHECK(history_insn_count(g) == 0, "sealed: %llu instructions confirmed before the seal",
	      (unsigned long long)history_insn_count(g));
	CHECK(history_seal(g) == 0 && history_seal(g) == 0, "sealed: seal twice");
	uint64_t n = history_insn_count(g);
	CHECK(n > t.n * 9 / 10 && n <= t.n, "sealed: %llu of %llu instructions",
	      (unsigned long long)n, (unsigned long long)t.n);
	for (uint64_t i = 0; i < n; i += 1 + rnd(200))
		CHECK(history_ip_at(g, i, &ip) == 0 && ip == t.ip[i], "sealed: ip at %llu",
		      (unsigned long long)i);
	CHECK(n == 0 || (history_ip_at(g, n - 1, &ip) == 0 && ip == t.ip[n - 1]),
	      "sealed: last ip");
	check_segments(g, "sealed");
	history_free(g);
	ptenc_free(e);
	synth_truth_free(&t);
}

/* PSB offsets in emission order (the pattern cannot occur elsewhere). */
static size_t psb_offsets(const uint8_t *d, size_t len, uint64_t *off,
			  size_t max)
{
	static const uint8_t pat[16] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};
	size_t n = 0;
	for (size_t i = 0; i + 16 <= len && n < max;) {
		const uint8_t *p = memmem(d + i, len - i, pat, 16);
		if (!p)
			break;
		off[n++] = (uint64_t)(p - d);
		i = (size_t)(p - d) + 16;
	}
	return n;
}

static void test_corruption(struct pt_image *image)
{
	struct synth_truth t;
	struct ptenc *e = synth_run(200000, 5, 1024, 50, 3000, &t);
	const uint8_t *data;
	size_t len, npsb;
	uint64_t *off;
	uint8_t *bad;
	int gaps_seen = 0;

	data = ptenc_data(e, &len);
	off = calloc(t.npsb + 1, sizeof *off);
	npsb = psb_offsets(data, len, off, t.npsb + 1);
	CHECK(npsb == t.npsb, "corrupt: %zu PSBs found, %zu emitted", npsb,
	      t.npsb);
	bad = malloc(len);
	for (int trial = 0; trial < 6; trial++) {
		size_t pos = len / 4 + rnd(len / 2), seg_bad = npsb;
		struct history *h = new_history(image, 4);
		uint64_t ip;

		memcpy(bad, data, len);
		/* Hit a byte after a PSB+ so the damage stays in one
		 * segment's packets. */
		bad[pos] ^= (uint8_t)(1 + rnd(255));
		for (size_t i = 0; i < npsb; i++)
			if (off[i] <= pos)
				seg_bad = i;
		CHECK(history_append(h, bad, len) == 0, "corrupt: append");
		check_segments(h, "corrupt");
		/* Every segment not holding the bad byte decodes as the
		 * truth says, at its own numbers. */
		for (size_t k = 0; k < history_segment_count(h); k++) {
			const struct history_segment *s = history_segment(h, k);
			size_t p = npsb;
			for (size_t i = 0; i < npsb; i++)
				if (off[i] == s->offset)
					p = i;
			CHECK(p < npsb, "corrupt: segment at %llu is no PSB",
			      (unsigned long long)s->offset);
			if (p >= npsb)
				continue;
			if (s->gap_before) {
				gaps_seen++;
				CHECK(history_events_before(h, s->first_insn) &
				      HISTORY_EV_GAP, "corrupt: no gap event");
			}
			if (p == seg_bad || (p + 1 < npsb && off[p + 1] <= pos + 16 && off[p + 1] + 64 > pos))
				continue;
			for (uint64_t j = 0; j < s->ninsn; j += 1 + rnd(20)) {
				uint64_t want = t.psb_insn[p] + j;
				CHECK(history_ip_at(h, s->first_insn + j, &ip) == 0
				      && want < t.n && ip == t.ip[want],
				      "corrupt: segment %zu insn %llu", k,
				      (unsigned long long)j);
			}
			if (p + 1 < npsb && p != seg_bad && k + 1 <
			    history_segment_count(h) && history_segment(h, k + 1)->offset == off[p + 1])
				CHECK(s->ninsn == t.psb_insn[p + 1] - t.psb_insn[p],
				      "corrupt: segment %zu has %llu insns, want %llu",
				      k, (unsigned long long)s->ninsn,
				      (unsigned long long)(t.psb_insn[p + 1] - t.psb_insn[p]));
		}
		history_free(h);
	}
	CHECK(gaps_seen > 0, "corrupt: no gap in 6 corrupted streams");
	free(bad);
	free(off);
	ptenc_free(e);
	synth_truth_free(&t);
}

static void test_empty(struct pt_image *image)
{
	struct history *h = new_history(image, 0);
	uint64_t ip, a = SYNTH_BASE, f;
	static const uint8_t junk[] = {0, 0, 0, 0x99, 0x02, 0x82};

	CHECK(history_append(h, NULL, 0) == 0, "empty append");
	CHECK(history_insn_count(h) == 0 && history_segment_count(h) == 0,
	      "empty: something indexed");
	CHECK(history_ip_at(h, 0, &ip) < 0, "empty: ip at 0");
	CHECK(history_prev_exec(h, 0, &a, 1, &f) == 0 &&
	      history_next_exec(h, 0, &a, 1, &f) == 0 &&
	      history_prev_exec(h, 5, &a, 1, &f) == 0, "empty: search");
	CHECK(history_events_before(h, 0) == 0 &&
	      history_prev_event(h, 0, HISTORY_EV_ALL, &f) == 0,
	      "empty: events");
	CHECK(history_append(h, junk, sizeof junk) == 0 &&
	      history_insn_count(h) == 0, "junk: something indexed");
	history_free(h);
	CHECK(history_new(NULL) == NULL, "history_new(NULL)");
}

/* ---- a real program, single-stepped ---- */

struct code {
	uint64_t start, end;
	uint8_t *bytes;
};

static struct code codes[8];
static int ncodes;

static int read_code(uint8_t *buffer, size_t size, const struct pt_asid *asid,
		     uint64_t ip, void *ctx)
{
	(void)asid;
	(void)ctx;
	for (int i = 0; i < ncodes; i++)
		if (ip >= codes[i].start && ip < codes[i].end) {
			size_t n = codes[i].end - ip;
			if (n > size)
				n = size;
			memcpy(buffer, codes[i].bytes + (ip - codes[i].start), n);
			return (int)n;
		}
	return -pte_nomap;
}

static uint64_t regs_ip(pid_t pid)
{
	struct user_regs_struct r;
	ptrace(PTRACE_GETREGS, pid, 0, &r);
	return r.rip;
}

/* Single-step prog to its exit, encoding as the sw recorder does; fills
 * the truth (IPs, and events before each). Returns 0 or -1. */
static int step_program(const char *prog, struct ptenc *e,
			struct synth_truth *t)
{
	pid_t pid = fork();
	int st, memfd, inject = 0;
	char path[64], line[256];
	FILE *maps;

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		return -1;
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	memfd = open(path, O_RDONLY);
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	maps = fopen(path, "r");
	while (maps && fgets(line, sizeof line, maps) && ncodes < 8) {
		unsigned long lo, hi;
		char perm[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 ||
		    perm[0] != 'r' || perm[2] != 'x')
			continue;
		codes[ncodes].start = lo;
		codes[ncodes].end = hi;
		codes[ncodes].bytes = malloc(hi - lo);
		if (pread(memfd, codes[ncodes].bytes, hi - lo, (off_t)lo) ==
		    (ssize_t)(hi - lo))
			ncodes++;
		else
			free(codes[ncodes].bytes);
	}
	if (maps)
		fclose(maps);
	memset(t, 0, sizeof *t);
	t->ev = calloc(1, 1);
	ptenc_begin(e, regs_ip(pid), 1000);
	for (;;) {
		uint64_t ip = regs_ip(pid), nip;
		uint8_t code[16];
		struct insn_info info;
		int sig = inject;
		bool was = ptenc_enabled(e);

		if (pread(memfd, code, sizeof code, (off_t)ip) <= 0 ||
		    insn_classify(code, sizeof code, ip, &info) < 0)
			break;
		inject = 0;
		ptrace(PTRACE_SINGLESTEP, pid, 0, sig);
		if (waitpid(pid, &st, 0) != pid)
			break;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (info.kind == INSN_SYSCALL &&
			    ptenc_step(e, ip, &info, 0) == 1) {
				synth_push(t, ip);
				t->ev[t->n] |= HISTORY_EV_DISABLED;
			}
			ptenc_end(e, 0);
			close(memfd);
			return 0;
		}
		nip = regs_ip(pid);
		if (sig && WSTOPSIG(st) == SIGTRAP) {
			siginfo_t si;
			ptrace(PTRACE_GETSIGINFO, pid, 0, &si);
			if (si.si_code == SIGTRAP) {
				/* At the handler: the signal came before ip. */
				if (ptenc_enabled(e))
					t->ev[t->n] |= HISTORY_EV_ASYNC;
				ptenc_interrupt(e, ip);
				continue;
			}
		}
		if (WSTOPSIG(st) != SIGTRAP) {
			inject = WSTOPSIG(st);
			if (nip == ip)
				continue;
		}
		if (ptenc_step(e, ip, &info, nip) == 1) {
			if (!was)
				t->ev[t->n] |= HISTORY_EV_ENABLED;
			synth_push(t, ip);
			if (insn_kind_enters_kernel(info.kind))
				t->ev[t->n] |= HISTORY_EV_DISABLED;
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(memfd);
	return -1;
}

static void test_program(const char *dir)
{
	char prog[4096];
	struct ptenc_config cfg = {0};
	struct ptenc *e;
	struct synth_truth t;
	struct pt_image *image;
	struct history *h;
	const uint8_t *data;
	size_t len;
	uint64_t pool[64];

	snprintf(prog, sizeof prog, "%s/ptenc_flow", dir);
	if (access(prog, X_OK) != 0) {
		printf("skip: no %s\n", prog);
		return;
	}
	cfg.psb_period = 256;
	e = ptenc_new(&cfg);
	if (step_program(prog, e, &t) < 0) {
		failf("cannot single-step %s", prog);
		ptenc_free(e);
		return;
	}
	data = ptenc_data(e, &len);
	image = pt_image_alloc("ptenc_flow");
	pt_image_set_callback(image, read_code, NULL);
	h = new_history(image, 3);
	CHECK(history_append(h, data, len) == 0, "ptenc_flow: append");
	printf("ptenc_flow: %zu insns, %zu bytes, %zu segments\n", t.n, len,
	       history_segment_count(h));
	check_ips(h, t.ip, t.n, "ptenc_flow");
	check_segments(h, "ptenc_flow");
	check_events(h, t.ev, t.n, "ptenc_flow");
	for (int i = 0; i < 64; i++)
		pool[i] = i < 60 && t.n ? t.ip[rnd(t.n)] : 0x1000 + (uint64_t)i;
	check_searches(h, t.ip, t.n, pool, 64, 500, "ptenc_flow");
	/* Incremental, in small chunks. */
	{
		struct history *g = new_history(image, 3);
		for (size_t off = 0; off < len;) {
			size_t c = 1 + rnd(300);
			if (c > len - off)
				c = len - off;
			history_append(g, data + off, c);
			off += c;
		}
		CHECK(same_index(g, h), "ptenc_flow: chunked index differs");
		history_free(g);
	}
	history_free(h);
	pt_image_free(image);
	ptenc_free(e);
	synth_truth_free(&t);
	for (int i = 0; i < ncodes; i++)
		free(codes[i].bytes);
	ncodes = 0;
}

int main(void)
{
	struct pt_image_section_cache *isc;
	struct pt_image *image = synth_image(&isc);
	const char *dir = getenv("PTREV_TEST_PROGRAMS");

	test_empty(image);
	test_synthetic(image, 4096, 400000, 100, 0);
	test_synthetic(image, 256, 60000, 20, 500);
	test_synthetic(image, 64, 20000, 10, 200);
	test_corruption(image);
	test_sealed(image);
	test_program(dir ? dir : "tests/programs");
	pt_image_free(image);
	pt_iscache_free(isc);
	if (failures) {
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("history: all checks passed\n");
	return 0;
}
