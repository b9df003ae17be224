/* Bad input to `decode --raw`: wrong arguments, missing or malformed files,
 * truncated, random and bit-flipped PT. Every case must end with exit status
 * 1 and a one-line message (usage and file errors) or decode error lines, and
 * never crash; the suite is meant to run under ASan+UBSan as well.
 *
 * usage: test_raw_badinput TESTDATA_DIR DECODER-COMMAND... */
#include "raw_test_run.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../check.h"

static char *const *cmd;
static char tmp[] = "/tmp/ptrev-rawbad-XXXXXX";
static char good_pt[600], good_bin[700], unzip_pt[600], unzip_pages[1300];

static char *tmp_path(const char *name)
{
	static char paths[32][700];
	static int next;
	char *p = paths[next++ % 32];

	snprintf(p, sizeof(paths[0]), "%s/%s", tmp, name);
	return p;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len) {
		printf("FAIL: cannot write %s\n", path);
		exit(1);
	}
	fclose(f);
}

/* A deterministic generator, so a failure can be reproduced. */
static uint32_t rnd_state = 12345;
static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

enum expect {
	one_line,	/* exit 1, exactly one stderr line naming ptrev decode */
	decode_error,	/* exit 1, a message on stderr */
	no_crash,	/* exit 0 or 1: the input may well still decode */
};

static void run_case(const char *what, enum expect expect, char **args)
{
	struct run_result r;
	const char *nl;
	int failures_before = failures;

	if (run_decoder(cmd, args, &r) < 0) {
		printf("FAIL: %s: cannot run the decoder\n", what);
		failures++;
		return;
	}
	nl = strchr(r.err, '\n');
	CHECK(!run_crashed(&r), "%s: crashed (exited %d, status %d): %s",
	      what, r.exited, r.status, r.err);
	if (expect != no_crash)
		CHECK(r.exited && r.status == 1, "%s: exit status %d, want 1",
		      what, r.status);
	if (expect == one_line)
		CHECK(!strncmp(r.err, "ptrev decode: ", 14) && nl &&
		      nl[1] == '\0' && !*r.out,
		      "%s: want one stderr line and no output, got '%s' / '%s'",
		      what, r.err, r.out);
	if (expect == decode_error)
		CHECK(strstr(r.err, "ptrev decode: "),
		      "%s: no message on stderr", what);
	printf("%s %-40s exit %d  %s",
	       failures == failures_before ? "ok  " : "FAIL", what, r.status,
	       *r.err ? r.err : "\n");
	if (*r.err && !nl)
		printf("\n");
	run_result_free(&r);
}

#define RUN(what, expect, ...) do { char *a_[] = { __VA_ARGS__, NULL }; \
	run_case(what, expect, a_); } while (0)

static void argument_errors(void)
{
	RUN("no arguments", one_line, "--count");
	RUN("unknown option", one_line, "--raw", good_pt, "--image", good_bin,
	    "--bogus");
	RUN("--image without value", one_line, "--raw", good_pt, "--image");
	RUN("--raw twice", one_line, "--raw", good_pt, "--raw", good_pt,
	    "--image", good_bin);
	RUN("no image", one_line, "--raw", good_pt);
	RUN("--cpu abc", one_line, "--raw", good_pt, "--image", good_bin,
	    "--cpu", "abc");
	RUN("--cpu 6", one_line, "--raw", good_pt, "--image", good_bin,
	    "--cpu", "6");
	RUN("--cpu 6/300", one_line, "--raw", good_pt, "--image", good_bin,
	    "--cpu", "6/300");
	RUN("--cpu 6/61/x", one_line, "--raw", good_pt, "--image", good_bin,
	    "--cpu", "6/61/x");
	RUN("--cpu empty", one_line, "--raw", good_pt, "--image", good_bin,
	    "--cpu", "");
	RUN("--image without address", one_line, "--raw", good_pt, "--image",
	    tmp_path("code.bin"));
	RUN("--image bad address", one_line, "--raw", good_pt, "--image",
	    "x:0x12zz");
}

static void file_errors(void)
{
	char missing_img[800];

	snprintf(missing_img, sizeof(missing_img), "%s:0x100000",
		 tmp_path("nonexistent.bin"));
	RUN("missing PT file", one_line, "--raw", tmp_path("nonexistent.pt"),
	    "--image", good_bin);
	RUN("empty PT file", one_line, "--raw", tmp_path("empty.pt"),
	    "--image", good_bin);
	RUN("PT file is a folder", one_line, "--raw", tmp, "--image",
	    good_bin);
	RUN("missing image file", one_line, "--raw", good_pt, "--image",
	    missing_img);
	RUN("empty image file", one_line, "--raw", good_pt, "--image",
	    tmp_path("empty.pt:0x1000"));
	RUN("image range past its end", one_line, "--raw", good_pt, "--image",
	    tmp_path("code.bin:0x10-0x10000:0x1000"));
	RUN("--pages without colon", one_line, "--raw", good_pt, "--pages",
	    tmp_path("addr7"));
	RUN("--pages missing address file", one_line, "--raw", good_pt,
	    "--pages", tmp_path("nonexistent:/dev/null"));
	RUN("--pages address file of 7 bytes", one_line, "--raw", good_pt,
	    "--pages", tmp_path("addr7:x"));
	RUN("--pages without dump file", one_line, "--raw", good_pt,
	    "--pages", tmp_path("addr2:"));
	RUN("--elf missing file", one_line, "--raw", good_pt, "--elf",
	    tmp_path("nonexistent.elf"));
	RUN("--elf on a non-ELF file", one_line, "--raw", good_pt, "--elf",
	    good_pt);
}

static void pages_dump_mismatch(void)
{
	char arg[1500];

	/* Two page addresses, one page of dump. */
	snprintf(arg, sizeof(arg), "%s:%s", tmp_path("addr2"),
		 tmp_path("page1"));
	RUN("--pages dump shorter than the list", one_line, "--raw", good_pt,
	    "--pages", arg);
	snprintf(arg, sizeof(arg), "%s:%s", tmp_path("addr2"),
		 tmp_path("nonexistent"));
	RUN("--pages missing dump file", one_line, "--raw", good_pt,
	    "--pages", arg);
}

/* Corrupted streams, decoded against Unzip's real memory. */
static void trace_errors(void)
{
	size_t len = 0, i;
	char *unzip = read_whole_file(unzip_pt, &len);
	char *buf;
	int k;

	if (!unzip || len < 2000) {
		printf("FAIL: cannot read %s\n", unzip_pt);
		exit(1);
	}
	buf = malloc(len);
	if (!buf)
		exit(1);

	/* Cut inside the first PSB+, then inside a packet (offset 1000 is in
	 * the middle of a TIP, see the test data). */
	write_file(tmp_path("cut10.pt"), unzip, 10);
	RUN("PT truncated inside the first PSB", decode_error, "--raw",
	    tmp_path("cut10.pt"), "--pages", unzip_pages);
	write_file(tmp_path("cut1000.pt"), unzip, 1000);
	RUN("PT truncated inside a packet", decode_error, "--raw",
	    tmp_path("cut1000.pt"), "--pages", unzip_pages, "--count");

	for (i = 0; i < 4096; i++)
		buf[i] = (char)rnd();
	write_file(tmp_path("random.pt"), buf, 4096);
	RUN("random bytes", decode_error, "--raw", tmp_path("random.pt"),
	    "--pages", unzip_pages);

	/* A real PSB+ followed by garbage: decoding starts, then fails. */
	memcpy(buf, unzip, 64);
	write_file(tmp_path("psb-random.pt"), buf, 4096);
	RUN("PSB+ then random bytes", decode_error, "--raw",
	    tmp_path("psb-random.pt"), "--pages", unzip_pages);

	/* Bit flips may or may not break the trace: only no crash counts. */
	for (k = 0; k < 8; k++) {
		memcpy(buf, unzip, len);
		for (i = 0; i < 16; i++)
			buf[rnd() % len] ^= (char)(1u << (rnd() % 8));
		write_file(tmp_path("flipped.pt"), buf, len);
		RUN("bit-flipped trace", no_crash, "--raw",
		    tmp_path("flipped.pt"), "--pages", unzip_pages);
	}
	free(buf);
	free(unzip);
}

static void make_files(void)
{
	static const unsigned char addr2[16] = { 0, 0x10, 0, 0, 0, 0, 0, 0,
						 0, 0x20, 0, 0, 0, 0, 0, 0 };
	static char page[4096];

	write_file(tmp_path("empty.pt"), "", 0);
	write_file(tmp_path("code.bin"), "\x90\x90\xc3", 3);
	write_file(tmp_path("addr7"), addr2, 7);
	write_file(tmp_path("addr2"), addr2, sizeof(addr2));
	write_file(tmp_path("page1"), page, sizeof(page));
}

static void remove_files(void)
{
	static const char *names[] = { "empty.pt", "code.bin", "addr7",
		"addr2", "page1", "cut10.pt", "cut1000.pt", "random.pt",
		"psb-random.pt", "flipped.pt" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(tmp_path(names[i]));
	rmdir(tmp);
}

int main(int argc, char **argv)
{
	const char *data = testdata_dir_or_skip(argc, argv);

	cmd = argv + 2;
	snprintf(good_pt, sizeof(good_pt), "%s/libipt-ptt/loop-tnt.pt", data);
	snprintf(good_bin, sizeof(good_bin),
		 "%s/libipt-ptt/loop-tnt.bin:0x100000", data);
	snprintf(unzip_pt, sizeof(unzip_pt), "%s/hw-traces/Unzip/trace.pt",
		 data);
	snprintf(unzip_pages, sizeof(unzip_pages),
		 "%s/hw-traces/Unzip/memory.addr:%s/hw-traces/Unzip/memory.dump",
		 data, data);
	if (!mkdtemp(tmp)) {
		printf("FAIL: mkdtemp\n");
		return 1;
	}
	make_files();

	argument_errors();
	file_errors();
	pages_dump_mismatch();
	trace_errors();

	remove_files();
	if (failures)
		printf("%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
