/* `ptrev decode`: the command lines of both decoders. `decode --raw PT ...`
 * decodes a raw PT stream from any tool as ptxed does (decode/raw_*.c);
 * `decode FILE [--insn]` prints a recording's instruction history
 * (decode/trace_decode.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/cli.h"
#include "ptrev/raw_decode.h"
#include "ptrev/trace_decode.h"
#include "ptrev/trace_file.h"

#define PROG "ptrev decode"

/* ---- decode --raw ---- */

static void raw_usage(FILE *f)
{
	fprintf(f,
		"usage: ptrev decode --raw PT [--image FILE[:OFF[-END]]:ADDR]... "
		"[--pages ADDRFILE:DUMPFILE]... [--elf FILE[:BIAS]]... "
		"[--cpu F/M[/S]] [--count]\n");
}

/* FAMILY/MODEL[/STEPPING], each decimal or 0x-hex, as ptxed's --cpu. */
static int parse_cpu(const char *s, struct pt_cpu *cpu)
{
	char *end;
	long family, model, stepping = 0;

	errno = 0;
	family = strtol(s, &end, 0);
	if (end == s || *end != '/' || errno || family < 0 ||
	    family > USHRT_MAX)
		return -1;
	s = end + 1;
	model = strtol(s, &end, 0);
	if (end == s || (*end && *end != '/') || errno || model < 0 ||
	    model > UCHAR_MAX)
		return -1;
	if (*end) {
		s = end + 1;
		stepping = strtol(s, &end, 0);
		if (end == s || *end || errno || stepping < 0 ||
		    stepping > UCHAR_MAX)
			return -1;
	}
	memset(cpu, 0, sizeof(*cpu));
	cpu->vendor = pcv_intel;
	cpu->family = (uint16_t)family;
	cpu->model = (uint8_t)model;
	cpu->stepping = (uint8_t)stepping;
	return 0;
}

/* Returns 0 to go on, 1 for --help (exit 0), -1 on a usage error. */
static int parse_raw_args(int argc, char **argv, struct raw_decode_args *a)
{
	int i;

	memset(a, 0, sizeof(*a));
	a->images = calloc((size_t)argc, sizeof(*a->images));
	if (!a->images) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		return -1;
	}
	for (i = 1; i < argc; i++) {
		const char *opt = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
			raw_usage(stdout);
			return 1;
		}
		if (!strcmp(opt, "--count")) {
			a->count_only = 1;
			continue;
		}
		/* Every other option takes a value. */
		if (strcmp(opt, "--raw") && strcmp(opt, "--image") &&
		    strcmp(opt, "--pages") && strcmp(opt, "--elf") &&
		    strcmp(opt, "--cpu")) {
			fprintf(stderr, "%s: unknown argument '%s' (see "
				"--help)\n", PROG, opt);
			return -1;
		}
		if (!val) {
			fprintf(stderr, "%s: %s needs a value\n", PROG, opt);
			return -1;
		}
		i++;
		if (!strcmp(opt, "--raw")) {
			if (a->pt_path) {
				fprintf(stderr, "%s: --raw given twice ('%s' "
					"and '%s')\n", PROG, a->pt_path,
					val);
				return -1;
			}
			a->pt_path = val;
		} else if (!strcmp(opt, "--cpu")) {
			if (parse_cpu(val, &a->cpu) < 0) {
				fprintf(stderr, "%s: --cpu: expected FAMILY/"
					"MODEL[/STEPPING], got '%s'\n",
					PROG, val);
				return -1;
			}
			a->have_cpu = 1;
		} else {
			struct image_arg *img = &a->images[a->n_images++];

			img->value = val;
			img->kind = !strcmp(opt, "--image") ? image_binary :
				    !strcmp(opt, "--pages") ? image_pages :
				    image_elf;
		}
	}
	if (!a->pt_path) {
		fprintf(stderr, "%s: no PT file: give --raw PT\n", PROG);
		return -1;
	}
	if (!a->n_images) {
		fprintf(stderr, "%s: no code to decode against: give --image, "
			"--pages or --elf\n", PROG);
		return -1;
	}
	return 0;
}

int decode_raw_main(int argc, char **argv)
{
	struct raw_decode_args args;
	int r = parse_raw_args(argc, argv, &args);
	if (r == 0)
		r = raw_decode(&args);
	else
		r = r > 0 ? 0 : 1;
	free(args.images);
	return r;
}

/* ---- decode FILE ---- */

static void trace_usage(FILE *f)
{
	fprintf(f, "usage: ptrev decode FILE [--insn]\n"
		"  the instruction history of a recording, one line per "
		"instruction\n"
		"  (ptxed's format); a line [thread TID] before each thread's "
		"history\n"
		"  when there are several; --insn adds <symbol+offset> and the "
		"disassembly\n");
}

int trace_decode_main(int argc, char **argv)
{
	const char *path = NULL;
	bool insn = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			trace_usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--insn")) {
			insn = true;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "%s: unknown option '%s'\n", PROG, a);
			trace_usage(stderr);
			return 1;
		} else if (path) {
			fprintf(stderr, "%s: one recording at a time ('%s' "
				"and '%s')\n", PROG, path, a);
			return 1;
		} else {
			path = a;
		}
	}
	if (!path) {
		fprintf(stderr, "%s: no recording given\n", PROG);
		trace_usage(stderr);
		return 1;
	}
	struct trace_data td;
	char err[512];
	if (cli_open_recording(path, &td, err, sizeof err) != 0) {
		fprintf(stderr, "%s: %s: %s\n", PROG, path, err);
		return 1;
	}
	int status = trace_decode_print(&td, path, insn);
	trace_data_free(&td);
	return status;
}

/* `decode --raw PT ...` decodes a raw stream from any tool; `decode FILE
 * [--insn]` decodes a recording. Option-only command lines go to the raw
 * decoder, whose usage errors are the informative ones. */
int decode_main(int argc, char **argv)
{
	bool raw = false, file = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--raw") == 0)
			raw = true;
		else if (argv[i][0] != '-' || strcmp(argv[i], "--insn") == 0)
			file = true;
	}
	if (!raw && file)
		return trace_decode_main(argc, argv);
	return decode_raw_main(argc, argv);
}
