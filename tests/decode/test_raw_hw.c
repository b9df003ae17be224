/* Hardware traces recorded by other tools on real Intel CPUs
 * (../shared/testdata/hw-traces, README there): instruction and error counts
 * equal the README's table, --count agrees with the line output, the
 * incomplete-memory case reports errors without crashing, and the perf trace
 * of a static hello decodes to exactly its 8 instructions.
 *
 * usage: test_raw_hw TESTDATA_DIR DECODER-COMMAND... */
#include "raw_test_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../check.h"

static char *const *cmd;
static char hw[512];

struct hw_case {
	const char *name;
	const char *cpu;		/* NULL: default (no errata) */
	unsigned long long insns;	/* from the README's table */
};

static const struct hw_case cases[] = {
	{ "Unzip", NULL, 149576 },
	{ "foo", NULL, 117967 },
	{ "mruby", NULL, 6334131 },
	{ "qemu", NULL, 9635736 },
	{ "avscript_32", "6/61", 1114194 },
	{ "icelake_tip", "6/61", 15 },
};

/* --raw CASE/trace.pt --pages CASE/memory.addr:CASE/memory.dump ... */
static void run_pages(const char *name, const char *cpu, int count,
		      struct run_result *r)
{
	static char pt[600], pages[1300];
	char *args[8];
	int n = 0;

	snprintf(pt, sizeof(pt), "%s/%s/trace.pt", hw, name);
	snprintf(pages, sizeof(pages), "%s/%s/memory.addr:%s/%s/memory.dump",
		 hw, name, hw, name);
	args[n++] = "--raw";
	args[n++] = pt;
	args[n++] = "--pages";
	args[n++] = pages;
	if (cpu) {
		args[n++] = "--cpu";
		args[n++] = (char *)cpu;
	}
	if (count)
		args[n++] = "--count";
	args[n] = NULL;
	if (run_decoder(cmd, args, r) < 0) {
		printf("FAIL: cannot run the decoder\n");
		exit(1);
	}
}

static void check_counts(const struct hw_case *c)
{
	struct run_result r;
	unsigned long long insns = 0, errors = 0;

	run_pages(c->name, c->cpu, 1, &r);
	CHECK(!run_crashed(&r), "%s crashed: %s", c->name, r.err);
	CHECK(sscanf(r.out, "instructions: %llu\nerrors: %llu", &insns,
		     &errors) == 2, "%s: --count printed '%s'", c->name, r.out);
	CHECK(insns == c->insns && errors == 0,
	      "%s: %llu instructions, %llu errors; the README says %llu, 0",
	      c->name, insns, errors, c->insns);
	CHECK(r.exited && r.status == 0, "%s: exit status %d, stderr: %s",
	      c->name, r.status, r.err);
	printf("%-12s %9llu instructions %7.3f s  %6.1f M instructions/s\n",
	       c->name, insns, r.seconds,
	       r.seconds > 0 ? (double)insns / r.seconds / 1e6 : 0.0);
	run_result_free(&r);
}

/* The line output of a trace must show what --count says. */
static void check_count_agrees(const char *name, const char *cpu)
{
	struct run_result lines, count;
	unsigned long long li, le, ci = 0, ce = 0;

	run_pages(name, cpu, 0, &lines);
	run_pages(name, cpu, 1, &count);
	count_lines(lines.out, &li, &le);
	sscanf(count.out, "instructions: %llu\nerrors: %llu", &ci, &ce);
	CHECK(li == ci && le == ce, "%s: lines show %llu instructions, %llu "
	      "errors; --count says %llu, %llu", name, li, le, ci, ce);
	CHECK(lines.exited && count.exited && lines.status == count.status,
	      "%s: exit status %d with lines, %d with --count", name,
	      lines.status, count.status);
	run_result_free(&lines);
	run_result_free(&count);
}

/* memory.dump lacks pages the trace runs through. */
static void check_dyn_test(void)
{
	struct run_result r;
	unsigned long long insns, errors;

	run_pages("dyn_test", NULL, 0, &r);
	CHECK(!run_crashed(&r), "dyn_test crashed: %s", r.err);
	CHECK(r.exited && r.status == 1, "dyn_test: exit status %d, want 1",
	      r.status);
	CHECK(strstr(r.out, ": error: no memory mapped at this address]\n"),
	      "dyn_test: no 'no memory mapped' error line in:\n%s", r.out);
	CHECK(strstr(r.err, "errors while decoding"),
	      "dyn_test: stderr does not say decoding failed: %s", r.err);
	count_lines(r.out, &insns, &errors);
	CHECK(errors > 0, "dyn_test: no error lines");
	run_result_free(&r);
	check_count_agrees("dyn_test", NULL);
}

/* The README: exactly 8 instructions, 0x401000 to 0x401025, tracing
 * disabled and re-enabled around each of the two syscalls. */
static const char hello_expected[] =
	"[enabled]\n"
	"[exec mode: 64-bit]\n"
	"[disabled]\n"
	"[resumed]\n"
	"0000000000401000\n"
	"0000000000401005\n"
	"000000000040100a\n"
	"0000000000401014\n"
	"0000000000401019\n"
	"[disabled]\n"
	"[resumed]\n"
	"000000000040101b\n"
	"0000000000401020\n"
	"0000000000401025\n"
	"[disabled]\n";

static void check_hello(const char *how, const char *opt, const char *fmt)
{
	char pt[600], image[1300];
	char *args[] = { "--raw", pt, (char *)opt, image, NULL };
	struct run_result r;

	snprintf(pt, sizeof(pt), "%s/drpt2trace-hello/trace.pt", hw);
	snprintf(image, sizeof(image), fmt, hw);
	if (run_decoder(cmd, args, &r) < 0) {
		printf("FAIL: cannot run the decoder\n");
		exit(1);
	}
	CHECK(r.exited && r.status == 0 && !strcmp(r.out, hello_expected),
	      "drpt2trace-hello with %s: exit %d, got\n%s%s", how, r.status,
	      r.out, r.err);
	run_result_free(&r);
}

/* A bias moves every segment: with 0x100000 nothing is left at 0x401000. */
static void check_elf_bias_moves_code(void)
{
	char pt[600], elf[700];
	char *args[] = { "--raw", pt, "--elf", elf, NULL };
	struct run_result r;

	snprintf(pt, sizeof(pt), "%s/drpt2trace-hello/trace.pt", hw);
	snprintf(elf, sizeof(elf), "%s/drpt2trace-hello/hello:0x100000", hw);
	if (run_decoder(cmd, args, &r) < 0) {
		printf("FAIL: cannot run the decoder\n");
		exit(1);
	}
	CHECK(!run_crashed(&r) && r.status == 1 &&
	      strstr(r.out, ", 401000: error: no memory mapped at this "
		     "address]\n"),
	      "--elf hello:0x100000: exit %d, got\n%s%s", r.status, r.out,
	      r.err);
	run_result_free(&r);
}

int main(int argc, char **argv)
{
	const char *data = testdata_dir_or_skip(argc, argv);
	size_t i;

	cmd = argv + 2;
	snprintf(hw, sizeof(hw), "%s/hw-traces", data);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_counts(&cases[i]);
	check_count_agrees("Unzip", NULL);
	check_count_agrees("icelake_tip", "6/61");
	check_dyn_test();
	check_hello("--elf", "--elf", "%s/drpt2trace-hello/hello");
	check_hello("--elf with bias 0", "--elf",
		    "%s/drpt2trace-hello/hello:0");
	check_elf_bias_moves_code();
	/* The text segment: file bytes 0x1000..0x1027 at 0x401000. */
	check_hello("--image of the text segment", "--image",
		    "%s/drpt2trace-hello/hello:0x1000-0x1027:0x401000");

	if (failures)
		printf("%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
