/* libipt 2.0.5's conformance corpus: for every test the manifest lists with
 * default ptxed options, `decode --raw NAME.pt --image NAME.bin:ORG [--cpu
 * F/M]` must print exactly the expected ptxed output, and `--count` must
 * agree with it. bad_cpu (ptxed option `--cpu 0/0`) is run too: our --cpu
 * means the same.
 *
 * usage: test_raw_ptt TESTDATA_DIR DECODER-COMMAND... */
#include "raw_test_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ptt_case {
	char name[256], org[64], cpu[64], options[256], expected[256];
};

/* One manifest row; returns 1 for a case, 0 for a line to skip. */
static int parse_row(char *line, struct ptt_case *c)
{
	char *field[5];
	int i;

	line[strcspn(line, "\r\n")] = '\0';
	for (i = 0; i < 5; i++) {
		field[i] = strsep(&line, "\t");
		if (!field[i])
			return 0;
	}
	if (!strcmp(field[0], "test"))
		return 0;
	snprintf(c->name, sizeof(c->name), "%s", field[0]);
	snprintf(c->org, sizeof(c->org), "%s", field[1]);
	snprintf(c->cpu, sizeof(c->cpu), "%s", field[2]);
	snprintf(c->options, sizeof(c->options), "%s", field[3]);
	snprintf(c->expected, sizeof(c->expected), "%s", field[4]);
	return 1;
}

/* Returns 1 on a match, 0 on a mismatch (printed). */
static int run_case(char *const *cmd, const char *dir, const struct ptt_case *c)
{
	char pt[1024], image[1100], exp_path[1024], cpu[64] = "";
	char *args[8];
	struct run_result r, rc;
	unsigned long long want_insns, want_errors, got_insns, got_errors;
	char *expected;
	int n = 0, ok = 1;

	snprintf(pt, sizeof(pt), "%s/%s.pt", dir, c->name);
	snprintf(image, sizeof(image), "%s/%s.bin:%s", dir, c->name, c->org);
	snprintf(exp_path, sizeof(exp_path), "%s/%s", dir, c->expected);
	if (strcmp(c->cpu, "-"))
		snprintf(cpu, sizeof(cpu), "%s", c->cpu);
	else if (!strcmp(c->options, "--cpu 0/0"))
		snprintf(cpu, sizeof(cpu), "0/0");

	args[n++] = "--raw";
	args[n++] = pt;
	args[n++] = "--image";
	args[n++] = image;
	if (*cpu) {
		args[n++] = "--cpu";
		args[n++] = cpu;
	}
	args[n] = NULL;

	expected = read_whole_file(exp_path, NULL);
	if (!expected) {
		printf("FAIL %s: cannot read %s\n", c->name, exp_path);
		return 0;
	}
	if (run_decoder(cmd, args, &r) < 0) {
		printf("FAIL %s: cannot run the decoder\n", c->name);
		free(expected);
		return 0;
	}
	if (run_crashed(&r)) {
		printf("FAIL %s: crashed (exit %d/%d): %s\n", c->name,
		       r.exited, r.status, r.err);
		ok = 0;
	} else if (strcmp(r.out, expected)) {
		printf("FAIL %s: output differs\n--- expected\n%s--- got\n%s",
		       c->name, expected, r.out);
		ok = 0;
	}

	/* --count must count what the line output shows. */
	count_lines(expected, &want_insns, &want_errors);
	args[n++] = "--count";
	args[n] = NULL;
	if (ok && run_decoder(cmd, args, &rc) == 0) {
		if (sscanf(rc.out, "instructions: %llu\nerrors: %llu",
			   &got_insns, &got_errors) != 2 ||
		    got_insns != want_insns || got_errors != want_errors) {
			printf("FAIL %s: --count printed '%s', the lines show "
			       "%llu instructions, %llu errors\n", c->name,
			       rc.out, want_insns, want_errors);
			ok = 0;
		}
		run_result_free(&rc);
	}
	run_result_free(&r);
	free(expected);
	return ok;
}

int main(int argc, char **argv)
{
	const char *data = testdata_dir_or_skip(argc, argv);
	char dir[512], manifest[600], line[2048];
	int total = 0, passed = 0;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/libipt-ptt", data);
	snprintf(manifest, sizeof(manifest), "%s/manifest.tsv", dir);
	f = fopen(manifest, "r");
	if (!f) {
		printf("SKIP: no %s\n", manifest);
		return 77;
	}
	while (fgets(line, sizeof(line), f)) {
		struct ptt_case c;

		if (!parse_row(line, &c))
			continue;
		if (strcmp(c.options, "-") && strcmp(c.options, "--cpu 0/0"))
			continue;
		total++;
		passed += run_case(argv + 2, dir, &c);
	}
	fclose(f);

	printf("%d of %d libipt-ptt tests print exactly the ptxed output\n",
	       passed, total);
	/* 108 default-option tests plus bad_cpu: fewer means a broken
	 * manifest, which must not pass silently. */
	if (total < 109) {
		printf("FAIL: expected 109 tests in the manifest, found %d\n",
		       total);
		return 1;
	}
	return passed == total ? 0 : 1;
}
