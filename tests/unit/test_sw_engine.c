/* The sw recording engine driven as the gdb server drives the inferior
 * module: breakpoints (stop before the instruction, gdb-style step-over),
 * single steps, a watchpoint, signals reported then delivered or
 * suppressed, pass_signals, interrupt, exit codes, threads, and a start in
 * the middle of a run. After each scenario the recording (sw_engine_data,
 * decoded with the image builder and libipt) must list exactly the
 * instructions an independent single-stepper (tests/record/ref_step) sees. */
#include "sw_engine_test.h"

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
	if (failures)
		printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
