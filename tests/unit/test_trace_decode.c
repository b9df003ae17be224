/* trace_decode: `ptrev decode FILE [--insn]` on recordings made here.
 *
 * A test-local single-stepper runs tests/programs/ptenc_flow (and
 * tdec_pie, a static-pie at a random load bias) under ptrace and keeps the
 * list of steps; the sw PT encoder turns them (or a prefix of them) into PT
 * streams; the trace writer puts streams and sideband into a .ptrev file;
 * then trace_decode_main must print exactly the single-stepped instruction
 * list (the oracle), per thread, and refuse, with the right message, code
 * it cannot trust: a missing file, a changed file, code mappings that
 * overlap over time, a truncated or corrupted recording. Anonymous code
 * without recorded bytes must give libipt's "no memory mapped" errors,
 * never invented instructions. */
#include "ptrev/insn_class.h"
#include "ptrev/pt_encoder.h"
#include "ptrev/cli.h"
#include "ptrev/trace_decode.h"
#include "ptrev/trace_file.h"
/* The symbol lookup itself, for the vDSO (ptenc_flow never runs it). */
#include "../../decode/trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
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

static char tmpdir[] = "/tmp/test_trace_decode.XXXXXX";

int main(void);

/* ------------------------------------------------------------------ */
/* Single-stepping a program                                            */

enum step_kind { ST_STEP, ST_INTERRUPT, ST_TIME };

struct step {
	enum step_kind kind;
	uint64_t ip, nip, tsc;
	struct insn_info info;
};

struct mapping {
	uint64_t start, end, offset;
	uint32_t prot;
	char path[PATH_MAX];
	uint8_t *bytes;		/* the code as it was in memory */
};

struct run {
	char prog[PATH_MAX];	/* as /proc/PID/maps names it */
	uint64_t first_ip;
	struct step *steps;
	size_t nsteps, cap;
	struct mapping maps[16];
	int nmaps;
};

static void add_step(struct run *r, enum step_kind kind, uint64_t ip,
		     const struct insn_info *info, uint64_t nip, uint64_t tsc)
{
	struct step *s;

	if (r->nsteps == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16384;
		r->steps = realloc(r->steps, r->cap * sizeof(*r->steps));
	}
	s = &r->steps[r->nsteps++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->ip = ip;
	s->nip = nip;
	s->tsc = tsc;
	if (info)
		s->info = *info;
}

/* The executable mappings (and their bytes) right after exec. */
static int snapshot_maps(pid_t pid, int memfd, struct run *r)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && r->nmaps < 16) {
		unsigned long lo, hi, off;
		char perm[8];
		int n = 0;
		struct mapping *m = &r->maps[r->nmaps];
		char *p;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s%n", &lo, &hi, perm,
			   &off, &n) != 4 || perm[2] != 'x')
			continue;
		p = line + n;
		while (*p == ' ')
			p++;
		p[strcspn(p, "\n")] = 0;
		if (!strcmp(p, "[vsyscall]"))
			continue;	/* not readable, never run here */
		memset(m, 0, sizeof(*m));
		m->start = lo;
		m->end = hi;
		m->offset = off;
		m->prot = (perm[0] == 'r' ? PROT_READ : 0) |
			  (perm[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		snprintf(m->path, sizeof(m->path), "%s", p);
		m->bytes = malloc(hi - lo);
		if (pread(memfd, m->bytes, hi - lo, (off_t)lo) !=
		    (ssize_t)(hi - lo)) {
			free(m->bytes);
			continue;
		}
		if (p[0] == '/')
			snprintf(r->prog, sizeof(r->prog), "%s", p);
		r->nmaps++;
	}
	fclose(f);
	return r->prog[0] ? 0 : -1;
}

static uint64_t get_ip(pid_t pid)
{
	struct user_regs_struct regs;

	ptrace(PTRACE_GETREGS, pid, 0, &regs);
	return regs.rip;
}

/* Single-steps @prog from its first instruction to its exit and keeps
 * every step, as test_pt_encoder's stepper does. */
static int record(const char *prog, struct run *r)
{
	int st, memfd, inject = 0;
	uint64_t tsc = 1000;
	char path[64];
	pid_t pid;

	memset(r, 0, sizeof(*r));
	pid = fork();
	if (pid == 0) {
		char *argv[] = {(char *)prog, NULL};
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execv(prog, argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		failf("%s did not stop after exec", prog);
		return -1;
	}
	ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	memfd = open(path, O_RDONLY);
	if (memfd < 0 || snapshot_maps(pid, memfd, r) < 0) {
		failf("cannot read the code of %s", prog);
		goto fail;
	}
	r->first_ip = get_ip(pid);
	for (;;) {
		uint64_t ip = get_ip(pid), nip;
		uint8_t code[16];
		ssize_t n = pread(memfd, code, sizeof(code), (off_t)ip);
		struct insn_info info;
		int sig = inject, stopsig;

		if (n <= 0 || insn_classify(code, (size_t)n, ip, &info) < 0) {
			failf("cannot classify the instruction at %#" PRIx64,
			      ip);
			goto fail;
		}
		inject = 0;
		ptrace(PTRACE_SINGLESTEP, pid, 0, sig);
		if (waitpid(pid, &st, 0) != pid)
			goto fail;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
			      info.kind == INSN_SYSCALL,
			      "%s ended oddly (status %#x)", prog, st);
			add_step(r, ST_STEP, ip, &info, 0, 0);
			close(memfd);
			return 0;
		}
		stopsig = WSTOPSIG(st);
		nip = get_ip(pid);
		if (sig && stopsig == SIGTRAP) {
			siginfo_t si;

			ptrace(PTRACE_GETSIGINFO, pid, 0, &si);
			if (si.si_code == SIGTRAP) {
				/* At the handler: the signal interrupted
				 * user code at ip. */
				add_step(r, ST_INTERRUPT, ip, NULL, 0, 0);
				continue;
			}
		}
		if (stopsig != SIGTRAP) {
			inject = stopsig;
			if (nip == ip)
				continue;
		}
		add_step(r, ST_STEP, ip, &info, nip, 0);
		if (insn_kind_enters_kernel(info.kind))
			add_step(r, ST_TIME, 0, NULL, 0, tsc += 5000);
	}
fail:
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (memfd >= 0)
		close(memfd);
	return -1;
}

static void run_free(struct run *r)
{
	for (int i = 0; i < r->nmaps; i++)
		free(r->maps[i].bytes);
	free(r->steps);
}

/* ------------------------------------------------------------------ */
/* PT streams from the steps                                            */

struct stream {
	pid_t tid;
	uint8_t *pt;
	size_t len;
	uint64_t *truth;	/* the completed instructions, in order */
	size_t ntruth;
};

/* Encodes the first @nsteps steps (all if larger) of @r. */
static int encode(const struct run *r, size_t nsteps, uint32_t psb_period,
		  pid_t tid, struct stream *s)
{
	struct ptenc_config cfg = {0};
	struct ptenc *e;
	const uint8_t *data;
	uint64_t last_nip = r->first_ip;
	size_t i, len;

	memset(s, 0, sizeof(*s));
	s->tid = tid;
	cfg.psb_period = psb_period;
	e = ptenc_new(&cfg);
	s->truth = calloc(r->nsteps + 1, sizeof(*s->truth));
	if (!e || !s->truth || ptenc_begin(e, r->first_ip, 1000) < 0)
		goto fail;
	for (i = 0; i < r->nsteps && i < nsteps; i++) {
		const struct step *st = &r->steps[i];
		int rc;

		switch (st->kind) {
		case ST_TIME:
			ptenc_set_time(e, st->tsc);
			break;
		case ST_INTERRUPT:
			if (ptenc_interrupt(e, st->ip) < 0)
				goto fail;
			break;
		case ST_STEP:
			rc = ptenc_step(e, st->ip, &st->info, st->nip);
			if (rc < 0)
				goto fail;
			if (rc == 1)
				s->truth[s->ntruth++] = st->ip;
			last_nip = st->nip;
			break;
		}
	}
	if (ptenc_end(e, last_nip) < 0)
		goto fail;
	data = ptenc_data(e, &len);
	s->pt = malloc(len);
	memcpy(s->pt, data, len);
	s->len = len;
	ptenc_free(e);
	return 0;
fail:
	failf("encoder: %s", e ? ptenc_error(e) : "out of memory");
	ptenc_free(e);
	return -1;
}

static void stream_free(struct stream *s)
{
	free(s->pt);
	free(s->truth);
}

/* ------------------------------------------------------------------ */
/* Recordings                                                           */

/* The GNU build-id of @path, read here independently of the decoder. */
static size_t build_id_of(const char *path, uint8_t *id, size_t max)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t len = 0;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !len && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const uint8_t *p;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)) || d->d_size < 16)
			continue;
		p = d->d_buf;
		/* namesz 4, descsz, type 3 (NT_GNU_BUILD_ID), "GNU\0" */
		if (p[0] == 4 && p[8] == 3 && !memcmp(p + 12, "GNU", 4) &&
		    p[4] <= max && 16 + (size_t)p[4] <= d->d_size) {
			len = p[4];
			memcpy(id, p + 16, len);
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return len;
}

/* How the program's own executable mapping is described. */
enum text_mode {
	TEXT_FILE,		/* its path and build-id */
	TEXT_ANON_CODE,		/* anonymous, with its bytes as CODE */
	TEXT_ANON,		/* anonymous, no bytes */
	TEXT_MISSING,		/* a path that does not exist */
	TEXT_CHANGED,		/* its path, another build-id */
};

struct spec {
	const struct run *run;
	enum text_mode text;
	int repeat_maps;		/* write the initial maps twice */
	const char *overlap_path;	/* another file over the text */
	struct stream *streams;
	int nstreams;
};

static void write_recording(const char *path, const struct spec *sp)
{
	const struct run *r = sp->run;
	char err[256];
	struct trace_writer *w = trace_writer_open(path, err, sizeof(err));
	size_t off[4] = {0};
	int rep, i, more, ok = 1;

	if (!w) {
		failf("trace_writer_open: %s", err);
		return;
	}
	ok &= trace_write_meta(w, "backend", "sw") == 0;
	ok &= trace_write_meta(w, "program", r->prog) == 0;
	for (i = 0; i < sp->nstreams; i++) {
		struct trace_thread t = {0};

		t.tid = sp->streams[i].tid;
		t.parent = i ? sp->streams[0].tid : 0;
		ok &= trace_write_thread(w, &t) == 0;
	}
	for (rep = 0; rep <= sp->repeat_maps; rep++) {
		for (i = 0; i < r->nmaps; i++) {
			const struct mapping *m = &r->maps[i];
			struct trace_mmap mm;
			int is_text = !strcmp(m->path, r->prog);

			memset(&mm, 0, sizeof(mm));
			mm.start = m->start;
			mm.end = m->end;
			mm.offset = m->offset;
			mm.prot = m->prot;
			mm.flags = MAP_PRIVATE;
			snprintf(mm.path, sizeof(mm.path), "%s", m->path);
			if (m->path[0] == '/')
				mm.build_id_len = (uint32_t)build_id_of(
					m->path, mm.build_id,
					sizeof(mm.build_id));
			if (is_text && (sp->text == TEXT_ANON ||
					sp->text == TEXT_ANON_CODE)) {
				mm.path[0] = 0;
				mm.build_id_len = 0;
				mm.offset = 0;
			} else if (is_text && sp->text == TEXT_MISSING) {
				snprintf(mm.path, sizeof(mm.path),
					 "/nonexistent/ptenc_flow");
			} else if (is_text && sp->text == TEXT_CHANGED) {
				mm.build_id[3] ^= 0x40;
			}
			ok &= trace_write_mmap(w, &mm) == 0;
			if ((m->path[0] == '[' && !rep) ||
			    (is_text && sp->text == TEXT_ANON_CODE && !rep)) {
				struct trace_code c = {m->start, m->bytes,
						       m->end - m->start};

				ok &= trace_write_code(w, &c) == 0;
			}
			if (is_text && sp->overlap_path && !rep) {
				mm.offset = 0;
				snprintf(mm.path, sizeof(mm.path), "%s",
					 sp->overlap_path);
				mm.build_id_len = (uint32_t)build_id_of(
					mm.path, mm.build_id,
					sizeof(mm.build_id));
				ok &= trace_write_mmap(w, &mm) == 0;
			}
		}
	}
	/* The streams' chunks interleaved, as a recorder of several
	 * threads writes them; the last thread's first, so that the order
	 * of the output (thread creation) differs from the file's. */
	do {
		more = 0;
		for (i = sp->nstreams - 1; i >= 0; i--) {
			struct stream *s = &sp->streams[i];
			size_t n = s->len - off[i] < 700 ? s->len - off[i] : 700;

			if (!n)
				continue;
			ok &= trace_write_pt(w, s->tid, s->pt + off[i], n) == 0;
			off[i] += n;
			more = 1;
		}
	} while (more);
	{
		struct trace_end end = {0};

		for (i = 0; i < sp->nstreams; i++)
			end.instructions += sp->streams[i].ntruth;
		ok &= trace_write_end(w, &end) == 0;
	}
	CHECK(ok, "writing %s failed", path);
	if (trace_writer_close(w, err, sizeof(err)) < 0)
		failf("trace_writer_close: %s", err);
}

/* ------------------------------------------------------------------ */
/* Running the command                                                  */

struct result {
	int status;
	char *out, *err;
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[65536];
	size_t n;

	while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	if (f)
		fclose(f);
	fclose(m);
	return buf;
}

/* `ptrev decode ARGS...` in a child, its output captured. */
static void run_decode(struct result *res, const char *a1, const char *a2)
{
	char out_path[PATH_MAX], err_path[PATH_MAX];
	int st = 0;
	pid_t pid;

	snprintf(out_path, sizeof(out_path), "%s/stdout", tmpdir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", tmpdir);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		char *argv[] = {"decode", (char *)a1, (char *)a2, NULL};
		int argc = a2 ? 3 : a1 ? 2 : 1;
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int rc;

		dup2(o, 1);
		dup2(e, 2);
		close(o);
		close(e);
		rc = trace_decode_main(argc, argv);
		fflush(stdout);
		fflush(stderr);
		exit(rc);	/* exit(), so that LeakSanitizer checks */
	}
	waitpid(pid, &st, 0);
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	res->out = slurp(out_path);
	res->err = slurp(err_path);
}

static void result_free(struct result *res)
{
	free(res->out);
	free(res->err);
}

/* The event lines a clean sw trace may show. */
static int is_plain_event(const char *line, size_t len)
{
	static const char *const ok[] = {
		"[enabled]", "[disabled]", "[resumed]", "[exec mode: 64-bit]",
		"[end of trace]",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (strlen(ok[i]) == len && !memcmp(line, ok[i], len))
			return 1;
	}
	return 0;
}

/* Compares the instruction lines of @text (up to @end, or a `[thread`
 * line) with @truth exactly; other lines must be plain events. Returns
 * where it stopped. */
static const char *check_history(const char *text, const uint64_t *truth,
				 size_t ntruth, int with_insn,
				 const char *what)
{
	size_t i = 0, bad = 0;
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (!strncmp(p, "[thread ", 8))
			break;
		if (p[0] == '[') {
			if (!is_plain_event(p, len) && bad++ < 3)
				failf("%s: unexpected line '%.*s'", what,
				      (int)len, p);
		} else {
			char *end;
			uint64_t ip = strtoull(p, &end, 16);

			if (end - p != 16 || (with_insn ? *end != ' ' :
					      *end != '\n')) {
				if (bad++ < 3)
					failf("%s: malformed line '%.*s'",
					      what, (int)len, p);
			} else if (i >= ntruth || ip != truth[i]) {
				if (bad++ < 3)
					failf("%s: instruction %zu is %#" PRIx64
					      ", stepped %#" PRIx64, what, i,
					      ip, i < ntruth ? truth[i] : 0);
			}
			i++;
		}
		p = nl ? nl + 1 : NULL;
	}
	CHECK(i == ntruth, "%s: %zu instruction lines, stepped %zu", what, i,
	      ntruth);
	return p;
}

/* The instruction line for @ip that comes after @from, or NULL. */
static const char *line_at(const char *from, uint64_t ip, char *buf,
			   size_t size)
{
	char hex[20];
	const char *p = from;

	snprintf(hex, sizeof(hex), "%016" PRIx64 " ", ip);
	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, hex, 17)) {
			size_t len = strcspn(p, "\n");

			snprintf(buf, size, "%.*s", (int)len, p);
			return p;
		}
	}
	return NULL;
}

static int count_substr(const char *s, const char *sub)
{
	int n = 0;

	while (s && (s = strstr(s, sub))) {
		n++;
		s += strlen(sub);
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* The tests                                                            */

static void path_in_tmp(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* One thread: exactly the stepped instructions; counts agree. */
static void test_one_thread(const struct run *flow, char *file,
			    size_t filesize)
{
	struct stream s;
	struct spec sp = {0};
	struct result res;
	struct trace_data td;
	uint64_t insns = 0, errors = 0;
	char err[256];

	path_in_tmp(file, filesize, "flow.ptrev");
	if (encode(flow, SIZE_MAX, 256, 4242, &s) < 0)
		return;
	sp.run = flow;
	sp.text = TEXT_FILE;
	sp.repeat_maps = 1;	/* a re-reported map is no conflict */
	sp.streams = &s;
	sp.nstreams = 1;
	write_recording(file, &sp);

	run_decode(&res, file, NULL);
	CHECK(res.status == 0, "one thread: exit %d, stderr: %s", res.status,
	      res.err);
	CHECK(!strstr(res.out, "[thread"), "one thread: a [thread] line");
	CHECK(!*res.err, "one thread: stderr: %s", res.err);
	check_history(res.out, s.truth, s.ntruth, 0, "one thread");
	result_free(&res);

	memset(&td, 0, sizeof(td));
	if (trace_read_file(file, &td, err, sizeof(err)) < 0) {
		failf("trace_read_file: %s", err);
	} else {
		CHECK(trace_decode_count(&td, 0, &insns, &errors, err,
					 sizeof(err)) == 0 &&
		      insns == s.ntruth && errors == 0,
		      "count all: %" PRIu64 " insns, %" PRIu64 " errors, "
		      "want %zu, 0 (%s)", insns, errors, s.ntruth, err);
		CHECK(trace_decode_count(&td, 4242, &insns, &errors, err,
					 sizeof(err)) == 0 &&
		      insns == s.ntruth && errors == 0,
		      "count 4242: %" PRIu64 " insns", insns);
		CHECK(trace_decode_count(&td, 77, &insns, &errors, err,
					 sizeof(err)) < 0 &&
		      strstr(err, "no PT for thread 77"),
		      "count of a thread without PT: %s", err);
		trace_data_free(&td);
	}
	printf("one thread: %zu instructions, %zu bytes of PT\n", s.ntruth,
	       s.len);
	stream_free(&s);
}

/* The vDSO's symbols come from its recorded bytes: some address of the
 * recorded [vdso] mapping must be in its clock_gettime, and nothing outside
 * the mappings has a name. */
static void test_vdso_symbols(const char *file, const struct run *flow)
{
	struct trace_data td;
	struct trace_symbols *syms;
	const struct mapping *vdso = NULL;
	char err[256];
	int named = 0, found = 0;

	for (int i = 0; i < flow->nmaps; i++)
		if (!strcmp(flow->maps[i].path, "[vdso]"))
			vdso = &flow->maps[i];
	if (!vdso) {
		printf("no [vdso] mapping: vDSO symbols not checked\n");
		return;
	}
	memset(&td, 0, sizeof(td));
	if (trace_read_file(file, &td, err, sizeof(err)) < 0) {
		failf("trace_read_file: %s", err);
		return;
	}
	syms = trace_symbols_load(&td);
	CHECK(syms != NULL, "trace_symbols_load failed");
	for (uint64_t a = vdso->start; syms && a < vdso->end; a++) {
		const char *name;
		uint64_t off;

		if (trace_symbols_lookup(syms, a, &name, &off) < 0)
			continue;
		named++;
		if (off == 0 && strstr(name, "clock_gettime"))
			found = 1;
	}
	CHECK(found, "vDSO: no symbol naming clock_gettime (%d addresses "
	      "named)", named);
	{
		const char *name = NULL;
		uint64_t off;

		CHECK(!syms || trace_symbols_lookup(syms, 0x1000, &name,
						    &off) < 0,
		      "0x1000 named %s", name ? name : "?");
	}
	trace_symbols_free(syms);
	trace_data_free(&td);
}

/* This very process (PIE, ld.so, libc with only .dynsym): its maps make an
 * image without false conflicts, and its functions get their names. */
static void test_real_maps(void)
{
	char file[PATH_MAX], line[PATH_MAX + 128], err[256];
	struct trace_writer *w;
	struct trace_data td;
	struct trace_image ti;
	struct trace_symbols *syms;
	FILE *f = fopen("/proc/self/maps", "r");
	const char *name = NULL;
	uint64_t off = 1;

	path_in_tmp(file, sizeof(file), "self.ptrev");
	w = trace_writer_open(file, err, sizeof(err));
	if (!f || !w) {
		failf("self maps: %s", w ? "no /proc/self/maps" : err);
		if (f)
			fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, offset;
		char perm[8];
		int n = 0;
		struct trace_mmap m;
		char *p;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s%n", &lo, &hi, perm,
			   &offset, &n) != 4 || perm[2] != 'x')
			continue;
		p = line + n + strspn(line + n, " ");
		p[strcspn(p, "\n")] = 0;
		if (p[0] != '/')
			continue;
		memset(&m, 0, sizeof(m));
		m.start = lo;
		m.end = hi;
		m.offset = offset;
		m.prot = PROT_READ | PROT_EXEC;
		snprintf(m.path, sizeof(m.path), "%s", p);
		m.build_id_len = (uint32_t)build_id_of(p, m.build_id,
						       sizeof(m.build_id));
		CHECK(trace_write_mmap(w, &m) == 0, "self maps: write");
	}
	fclose(f);
	CHECK(trace_writer_close(w, err, sizeof(err)) == 0, "close: %s", err);
	memset(&td, 0, sizeof(td));
	if (trace_read_file(file, &td, err, sizeof(err)) < 0) {
		failf("self maps: %s", err);
		return;
	}
	CHECK(trace_image_build(&ti, &td, err, sizeof(err)) == 0,
	      "self maps: image: %s", err);
	trace_image_free(&ti);	/* also right after a failed build */
	syms = trace_symbols_load(&td);
	CHECK(syms && trace_symbols_lookup(syms, (uint64_t)(uintptr_t)&main,
					   &name, &off) == 0 &&
	      !strcmp(name, "main") && off == 0,
	      "self maps: main named %s+%" PRIu64, name ? name : "?", off);
	name = NULL;
	CHECK(syms && trace_symbols_lookup(syms,
			(uint64_t)(uintptr_t)&getpid + 1, &name, &off) == 0 &&
	      strstr(name, "getpid") && off == 1,
	      "self maps: getpid+1 named %s+%" PRIu64, name ? name : "?",
	      off);
	trace_symbols_free(syms);
	trace_data_free(&td);
}

/* Two threads: each history in turn, under its [thread TID] line. */
static void test_threads(const struct run *flow)
{
	struct stream s[2];
	struct spec sp = {0};
	struct result res;
	struct trace_data td;
	uint64_t insns = 0, errors = 0;
	char file[PATH_MAX], err[256];
	const char *p;

	path_in_tmp(file, sizeof(file), "threads.ptrev");
	if (encode(flow, SIZE_MAX, 4096, 100, &s[0]) < 0)
		return;
	/* The second thread: a prefix, cut in the middle of things, with
	 * PSBs close together. */
	if (encode(flow, flow->nsteps / 3, 64, 200, &s[1]) < 0) {
		stream_free(&s[0]);
		return;
	}
	sp.run = flow;
	sp.streams = s;
	sp.nstreams = 2;
	write_recording(file, &sp);

	run_decode(&res, file, NULL);
	CHECK(res.status == 0, "threads: exit %d, stderr: %s", res.status,
	      res.err);
	CHECK(!strncmp(res.out, "[thread 100]\n", 13),
	      "threads: output starts with '%.20s'", res.out);
	p = check_history(res.out + strcspn(res.out, "\n") + 1, s[0].truth,
			  s[0].ntruth, 0, "thread 100");
	CHECK(p && !strncmp(p, "[thread 200]\n", 13),
	      "threads: no [thread 200] after thread 100's history");
	if (p && !strncmp(p, "[thread 200]\n", 13))
		p = check_history(p + 13, s[1].truth, s[1].ntruth, 0,
				  "thread 200");
	CHECK(!p || !*p, "threads: more after thread 200: '%.40s'", p);
	result_free(&res);

	memset(&td, 0, sizeof(td));
	if (trace_read_file(file, &td, err, sizeof(err)) == 0) {
		CHECK(trace_decode_count(&td, 200, &insns, &errors, err,
					 sizeof(err)) == 0 &&
		      insns == s[1].ntruth && !errors,
		      "count 200: %" PRIu64 ", want %zu", insns, s[1].ntruth);
		trace_data_free(&td);
	} else {
		failf("trace_read_file: %s", err);
	}
	stream_free(&s[0]);
	stream_free(&s[1]);
}

/* Known instructions of ptenc_flow: its _start is hand-written. */
static void test_insn_flow(const char *file, const struct run *flow)
{
	struct result res;
	char line[1024];
	const char *p;
	uint64_t start = flow->first_ip;

	run_decode(&res, file, "--insn");
	CHECK(res.status == 0, "--insn: exit %d, stderr: %s", res.status,
	      res.err);
	p = line_at(res.out, start, line, sizeof(line));
	CHECK(p && strstr(line, "  <_start+0>  xor %ebp, %ebp"),
	      "--insn: first line '%s'", p ? line : "(none)");
	p = line_at(res.out, start + 2, line, sizeof(line));
	CHECK(p && strstr(line, "  <_start+2>  call 0x") &&
	      strstr(line, " <cmain+0>"), "--insn: call line '%s'",
	      p ? line : "(none)");
	p = line_at(res.out, start + 14, line, sizeof(line));
	CHECK(p && strstr(line, "  <_start+14>  syscall"),
	      "--insn: exit syscall line '%s'", p ? line : "(none)");
	CHECK(count_substr(res.out, "<restorer+0>  mov $0xf, %eax") == 2,
	      "--insn: %d lines for restorer's first instruction, want 2",
	      count_substr(res.out, "<restorer+0>  mov $0xf, %eax"));
	CHECK(count_substr(res.out, "  ud2") == 0 &&
	      count_substr(res.out, "<on_ill+0>") == 1,
	      "--insn: the ud2 never completed, on_ill ran once");
	result_free(&res);
}

/* tdec_pie runs at a random base: its symbols need the load bias. */
static void test_insn_pie(const char *prog)
{
	struct run pie;
	struct stream s;
	struct spec sp = {0};
	struct result res;
	char file[PATH_MAX], line[1024], want[64];
	const char *p;
	uint64_t twice = 0;

	if (record(prog, &pie) < 0)
		return;
	path_in_tmp(file, sizeof(file), "pie.ptrev");
	if (encode(&pie, SIZE_MAX, 4096, 7, &s) < 0) {
		run_free(&pie);
		return;
	}
	sp.run = &pie;
	sp.streams = &s;
	sp.nstreams = 1;
	write_recording(file, &sp);

	/* --insn before FILE this time. */
	run_decode(&res, "--insn", file);
	CHECK(res.status == 0, "pie: exit %d, stderr: %s", res.status,
	      res.err);
	CHECK((pie.first_ip & 0xfff) == 0 && pie.first_ip != 0x1000,
	      "pie: _start at %#" PRIx64 ", not at a load bias",
	      pie.first_ip);
	p = line_at(res.out, pie.first_ip, line, sizeof(line));
	CHECK(p && strstr(line, "  <_start+0>  xor %ebp, %ebp"),
	      "pie: first line '%s'", p ? line : "(none)");
	/* Every call of twice names it, and its target is where the
	 * <twice+0> lines are. */
	for (p = res.out; (p = strstr(p, "call 0x")); p++) {
		uint64_t t = strtoull(p + 7, NULL, 16);
		const char *sym = p + 7 + strspn(p + 7, "0123456789abcdef");

		if (!strncmp(sym, " <twice+0>", 10))
			twice = t;
	}
	CHECK(twice != 0, "pie: no call naming <twice+0>");
	snprintf(want, sizeof(want), "%016" PRIx64 "  <twice+0>  ", twice);
	CHECK(count_substr(res.out, want) == 5,
	      "pie: %d lines '%s', want 5 (one per call)",
	      count_substr(res.out, want), want);
	CHECK(count_substr(res.out, "<tdec_main+0>  ") == 1,
	      "pie: tdec_main's first instruction not named once");
	check_history(res.out, s.truth, s.ntruth, 1, "pie --insn");
	result_free(&res);
	stream_free(&s);
	run_free(&pie);
}

/* Code without a file: from CODE records, or nowhere (libipt errors). */
static void test_anonymous(const struct run *flow)
{
	struct stream s;
	struct spec sp = {0};
	struct result res;
	char file[PATH_MAX];

	if (encode(flow, SIZE_MAX, 256, 1, &s) < 0)
		return;
	sp.run = flow;
	sp.streams = &s;
	sp.nstreams = 1;

	path_in_tmp(file, sizeof(file), "anon_code.ptrev");
	sp.text = TEXT_ANON_CODE;
	write_recording(file, &sp);
	run_decode(&res, file, NULL);
	CHECK(res.status == 0, "anonymous with CODE: exit %d, stderr: %s",
	      res.status, res.err);
	check_history(res.out, s.truth, s.ntruth, 0, "anonymous with CODE");
	result_free(&res);

	path_in_tmp(file, sizeof(file), "anon.ptrev");
	sp.text = TEXT_ANON;
	write_recording(file, &sp);
	run_decode(&res, file, NULL);
	CHECK(res.status == 1, "anonymous without CODE: exit %d", res.status);
	CHECK(strstr(res.out, ": error: no memory mapped at this address]"),
	      "anonymous without CODE: no 'no memory mapped' error in '%.200s'",
	      res.out);
	{
		/* Not one invented instruction. */
		int lines = 0;

		for (const char *p = res.out; p && *p;
		     p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			lines += *p != '[';
		CHECK(lines == 0, "anonymous without CODE: %d instruction "
		      "lines", lines);
	}
	CHECK(strstr(res.err, "error"), "anonymous without CODE: stderr '%s'",
	      res.err);
	result_free(&res);
	stream_free(&s);
}

/* Code that cannot be trusted is refused, naming the mapping. */
static void test_refused(const struct run *flow, const char *other_prog)
{
	static const struct {
		enum text_mode text;
		int overlap;
		const char *name, *want;
	} cases[] = {
		{TEXT_MISSING, 0, "missing.ptrev",
		 "/nonexistent/ptenc_flow: cannot open (code mapped at 0x"},
		{TEXT_CHANGED, 0, "changed.ptrev",
		 " changed since recording (build-id "},
		{TEXT_FILE, 1, "overlap.ptrev",
		 "overlapping code mappings over time are not supported yet"},
	};
	struct stream s;

	if (encode(flow, 2000, 4096, 1, &s) < 0)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spec sp = {0};
		struct result res;
		char file[PATH_MAX];

		sp.run = flow;
		sp.streams = &s;
		sp.nstreams = 1;
		sp.text = cases[i].text;
		sp.overlap_path = cases[i].overlap ? other_prog : NULL;
		path_in_tmp(file, sizeof(file), cases[i].name);
		write_recording(file, &sp);
		run_decode(&res, file, NULL);
		CHECK(res.status == 1 && strstr(res.err, cases[i].want) &&
		      !strncmp(res.err, "ptrev decode: ", 14),
		      "%s: exit %d, stderr '%s', want '%s'", cases[i].name,
		      res.status, res.err, cases[i].want);
		CHECK(!*res.out, "%s: printed '%.80s'", cases[i].name, res.out);
		result_free(&res);
	}
	stream_free(&s);
}

static int copy_file(const char *from, const char *to, size_t keep,
		     long flip_at)
{
	char *data = slurp(from);
	size_t len = 0;
	FILE *f;
	struct stat st;

	if (!data || stat(from, &st) < 0)
		return -1;
	len = (size_t)st.st_size;
	if (keep < len)
		len = keep;
	if (flip_at >= 0 && (size_t)flip_at < len)
		data[flip_at] ^= 0x10;
	f = fopen(to, "w");
	if (!f || fwrite(data, 1, len, f) != len) {
		free(data);
		return -1;
	}
	fclose(f);
	free(data);
	return 0;
}

/* A damaged recording: the reader's message, exit 1, nothing printed;
 * a torn tail is not damage. */
static void test_damaged(const char *good)
{
	char file[PATH_MAX];
	struct result res;
	struct stat st;

	if (stat(good, &st) < 0) {
		failf("no %s", good);
		return;
	}
	/* A torn tail (the last record cut short): the records before it
	 * are decoded, and stderr says once where the file ends. */
	path_in_tmp(file, sizeof(file), "truncated.ptrev");
	copy_file(good, file, (size_t)st.st_size - 10, -1);
	run_decode(&res, file, NULL);
	CHECK(res.status == 0 && strstr(res.err, "the file ends inside record") &&
	      strstr(res.err, file) && *res.out,
	      "truncated: exit %d, stderr '%s'", res.status, res.err);
	result_free(&res);

	path_in_tmp(file, sizeof(file), "flipped.ptrev");
	copy_file(good, file, (size_t)st.st_size, st.st_size / 2);
	run_decode(&res, file, NULL);
	CHECK(res.status == 1 && strstr(res.err, "checksum") && !*res.out,
	      "bit flip: exit %d, stderr '%s'", res.status, res.err);
	result_free(&res);

	path_in_tmp(file, sizeof(file), "absent.ptrev");
	run_decode(&res, file, NULL);
	CHECK(res.status == 1 && strstr(res.err, file),
	      "absent file: exit %d, stderr '%s'", res.status, res.err);
	result_free(&res);
}

static void test_usage(const char *good)
{
	struct result res;

	run_decode(&res, NULL, NULL);
	CHECK(res.status == 1 && strstr(res.err, "no recording"),
	      "no FILE: exit %d, stderr '%s'", res.status, res.err);
	result_free(&res);
	run_decode(&res, good, "--bogus");
	CHECK(res.status == 1 && strstr(res.err, "--bogus"),
	      "unknown option: exit %d, stderr '%s'", res.status, res.err);
	result_free(&res);
	run_decode(&res, good, good);
	CHECK(res.status == 1, "two files: exit %d", res.status);
	result_free(&res);
	run_decode(&res, "--help", NULL);
	CHECK(res.status == 0 && strstr(res.out, "[thread TID]"),
	      "--help: exit %d, '%s'", res.status, res.out);
	result_free(&res);
}

int main(void)
{
	const char *dir = getenv("PTREV_TEST_PROGRAMS");
	char flow_prog[PATH_MAX], pie_prog[PATH_MAX], file[PATH_MAX];
	struct run flow;

	if (!dir) {
		printf("PTREV_TEST_PROGRAMS not set: skipped\n");
		return 77;
	}
	snprintf(flow_prog, sizeof(flow_prog), "%s/ptenc_flow", dir);
	snprintf(pie_prog, sizeof(pie_prog), "%s/tdec_pie", dir);
	if (access(flow_prog, X_OK) || access(pie_prog, X_OK)) {
		printf("%s or %s missing\n", flow_prog, pie_prog);
		return 1;
	}
	if (!mkdtemp(tmpdir)) {
		printf("mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	if (record(flow_prog, &flow) < 0)
		return 1;

	test_one_thread(&flow, file, sizeof(file));
	test_threads(&flow);
	test_insn_flow(file, &flow);
	test_vdso_symbols(file, &flow);
	test_real_maps();
	test_insn_pie(pie_prog);
	test_anonymous(&flow);
	test_refused(&flow, pie_prog);
	test_damaged(file);
	test_usage(file);
	run_free(&flow);

	if (failures) {
		printf("%d failure(s); files kept in %s\n", failures, tmpdir);
		return 1;
	}
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			printf("could not remove %s\n", tmpdir);
	}
	printf("trace_decode: all checks passed\n");
	return 0;
}
