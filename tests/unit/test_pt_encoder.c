/* pt_encoder: packet-level checks on synthetic input, then the real proof:
 * a test-local single-stepper runs tests/programs/ptenc_flow under ptrace,
 * feeds every instruction to the encoder, and libipt's instruction decoder
 * must give back exactly the single-stepped instruction list, with
 * [disabled]/[enabled] around every syscall and signal, from the first PSB
 * and from every later PSB alike. */
#include "ptrev/insn_class.h"
#include "ptrev/pt_encoder.h"

#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
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

/* ------------------------------------------------------------------ */
/* Packet-level checks                                                 */

struct pktlist {
	struct pt_packet p[64];
	int n;
};

static void packets(const uint8_t *data, size_t len, struct pktlist *out)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)data;
	cfg.end = (uint8_t *)data + len;
	out->n = 0;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d || pt_pkt_sync_set(d, 0) < 0) {
		failf("packet decoder setup");
		pt_pkt_free_decoder(d);
		return;
	}
	while (out->n < 64) {
		int rc = pt_pkt_next(d, &out->p[out->n], sizeof out->p[0]);
		if (rc < 0) {
			if (rc != -pte_eos)
				failf("packet decode: %s", pt_errstr(pt_errcode(rc)));
			break;
		}
		out->n++;
	}
	pt_pkt_free_decoder(d);
}

static const uint8_t *data_of(struct ptenc *e, size_t *len)
{
	return ptenc_data(e, len);
}

static struct insn_info ki(enum insn_kind kind, unsigned len, uint64_t target)
{
	struct insn_info i = {.len = (uint8_t)len, .kind = kind, .target = target};
	return i;
}

static void test_start_and_ip_compression(void)
{
	struct ptenc *e = ptenc_new(NULL);
	struct insn_info jind = ki(INSN_JMP_IND, 2, 0);
	struct pktlist pl;
	const uint8_t *d;
	size_t len;

	ptenc_begin(e, 0x401000, 0x1234);
	ptenc_step(e, 0x401000, &jind, 0x401234);        /* update_16 */
	ptenc_step(e, 0x401234, &jind, 0x7fff00001000);  /* update_48 */
	ptenc_step(e, 0x7fff00001000, &jind, 0xffffffffff600000); /* sext */
	ptenc_step(e, 0xffffffffff600000, &jind, 0xffff00001000);  /* full */
	ptenc_end(e, 0xffff00001000);
	d = data_of(e, &len);
	packets(d, len, &pl);

	static const enum pt_packet_type want[] = {
		ppt_psb, ppt_tsc, ppt_psbend, ppt_mode, ppt_tip_pge,
		ppt_tip, ppt_tip, ppt_tip, ppt_tip, ppt_fup, ppt_tip_pgd};
	static const enum pt_ip_compression ipc[] = {
		0, 0, 0, 0, pt_ipc_update_32,
		pt_ipc_update_16, pt_ipc_update_48, pt_ipc_sext_48, pt_ipc_full,
		pt_ipc_update_16, pt_ipc_suppressed};
	CHECK(pl.n == 11, "start: %d packets, want 11", pl.n);
	for (int i = 0; i < pl.n && i < 11; i++) {
		CHECK(pl.p[i].type == want[i], "start: packet %d type %d, want %d",
		      i, pl.p[i].type, want[i]);
		if (i >= 4)
			CHECK(pl.p[i].payload.ip.ipc == ipc[i],
			      "start: packet %d ipc %d, want %d", i,
			      pl.p[i].payload.ip.ipc, ipc[i]);
	}
	if (pl.n > 3) {
		CHECK(pl.p[1].payload.tsc.tsc == 0x1234, "start: tsc");
		CHECK(pl.p[3].payload.mode.leaf == pt_mol_exec &&
		      pt_get_exec_mode(&pl.p[3].payload.mode.bits.exec) ==
		      ptem_64bit, "start: MODE.exec 64-bit");
	}
	ptenc_free(e);
}

/* Conditional-branch outcomes must come out oldest-first, split into TNT-8s
 * of at most 6 bits, flushed before the TIP that follows them. */
static void test_tnt(bool tnt64, int nbranches)
{
	struct ptenc *e;
	struct ptenc_config cfg = {0};
	struct insn_info jcc = ki(INSN_COND, 2, 0x500000);
	struct insn_info jind = ki(INSN_JMP_IND, 2, 0);
	struct pktlist pl;
	const uint8_t *d;
	size_t len;
	uint64_t ip = 0x401000;
	char want[64], got[64];
	int ngot = 0;

	cfg.tnt64 = tnt64;
	e = ptenc_new(&cfg);
	ptenc_begin(e, ip, 0);
	for (int i = 0; i < nbranches; i++) {
		bool taken = (i * 7 + i / 3) % 3 == 0;
		want[i] = taken ? 'T' : 'N';
		CHECK(ptenc_step(e, ip, &jcc, taken ? 0x500000 : ip + 2) == 1,
		      "tnt: step");
	}
	CHECK(ptenc_step(e, ip, &jind, 0x402000) == 1, "tnt: tip step");
	ptenc_end(e, 0x402000);
	d = data_of(e, &len);
	packets(d, len, &pl);
	for (int i = 0; i < pl.n; i++) {
		const struct pt_packet *p = &pl.p[i];
		if (p->type == ppt_tnt_8 || p->type == ppt_tnt_64) {
			CHECK(p->type == ppt_tnt_64 ? tnt64 && p->payload.tnt.bit_size > 36
			      : p->payload.tnt.bit_size <= 6,
			      "tnt: packet %d of %d bits", p->type,
			      p->payload.tnt.bit_size);
			for (int b = p->payload.tnt.bit_size - 1; b >= 0; b--)
				got[ngot++] = (p->payload.tnt.payload >> b) & 1 ?
					'T' : 'N';
		} else if (p->type == ppt_tip) {
			CHECK(ngot == nbranches, "tnt: TIP after %d of %d bits",
			      ngot, nbranches);
		}
	}
	CHECK(ngot == nbranches && memcmp(want, got, (size_t)ngot) == 0,
	      "tnt%s: %.*s decoded as %.*s", tnt64 ? "64" : "8", nbranches,
	      want, ngot, got);
	ptenc_free(e);
}

/* The RET-compression stack follows libipt's decoder: calls to the next
 * instruction are not pushed, 64 entries with the oldest dropped, no pop on
 * an uncompressed RET, and (our rule) emptied at every PSB. */
static void test_ret_compression(void)
{
	struct ptenc_config cfg = {0};
	struct ptenc *e = ptenc_new(NULL);
	struct insn_info callnext = ki(INSN_CALL, 5, 0x401005);
	struct insn_info ret = ki(INSN_RET, 1, 0);
	struct insn_info jind = ki(INSN_JMP_IND, 2, 0);
	const struct ptenc_stats *s = ptenc_stats(e);
	uint64_t comp, unc;

	ptenc_begin(e, 0x401000, 0);
	ptenc_step(e, 0x401000, &callnext, 0x401005);
	ptenc_step(e, 0x401005, &ret, 0x401005);
	CHECK(s->rets_compressed == 0 && s->rets_uncompressed == 1,
	      "ret after a call to the next instruction was compressed");

	/* 70 nested calls, 70 returns: only the youngest 64 compress. */
	for (int i = 0; i < 70; i++) {
		uint64_t ip = 0x410000 + 0x100 * (uint64_t)i;
		struct insn_info call = ki(INSN_CALL, 5, ip + 0x100);
		ptenc_step(e, ip, &call, ip + 0x100);
	}
	comp = s->rets_compressed;
	unc = s->rets_uncompressed;
	for (int i = 69; i >= 0; i--)
		ptenc_step(e, 0x420000, &ret, 0x410000 + 0x100 * (uint64_t)i + 5);
	CHECK(s->rets_compressed - comp == 64 && s->rets_uncompressed - unc == 6,
	      "70 returns: %llu compressed, %llu not (want 64, 6)",
	      (unsigned long long)(s->rets_compressed - comp),
	      (unsigned long long)(s->rets_uncompressed - unc));

	/* An uncompressed RET does not pop: the next RET still matches. */
	{
		struct insn_info call = ki(INSN_CALL, 5, 0x430000);
		ptenc_step(e, 0x401000, &call, 0x430000);
		comp = s->rets_compressed;
		ptenc_step(e, 0x430000, &ret, 0x440000);   /* a ret-as-jump */
		ptenc_step(e, 0x440000, &ret, 0x401005);
		CHECK(s->rets_compressed - comp == 1,
		      "uncompressed RET popped the call stack");
	}
	ptenc_free(e);

	/* A PSB empties the stack. */
	cfg.psb_period = 64;
	e = ptenc_new(&cfg);
	s = ptenc_stats(e);
	ptenc_begin(e, 0x401000, 0);
	{
		struct insn_info call = ki(INSN_CALL, 5, 0x430000);
		ptenc_step(e, 0x401000, &call, 0x430000);
	}
	for (int i = 0; i < 40; i++)
		ptenc_step(e, 0x430000, &jind, 0x430000);
	CHECK(s->psbs >= 2, "no PSB after 40 TIPs with a 64-byte period");
	ptenc_step(e, 0x430000, &ret, 0x401005);
	CHECK(s->rets_compressed == 0 && s->rets_uncompressed == 1,
	      "RET compressed against a call before the last PSB");
	ptenc_free(e);
}

static int collect(void *arg, const uint8_t *data, size_t len)
{
	FILE *f = arg;
	return fwrite(data, 1, len, f) == len ? 0 : -1;
}

static void test_errors_sink_rep(void)
{
	struct insn_info other = ki(INSN_OTHER, 3, 0);
	struct insn_info jmp = ki(INSN_JMP, 2, 0x401100);
	struct ptenc_config cfg = {0};
	struct ptenc *e = ptenc_new(NULL);
	char *mem = NULL;
	size_t memlen = 0;
	FILE *f = open_memstream(&mem, &memlen);
	const uint8_t *d;
	size_t len;

	CHECK(ptenc_step(e, 0x401000, &other, 0x401003) == -1,
	      "step before begin accepted");
	ptenc_free(e);

	e = ptenc_new(NULL);
	ptenc_begin(e, 0x401000, 0);
	CHECK(ptenc_step(e, 0x401000, &other, 0x401000) == 0,
	      "rep iteration not reported as unfinished");
	CHECK(ptenc_step(e, 0x401000, &other, 0x401003) == 1,
	      "plain step not reported as completed");
	CHECK(ptenc_stats(e)->insns == 1, "rep iteration counted");
	CHECK(ptenc_step(e, 0x401003, &jmp, 0x401300) == -1,
	      "jmp to the wrong target accepted");
	CHECK(ptenc_error(e) && strstr(ptenc_error(e), "0x401300"),
	      "error message: %s", ptenc_error(e) ? ptenc_error(e) : "none");
	CHECK(ptenc_step(e, 0x401003, &other, 0x401006) == -1,
	      "failed encoder accepted more");
	ptenc_free(e);

	/* With a sink, the same calls produce the same bytes. */
	cfg.sink = collect;
	cfg.sink_arg = f;
	e = ptenc_new(&cfg);
	ptenc_begin(e, 0x401000, 5);
	ptenc_step(e, 0x401000, &other, 0x401003);
	ptenc_end(e, 0x401003);
	d = ptenc_data(e, &len);
	CHECK(len == 0, "sink mode kept %zu bytes", len);
	ptenc_free(e);
	fclose(f);
	e = ptenc_new(NULL);
	ptenc_begin(e, 0x401000, 5);
	ptenc_step(e, 0x401000, &other, 0x401003);
	ptenc_end(e, 0x401003);
	d = ptenc_data(e, &len);
	CHECK(len == memlen && memcmp(d, mem, len) == 0 &&
	      len == ptenc_offset(e), "sink bytes differ from buffered bytes");
	ptenc_free(e);
	free(mem);
}

/* ------------------------------------------------------------------ */
/* The round trip                                                      */

struct seg {
	uint64_t start, end;
	uint8_t *bytes;
};

struct image {
	struct seg seg[16];
	int n;
};

struct truth {
	uint64_t *ip;
	enum insn_kind *kind;
	size_t n, cap;
	size_t psb_at[4096];    /* instruction index at each PSB */
	size_t npsb;
	int interrupts;         /* FUP + TIP.PGD emitted */
	uint64_t interrupted[8];/* ... and the IPs they interrupted */
};

static void truth_add(struct truth *t, uint64_t ip, enum insn_kind k)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 4096;
		t->ip = realloc(t->ip, t->cap * sizeof *t->ip);
		t->kind = realloc(t->kind, t->cap * sizeof *t->kind);
	}
	t->ip[t->n] = ip;
	t->kind[t->n] = k;
	t->n++;
}

/* Copy the code of every readable, executable mapping: a static program
 * has its text and the vDSO. */
static int snapshot_code(pid_t pid, int memfd, struct image *img)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f) && img->n < 16) {
		unsigned long lo, hi;
		char perm[8];
		struct seg *s;
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3)
			continue;
		if (perm[0] != 'r' || perm[2] != 'x')
			continue;
		s = &img->seg[img->n];
		s->start = lo;
		s->end = hi;
		s->bytes = malloc(hi - lo);
		if (pread(memfd, s->bytes, hi - lo, (off_t)lo) != (ssize_t)(hi - lo)) {
			free(s->bytes);
			continue;
		}
		img->n++;
	}
	fclose(f);
	return img->n > 0 ? 0 : -1;
}

static int read_image(uint8_t *buffer, size_t size,
		      const struct pt_asid *asid, uint64_t ip, void *ctx)
{
	const struct image *img = ctx;
	(void)asid;
	for (int i = 0; i < img->n; i++) {
		const struct seg *s = &img->seg[i];
		if (ip >= s->start && ip < s->end) {
			size_t n = s->end - ip < size ? s->end - ip : size;
			memcpy(buffer, s->bytes + (ip - s->start), n);
			return (int)n;
		}
	}
	return -pte_nomap;
}

static uint64_t get_ip(pid_t pid)
{
	struct user_regs_struct r;
	ptrace(PTRACE_GETREGS, pid, 0, &r);
	return r.rip;
}

/* Single-step the program from its first instruction to its exit, feeding
 * the encoder; the list of completed instructions is the ground truth. */
static int record(const char *prog, struct ptenc *e, struct image *img,
		  struct truth *t)
{
	pid_t pid;
	int st, memfd, inject = 0;
	char path[64];
	uint64_t tsc = 1000;

	pid = fork();
	if (pid == 0) {
		char *argv[] = {(char *)prog, NULL};
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1); /* the program says hello; keep the log clean */
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execv(prog, argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		failf("%s did not stop after exec", prog);
		return -1;
	}
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	memfd = open(path, O_RDONLY);
	if (memfd < 0 || snapshot_code(pid, memfd, img) < 0) {
		failf("cannot read the code of %s", prog);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return -1;
	}
	ptenc_begin(e, get_ip(pid), tsc);
	t->psb_at[t->npsb++] = 0;

	for (;;) {
		uint64_t ip = get_ip(pid), nip;
		uint8_t code[16];
		ssize_t n = pread(memfd, code, sizeof code, (off_t)ip);
		struct insn_info info;
		uint64_t psbs = ptenc_stats(e)->psbs;
		int sig = inject, stopsig, rc;

		if (n <= 0 || insn_classify(code, (size_t)n, ip, &info) < 0) {
			failf("cannot classify the instruction at %#llx",
			      (unsigned long long)ip);
			break;
		}
		inject = 0;
		ptrace(PTRACE_SINGLESTEP, pid, 0, sig);
		if (waitpid(pid, &st, 0) != pid)
			break;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			/* Only exit_group ends the program: its syscall
			 * completed without returning to user space. */
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
			      info.kind == INSN_SYSCALL,
			      "program ended oddly (status %#x)", st);
			if (info.kind == INSN_SYSCALL &&
			    ptenc_step(e, ip, &info, 0) == 1) {
				truth_add(t, ip, info.kind);
				if (ptenc_stats(e)->psbs != psbs)
					t->psb_at[t->npsb++] = t->n - 1;
			}
			ptenc_end(e, 0);
			close(memfd);
			return 0;
		}
		stopsig = WSTOPSIG(st);
		nip = get_ip(pid);
		if (sig && stopsig == SIGTRAP) {
			siginfo_t si;
			ptrace(PTRACE_GETSIGINFO, pid, 0, &si);
			if (si.si_code == SIGTRAP) {
				/* Stopped at the handler's first instruction:
				 * the signal interrupted user code at ip. */
				uint64_t before = ptenc_stats(e)->disables;
				ptenc_interrupt(e, ip);
				if (ptenc_stats(e)->disables != before &&
				    t->interrupts < 8)
					t->interrupted[t->interrupts++] = ip;
				continue;
			}
		}
		if (stopsig != SIGTRAP) {
			/* A signal is about to be delivered. If the IP did
			 * not move, the instruction did not run (a fault, or
			 * a signal pending before it). */
			inject = stopsig;
			if (nip == ip)
				continue;
		}
		rc = ptenc_step(e, ip, &info, nip);
		if (rc < 0) {
			failf("encoder: %s", ptenc_error(e));
			break;
		}
		if (rc == 1)
			truth_add(t, ip, info.kind);
		if (ptenc_stats(e)->psbs != psbs && t->npsb < 4096)
			t->psb_at[t->npsb++] = t->n - 1;
		if (insn_kind_enters_kernel(info.kind))
			ptenc_set_time(e, tsc += 5000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(memfd);
	return -1;
}

/* What the decoder says, in order. */
enum item_kind { IT_INSN, IT_DISABLED, IT_ASYNC_DISABLED, IT_ENABLED };
struct item {
	enum item_kind kind;
	uint64_t ip;
};
struct decoded {
	struct item *it;
	size_t n, cap;
	size_t ninsn;
	int error;
};

static void add_item(struct decoded *d, enum item_kind k, uint64_t ip)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 4096;
		d->it = realloc(d->it, d->cap * sizeof *d->it);
	}
	d->it[d->n].kind = k;
	d->it[d->n].ip = ip;
	d->n++;
	if (k == IT_INSN)
		d->ninsn++;
}

/* Decode from the PSB at offset to the end of the trace, stopping at the
 * first error (which is recorded). */
static void decode(const uint8_t *data, size_t len, struct image *img,
		   uint64_t offset, struct decoded *out)
{
	struct pt_config cfg;
	struct pt_insn_decoder *dec;
	struct pt_image *image;
	int status;

	memset(out, 0, sizeof *out);
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)data;
	cfg.end = (uint8_t *)data + len;
	dec = pt_insn_alloc_decoder(&cfg);
	image = pt_insn_get_image(dec);
	pt_image_set_callback(image, read_image, img);
	status = pt_insn_sync_set(dec, offset);
	while (status >= 0) {
		struct pt_insn insn;
		while (status & pts_event_pending) {
			struct pt_event ev;
			status = pt_insn_event(dec, &ev, sizeof ev);
			if (status < 0)
				break;
			if (ev.status_update)
				continue;
			if (ev.type == ptev_enabled)
				add_item(out, IT_ENABLED, ev.variant.enabled.ip);
			else if (ev.type == ptev_disabled)
				add_item(out, IT_DISABLED, 0);
			else if (ev.type == ptev_async_disabled)
				add_item(out, IT_ASYNC_DISABLED,
					 ev.variant.async_disabled.at);
		}
		if (status < 0 || (status & pts_eos))
			break;
		status = pt_insn_next(dec, &insn, sizeof insn);
		if (status < 0)
			break;
		add_item(out, IT_INSN, insn.ip);
	}
	if (status < 0 && status != -pte_eos)
		out->error = status;
	pt_insn_free_decoder(dec);
}

/* PSB offsets, found with the packet decoder. */
static size_t find_psbs(const uint8_t *data, size_t len, uint64_t *off,
			size_t max)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	size_t n = 0;
	uint64_t o;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)data;
	cfg.end = (uint8_t *)data + len;
	d = pt_pkt_alloc_decoder(&cfg);
	while (n < max && pt_pkt_sync_forward(d) >= 0) {
		pt_pkt_get_sync_offset(d, &o);
		off[n++] = o;
	}
	pt_pkt_free_decoder(d);
	return n;
}

static void compare(const struct truth *t, size_t from,
		    const struct decoded *d, const char *what)
{
	size_t i = from, bad = 0;

	if (d->error)
		failf("%s: decoder error %s after %zu instructions", what,
		      pt_errstr(pt_errcode(d->error)), d->ninsn);
	for (size_t k = 0; k < d->n; k++) {
		if (d->it[k].kind != IT_INSN)
			continue;
		if (i >= t->n || d->it[k].ip != t->ip[i]) {
			if (bad++ == 0)
				failf("%s: instruction %zu decoded at %#llx, "
				      "stepped at %#llx", what, i,
				      (unsigned long long)d->it[k].ip,
				      i < t->n ? (unsigned long long)t->ip[i]
				      : 0ull);
		}
		i++;
	}
	CHECK(i == t->n, "%s: decoded %zu instructions, stepped %zu", what,
	      i - from, t->n - from);
}

/* Every syscall is followed by [disabled], then [enabled] before the next
 * instruction; every interrupt shows as an asynchronous [disabled] before
 * the interrupted instruction, followed by [enabled] at the handler. */
static void check_events(const struct truth *t, const struct decoded *d)
{
	int syscalls = 0, disabled = 0, async = 0, enabled = 0;
	size_t insn = 0;

	for (size_t k = 0; k < d->n; k++) {
		const struct item *it = &d->it[k];
		switch (it->kind) {
		case IT_INSN:
			if (insn < t->n && insn_kind_enters_kernel(t->kind[insn])) {
				syscalls++;
				bool last = insn + 1 == t->n;
				CHECK(k + 1 < d->n &&
				      d->it[k + 1].kind == IT_DISABLED,
				      "no [disabled] after the syscall at %#llx",
				      (unsigned long long)it->ip);
				CHECK(last || (k + 2 < d->n &&
				      (d->it[k + 2].kind == IT_ENABLED ||
				       d->it[k + 2].kind == IT_ASYNC_DISABLED)),
				      "no [enabled] after the syscall at %#llx",
				      (unsigned long long)it->ip);
			}
			insn++;
			break;
		case IT_DISABLED:
			disabled++;
			break;
		case IT_ASYNC_DISABLED:
			/* The interrupted instruction never ran: the
			 * decoder reports where it would have. */
			CHECK(async < t->interrupts &&
			      it->ip == t->interrupted[async],
			      "async [disabled] at %#llx, interrupted at %#llx",
			      (unsigned long long)it->ip,
			      async < t->interrupts ?
			      (unsigned long long)t->interrupted[async] : 0ull);
			async++;
			CHECK(k + 1 < d->n && d->it[k + 1].kind == IT_ENABLED,
			      "no [enabled] after the interrupt at %#llx",
			      (unsigned long long)it->ip);
			break;
		case IT_ENABLED:
			enabled++;
			CHECK(insn < t->n && it->ip == t->ip[insn],
			      "[enabled] at %#llx, next instruction %#llx",
			      (unsigned long long)it->ip,
			      insn < t->n ? (unsigned long long)t->ip[insn] : 0ull);
			break;
		}
	}
	/* rt_sigaction x2, write, getpid, kill, rt_sigreturn x2, exit_group */
	CHECK(syscalls == 8, "%d syscalls decoded, want 8", syscalls);
	CHECK(disabled == syscalls, "%d [disabled] for %d syscalls", disabled,
	      syscalls);
	CHECK(async == t->interrupts && async == 1,
	      "%d asynchronous [disabled], %d interrupts emitted (want 1: the "
	      "ud2)", async, t->interrupts);
	/* The start, after each syscall but exit_group, after the interrupt. */
	CHECK(enabled == 1 + (syscalls - 1) + async,
	      "%d [enabled], want %d", enabled, 1 + (syscalls - 1) + async);
}

static void round_trip(const char *prog, uint32_t psb_period, bool tnt64)
{
	struct ptenc_config cfg = {0};
	struct ptenc *e;
	struct image img = {0};
	struct truth *t = calloc(1, sizeof *t);
	struct decoded d;
	const uint8_t *data;
	size_t len, npsb;
	uint64_t psb[4096];
	char what[96];
	const struct ptenc_stats *s;

	cfg.psb_period = psb_period;
	cfg.tnt64 = tnt64;
	e = ptenc_new(&cfg);
	snprintf(what, sizeof what, "psb %u%s", psb_period,
		 tnt64 ? " tnt64" : "");
	if (record(prog, e, &img, t) < 0)
		goto out;
	data = ptenc_data(e, &len);
	s = ptenc_stats(e);
	CHECK(s->insns == t->n, "%s: encoder counted %llu, stepped %zu", what,
	      (unsigned long long)s->insns, t->n);

	decode(data, len, &img, 0, &d);
	compare(t, 0, &d, what);
	check_events(t, &d);
	free(d.it);

	/* Each PSB must be a self-contained start. */
	npsb = find_psbs(data, len, psb, 4096);
	CHECK(npsb == s->psbs && npsb == t->npsb,
	      "%s: %zu PSBs in the trace, encoder says %llu, stepper saw %zu",
	      what, npsb, (unsigned long long)s->psbs, t->npsb);
	for (size_t k = 1; k < npsb && k < t->npsb; k++) {
		char w[256];
		snprintf(w, sizeof w, "%s from PSB %zu at %llu", what, k,
			 (unsigned long long)psb[k]);
		decode(data, len, &img, psb[k], &d);
		compare(t, t->psb_at[k], &d, w);
		free(d.it);
	}

	printf("%s: %zu instructions, %zu bytes, %zu PSBs, %.3f bits/insn "
	       "(tnt bits %llu, tips %llu, rets compressed %llu / "
	       "uncompressed %llu)\n", what, t->n, len, npsb,
	       t->n ? 8.0 * (double)len / (double)t->n : 0.0,
	       (unsigned long long)s->tnt_bits, (unsigned long long)s->tips,
	       (unsigned long long)s->rets_compressed,
	       (unsigned long long)s->rets_uncompressed);
	CHECK(s->rets_compressed > 0 && s->rets_uncompressed > 0,
	      "%s: expected both compressed and uncompressed RETs", what);
	/* A PSB+ once per period: never later, never much earlier. */
	CHECK(npsb * (psb_period + 64) >= len && (npsb - 1) * psb_period <= len,
	      "%s: %zu PSBs for %zu bytes", what, npsb, len);
out:
	for (int i = 0; i < img.n; i++)
		free(img.seg[i].bytes);
	free(t->ip);
	free(t->kind);
	free(t);
	ptenc_free(e);
}

int main(void)
{
	const char *dir = getenv("PTREV_TEST_PROGRAMS");
	char prog[4096];

	test_start_and_ip_compression();
	test_tnt(false, 17);
	test_tnt(false, 6);
	test_tnt(true, 17);
	test_tnt(true, 47);
	test_tnt(true, 60);
	test_ret_compression();
	test_errors_sink_rep();

	if (!dir) {
		printf("PTREV_TEST_PROGRAMS not set: round trip skipped\n");
		return failures ? 1 : 77;
	}
	snprintf(prog, sizeof prog, "%s/ptenc_flow", dir);
	if (access(prog, X_OK) != 0) {
		printf("%s missing\n", prog);
		return 1;
	}
	round_trip(prog, 64, false);   /* a PSB+ every few dozen instructions */
	round_trip(prog, 256, true);
	round_trip(prog, PTENC_DEFAULT_PSB_PERIOD, false);

	if (failures) {
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("pt_encoder: all checks passed\n");
	return 0;
}
