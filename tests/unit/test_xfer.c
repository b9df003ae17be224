/* Tests for the qXfer objects built from /proc and inferior memory:
 * auxv, exec-file and libraries-svr4 on a real stopped child, and
 * libraries-svr4 against corrupted link_map chains. */
#include "ptrev/target_xfer.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"

/* --- reading a real child's memory --- */

struct child {
	pid_t pid;
	int memfd;
};

static ssize_t child_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct child *c = ctx;
	ssize_t n = pread(c->memfd, buf, len, (off_t)addr);
	return n < 0 ? -1 : n;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int ch;
	while ((ch = fgetc(f)) != EOF) {
		if (n + 1 >= cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
		}
		buf[n++] = (char)ch;
	}
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* --- a tiny parser for our own replies --- */

struct lib {
	char name[512];
	uint64_t lm, l_addr, l_ld, lmid;
};

static bool attr(const char *elem, const char *key, char *out, size_t cap)
{
	char pat[32];
	snprintf(pat, sizeof pat, " %s=\"", key);
	const char *p = strstr(elem, pat);
	const char *end = strchr(elem, '>');
	if (!p || (end && p > end))
		return false;
	p += strlen(pat);
	const char *q = strchr(p, '"');
	if (!q || (size_t)(q - p) >= cap)
		return false;
	memcpy(out, p, (size_t)(q - p));
	out[q - p] = '\0';
	return true;
}

static uint64_t attr_hex(const char *elem, const char *key)
{
	char buf[64];
	if (!attr(elem, key, buf, sizeof buf))
		return 0;
	return strtoull(buf, NULL, 16);
}

static int parse_libs(const char *doc, struct lib *libs, int max)
{
	int n = 0;
	for (const char *p = strstr(doc, "<library "); p && n < max;
	     p = strstr(p + 1, "<library ")) {
		struct lib *l = &libs[n++];
		if (!attr(p, "name", l->name, sizeof l->name))
			l->name[0] = '\0';
		l->lm = attr_hex(p, "lm");
		l->l_addr = attr_hex(p, "l_addr");
		l->l_ld = attr_hex(p, "l_ld");
		l->lmid = attr_hex(p, "lmid");
	}
	return n;
}

static int count_of(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Start of the mapping of the file with this inode at file offset 0, or
 * of "[vdso]" when ino is 0. */
static uint64_t map_base(pid_t pid, ino_t ino)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	uint64_t best = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long start, end, off, inode;
		char perms[8], dev[16];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %15s %llu %n", &start, &end,
			   perms, &off, dev, &inode, &pos) < 6)
			continue;
		bool match = ino ? (inode == (unsigned long long)ino && off == 0)
				 : strstr(line, "[vdso]") != NULL;
		if (match && (best == 0 || start < best))
			best = start;
	}
	fclose(f);
	return best;
}

/* --- the real child --- */

static const char *program_path(void)
{
	static char path[PATH_MAX];
	const char *dir = getenv("PTREV_TEST_PROGRAMS");
	if (!dir)
		return NULL;
	snprintf(path, sizeof path, "%s/xfer_stop", dir);
	return access(path, X_OK) == 0 ? path : NULL;
}

static bool launch(const char *prog, struct child *c)
{
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		personality(ADDR_NO_RANDOMIZE);
		char *argv[] = {(char *)prog, NULL};
		execv(prog, argv);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGTRAP) {
		fprintf(stderr, "child did not stop at exec (status %#x)\n", status);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return false;
	}
	char mem[64];
	snprintf(mem, sizeof mem, "/proc/%d/mem", (int)pid);
	c->pid = pid;
	c->memfd = open(mem, O_RDONLY | O_CLOEXEC);
	return c->memfd >= 0;
}

static void kill_child(struct child *c)
{
	int status;
	close(c->memfd);
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &status, 0);
}

static void test_auxv(struct child *c, const char *prog)
{
	struct strbuf sb = STRBUF_INIT;
	CHECK(xfer_auxv(c->pid, &sb) == 0, "auxv read failed");

	char path[64];
	snprintf(path, sizeof path, "/proc/%d/auxv", (int)c->pid);
	size_t len = 0;
	char *want = slurp(path, &len);
	CHECK(want && sb.len == len && memcmp(sb.data, want, len) == 0,
	      "auxv differs from /proc (%zu vs %zu bytes)", sb.len, len);
	free(want);

	/* Independently of /proc: a well-formed vector whose AT_EXECFN names
	 * the program we executed and whose AT_PAGESZ is the page size. */
	CHECK(sb.len % sizeof(Elf64_auxv_t) == 0 && sb.len >= 32, "auxv size %zu", sb.len);
	bool saw_null = false, saw_pagesz = false, saw_execfn = false;
	for (size_t off = 0; off + sizeof(Elf64_auxv_t) <= sb.len; off += sizeof(Elf64_auxv_t)) {
		Elf64_auxv_t a;
		memcpy(&a, sb.data + off, sizeof a);
		if (a.a_type == AT_NULL) {
			saw_null = true;
			break;
		}
		if (a.a_type == AT_PAGESZ)
			saw_pagesz = a.a_un.a_val == (uint64_t)sysconf(_SC_PAGESIZE);
		if (a.a_type == AT_EXECFN) {
			char name[PATH_MAX] = "";
			child_read(c, a.a_un.a_val, name, strlen(prog) + 1);
			saw_execfn = strcmp(name, prog) == 0;
		}
	}
	CHECK(saw_null && saw_pagesz && saw_execfn, "auxv contents: null %d pagesz %d execfn %d",
	      saw_null, saw_pagesz, saw_execfn);

	strbuf_reset(&sb);
	CHECK(xfer_auxv(999999999, &sb) == -ENOENT && sb.len == 0, "auxv of no process");
	strbuf_free(&sb);
}

static void test_exec_file(struct child *c, const char *prog)
{
	struct strbuf sb = STRBUF_INIT;
	char real[PATH_MAX];
	CHECK(realpath(prog, real) != NULL, "realpath");
	CHECK(xfer_exec_file(c->pid, &sb) == 0, "exec-file failed");
	CHECK(strcmp(strbuf_str(&sb), real) == 0, "exec-file '%s' want '%s'", strbuf_str(&sb), real);
	CHECK(sb.data && sb.data[0] == '/', "exec-file not absolute");
	strbuf_reset(&sb);
	CHECK(xfer_exec_file(999999999, &sb) == -ENOENT, "exec-file of no process");
	strbuf_free(&sb);
}

static void test_svr4_at_exec(struct child *c)
{
	/* Stopped at the first instruction: DT_DEBUG is still 0. */
	struct strbuf sb = STRBUF_INIT;
	CHECK(xfer_libraries_svr4(c->pid, child_read, c, "", &sb) == 0, "svr4 at exec failed");
	CHECK(strcmp(strbuf_str(&sb),
		     "<library-list-svr4 version=\"1.0\"></library-list-svr4>") == 0,
	      "svr4 at exec: %s", strbuf_str(&sb));
	strbuf_free(&sb);
}

static void test_svr4_in_main(struct child *c)
{
	struct strbuf sb = STRBUF_INIT;
	CHECK(xfer_libraries_svr4(c->pid, child_read, c, "", &sb) == 0, "svr4 in main failed");
	const char *doc = strbuf_str(&sb);
	printf("libraries-svr4 in main: %s\n", doc);
	CHECK(starts_with(doc, "<library-list-svr4 version=\"1.0\" main-lm=\"0x"),
	      "header: %s", doc);
	CHECK(ends_with(doc, "/></library-list-svr4>"), "trailer: %s", doc);

	struct lib libs[32];
	int n = parse_libs(doc, libs, 32);
	uint64_t main_lm = attr_hex(doc, "main-lm");
	bool saw_ld = false, saw_libc = false, saw_vdso = false;
	for (int i = 0; i < n; i++) {
		struct lib *l = &libs[i];
		uint64_t base;
		if (strcmp(l->name, "linux-vdso.so.1") == 0) {
			saw_vdso = true;
			base = map_base(c->pid, 0);
		} else {
			struct stat st;
			CHECK(stat(l->name, &st) == 0, "library %s does not exist", l->name);
			base = map_base(c->pid, st.st_ino);
			if (strstr(l->name, "/ld-linux-x86-64.so.2"))
				saw_ld = true;
			if (strstr(l->name, "/libc.so.6"))
				saw_libc = true;
		}
		CHECK(base != 0 && base == l->l_addr, "%s: l_addr %#" PRIx64 " but mapped at %#" PRIx64,
		      l->name, l->l_addr, base);
		CHECK(l->lmid == libs[0].lmid && l->lmid != 0, "%s: lmid", l->name);
		CHECK(l->lm != 0 && l->lm != main_lm && l->l_ld != 0, "%s: lm/l_ld", l->name);
	}
	/* Sanitizer builds add their runtimes; the three are always there. */
	CHECK(n >= 3 && saw_ld && saw_libc && saw_vdso,
	      "want ld.so, libc and vdso; got %d libraries", n);

	/* lmid is the namespace's r_debug: version 1 and r_map = main-lm. */
	if (n > 0) {
		int32_t version = 0;
		uint64_t r_map = 0;
		child_read(c, libs[0].lmid, &version, sizeof version);
		child_read(c, libs[0].lmid + 8, &r_map, sizeof r_map);
		CHECK(version >= 1 && r_map == main_lm, "lmid is not r_debug");
	}

	/* gdb's incremental form continues after what it already has. */
	if (n >= 2) {
		char annex[128];
		snprintf(annex, sizeof annex, "start=%" PRIx64 ";prev=%" PRIx64 ";lmid=%" PRIx64,
			 libs[1].lm, libs[0].lm, libs[0].lmid);
		struct strbuf inc = STRBUF_INIT;
		CHECK(xfer_libraries_svr4(c->pid, child_read, c, annex, &inc) == 0, "annex");
		const char *s = strbuf_str(&inc);
		CHECK(starts_with(s, "<library-list-svr4 version=\"1.0\"><library name="),
		      "incremental header: %s", s);
		struct lib rest[32];
		int m = parse_libs(s, rest, 32);
		CHECK(m == n - 1 && rest[0].lm == libs[1].lm, "incremental: %d libs: %s", m, s);
		/* A wrong prev means gdb's view is stale: nothing is listed. */
		strbuf_reset(&inc);
		snprintf(annex, sizeof annex, "start=%" PRIx64 ";prev=%" PRIx64, libs[1].lm, libs[1].lm);
		CHECK(xfer_libraries_svr4(c->pid, child_read, c, annex, &inc) == 0, "annex 2");
		CHECK(strcmp(strbuf_str(&inc), "<library-list-svr4 version=\"1.0\"></library-list-svr4>") == 0,
		      "stale prev: %s", strbuf_str(&inc));
		strbuf_reset(&inc);
		CHECK(xfer_libraries_svr4(c->pid, child_read, c, "start=xyz", &inc) == -EINVAL,
		      "bad annex accepted");
		strbuf_free(&inc);
	}
	strbuf_free(&sb);
}

/* --- corrupted lists: real auxv and program headers, fake r_debug --- */

#define FAKE_BASE UINT64_C(0x100000000000)
#define FAKE_SIZE 8192

struct fake {
	struct child *real;
	uint64_t r_debug;       /* reads here come from rd[] */
	uint8_t rd[48];
	uint8_t mem[FAKE_SIZE]; /* at FAKE_BASE */
	size_t page_limit;      /* reads of mem beyond this fail */
	long reads;
};

static ssize_t fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;
	f->reads++;
	if (addr >= f->r_debug && addr - f->r_debug < sizeof f->rd) {
		if (addr - f->r_debug + len > sizeof f->rd)
			return -1;
		memcpy(buf, f->rd + (addr - f->r_debug), len);
		return (ssize_t)len;
	}
	if (addr >= FAKE_BASE && addr < FAKE_BASE + FAKE_SIZE) {
		size_t off = (size_t)(addr - FAKE_BASE);
		size_t lim = f->page_limit ? f->page_limit : FAKE_SIZE;
		if (off >= lim)
			return -1;
		size_t n = len < lim - off ? len : lim - off;
		memcpy(buf, f->mem + off, n);
		return (ssize_t)n;
	}
	return child_read(f->real, addr, buf, len);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* A link_map at FAKE_BASE + off. */
static void fake_lm(struct fake *f, size_t off, uint64_t name, uint64_t next, uint64_t prev)
{
	put64(f->mem + off + 0, 0x1000 * (off / 64));
	put64(f->mem + off + 8, name);
	put64(f->mem + off + 16, 0x2000);
	put64(f->mem + off + 24, next);
	put64(f->mem + off + 32, prev);
}

static bool well_formed(const char *doc)
{
	return starts_with(doc, "<library-list-svr4 version=\"1.0\"") &&
	       ends_with(doc, "</library-list-svr4>") &&
	       count_of(doc, "<library-list-svr4") == 1 &&
	       count_of(doc, "main-lm=") <= 1;
}

static void test_svr4_corrupt(struct child *c)
{
	/* Find the real r_debug from the real list first. */
	struct strbuf sb = STRBUF_INIT;
	xfer_libraries_svr4(c->pid, child_read, c, "", &sb);
	struct lib libs[4];
	if (parse_libs(strbuf_str(&sb), libs, 4) < 1) {
		CHECK(0, "no real list to corrupt");
		strbuf_free(&sb);
		return;
	}
	struct fake *f = calloc(1, sizeof *f);
	f->real = c;
	f->r_debug = libs[0].lmid;

	/* 1. A list with odd names: main M -> A -> B -> (cycle back to A). */
	uint64_t M = FAKE_BASE, A = FAKE_BASE + 64, B = FAKE_BASE + 128;
	uint64_t nameA = FAKE_BASE + 1024, nameB = FAKE_BASE + 2048;
	strcpy((char *)f->mem + 1024, "/x/a&<b>\"'.so");
	strcpy((char *)f->mem + 2048, "");
	fake_lm(f, 0, nameB, A, 0);
	fake_lm(f, 64, nameA, B, M);
	fake_lm(f, 128, nameB, A, A);
	int32_t one = 1;
	memcpy(f->rd, &one, 4);
	put64(f->rd + 8, M);
	strbuf_reset(&sb);
	CHECK(xfer_libraries_svr4(c->pid, fake_read, f, "", &sb) == 0, "fake 1");
	char want[512];
	snprintf(want, sizeof want,
		 "<library-list-svr4 version=\"1.0\" main-lm=\"0x%" PRIx64 "\">"
		 "<library name=\"/x/a&amp;&lt;b&gt;&quot;&apos;.so\" lm=\"0x%" PRIx64
		 "\" l_addr=\"0x1000\" l_ld=\"0x2000\" lmid=\"0x%" PRIx64 "\"/>"
		 "</library-list-svr4>", M, A, f->r_debug);
	CHECK(strcmp(strbuf_str(&sb), want) == 0, "escaped/unnamed/prev-check:\n got %s\nwant %s",
	      strbuf_str(&sb), want);

	/* 2. A cycle that passes every l_prev check, entered through the
	 * annex: A <-> B. The walk must stop at its bound. */
	fake_lm(f, 64, nameA, B, B);
	fake_lm(f, 128, nameA, A, A);
	strbuf_reset(&sb);
	char annex[64];
	snprintf(annex, sizeof annex, "start=%" PRIx64 ";prev=%" PRIx64, A, B);
	CHECK(xfer_libraries_svr4(c->pid, fake_read, f, annex, &sb) == 0, "cycle");
	int entries = count_of(strbuf_str(&sb), "<library ");
	CHECK(entries > 2 && entries <= 10000 && well_formed(strbuf_str(&sb)),
	      "cycle: %d entries", entries);

	/* 3. Namespaces that point back to themselves (r_version 2). */
	int32_t two = 2;
	memcpy(f->rd, &two, 4);
	put64(f->rd + 40, f->r_debug);
	fake_lm(f, 0, nameA, A, 0);
	fake_lm(f, 64, nameA, 0, M);
	strbuf_reset(&sb);
	CHECK(xfer_libraries_svr4(c->pid, fake_read, f, "", &sb) == 0, "ns cycle");
	entries = count_of(strbuf_str(&sb), "<library ");
	CHECK(entries >= 2 && entries <= 10000 && well_formed(strbuf_str(&sb)),
	      "ns cycle: %d entries", entries);

	/* 4. Name running into unreadable memory: keep what was readable. */
	memcpy(f->rd, &one, 4);
	memset(f->mem + 4096 - 5, 'q', 5);
	fake_lm(f, 64, FAKE_BASE + 4096 - 5, 0, M);
	f->page_limit = 4096;
	strbuf_reset(&sb);
	CHECK(xfer_libraries_svr4(c->pid, fake_read, f, "", &sb) == 0, "name at edge");
	CHECK(strstr(strbuf_str(&sb), "<library name=\"qqqqq\"") != NULL, "edge name: %s",
	      strbuf_str(&sb));
	f->page_limit = 0;

	/* 5. Unreadable r_debug: still a well-formed, empty document. */
	struct fake *g = calloc(1, sizeof *g);
	g->real = c;
	g->r_debug = libs[0].lmid;
	g->page_limit = 1; /* nothing of the fake region readable */
	memcpy(g->rd, &one, 4);
	put64(g->rd + 8, FAKE_BASE + 8);
	strbuf_reset(&sb);
	CHECK(xfer_libraries_svr4(c->pid, fake_read, g, "", &sb) == 0, "unreadable lm");
	snprintf(want, sizeof want, "<library-list-svr4 version=\"1.0\" main-lm=\"0x%" PRIx64
		 "\"></library-list-svr4>", FAKE_BASE + 8);
	CHECK(strcmp(strbuf_str(&sb), want) == 0, "unreadable lm: %s", strbuf_str(&sb));
	memset(g->rd, 0, 4); /* r_version 0 */
	strbuf_reset(&sb);
	CHECK(xfer_libraries_svr4(c->pid, fake_read, g, "", &sb) == 0, "version 0");
	CHECK(strcmp(strbuf_str(&sb), "<library-list-svr4 version=\"1.0\"></library-list-svr4>") == 0,
	      "version 0: %s", strbuf_str(&sb));

	/* 6. Random garbage everywhere in the fake region. */
	srand(12345);
	for (int iter = 0; iter < 200; iter++) {
		for (size_t i = 0; i < FAKE_SIZE; i += 8) {
			uint64_t v;
			switch (rand() % 4) {
			case 0: v = 0; break;
			case 1: v = FAKE_BASE + (uint64_t)(rand() % (FAKE_SIZE + 64)); break;
			case 2: v = FAKE_BASE + 64 * (uint64_t)(rand() % (FAKE_SIZE / 64)); break;
			default: v = ((uint64_t)rand() << 33) ^ (uint64_t)rand(); break;
			}
			put64(g->mem + i, v);
		}
		int32_t ver = rand() % 4;
		memcpy(g->rd, &ver, 4);
		put64(g->rd + 8, FAKE_BASE + 64 * (uint64_t)(rand() % (FAKE_SIZE / 64)));
		put64(g->rd + 40, rand() % 2 ? g->r_debug : FAKE_BASE + 8 * (uint64_t)(rand() % 1024));
		g->page_limit = 0;
		g->reads = 0;
		strbuf_reset(&sb);
		snprintf(annex, sizeof annex, "start=%" PRIx64,
			 FAKE_BASE + 8 * (uint64_t)(rand() % 1024));
		int rc = xfer_libraries_svr4(c->pid, fake_read, g, iter % 2 ? annex : "", &sb);
		CHECK(rc == 0 && well_formed(strbuf_str(&sb)) &&
		      count_of(strbuf_str(&sb), "<library ") <= 10000,
		      "garbage %d: rc %d", iter, rc);
	}
	free(g);
	free(f);
	strbuf_free(&sb);
}

/* A process without DT_DEBUG: this is what gdbserver answers E01 for. */
static ssize_t fail_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx, (void)addr, (void)buf, (void)len;
	return -1;
}

static void test_svr4_no_memory(struct child *c)
{
	struct strbuf sb = STRBUF_INIT;
	CHECK(xfer_libraries_svr4(c->pid, fail_read, NULL, "", &sb) == -ENOENT,
	      "unreadable memory should mean no DT_DEBUG");
	CHECK(xfer_libraries_svr4(999999999, fail_read, NULL, NULL, &sb) == -ENOENT,
	      "no process");
	strbuf_free(&sb);
}

int main(void)
{
	const char *prog = program_path();
	if (!prog) {
		fprintf(stderr, "SKIP: PTREV_TEST_PROGRAMS/xfer_stop not found\n");
		return 77;
	}
	struct child c;
	if (!launch(prog, &c)) {
		fprintf(stderr, "SKIP: cannot ptrace a child here\n");
		return 77;
	}
	test_auxv(&c, prog);
	test_exec_file(&c, prog);
	test_svr4_at_exec(&c);
	test_svr4_no_memory(&c);

	/* Run to the raise(SIGSTOP) in main. */
	int status;
	ptrace(PTRACE_CONT, c.pid, NULL, NULL);
	if (waitpid(c.pid, &status, 0) != c.pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGSTOP) {
		CHECK(0, "child did not stop in main (status %#x)", status);
	} else {
		test_svr4_in_main(&c);
		test_svr4_corrupt(&c);
	}
	kill_child(&c);

	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("xfer: all checks passed\n");
	return 0;
}
