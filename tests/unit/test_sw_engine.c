/* The sw recording engine driven as the gdb server drives the inferior
 * module: breakpoints (stop before the instruction, gdb-style step-over),
 * single steps, a watchpoint, signals reported then delivered or
 * suppressed, pass_signals, interrupt, exit codes, threads, and a start in
 * the middle of a run. After each scenario the recording (sw_engine_data,
 * decoded with the image builder and libipt) must list exactly the
 * instructions an independent single-stepper (tests/record/ref_step) sees. */
#include "ptrev/inferior.h"
#include "ptrev/sw_engine.h"
#include "ptrev/trace_decode.h"
#include "ptrev/trace_file.h"

#include "../../decode/trace_internal.h"

#include <fcntl.h>
#include <intel-pt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../check.h"

extern char **environ;

static const char *progdir;
static char refstep[PATH_MAX];

/* ---- instruction lists per thread, threads in creation order ---------- */
struct ilist {
	uint64_t *ip;
	size_t n, cap;
};

struct tlists {
	int n;
	long tid[16];
	struct ilist l[16];
};

static void push(struct ilist *l, uint64_t ip)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->ip = realloc(l->ip, l->cap * sizeof *l->ip);
		if (!l->ip)
			abort();
	}
	l->ip[l->n++] = ip;
}

static struct ilist *thread_list(struct tlists *t, long tid)
{
	for (int i = 0; i < t->n; i++)
		if (t->tid[i] == tid)
			return &t->l[i];
	if (t->n == 16)
		abort();
	t->tid[t->n] = tid;
	memset(&t->l[t->n], 0, sizeof t->l[t->n]);
	return &t->l[t->n++];
}

static void tlists_free(struct tlists *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->l[i].ip);
	t->n = 0;
}

/* ref_step PROG ARGS: the ground truth, run with exactly our environment
 * (a shell would change it, and glibc's start-up reads it). */
static int ref_lists(char *const argv[], struct tlists *out)
{
	char line[256];
	char *args[16] = { refstep };
	int fds[2], st;
	for (int i = 0; argv[i] && i < 14; i++)
		args[i + 1] = argv[i];
	memset(out, 0, sizeof *out);
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execve(refstep, args, environ);
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		long tid;
		unsigned long long ip;
		if (line[0] == 'T' && sscanf(line, "T %ld", &tid) == 1)
			thread_list(out, tid);
		else if (sscanf(line, "%ld %llx", &tid, &ip) == 2)
			push(thread_list(out, tid), ip);
	}
	fclose(f);
	waitpid(pid, &st, 0);
	return 0;
}

/* The recording as libipt decodes it. */
static int decode_lists(const struct trace_data *td, struct tlists *out)
{
	struct trace_image ti;
	char err[512];

	memset(out, 0, sizeof *out);
	if (trace_image_build(&ti, td, err, sizeof err) < 0) {
		printf("image: %s\n", err);
		return -1;
	}
	for (size_t i = 0; i < td->nthreads; i++)
		if (!td->threads[i].exited)
			thread_list(out, td->threads[i].tid);
	for (size_t s = 0; s < td->nstreams; s++) {
		struct ilist *l = thread_list(out, td->streams[s].tid);
		struct pt_config cfg;
		pt_config_init(&cfg);
		cfg.begin = td->streams[s].pt;
		cfg.end = td->streams[s].pt + td->streams[s].pt_len;
		struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
		if (!d)
			continue;
		pt_insn_set_image(d, ti.image);
		int st = pt_insn_sync_forward(d);
		while (st >= 0) {
			while (st & pts_event_pending) {
				struct pt_event ev;
				st = pt_insn_event(d, &ev, sizeof ev);
				if (st < 0)
					break;
			}
			if (st < 0)
				break;
			struct pt_insn insn;
			st = pt_insn_next(d, &insn, sizeof insn);
			if (st < 0 && st != -pte_eos) {
				printf("decode error in thread %d at %#llx: %s\n",
				       (int)td->streams[s].tid,
				       (unsigned long long)insn.ip,
				       pt_errstr(pt_errcode(st)));
				failures++;
				break;
			}
			if (st < 0)
				break;
			push(l, insn.ip);
		}
		pt_insn_free_decoder(d);
	}
	trace_image_free(&ti);
	return 0;
}

/* Does thread list b (recording) equal a[from..]? */
static void compare(const char *what, const struct ilist *a, size_t from,
		    const struct ilist *b)
{
	size_t n = a->n - from;
	for (size_t i = 0; i < n && i < b->n; i++) {
		if (a->ip[from + i] != b->ip[i]) {
			CHECK(0, "%s: instruction %zu: stepped %#llx, recorded %#llx",
			      what, i, (unsigned long long)a->ip[from + i],
			      (unsigned long long)b->ip[i]);
			return;
		}
	}
	CHECK(n == b->n, "%s: stepped %zu instructions, recorded %zu", what, n, b->n);
}

static void compare_all(const char *what, const struct tlists *ref,
			const struct trace_data *td)
{
	struct tlists rec;
	char name[128];

	if (decode_lists(td, &rec) < 0) {
		CHECK(0, "%s: cannot decode", what);
		return;
	}
	CHECK(rec.n == ref->n, "%s: %d threads stepped, %d recorded", what, ref->n, rec.n);
	for (int i = 0; i < ref->n && i < rec.n; i++) {
		snprintf(name, sizeof name, "%s thread #%d", what, i);
		compare(name, &ref->l[i], 0, &rec.l[i]);
	}
	tlists_free(&rec);
}

/* ---- helpers ---------------------------------------------------------- */
static uint64_t sym(const char *prog, const char *name)
{
	char cmd[PATH_MAX + 32], line[512];
	uint64_t addr = 0;
	snprintf(cmd, sizeof cmd, "nm '%s'", prog);
	FILE *f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long a;
		char type, s[400];
		if (sscanf(line, "%llx %c %399s", &a, &type, s) == 3 && !strcmp(s, name))
			addr = a;
	}
	pclose(f);
	return addr;
}

static void prog_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", progdir, name);
}

static int launch(struct inferior *inf, char *const argv[])
{
	char err[256];
	int null = open("/dev/null", O_RDWR);
	memset(inf, 0, sizeof *inf);
	inf->memfd = -1;
	int rc = inferior_launch(inf, argv[0], argv, environ, null, null, null,
				 err, sizeof err);
	close(null);
	if (rc < 0)
		printf("launch: %s\n", err);
	return rc;
}

static struct sw_engine *engine(struct inferior *inf)
{
	char err[256];
	struct sw_engine *e = sw_engine_new(inf, NULL, NULL, err, sizeof err);
	if (!e)
		printf("sw_engine_new: %s\n", err);
	return e;
}

static uint64_t pc_of(struct inferior *inf, pid_t tid)
{
	struct user_regs_struct r;
	return inferior_get_regs(inf, tid, &r) == 0 ? r.rip : 0;
}

/* gdb's continue: every thread, sig for one of them. */
static int cont(struct sw_engine *e, struct inferior *inf, pid_t sigtid, int sig,
		struct stop_event *ev)
{
	size_t n = inf->nthreads;
	pid_t tids[64];
	for (size_t i = 0; i < n && i < 64; i++)
		tids[i] = inf->threads[i].tid;
	for (size_t i = 0; i < n && i < 64; i++)
		sw_engine_resume(e, tids[i], false, tids[i] == sigtid ? sig : 0);
	return sw_engine_wait(e, ev, true);
}

static int step(struct sw_engine *e, pid_t tid, struct stop_event *ev)
{
	if (sw_engine_resume(e, tid, true, 0) < 0)
		return -1;
	return sw_engine_wait(e, ev, true);
}

static void finish(struct sw_engine *e, struct trace_end *end)
{
	char err[256];
	CHECK(sw_engine_finish(e, end, false, err, sizeof err) == 0, "finish: %s", err);
}

static size_t index_of(const struct ilist *l, uint64_t ip)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->ip[i] == ip)
			return i;
	return l->n;
}

/* ---- scenarios -------------------------------------------------------- */

/* Breakpoint before the instruction, gdb's step-over, stepi, the history
 * complete at each stop, exit code. */
static void case_breakpoint(void)
{
	char prog[PATH_MAX];
	prog_path(prog, sizeof prog, "rec_recurse");
	char *argv[] = { prog, NULL };
	uint64_t depth = sym(prog, "depth");
	struct tlists ref, now;
	struct inferior inf;
	struct stop_event ev;
	struct trace_end end;

	CHECK(depth, "no symbol depth");
	if (!depth || ref_lists(argv, &ref) < 0 || launch(&inf, argv) < 0)
		return;
	struct sw_engine *e = engine(&inf);
	if (!e)
		return;
	CHECK(inferior_insert_swbreak(&inf, depth) == 0, "insert");
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_SWBREAK &&
	      ev.tid == inf.pid, "first hit: kind %d", ev.kind);
	CHECK(pc_of(&inf, ev.tid) == depth, "pc %#llx at the breakpoint",
	      (unsigned long long)pc_of(&inf, ev.tid));
	/* Everything before the breakpoint is in the history already. */
	size_t first = index_of(&ref.l[0], depth);
	decode_lists(sw_engine_data(e), &now);
	CHECK(now.n == 1 && now.l[0].n == first, "at the first stop: %zu recorded, "
	      "%zu executed", now.n ? now.l[0].n : 0, first);
	if (now.n == 1) {
		struct ilist pre = { ref.l[0].ip, first, first };
		compare("breakpoint prefix", &pre, 0, &now.l[0]);
	}
	tlists_free(&now);
	/* gdb's step-over: remove, step, reinsert, continue. */
	inferior_remove_swbreak(&inf, depth);
	CHECK(step(e, inf.pid, &ev) == 1 && ev.kind == STOP_STEP, "step-over: %d", ev.kind);
	CHECK(pc_of(&inf, inf.pid) == ref.l[0].ip[first + 1], "after the step-over");
	inferior_insert_swbreak(&inf, depth);
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_SWBREAK &&
	      pc_of(&inf, inf.pid) == depth, "second hit (recursion)");
	size_t second = first + 1 + index_of(&(struct ilist){ ref.l[0].ip + first + 1,
		ref.l[0].n - first - 1, 0 }, depth);
	/* stepi off a breakpoint that stays inserted (the server's own
	 * step-over of a hardware-style exemption), then a few more. */
	for (int i = 1; i <= 5; i++) {
		CHECK(step(e, inf.pid, &ev) == 1 && ev.kind == STOP_STEP, "stepi %d", i);
		CHECK(pc_of(&inf, inf.pid) == ref.l[0].ip[second + i], "stepi %d: pc %#llx, "
		      "expected %#llx", i, (unsigned long long)pc_of(&inf, inf.pid),
		      (unsigned long long)ref.l[0].ip[second + i]);
	}
	inferior_remove_swbreak(&inf, depth);
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_EXITED &&
	      ev.exit_code == 0, "exit: kind %d code %d", ev.kind, ev.exit_code);
	CHECK(inf.exited, "inferior marked gone");
	CHECK(sw_engine_wait(e, &ev, false) < 0, "nothing after the exit");
	finish(e, &end);
	CHECK(end.status_kind == 0 && end.status == 0, "END status");
	compare_all("breakpoint", &ref, sw_engine_data(e));
	sw_engine_free(e);
	inferior_destroy(&inf);
	tlists_free(&ref);
}

/* Single steps from the first instruction: each stop where ref_step says
 * (a REP iteration may stop at the same IP, as a real single-step does). */
static void case_stepi(void)
{
	char prog[PATH_MAX];
	prog_path(prog, sizeof prog, "rec_recurse");
	char *argv[] = { prog, NULL };
	struct tlists ref;
	struct inferior inf;
	struct stop_event ev;

	if (ref_lists(argv, &ref) < 0 || launch(&inf, argv) < 0)
		return;
	struct sw_engine *e = engine(&inf);
	if (!e)
		return;
	size_t idx = 0;
	CHECK(pc_of(&inf, inf.pid) == ref.l[0].ip[0], "starts at the entry");
	for (int i = 0; i < 300; i++) {
		if (step(e, inf.pid, &ev) != 1 || ev.kind != STOP_STEP || ev.sig != SIGTRAP) {
			CHECK(0, "step %d: kind %d", i, ev.kind);
			break;
		}
		uint64_t pc = pc_of(&inf, inf.pid);
		if (pc == ref.l[0].ip[idx + 1])
			idx++;
		else if (pc != ref.l[0].ip[idx]) {
			CHECK(0, "step %d: pc %#llx, expected %#llx", i,
			      (unsigned long long)pc, (unsigned long long)ref.l[0].ip[idx + 1]);
			break;
		}
	}
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_EXITED, "exit");
	finish(e, NULL);
	compare_all("stepi", &ref, sw_engine_data(e));
	sw_engine_free(e);
	inferior_destroy(&inf);
	tlists_free(&ref);
}

/* A write watchpoint on the variable the SIGUSR1 handler writes, with
 * both signals passed (pass_signals): no signal stops. */
static void case_watch(void)
{
	char prog[PATH_MAX];
	prog_path(prog, sizeof prog, "rec_signal");
	char *argv[] = { prog, NULL };
	uint64_t var = sym(prog, "got_usr1"), handler = sym(prog, "on_usr1");
	struct tlists ref;
	struct inferior inf;
	struct stop_event ev;

	CHECK(var && handler, "symbols");
	if (!var || ref_lists(argv, &ref) < 0 || launch(&inf, argv) < 0)
		return;
	inf.pass_signals[SIGUSR1] = inf.pass_signals[SIGALRM] = true;
	struct sw_engine *e = engine(&inf);
	if (!e)
		return;
	CHECK(inferior_insert_hwpoint(&inf, 2, var, 4) == 0, "watchpoint");
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_WATCH &&
	      ev.watch_addr == var && ev.watch_type == 2, "watch: kind %d addr %#llx",
	      ev.kind, (unsigned long long)ev.watch_addr);
	uint64_t pc = pc_of(&inf, inf.pid);
	CHECK(pc > handler && pc < handler + 64, "stopped in the handler after the "
	      "write: pc %#llx, handler %#llx", (unsigned long long)pc,
	      (unsigned long long)handler);
	inferior_remove_hwpoint(&inf, 2, var, 4);
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_EXITED &&
	      ev.exit_code == 0, "exit after pass: kind %d code %d", ev.kind, ev.exit_code);
	finish(e, NULL);
	const struct trace_data *td = sw_engine_data(e);
	CHECK(td->nsignals == 2, "2 signals recorded, got %zu", td->nsignals);
	compare_all("watch", &ref, td);
	sw_engine_free(e);
	inferior_destroy(&inf);
	tlists_free(&ref);
}

/* Signals reported, then delivered (the handler runs: its breakpoint is
 * hit) or suppressed (it never runs, nothing recorded). */
static void case_signal(bool deliver)
{
	char prog[PATH_MAX];
	prog_path(prog, sizeof prog, "rec_signal");
	char *argv[] = { prog, NULL };
	uint64_t handler = sym(prog, "on_usr1");
	struct tlists ref;
	struct inferior inf;
	struct stop_event ev;

	if (!handler || ref_lists(argv, &ref) < 0 || launch(&inf, argv) < 0)
		return;
	struct sw_engine *e = engine(&inf);
	if (!e)
		return;
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_SIGNAL &&
	      ev.sig == SIGUSR1, "SIGUSR1 reported: kind %d sig %d", ev.kind, ev.sig);
	CHECK(sw_engine_data(e)->nsignals == 0, "not recorded before delivery");
	inferior_insert_swbreak(&inf, handler);
	CHECK(cont(e, &inf, inf.pid, deliver ? SIGUSR1 : 0, &ev) == 1, "resume");
	if (deliver) {
		CHECK(ev.kind == STOP_SWBREAK && pc_of(&inf, inf.pid) == handler,
		      "handler reached: kind %d", ev.kind);
		inferior_remove_swbreak(&inf, handler);
		CHECK(cont(e, &inf, 0, 0, &ev) == 1, "resume");
	}
	CHECK(ev.kind == STOP_SIGNAL && ev.sig == SIGALRM, "SIGALRM reported: kind %d sig %d",
	      ev.kind, ev.sig);
	CHECK(cont(e, &inf, inf.pid, SIGALRM, &ev) == 1 && ev.kind == STOP_EXITED &&
	      ev.exit_code == (deliver ? 0 : 1), "exit: kind %d code %d", ev.kind,
	      ev.exit_code);
	finish(e, NULL);
	const struct trace_data *td = sw_engine_data(e);
	size_t usr1 = 0, alrm = 0;
	for (size_t i = 0; i < td->nsignals; i++) {
		usr1 += td->signals[i].signo == SIGUSR1;
		alrm += td->signals[i].signo == SIGALRM && td->signals[i].handler_ip;
	}
	CHECK(usr1 == (deliver ? 1u : 0u) && alrm == 1, "SIGNAL records: usr1 %zu alrm %zu",
	      usr1, alrm);
	if (deliver)
		compare_all("signal delivered", &ref, td);
	else {
		/* Without the handler the program differs from ref_step: check
		 * that the recording decodes to what the engine counted. */
		uint64_t n = 0, errs = 0;
		char err[256];
		CHECK(trace_decode_count(td, inf.pid, &n, &errs, err, sizeof err) == 0 &&
		      errs == 0, "suppressed: decodes");
	}
	sw_engine_free(e);
	inferior_destroy(&inf);
	tlists_free(&ref);
}

/* Ctrl-C while the program loops: SIGINT reported, none recorded, the
 * history ends exactly where the thread stands. */
static void case_interrupt(void)
{
	char prog[PATH_MAX];
	prog_path(prog, sizeof prog, "rec_loop");
	char *argv[] = { prog, NULL };
	struct inferior inf;
	struct stop_event ev;
	struct trace_end end;

	if (launch(&inf, argv) < 0)
		return;
	struct sw_engine *e = engine(&inf);
	if (!e)
		return;
	sw_engine_resume(e, inf.pid, false, 0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc;
	do {
		rc = sw_engine_wait(e, &ev, false);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (rc == 0 && (t1.tv_sec - t0.tv_sec) * 1000 +
		 (t1.tv_nsec - t0.tv_nsec) / 1000000 < 150);
	CHECK(rc == 0, "no event while looping (%d, kind %d)", rc, ev.kind);
	CHECK(sw_engine_interrupt(e) == 0, "interrupt");
	CHECK(sw_engine_wait(e, &ev, true) == 1 && ev.kind == STOP_SIGNAL &&
	      ev.sig == SIGINT && ev.tid == inf.pid, "SIGINT: kind %d sig %d", ev.kind, ev.sig);
	const struct trace_data *td = sw_engine_data(e);
	CHECK(td->nsignals == 0, "no SIGINT in the recording");
	/* Resume without the signal (gdb's default): it keeps running. */
	sw_engine_resume(e, inf.pid, false, 0);
	CHECK(sw_engine_wait(e, &ev, false) == 0, "running again");
	sw_engine_interrupt(e);
	CHECK(sw_engine_wait(e, &ev, true) == 1 && ev.kind == STOP_SIGNAL, "second stop");
	finish(e, &end);
	struct tlists rec;
	decode_lists(td, &rec);
	CHECK(rec.n == 1 && rec.l[0].n == end.instructions && end.instructions > 1000,
	      "decoded %zu, counted %llu", rec.n ? rec.l[0].n : 0,
	      (unsigned long long)end.instructions);
	CHECK(td->nsignals == 0, "still no signal recorded");
	tlists_free(&rec);
	sw_engine_free(e);
	/* The inferior module takes over again. */
	CHECK(inferior_resume(&inf, inf.pid, true, 0) == 0 &&
	      inferior_wait(&inf, &ev, true) == 1 && ev.kind == STOP_STEP,
	      "inferior module steps after finish: kind %d", ev.kind);
	inferior_kill(&inf);
	inferior_destroy(&inf);
}

/* Threads: a breakpoint in the worker, hit in a new thread listed in
 * inf->threads; every thread's history exact. */
static void case_threads(void)
{
	char prog[PATH_MAX];
	prog_path(prog, sizeof prog, "rec_threads");
	char *argv[] = { prog, NULL };
	uint64_t worker = sym(prog, "worker");
	struct tlists ref;
	struct inferior inf;
	struct stop_event ev;

	if (!worker || ref_lists(argv, &ref) < 0 || launch(&inf, argv) < 0)
		return;
	struct sw_engine *e = engine(&inf);
	if (!e)
		return;
	inferior_insert_swbreak(&inf, worker);
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_SWBREAK &&
	      ev.tid != inf.pid, "worker breakpoint: kind %d tid %d", ev.kind, (int)ev.tid);
	CHECK(inferior_thread(&inf, ev.tid) != NULL && inf.nthreads >= 2,
	      "new thread in inf->threads (%zu threads)", inf.nthreads);
	CHECK(pc_of(&inf, ev.tid) == worker, "worker pc");
	inferior_remove_swbreak(&inf, worker);
	int n = 0;
	while (cont(e, &inf, 0, 0, &ev) == 1 && ev.kind != STOP_EXITED &&
	       ev.kind != STOP_KILLED && n++ < 10)
		;
	CHECK(ev.kind == STOP_EXITED && ev.exit_code == 0, "exit: %d", ev.kind);
	finish(e, NULL);
	compare_all("threads", &ref, sw_engine_data(e));
	sw_engine_free(e);
	inferior_destroy(&inf);
	tlists_free(&ref);
}

/* Recording starts mid-run: the program ran plain to a breakpoint. */
static void case_midrun(void)
{
	char prog[PATH_MAX];
	prog_path(prog, sizeof prog, "rec_recurse");
	char *argv[] = { prog, NULL };
	uint64_t depth = sym(prog, "depth");
	struct tlists ref, rec;
	struct inferior inf;
	struct stop_event ev;

	if (!depth || ref_lists(argv, &ref) < 0 || launch(&inf, argv) < 0)
		return;
	inferior_insert_swbreak(&inf, depth);
	CHECK(inferior_resume(&inf, inf.pid, false, 0) == 0 &&
	      inferior_wait(&inf, &ev, true) == 1 && ev.kind == STOP_SWBREAK, "plain run");
	struct sw_engine *e = engine(&inf);
	if (!e)
		return;
	inferior_remove_swbreak(&inf, depth);
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_EXITED, "exit");
	finish(e, NULL);
	decode_lists(sw_engine_data(e), &rec);
	CHECK(rec.n == 1, "one thread");
	if (rec.n == 1)
		compare("midrun", &ref.l[0], index_of(&ref.l[0], depth), &rec.l[0]);
	tlists_free(&rec);
	sw_engine_free(e);
	inferior_destroy(&inf);
	tlists_free(&ref);
}

/* exit(3); and a fault reported, then delivered: killed by it. */
static void case_exit(void)
{
	char prog[PATH_MAX];
	prog_path(prog, sizeof prog, "rec_exit");
	char *argv[] = { prog, NULL }, *argv2[] = { prog, "x", NULL };
	struct inferior inf;
	struct stop_event ev;
	struct trace_end end;
	struct tlists ref;

	if (ref_lists(argv, &ref) < 0 || launch(&inf, argv) < 0)
		return;
	struct sw_engine *e = engine(&inf);
	CHECK(e && cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_EXITED &&
	      ev.exit_code == 3, "exit(3): kind %d code %d", ev.kind, ev.exit_code);
	if (e) {
		finish(e, &end);
		CHECK(end.status_kind == 0 && end.status == 3, "END exit 3");
		compare_all("exit", &ref, sw_engine_data(e));
		sw_engine_free(e);
	}
	inferior_destroy(&inf);
	tlists_free(&ref);

	if (launch(&inf, argv2) < 0)
		return;
	e = engine(&inf);
	CHECK(e && cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_SIGNAL &&
	      ev.sig == SIGSEGV, "SIGSEGV reported: kind %d", ev.kind);
	if (!e)
		return;
	CHECK(cont(e, &inf, inf.pid, SIGSEGV, &ev) == 1 && ev.kind == STOP_KILLED &&
	      ev.sig == SIGSEGV, "killed by SIGSEGV: kind %d sig %d", ev.kind, ev.sig);
	finish(e, &end);
	CHECK(end.status_kind == 1 && end.status == SIGSEGV, "END killed");
	sw_engine_free(e);
	inferior_destroy(&inf);
}

/* ---- the block stepper (PTREV_SW_STEPPER) ---------------------------- */

/* An engine with the stepper named as PTREV_SW_STEPPER would; set only
 * while the engine starts, so that the program (and ref_step) run with the
 * same environment, hence the same instructions, whichever it is. */
static struct sw_engine *engine_with(struct inferior *inf, const char *stepper)
{
	const char *was = getenv("PTREV_SW_STEPPER");
	char *saved = was ? strdup(was) : NULL;

	setenv("PTREV_SW_STEPPER", stepper, 1);
	struct sw_engine *e = engine(inf);
	if (saved)
		setenv("PTREV_SW_STEPPER", saved, 1);
	else
		unsetenv("PTREV_SW_STEPPER");
	free(saved);
	return e;
}

/* Points inside basic blocks, where a native run must stop short: a
 * software breakpoint, a hardware one, a watchpoint on a store in a loop
 * (reported after the store, at each iteration), stepi across a block,
 * then rdtsc and a REP instruction inside blocks on the way to the exit.
 * Every stop where single steps would stop; the history exact. */
static void case_blocks(const char *stepper)
{
	char prog[PATH_MAX];
	prog_path(prog, sizeof prog, "blk_prog");
	char *argv[] = { prog, NULL };
	uint64_t b = sym(prog, "blk_b"), d = sym(prog, "blk_d"),
		 var = sym(prog, "blk_watched"), after = sym(prog, "blk_after_store");
	/* Stepped once for the three steppers (ref_step takes seconds). */
	static struct tlists ref;
	static bool have_ref;
	struct tlists now;
	struct inferior inf;
	struct stop_event ev;

	CHECK(b && d && var && after, "symbols");
	if (!have_ref && b && ref_lists(argv, &ref) == 0)
		have_ref = true;
	if (!b || !var || !have_ref || launch(&inf, argv) < 0)
		return;
	struct sw_engine *e = engine_with(&inf, stepper);
	if (!e)
		return;
	/* Software breakpoint in the middle of a block. */
	CHECK(inferior_insert_swbreak(&inf, b) == 0, "insert");
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_SWBREAK &&
	      pc_of(&inf, inf.pid) == b, "%s: sw breakpoint mid-block: kind %d pc %#llx",
	      stepper, ev.kind, (unsigned long long)pc_of(&inf, inf.pid));
	decode_lists(sw_engine_data(e), &now);
	CHECK(now.n == 1 && now.l[0].n == index_of(&ref.l[0], b), "%s: history up to "
	      "the breakpoint: %zu", stepper, now.n ? now.l[0].n : 0);
	tlists_free(&now);
	inferior_remove_swbreak(&inf, b);
	/* Hardware breakpoint two instructions on. */
	CHECK(inferior_insert_hwpoint(&inf, 1, d, 1) == 0, "hw insert");
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_HWBREAK &&
	      pc_of(&inf, inf.pid) == d, "%s: hw breakpoint mid-block: kind %d pc %#llx",
	      stepper, ev.kind, (unsigned long long)pc_of(&inf, inf.pid));
	inferior_remove_hwpoint(&inf, 1, d, 1);
	/* A store in the middle of a loop's block, watched: after the store,
	 * once per iteration. */
	CHECK(inferior_insert_hwpoint(&inf, 2, var, 8) == 0, "watch insert");
	size_t at = 0;
	for (int i = 0; i < 3; i++) {
		CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_WATCH &&
		      ev.watch_addr == var && pc_of(&inf, inf.pid) == after,
		      "%s: watch %d: kind %d pc %#llx", stepper, i, ev.kind,
		      (unsigned long long)pc_of(&inf, inf.pid));
		/* The (i+1)-th time the loop passed the store. */
		size_t from = i ? at + 1 : 0;
		at = from + index_of(&(struct ilist){ ref.l[0].ip + from, ref.l[0].n - from, 0 },
				     after);
		decode_lists(sw_engine_data(e), &now);
		CHECK(now.n == 1 && now.l[0].n == at, "%s: watch %d: %zu recorded, %zu "
		      "executed", stepper, i, now.n ? now.l[0].n : 0, at);
		tlists_free(&now);
	}
	inferior_remove_hwpoint(&inf, 2, var, 8);
	/* stepi goes one instruction at a time, mid-block too. */
	for (int i = 1; i <= 4; i++)
		CHECK(step(e, inf.pid, &ev) == 1 && ev.kind == STOP_STEP &&
		      pc_of(&inf, inf.pid) == ref.l[0].ip[at + i], "%s: stepi %d", stepper, i);
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_EXITED && ev.exit_code == 0,
	      "%s: exit: kind %d code %d", stepper, ev.kind, ev.exit_code);
	finish(e, NULL);
	const struct trace_data *td = sw_engine_data(e);
	CHECK(td->nrdtsc == 1, "%s: the rdtsc inside a block logged (%zu)", stepper, td->nrdtsc);
	compare_all(stepper, &ref, td);
	sw_engine_free(e);
	inferior_destroy(&inf);
}

/* Signals from an interval timer land wherever the loop is (mid-block
 * for the block stepper): each delivered to its handler, and the history
 * decodes to exactly the instructions counted, each signal at its place. */
static void case_async(const char *stepper)
{
	char prog[PATH_MAX];
	prog_path(prog, sizeof prog, "blk_prog");
	char *argv[] = { prog, "alarm", NULL };
	struct inferior inf;
	struct stop_event ev;
	struct trace_end end;

	if (launch(&inf, argv) < 0)
		return;
	inf.pass_signals[SIGALRM] = true;
	struct sw_engine *e = engine_with(&inf, stepper);
	if (!e)
		return;
	CHECK(cont(e, &inf, 0, 0, &ev) == 1 && ev.kind == STOP_EXITED && ev.exit_code == 0,
	      "%s: exit: kind %d code %d", stepper, ev.kind, ev.exit_code);
	finish(e, &end);
	const struct trace_data *td = sw_engine_data(e);
	size_t handled = 0;
	for (size_t i = 0; i < td->nsignals; i++)
		handled += td->signals[i].signo == SIGALRM && td->signals[i].handler_ip;
	CHECK(handled >= 3, "%s: %zu SIGALRM delivered to the handler", stepper, handled);
	struct tlists rec;
	decode_lists(td, &rec);
	CHECK(rec.n == 1 && rec.l[0].n == end.instructions, "%s: decoded %zu, counted %llu",
	      stepper, rec.n ? rec.l[0].n : 0, (unsigned long long)end.instructions);
	/* Each handler's first instruction follows its signal's position. */
	for (size_t i = 0; rec.n == 1 && i < td->nsignals; i++) {
		const struct trace_signal *g = &td->signals[i];
		CHECK(!g->handler_ip || (g->pos < rec.l[0].n && rec.l[0].ip[g->pos] == g->handler_ip),
		      "%s: signal %zu at %llu: handler %#llx, recorded %#llx", stepper, i,
		      (unsigned long long)g->pos, (unsigned long long)g->handler_ip,
		      g->pos < rec.l[0].n ? (unsigned long long)rec.l[0].ip[g->pos] : 0ull);
	}
	tlists_free(&rec);
	sw_engine_free(e);
	inferior_destroy(&inf);
}

int main(int argc, char **argv)
{
	progdir = getenv("PTREV_TEST_PROGRAMS");
	if (!progdir) {
		printf("PTREV_TEST_PROGRAMS not set\n");
		return 77;
	}
	snprintf(refstep, sizeof refstep, "%s/../record/ref_step", progdir);
	if (access(refstep, X_OK) != 0) {
		printf("no %s\n", refstep);
		return 77;
	}
	const char *only = argc > 1 ? argv[1] : NULL;
#define RUN(name, call) do { if (!only || !strcmp(only, name)) { \
	int before = failures; call; \
	printf("%s: %s\n", name, failures == before ? "ok" : "FAILED"); } } while (0)
	RUN("breakpoint", case_breakpoint());
	RUN("stepi", case_stepi());
	RUN("watch", case_watch());
	RUN("signal-deliver", case_signal(true));
	RUN("signal-suppress", case_signal(false));
	RUN("interrupt", case_interrupt());
	RUN("threads", case_threads());
	RUN("midrun", case_midrun());
	RUN("exit", case_exit());
	RUN("blocks-int3", case_blocks("block"));
	RUN("blocks-hw", case_blocks("block-hw"));
	RUN("blocks-insn", case_blocks("insn"));
	RUN("async-block", case_async("block"));
	RUN("async-hw", case_async("block-hw"));
	RUN("async-insn", case_async("insn"));
	if (failures)
		printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
