/* Unit tests of inferior control (server/inferior*.c, breakpoints.c,
 * debugregs.c) against the small programs tests/programs/inf_*.c, found in
 * $PTREV_TEST_PROGRAMS. Each scenario launches a fresh inferior. */
#include "ptrev/inferior.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

static char target_path[4096], threads_path[4096];

/* Sanitizer runtimes in the programs (a -Db_sanitize build) must not trap
 * SIGSEGV themselves nor run LeakSanitizer, which refuses to run traced. */
static char *const test_env[] = {
	"ASAN_OPTIONS=detect_leaks=0:handle_segv=0",
	"PTREV_TEST=1",
	NULL,
};

static const char *kind_name(enum stop_kind k)
{
	static const char *names[] = { "NONE", "SIGNAL", "STEP", "SWBREAK", "HWBREAK",
				       "WATCH", "EXITED", "KILLED" };
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

/* Launch prog with one mode argument; stdout to out_fd (-1 inherit). */
static int launch(struct inferior *inf, const char *prog, const char *mode, int out_fd)
{
	char *argv[] = { (char *)prog, (char *)mode, NULL };
	char err[256] = "";
	int rc = inferior_launch(inf, prog, argv, test_env, -1, out_fd, -1, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "launch %s %s: %s\n", prog, mode ? mode : "", err);
	return rc;
}

/* Blocking wait for one event; kind NONE on error. */
static struct stop_event wait_event(struct inferior *inf)
{
	struct stop_event ev = { 0 };
	int rc = inferior_wait(inf, &ev, true);
	if (rc != 1) {
		fprintf(stderr, "inferior_wait returned %d\n", rc);
		ev.kind = STOP_NONE;
	}
	return ev;
}

static bool expect(struct stop_event ev, enum stop_kind kind, int line)
{
	if (ev.kind == kind)
		return true;
	fprintf(stderr, "line %d: expected %s, got %s (sig %d, code %d)\n", line,
		kind_name(kind), kind_name(ev.kind), ev.sig, ev.exit_code);
	failures++;
	return false;
}
#define EXPECT(ev, kind) expect((ev), (kind), __LINE__)

static void resume_all(struct inferior *inf)
{
	for (size_t i = 0; i < inf->nthreads; i++)
		if (!inf->threads[i].running)
			CHECK(inferior_resume(inf, inf->threads[i].tid, false, 0) == 0);
}

static uint64_t pc_of(struct inferior *inf, pid_t tid)
{
	struct user_regs_struct r;
	if (inferior_get_regs(inf, tid, &r) < 0)
		return 0;
	return r.rip;
}

/* One line from fd, then the value of "name=0x..." in it. */
static void read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;
	while (n + 1 < len && read(fd, &buf[n], 1) == 1 && buf[n] != '\n')
		n++;
	buf[n] = 0;
}

static uint64_t addr_of(const char *line, const char *name)
{
	char key[64];
	snprintf(key, sizeof(key), "%s=", name);
	const char *p = strstr(line, key);
	return p ? strtoull(p + strlen(key), NULL, 16) : 0;
}

/* The inferior and every thread are gone: no zombie left behind. */
static void check_reaped(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	struct stat sb;
	CHECK(stat(path, &sb) < 0 && errno == ENOENT);
	CHECK(waitpid(pid, NULL, __WALL | WNOHANG) < 0 && errno == ECHILD);
}

/* The state letter of /proc/PID/task/TID/stat ('t': stopped by tracer). */
static char task_state(pid_t pid, pid_t tid)
{
	char path[80], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return '?';
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

static uint64_t thread_dr7(pid_t tid)
{
	return (uint64_t)ptrace(PTRACE_PEEKUSER, tid,
				(void *)(offsetof(struct user, u_debugreg) + 7 * sizeof(long)), NULL);
}

/* Stopped at the first instruction: the dynamic loader's entry point, in
 * its own process group, with address-space randomisation off. */
static void test_launch_at_entry(void)
{
	struct inferior inf = { 0 };
	if (launch(&inf, target_path, "args", -1) < 0) {
		failures++;
		return;
	}
	pid_t pid = inf.pid;
	CHECK(inf.nthreads == 1 && inf.threads[0].tid == pid && !inf.threads[0].running);
	CHECK(getpgid(pid) == pid);

	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/personality", (int)pid);
	FILE *f = fopen(path, "r");
	unsigned pers = 0;
	CHECK(f && fscanf(f, "%x", &pers) == 1);
	if (f)
		fclose(f);
	CHECK(pers & 0x0040000); /* ADDR_NO_RANDOMIZE */

	uint64_t at_base = 0;
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	f = fopen(path, "r");
	uint64_t av[2];
	while (f && fread(av, sizeof(av), 1, f) == 1)
		if (av[0] == AT_BASE)
			at_base = av[1];
	if (f)
		fclose(f);
	CHECK(at_base != 0);
	Elf64_Ehdr eh;
	CHECK(inferior_read_mem(&inf, at_base, &eh, sizeof(eh)) == (ssize_t)sizeof(eh));
	CHECK(memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0);
	CHECK(pc_of(&inf, pid) == at_base + eh.e_entry);

	inferior_kill(&inf);
	check_reaped(pid);
	inferior_kill(&inf); /* twice is fine */
	struct stop_event ev;
	CHECK(inferior_wait(&inf, &ev, true) == -1);
	inferior_destroy(&inf);
}

/* argv and envp arrive exactly as given; the exit code comes back. */
static void test_args_and_exit(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	char *argv[] = { target_path, "args", "two words", "", "x=y", NULL };
	char *envp[] = { "A=1", "EMPTY=", "SPACE=a b", test_env[0], NULL };
	struct inferior inf = { 0 };
	char err[256];
	if (inferior_launch(&inf, target_path, argv, envp, -1, p[1], -1, err, sizeof(err)) < 0) {
		fprintf(stderr, "launch: %s\n", err);
		failures++;
		return;
	}
	close(p[1]);
	pid_t pid = inf.pid;
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	struct stop_event ev = wait_event(&inf);
	if (EXPECT(ev, STOP_EXITED))
		CHECK(ev.exit_code == 7 && ev.tid == pid);
	CHECK(inferior_wait(&inf, &ev, true) == -1); /* reported once */

	char want[1024], got[1024];
	size_t wn = 0, gn = 0;
	for (char **a = argv; *a; a++)
		wn += (size_t)sprintf(want + wn, "%s", *a) + 1;
	wn += (size_t)sprintf(want + wn, "--") + 1;
	for (char **e = envp; *e; e++)
		wn += (size_t)sprintf(want + wn, "%s", *e) + 1;
	ssize_t r;
	while ((r = read(p[0], got + gn, sizeof(got) - gn)) > 0)
		gn += (size_t)r;
	close(p[0]);
	CHECK(gn == wn && memcmp(got, want, wn) == 0);
	check_reaped(pid);
	inferior_destroy(&inf);
}

/* exec_again: the program runs first, then execs /proc/self/exe from
 * inside (a replay of a program that did so): it is itself again, its
 * AT_EXECFN the string /proc/self/exe, its arguments and environment
 * the same. One that cannot be exec'd fails and leaves nothing running. */
static void test_exec_again(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	char *argv[] = { "/proc/self/exe", "args", "two words", NULL };
	char *envp[] = { "A=1", test_env[0], NULL };
	struct inferior inf = { 0 };
	struct inferior_launch_opts o = { .stdin_fd = -1, .stdout_fd = p[1], .stderr_fd = -1,
					  .exec_again = "/proc/self/exe" };
	char err[256];
	if (inferior_launch_with(&inf, target_path, argv, envp, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "launch: %s\n", err);
		failures++;
		return;
	}
	close(p[1]);
	pid_t pid = inf.pid;
	char link[64], exe[4096], execfn[32] = "";
	snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	CHECK(strcmp(exe, target_path) == 0, "%s", exe);
	uint64_t auxv[128] = {0};
	snprintf(link, sizeof link, "/proc/%d/auxv", (int)pid);
	int fd = open(link, O_RDONLY);
	CHECK(fd >= 0 && read(fd, auxv, sizeof auxv) > 0);
	for (size_t i = 0; i + 1 < 128 && auxv[i]; i += 2)
		if (auxv[i] == 31) /* AT_EXECFN */
			CHECK(inferior_read_mem(&inf, auxv[i + 1], execfn, 15) == 15);
	if (fd >= 0)
		close(fd);
	CHECK(strcmp(execfn, "/proc/self/exe") == 0, "%s", execfn);
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	struct stop_event ev = wait_event(&inf);
	if (EXPECT(ev, STOP_EXITED))
		CHECK(ev.exit_code == 7);
	char got[1024];
	size_t gn = 0;
	ssize_t r;
	while ((r = read(p[0], got + gn, sizeof(got) - gn)) > 0)
		gn += (size_t)r;
	close(p[0]);
	CHECK(gn > 20 && memcmp(got, "/proc/self/exe\0args\0two words\0--\0A=1\0", 37) == 0);
	check_reaped(pid);
	inferior_destroy(&inf);

	o.stdout_fd = -1;
	o.exec_again = "/no/such/program";
	struct inferior bad = { 0 };
	CHECK(inferior_launch_with(&bad, target_path, argv, envp, &o, err, sizeof(err)) == -1);
	CHECK(strcmp(err, "cannot exec /no/such/program: No such file or directory") == 0, "%s",
	      err);
	CHECK(waitpid(-1, NULL, __WALL | WNOHANG) < 0 && errno == ECHILD); /* child reaped */
	inferior_destroy(&bad);
}

static void test_missing_binary(void)
{
	struct inferior inf = { 0 };
	char *argv[] = { "./no-such-program-ptrev", NULL };
	char err[256] = "";
	CHECK(inferior_launch(&inf, argv[0], argv, test_env, -1, -1, -1, err, sizeof(err)) == -1);
	CHECK(strcmp(err, "cannot run ./no-such-program-ptrev: No such file or directory") == 0);
	argv[0] = "/etc/passwd";
	CHECK(inferior_launch(&inf, argv[0], argv, test_env, -1, -1, -1, err, sizeof(err)) == -1);
	CHECK(strstr(err, "Permission denied") != NULL);
	CHECK(waitpid(-1, NULL, __WALL | WNOHANG) < 0 && errno == ECHILD); /* child reaped */
	inferior_destroy(&inf);
}

/* Memory with hidden int3s, a software breakpoint hit three times with
 * gdb's step-over (remove, step, reinsert), and a data write. */
static void test_memory_and_swbreak(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	struct inferior inf = { 0 };
	if (launch(&inf, target_path, "bp", p[1]) < 0) {
		failures++;
		return;
	}
	close(p[1]);
	pid_t pid = inf.pid;
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	struct stop_event ev = wait_event(&inf);
	if (EXPECT(ev, STOP_SIGNAL)) { /* raise(SIGTRAP): a plain signal */
		CHECK(ev.sig == SIGTRAP && ev.tid == pid);
		CHECK(inf.threads[0].has_siginfo && inf.threads[0].siginfo.si_signo == SIGTRAP &&
		      inf.threads[0].siginfo.si_code == SI_TKILL);
	}
	char line[256];
	read_line(p[0], line, sizeof(line));
	uint64_t bp = addr_of(line, "bp_here"), counter = addr_of(line, "counter");
	CHECK(bp && counter);

	/* Registers round-trip; r11 is scratch after a system call. */
	struct user_regs_struct regs, again;
	CHECK(inferior_get_regs(&inf, pid, &regs) == 0);
	regs.r11 = 0x1234567890ull;
	CHECK(inferior_set_regs(&inf, pid, &regs) == 0);
	CHECK(inferior_get_regs(&inf, pid, &again) == 0 && again.r11 == 0x1234567890ull &&
	      again.rip == regs.rip);
	CHECK(inferior_get_regs(&inf, pid + 100000, &again) == -1); /* no such thread */
	static uint8_t xs[16384];
	size_t xlen = sizeof(xs);
	CHECK(inferior_get_xstate(&inf, pid, xs, &xlen) == 0 && xlen > 512 && xlen < sizeof(xs));
	CHECK(inferior_set_xstate(&inf, pid, xs, xlen) == 0);

	uint8_t orig[16], buf[16], raw;
	CHECK(inferior_read_mem(&inf, bp, orig, sizeof(orig)) == sizeof(orig));
	CHECK(inferior_read_mem(&inf, 0, buf, 1) == -1); /* unmapped */
	CHECK(inferior_insert_swbreak(&inf, bp) == 0);
	CHECK(inferior_has_swbreak(&inf, bp));
	char mem[64];
	snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)pid);
	int fd = open(mem, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, &raw, 1, (off_t)bp) == 1 && raw == 0xcc);
	CHECK(inferior_read_mem(&inf, bp - 3, buf, 8) == 8 && buf[3] == orig[0]);

	/* Writing over the breakpoint changes what it restores, not the int3. */
	uint8_t nop = 0x90;
	CHECK(inferior_write_mem(&inf, bp, &nop, 1) == 1);
	CHECK(pread(fd, &raw, 1, (off_t)bp) == 1 && raw == 0xcc);
	CHECK(inferior_read_mem(&inf, bp, buf, 1) == 1 && buf[0] == 0x90);
	CHECK(inferior_write_mem(&inf, bp, orig, 4) == 4);
	CHECK(inferior_read_mem(&inf, bp, buf, 4) == 4 && memcmp(buf, orig, 4) == 0);

	/* Reference counts: two inserts need two removals. */
	CHECK(inferior_insert_swbreak(&inf, bp) == 0);
	CHECK(inferior_remove_swbreak(&inf, bp) == 0 && inferior_has_swbreak(&inf, bp));
	CHECK(inferior_remove_swbreak(&inf, bp) == 0 && !inferior_has_swbreak(&inf, bp));
	CHECK(pread(fd, &raw, 1, (off_t)bp) == 1 && raw == orig[0]);
	CHECK(inferior_remove_swbreak(&inf, bp) == -1);
	CHECK(inferior_insert_swbreak(&inf, bp) == 0);

	/* Without /proc/PID/mem, PEEKDATA/POKEDATA do the same, unaligned too. */
	int memfd = inf.memfd, hundred = 100, cval = 0;
	inf.memfd = -1;
	CHECK(inferior_read_mem(&inf, bp - 3, buf, 13) == 13 && memcmp(buf + 3, orig, 10) == 0);
	CHECK(inferior_read_mem(&inf, 0, buf, 1) == -1);
	CHECK(inferior_write_mem(&inf, counter, &hundred, sizeof(hundred)) == sizeof(hundred));
	inf.memfd = memfd;
	CHECK(inferior_read_mem(&inf, counter, &cval, sizeof(cval)) == sizeof(cval) && cval == 100);

	for (int hit = 1; hit <= 3; hit++) {
		CHECK(inferior_resume(&inf, pid, false, 0) == 0);
		ev = wait_event(&inf);
		if (!EXPECT(ev, STOP_SWBREAK))
			break;
		CHECK(ev.tid == pid && ev.sig == SIGTRAP);
		CHECK(pc_of(&inf, pid) == bp); /* rewound onto the int3 */
		int c = 0;
		CHECK(inferior_read_mem(&inf, counter, &c, sizeof(c)) == sizeof(c));
		CHECK(c == 100 + (hit - 1) * hit / 2);
		/* Step over it as gdb does. */
		CHECK(inferior_remove_swbreak(&inf, bp) == 0);
		CHECK(inferior_resume(&inf, pid, true, 0) == 0);
		ev = wait_event(&inf);
		if (EXPECT(ev, STOP_STEP)) {
			uint64_t pc = pc_of(&inf, pid);
			CHECK(pc > bp && pc < bp + 16);
		}
		CHECK(inferior_insert_swbreak(&inf, bp) == 0);
	}
	CHECK(inferior_remove_swbreak(&inf, bp) == 0);
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	ev = wait_event(&inf);
	if (EXPECT(ev, STOP_EXITED))
		CHECK(ev.exit_code == 106);
	if (fd >= 0)
		close(fd);
	close(p[0]);
	check_reaped(pid);
	inferior_destroy(&inf);
}

/* Single steps, debug registers: exec breakpoint, write and access
 * watchpoints, an unaligned range split over two registers, refusals. */
static void test_debug_registers(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	struct inferior inf = { 0 };
	if (launch(&inf, target_path, "watch", p[1]) < 0) {
		failures++;
		return;
	}
	close(p[1]);
	pid_t pid = inf.pid;
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	struct stop_event ev = wait_event(&inf);
	EXPECT(ev, STOP_SIGNAL);
	char line[256];
	read_line(p[0], line, sizeof(line));
	close(p[0]);
	uint64_t bp = addr_of(line, "bp_here"), watched = addr_of(line, "watched"),
		 wbuf = addr_of(line, "wbuf");
	CHECK(bp && watched && wbuf && watched % 8 == 0 && wbuf % 16 == 0);

	/* Three single steps, each moving the PC (inside raise()). */
	for (int i = 0; i < 3; i++) {
		uint64_t before = pc_of(&inf, pid);
		CHECK(inferior_resume(&inf, pid, true, 0) == 0);
		ev = wait_event(&inf);
		if (EXPECT(ev, STOP_STEP))
			CHECK(ev.tid == pid && pc_of(&inf, pid) != before);
	}

	CHECK(inferior_insert_hwpoint(&inf, 1, bp, 1) == 0);
	CHECK(inferior_insert_hwpoint(&inf, 2, watched, 8) == 0);
	/* slot 0 exec (RW 00, LEN 00), slot 1 write 8 bytes (RW 01, LEN 10). */
	CHECK(inf.dr7 == (0x1 | 0x4 | 0x100 | (0x9ull << 20)));
	CHECK(thread_dr7(pid) == inf.dr7);
	CHECK(inferior_insert_hwpoint(&inf, 3, watched, 8) == -2); /* no read-only */
	CHECK(inferior_insert_hwpoint(&inf, 4, wbuf, 8) == 0);
	uint64_t dr7_three = inf.dr7;
	CHECK(inferior_insert_hwpoint(&inf, 2, wbuf + 4, 8) == -1); /* needs 2, 1 free */
	CHECK(inf.dr7 == dr7_three);
	CHECK(inferior_remove_hwpoint(&inf, 4, wbuf, 8) == 0);
	/* An identical request is counted, not given a second register. */
	CHECK(inferior_insert_hwpoint(&inf, 2, watched, 8) == 0);
	CHECK(inf.hw[2].used == false && inf.hw[3].used == false);
	CHECK(inferior_remove_hwpoint(&inf, 2, watched, 8) == 0 && inf.hw[1].used);

	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	ev = wait_event(&inf); /* watched = 5 */
	if (EXPECT(ev, STOP_WATCH)) {
		CHECK(ev.watch_addr == watched && ev.watch_type == 2 && ev.tid == pid);
		long v = 0;
		CHECK(inferior_read_mem(&inf, watched, &v, sizeof(v)) == sizeof(v) && v == 5);
	}
	CHECK(inferior_remove_hwpoint(&inf, 2, watched, 8) == 0);
	CHECK(inferior_insert_hwpoint(&inf, 4, watched, 8) == 0);
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	ev = wait_event(&inf); /* counter = watched: a read */
	if (EXPECT(ev, STOP_WATCH))
		CHECK(ev.watch_addr == watched && ev.watch_type == 4);
	CHECK(inferior_remove_hwpoint(&inf, 4, watched, 8) == 0);

	/* wbuf[4..11] is not 8-aligned: two 4-byte registers. */
	CHECK(inferior_insert_hwpoint(&inf, 2, wbuf + 4, 8) == 0);
	int used = 0;
	for (int i = 0; i < 4; i++)
		used += inf.hw[i].used;
	CHECK(used == 3);
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	ev = wait_event(&inf); /* wbuf[11] = 1 */
	if (EXPECT(ev, STOP_WATCH))
		CHECK(ev.watch_addr == wbuf + 4 && ev.watch_type == 2);
	CHECK(inferior_remove_hwpoint(&inf, 2, wbuf + 4, 8) == 0);

	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	ev = wait_event(&inf);
	if (EXPECT(ev, STOP_HWBREAK))
		CHECK(ev.tid == pid && pc_of(&inf, pid) == bp);
	CHECK(inferior_remove_hwpoint(&inf, 1, bp, 1) == 0);
	CHECK(inf.dr7 == 0 && thread_dr7(pid) == 0);
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	ev = wait_event(&inf);
	if (EXPECT(ev, STOP_EXITED))
		CHECK(ev.exit_code == 0);
	inferior_destroy(&inf);
}

/* SIGUSR1 stops with its siginfo; resuming with it runs the handler (exit
 * 11), resuming without suppresses it (exit 12). */
static void test_signal(int deliver)
{
	struct inferior inf = { 0 };
	if (launch(&inf, target_path, "signal", -1) < 0) {
		failures++;
		return;
	}
	pid_t pid = inf.pid;
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	struct stop_event ev = wait_event(&inf);
	if (EXPECT(ev, STOP_SIGNAL)) {
		struct inf_thread *t = inferior_thread(&inf, pid);
		CHECK(ev.sig == SIGUSR1 && ev.tid == pid);
		CHECK(t && t->has_siginfo && t->siginfo.si_signo == SIGUSR1 &&
		      t->siginfo.si_code == SI_TKILL && t->siginfo.si_pid == pid);
	}
	CHECK(inferior_resume(&inf, pid, false, deliver ? SIGUSR1 : 0) == 0);
	ev = wait_event(&inf);
	if (EXPECT(ev, STOP_EXITED))
		CHECK(ev.exit_code == (deliver ? 11 : 12));
	inferior_destroy(&inf);
}

static void test_pass_signals(void)
{
	struct inferior inf = { 0 };
	inf.pass_signals[SIGUSR1] = true; /* kept across launch */
	if (launch(&inf, target_path, "signal", -1) < 0) {
		failures++;
		return;
	}
	CHECK(inferior_resume(&inf, inf.pid, false, 0) == 0);
	struct stop_event ev = wait_event(&inf);
	if (EXPECT(ev, STOP_EXITED))
		CHECK(ev.exit_code == 11);
	inferior_destroy(&inf);
}

static void test_segv(void)
{
	struct inferior inf = { 0 };
	if (launch(&inf, target_path, "segv", -1) < 0) {
		failures++;
		return;
	}
	pid_t pid = inf.pid;
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	struct stop_event ev = wait_event(&inf);
	if (EXPECT(ev, STOP_SIGNAL)) {
		struct inf_thread *t = inferior_thread(&inf, pid);
		CHECK(ev.sig == SIGSEGV);
		CHECK(t && t->has_siginfo && t->siginfo.si_code == SEGV_MAPERR &&
		      t->siginfo.si_addr == (void *)16);
	}
	CHECK(inferior_resume(&inf, pid, false, SIGSEGV) == 0);
	ev = wait_event(&inf);
	if (EXPECT(ev, STOP_KILLED))
		CHECK(ev.sig == SIGSEGV && ev.tid == pid);
	CHECK(inferior_wait(&inf, &ev, true) == -1);
	check_reaped(pid);
	inferior_destroy(&inf);
}

/* inferior_interrupt stops the program with SIGINT; delivering it kills
 * the program, even though we ignore SIGINT ourselves (as ptrev --stdio
 * does): the inferior must not inherit that. */
static void test_interrupt(void)
{
	struct inferior inf = { 0 };
	void (*old)(int) = signal(SIGINT, SIG_IGN);
	int rc = launch(&inf, target_path, "spin", -1);
	signal(SIGINT, old);
	if (rc < 0) {
		failures++;
		return;
	}
	pid_t pid = inf.pid;
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	struct stop_event ev;
	CHECK(inferior_wait(&inf, &ev, false) == 0); /* running, nothing yet */
	nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	CHECK(inferior_interrupt(&inf) == 0);
	ev = wait_event(&inf);
	if (EXPECT(ev, STOP_SIGNAL))
		CHECK(ev.sig == SIGINT && ev.tid == pid);
	CHECK(inferior_resume(&inf, pid, false, SIGINT) == 0);
	ev = wait_event(&inf);
	if (EXPECT(ev, STOP_KILLED))
		CHECK(ev.sig == SIGINT);
	inferior_kill(&inf);
	check_reaped(pid);
	inferior_destroy(&inf);
}

/* Detach removes our int3 and debug registers: the program then runs to
 * its normal end (it would die of SIGTRAP otherwise). */
static void test_detach(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	struct inferior inf = { 0 };
	if (launch(&inf, target_path, "bp", p[1]) < 0) {
		failures++;
		return;
	}
	close(p[1]);
	pid_t pid = inf.pid;
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	struct stop_event ev = wait_event(&inf);
	EXPECT(ev, STOP_SIGNAL);
	char line[256];
	read_line(p[0], line, sizeof(line));
	close(p[0]);
	CHECK(inferior_insert_swbreak(&inf, addr_of(line, "bp_here")) == 0);
	CHECK(inferior_insert_hwpoint(&inf, 2, addr_of(line, "counter"), 4) == 0);
	CHECK(inferior_detach(&inf) == 0);
	CHECK(inf.pid == 0);
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 6);
	inferior_destroy(&inf);
}

/* Four workers hit one breakpoint at about the same time: each hit is
 * reported once (the others wait as pending events), every thread is
 * stopped whenever an event is reported, the exit is reported once.
 * hw: the breakpoint is a debug register, set before the threads exist. */
static void test_threads(bool hw)
{
	int p[2];
	CHECK(pipe(p) == 0);
	struct inferior inf = { 0 };
	if (launch(&inf, threads_path, NULL, p[1]) < 0) {
		failures++;
		return;
	}
	close(p[1]);
	pid_t pid = inf.pid;
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	struct stop_event ev = wait_event(&inf);
	EXPECT(ev, STOP_SIGNAL);
	char line[256];
	read_line(p[0], line, sizeof(line));
	close(p[0]);
	uint64_t wbp = addr_of(line, "worker_bp"), mbp = addr_of(line, "main_bp");
	CHECK(wbp && mbp);

	enum stop_kind want = hw ? STOP_HWBREAK : STOP_SWBREAK;
	if (hw)
		CHECK(inferior_insert_hwpoint(&inf, 1, wbp, 1) == 0);
	else
		CHECK(inferior_insert_swbreak(&inf, wbp) == 0);
	/* main_bp runs only after all four workers went past worker_bp. */
	CHECK(inferior_insert_swbreak(&inf, mbp) == 0);
	pid_t seen[4] = { 0 };
	resume_all(&inf);
	for (int hit = 0; hit < 4; hit++) {
		ev = wait_event(&inf);
		if (!EXPECT(ev, want))
			break;
		CHECK(ev.tid != pid && pc_of(&inf, ev.tid) == wbp);
		for (int k = 0; k < hit; k++)
			CHECK(seen[k] != ev.tid);
		seen[hit] = ev.tid;
		CHECK(inf.nthreads == 5);
		for (size_t i = 0; i < inf.nthreads; i++) {
			CHECK(!inf.threads[i].running);
			CHECK(task_state(pid, inf.threads[i].tid) == 't');
			if (hw)
				CHECK(thread_dr7(inf.threads[i].tid) == inf.dr7);
		}
		/* Step the reporting thread alone over the breakpoint. */
		if (hw)
			CHECK(inferior_remove_hwpoint(&inf, 1, wbp, 1) == 0);
		else
			CHECK(inferior_remove_swbreak(&inf, wbp) == 0);
		CHECK(inferior_resume(&inf, ev.tid, true, 0) == 0);
		struct stop_event st = wait_event(&inf);
		if (EXPECT(st, STOP_STEP))
			CHECK(st.tid == ev.tid);
		if (hw)
			CHECK(inferior_insert_hwpoint(&inf, 1, wbp, 1) == 0);
		else
			CHECK(inferior_insert_swbreak(&inf, wbp) == 0);
		resume_all(&inf);
	}
	ev = wait_event(&inf);
	if (EXPECT(ev, STOP_SWBREAK)) {
		CHECK(ev.tid == pid && pc_of(&inf, pid) == mbp);
		CHECK(inf.nthreads == 5);
		for (size_t i = 0; i < inf.nthreads; i++)
			CHECK(task_state(pid, inf.threads[i].tid) == 't');
	}
	CHECK(inferior_remove_swbreak(&inf, mbp) == 0);
	resume_all(&inf);
	ev = wait_event(&inf);
	if (EXPECT(ev, STOP_EXITED))
		CHECK(ev.exit_code == 5 && ev.tid == pid);
	CHECK(inferior_wait(&inf, &ev, true) == -1);
	check_reaped(pid);
	for (int k = 0; k < 4; k++)
		CHECK(waitpid(seen[k], NULL, __WALL | WNOHANG) < 0 && errno == ECHILD);
	inferior_destroy(&inf);
}

/* Other threads' hits of a breakpoint removed in the meantime are dropped:
 * the next event is main_bp. Then kill with threads alive: nothing left. */
static void test_threads_discard_and_kill(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	struct inferior inf = { 0 };
	if (launch(&inf, threads_path, NULL, p[1]) < 0) {
		failures++;
		return;
	}
	close(p[1]);
	pid_t pid = inf.pid;
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	struct stop_event ev = wait_event(&inf);
	EXPECT(ev, STOP_SIGNAL);
	char line[256];
	read_line(p[0], line, sizeof(line));
	close(p[0]);
	uint64_t wbp = addr_of(line, "worker_bp"), mbp = addr_of(line, "main_bp");
	CHECK(inferior_insert_swbreak(&inf, wbp) == 0);
	CHECK(inferior_insert_swbreak(&inf, mbp) == 0);
	resume_all(&inf);
	ev = wait_event(&inf);
	EXPECT(ev, STOP_SWBREAK);
	pid_t first = ev.tid;

	/* Let the three other workers reach the int3 before waiting: one is
	 * reported, the other two become pending events. */
	for (size_t i = 0; i < inf.nthreads; i++)
		if (inf.threads[i].tid != first)
			CHECK(inferior_resume(&inf, inf.threads[i].tid, false, 0) == 0);
	for (int tries = 0; tries < 5000; tries++) {
		int stopped = 0;
		for (size_t i = 0; i < inf.nthreads; i++)
			if (inf.threads[i].tid != pid && inf.threads[i].tid != first)
				stopped += task_state(pid, inf.threads[i].tid) == 't';
		if (stopped == 3)
			break;
		nanosleep(&(struct timespec){ 0, 1000 * 1000 }, NULL);
	}
	ev = wait_event(&inf);
	if (EXPECT(ev, STOP_SWBREAK))
		CHECK(ev.tid != first && ev.tid != pid);
	int pending = 0;
	for (size_t i = 0; i < inf.nthreads; i++)
		pending += inf.threads[i].has_pending && inf.threads[i].pending.kind == STOP_SWBREAK;
	CHECK(pending == 2);

	/* Removing worker_bp voids those two hits: next comes main_bp. */
	CHECK(inferior_remove_swbreak(&inf, wbp) == 0);
	resume_all(&inf);
	ev = wait_event(&inf);
	if (EXPECT(ev, STOP_SWBREAK))
		CHECK(ev.tid == pid && pc_of(&inf, pid) == mbp);

	pid_t tids[8];
	size_t n = inf.nthreads < 8 ? inf.nthreads : 8;
	for (size_t i = 0; i < n; i++)
		tids[i] = inf.threads[i].tid;
	CHECK(n == 5);
	inferior_kill(&inf);
	CHECK(inf.nthreads == 0);
	check_reaped(pid);
	for (size_t i = 0; i < n; i++)
		CHECK(waitpid(tids[i], NULL, __WALL | WNOHANG) < 0 && errno == ECHILD);
	inferior_kill(&inf);
	CHECK(inferior_wait(&inf, &ev, false) == -1);
	inferior_destroy(&inf);
}

/* Detach from a multi-threaded process stopped at a breakpoint, with
 * SIGSTOPs of ours possibly still queued: it runs on to its normal exit. */
static void test_threads_detach(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	struct inferior inf = { 0 };
	if (launch(&inf, threads_path, NULL, p[1]) < 0) {
		failures++;
		return;
	}
	close(p[1]);
	pid_t pid = inf.pid;
	CHECK(inferior_resume(&inf, pid, false, 0) == 0);
	struct stop_event ev = wait_event(&inf);
	EXPECT(ev, STOP_SIGNAL);
	char line[256];
	read_line(p[0], line, sizeof(line));
	close(p[0]);
	uint64_t wbp = addr_of(line, "worker_bp");
	CHECK(inferior_insert_swbreak(&inf, wbp) == 0);
	CHECK(inferior_insert_hwpoint(&inf, 2, addr_of(line, "hits"), 4) == 0);
	resume_all(&inf);
	ev = wait_event(&inf);
	EXPECT(ev, STOP_SWBREAK);
	CHECK(inferior_detach(&inf) == 0);
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 5);
	inferior_destroy(&inf);
}

static bool find_program(char *out, size_t len, const char *name)
{
	const char *dir = getenv("PTREV_TEST_PROGRAMS");
	if (!dir)
		return false;
	snprintf(out, len, "%s/%s", dir, name);
	return access(out, X_OK) == 0;
}

int main(void)
{
	if (!find_program(target_path, sizeof(target_path), "inf_target") ||
	    !find_program(threads_path, sizeof(threads_path), "inf_threads")) {
		fprintf(stderr, "test programs not found (PTREV_TEST_PROGRAMS)\n");
		return 77;
	}
	alarm(110); /* a hang is a failure, not a stuck suite */
	test_launch_at_entry();
	test_args_and_exit();
	test_exec_again();
	test_missing_binary();
	test_memory_and_swbreak();
	test_debug_registers();
	test_signal(1);
	test_signal(0);
	test_pass_signals();
	test_segv();
	test_interrupt();
	test_detach();
	test_threads(false);
	test_threads(true);
	test_threads_discard_and_kill();
	test_threads_detach();
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	printf("all inferior checks passed\n");
	return 0;
}
