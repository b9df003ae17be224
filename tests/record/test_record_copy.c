/* Self-contained recordings: `ptrev record` stores a copy of every binary
 * mapped executable (program, ld.so, libc), once each, unless --no-copy.
 * The program is recorded from a directory of its own, then deleted, then
 * replaced by another build of it:
 *   - with copies, `ptrev decode` prints exactly what it printed while the
 *     program was there, and says nothing wrong, both times; the
 *     read-only memory a replay serves gdb (code_memory) still reads;
 *   - with --no-copy, the decode fails with a message naming the program
 *     and saying the recording has no copy (missing), or that its
 *     build-id changed (replaced); code_memory reads nothing of it.
 *
 * usage: test_record_copy PTREV PROG_V1 PROG_V2 WORK_DIR */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/code_memory.h"
#include "ptrev/trace_image.h"
#include "ptrev/trace_file.h"

#include "../check.h"
static const char *ptrev, *workdir;

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, k;

	if (!f)
		return NULL;
	do {
		if (n + 65536 + 1 > cap) {
			cap = (n + 65536 + 1) * 2;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		k = fread(buf + n, 1, 65536, f);
		n += k;
	} while (k > 0);
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

static void copy_file(const char *from, const char *to)
{
	size_t n;
	char *b = slurp(from, &n);
	int fd;

	unlink(to);
	fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	CHECK(b && fd >= 0 && write(fd, b, n) == (ssize_t)n, "copy %s to %s: %s",
	      from, to, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(b);
}

/* Runs ptrev with argv (argv[0] ignored), stdout and stderr to files;
 * returns the wait status. */
static int run_ptrev(char *const argv[], const char *out, const char *err)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(o, 1);
		dup2(e, 2);
		execv(ptrev, argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

static const char *wpath(const char *name)
{
	static char bufs[8][4200];
	static int next;
	char *b = bufs[next++ % 8];
	snprintf(b, sizeof bufs[0], "%s/%s", workdir, name);
	return b;
}

/* `ptrev decode FILE` into WORK/TAG.out and TAG.err: returns the exit code. */
static int decode(const char *file, const char *tag, char **out, char **err)
{
	char o[4200], e[4200];
	char *argv[] = { "ptrev", "decode", (char *)file, NULL };
	snprintf(o, sizeof o, "%s/%s.out", workdir, tag);
	snprintf(e, sizeof e, "%s/%s.err", workdir, tag);
	int st = run_ptrev(argv, o, e);
	*out = slurp(o, NULL);
	*err = slurp(e, NULL);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static char *info(const char *file)
{
	char *argv[] = { "ptrev", "info", (char *)file, NULL };
	run_ptrev(argv, wpath("info.out"), wpath("info.err"));
	return slurp(wpath("info.out"), NULL);
}

static void record(const char *prog, const char *file, bool no_copy)
{
	char *argv[10];
	int n = 0;
	argv[n++] = "ptrev";
	argv[n++] = "record";
	argv[n++] = "--backend";
	argv[n++] = "sw";
	if (no_copy)
		argv[n++] = "--no-copy";
	argv[n++] = "-o";
	argv[n++] = (char *)file;
	argv[n++] = "--";
	argv[n++] = (char *)prog;
	argv[n] = NULL;
	int st = run_ptrev(argv, wpath("record.out"), wpath("record.err"));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1, "record %s: status %#x", file, st);
}

/* The program's executable mapping in the recording. */
static const struct trace_mmap *prog_text(const struct trace_data *td, const char *prog)
{
	for (size_t i = 0; i < td->nmmaps; i++)
		if ((td->mmaps[i].prot & PROT_EXEC) && !strcmp(td->mmaps[i].path, prog))
			return &td->mmaps[i];
	return NULL;
}

/* code_memory reads the program's code from td: the number of bytes
 * read at its first executable address, compared with want when given. */
static size_t read_code(const struct trace_data *td, const char *prog,
			const uint8_t *want_file, size_t want_len)
{
	const struct trace_mmap *m = prog_text(td, prog);
	uint8_t buf[64];
	size_t got = 0;
	struct code_memory *cm = code_memory_new(td);

	CHECK(m && cm, "no executable mapping of %s", prog);
	if (m && cm) {
		got = code_memory_read(cm, m->start, buf, sizeof buf);
		if (got && want_file)
			CHECK(m->offset + got <= want_len &&
			      !memcmp(buf, want_file + m->offset, got),
			      "code_memory bytes differ from the recorded build");
	}
	code_memory_free(cm);
	return got;
}

int main(int argc, char **argv)
{
	char prog[4200], mk[4400], err[512];
	struct trace_data td, tdn;
	char *ref_out, *ref_err, *out, *errs, *txt;
	size_t v1_len;
	uint8_t *v1;

	if (argc != 5) {
		fprintf(stderr, "usage: test_record_copy PTREV PROG_V1 PROG_V2 WORK_DIR\n");
		return 2;
	}
	ptrev = argv[1];
	workdir = argv[4];
	snprintf(mk, sizeof mk, "rm -rf '%s' && mkdir -p '%s/bin'", workdir, workdir);
	if (system(mk) != 0)
		return 2;
	snprintf(prog, sizeof prog, "%s/bin/prog", workdir);
	v1 = (uint8_t *)slurp(argv[2], &v1_len);
	copy_file(argv[2], prog);

	char with[4200], without[4200];
	snprintf(with, sizeof with, "%s/copies.ptrev", workdir);
	snprintf(without, sizeof without, "%s/nocopy.ptrev", workdir);
	record(prog, with, false);
	record(prog, without, true);
	if (trace_read_file(with, &td, err, sizeof err) < 0 ||
	    trace_read_file(without, &tdn, err, sizeof err) < 0) {
		printf("FAIL: cannot read the recordings: %s\n", err);
		return 1;
	}

	/* One copy per binary: the program (its bytes), ld.so, libc. */
	bool has_prog = false, has_ld = false, has_libc = false;
	for (size_t i = 0; i < td.nfiles; i++) {
		const struct trace_file_copy *f = &td.files[i];
		CHECK(f->path[0] == '/' && f->len == f->size, "copy %zu: %s", i, f->path);
		for (size_t k = 0; k < i; k++)
			CHECK(strcmp(td.files[k].path, f->path), "%s copied twice", f->path);
		if (!strcmp(f->path, prog))
			has_prog = f->size == v1_len && !memcmp(f->bytes, v1, v1_len);
		has_ld |= strstr(f->path, "/ld-linux") != NULL;
		has_libc |= strstr(f->path, "/libc.so") != NULL;
	}
	CHECK(has_prog && has_ld && has_libc, "copies: program %d ld.so %d libc %d (%zu files)",
	      has_prog, has_ld, has_libc, td.nfiles);
	CHECK(tdn.nfiles == 0, "--no-copy recording holds %zu copies", tdn.nfiles);
	txt = info(with);
	CHECK(txt && strstr(txt, "\nbinaries: ") && strstr(txt, " copied ("),
	      "info with copies:\n%s", txt ? txt : "");
	free(txt);
	txt = info(without);
	CHECK(txt && strstr(txt, "\nbinaries: not copied (--no-copy)\n"),
	      "info without copies:\n%s", txt ? txt : "");
	free(txt);

	/* While the program is there, both decode. */
	CHECK(decode(with, "ref", &ref_out, &ref_err) == 0 && ref_out && *ref_out,
	      "decode with copies failed: %s", ref_err ? ref_err : "");
	CHECK(decode(without, "ref-nocopy", &out, &errs) == 0, "decode --no-copy failed: %s",
	      errs ? errs : "");
	free(out);
	free(errs);

	/* The program deleted. */
	unlink(prog);
	CHECK(decode(with, "deleted", &out, &errs) == 0 && out && ref_out &&
	      !strcmp(out, ref_out) && errs && !*errs,
	      "deleted program: decode differs or complains: %s", errs ? errs : "");
	free(out);
	free(errs);
	CHECK(read_code(&td, prog, v1, v1_len) > 0, "deleted program: no code from the copy");
	CHECK(decode(without, "deleted-nocopy", &out, &errs) != 0 && errs &&
	      strstr(errs, prog) && strstr(errs, "No such file") &&
	      strstr(errs, "the recording has no copy of it (recorded with --no-copy)"),
	      "deleted program, --no-copy: unclear error: %s", errs ? errs : "");
	free(out);
	free(errs);
	CHECK(read_code(&tdn, prog, NULL, 0) == 0, "deleted program, no copy: code read");

	/* Another build of it in its place. */
	copy_file(argv[3], prog);
	CHECK(decode(with, "rebuilt", &out, &errs) == 0 && out && ref_out &&
	      !strcmp(out, ref_out) && errs && !*errs,
	      "rebuilt program: decode differs or complains: %s", errs ? errs : "");
	free(out);
	free(errs);
	CHECK(read_code(&td, prog, v1, v1_len) > 0, "rebuilt program: no code from the copy");
	CHECK(decode(without, "rebuilt-nocopy", &out, &errs) != 0 && errs &&
	      strstr(errs, prog) && strstr(errs, "changed since recording (build-id ") &&
	      strstr(errs, "no copy"),
	      "rebuilt program, --no-copy: unclear error: %s", errs ? errs : "");
	free(out);
	free(errs);
	CHECK(read_code(&tdn, prog, NULL, 0) == 0, "rebuilt program, no copy: another build read");

	/* What gdb's exec-file would be given: the copy, as a file. */
	{
		char path[4200], why[512];
		bool tmp = false;
		size_t n;
		char *bytes;
		CHECK(trace_image_binary_path(&td, prog, path, sizeof path, &tmp, why,
					      sizeof why) == 0 && tmp,
		      "binary path of a rebuilt program: %s", why);
		bytes = tmp ? slurp(path, &n) : NULL;
		CHECK(bytes && n == v1_len && !memcmp(bytes, v1, n) && access(path, X_OK) == 0,
		      "%s does not hold the recorded build", path);
		free(bytes);
		if (tmp)
			unlink(path);
		why[0] = 0;
		CHECK(trace_image_binary_path(&tdn, prog, path, sizeof path, &tmp, why,
					      sizeof why) < 0 && strstr(why, "no copy"),
		      "binary path without a copy: '%s'", why);
	}

	/* The original back: both decode as at first. */
	copy_file(argv[2], prog);
	CHECK(decode(without, "restored-nocopy", &out, &errs) == 0, "restored: %s",
	      errs ? errs : "");
	free(out);
	free(errs);
	{
		char path[4200], why[512];
		bool tmp = true;
		CHECK(trace_image_binary_path(&td, prog, path, sizeof path, &tmp, why,
					      sizeof why) == 0 && !tmp && !strcmp(path, prog),
		      "binary path of the recorded build: %s (%s)", path, why);
	}

	free(ref_out);
	free(ref_err);
	free(v1);
	trace_data_free(&td);
	trace_data_free(&tdn);
	if (failures) {
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("record_copy: all checks passed\n");
	return 0;
}
