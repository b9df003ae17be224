/* The sw engine's block stepper driven as the gdb server drives the
 * engine, with each stepper (PTREV_SW_STEPPER block, block-hw, insn):
 * points where a native run must stop short of its block's end (a
 * software and a hardware breakpoint mid-block, a watched store in a
 * loop's block, stepi), rdtsc and a REP instruction inside blocks, and
 * signals from a timer landing mid-block. The history must be what
 * ref_step sees, or decode to exactly what was counted. Inferior:
 * tests/programs/blk_prog. */
#include "sw_engine_test.h"

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
