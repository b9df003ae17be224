/* See raw_test_run.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "raw_test_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

char *read_whole_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long size;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) < 0) {
		fclose(f);
		return NULL;
	}
	buf = malloc((size_t)size + 1);
	if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[size] = '\0';
		if (len)
			*len = (size_t)size;
	}
	return buf;
}

/* Output goes to unlinked temporary files: pipes would need a reader
 * running alongside for the millions of lines a big trace prints. */
static FILE *capture_file(void)
{
	return tmpfile();
}

static char *slurp(FILE *f, size_t *len)
{
	long size;
	char *buf;

	fflush(f);
	size = ftell(f);
	if (size < 0)
		size = 0;
	buf = malloc((size_t)size + 1);
	if (!buf)
		return NULL;
	rewind(f);
	size = (long)fread(buf, 1, (size_t)size, f);
	buf[size] = '\0';
	if (len)
		*len = (size_t)size;
	return buf;
}

int run_decoder(char *const *prefix, char *const *args, struct run_result *r)
{
	char *argv[256];
	FILE *out = capture_file(), *err = capture_file();
	struct timespec t0, t1;
	int n = 0, i, wstatus;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (!out || !err)
		return -1;
	for (i = 0; prefix[i] && n < 250; i++)
		argv[n++] = prefix[i];
	for (i = 0; args[i] && n < 250; i++)
		argv[n++] = args[i];
	argv[n] = NULL;

	fflush(stdout);
	fflush(stderr);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fileno(out), 1);
		dup2(fileno(err), 2);
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (waitpid(pid, &wstatus, 0) < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->seconds = (double)(t1.tv_sec - t0.tv_sec) +
		     (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	r->exited = WIFEXITED(wstatus);
	r->status = r->exited ? WEXITSTATUS(wstatus) :
		    WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : -1;
	r->out = slurp(out, &r->out_len);
	r->err = slurp(err, NULL);
	fclose(out);
	fclose(err);
	if (!r->out || !r->err) {
		run_result_free(r);
		return -1;
	}
	return 0;
}

void run_result_free(struct run_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

int run_crashed(const struct run_result *r)
{
	return !r->exited || r->status > 1 ||
	       strstr(r->err, "Sanitizer") != NULL ||
	       strstr(r->err, "runtime error:") != NULL;
}

const char *testdata_dir_or_skip(int argc, char **argv)
{
	struct stat st;

	if (argc < 3) {
		fprintf(stderr, "usage: %s TESTDATA_DIR DECODER-COMMAND...\n",
			argv[0]);
		exit(1);
	}
	if (stat(argv[1], &st) < 0 || !S_ISDIR(st.st_mode)) {
		printf("SKIP: test data folder %s is absent\n", argv[1]);
		exit(77);
	}
	return argv[1];
}

static int is_insn_line(const char *line, size_t len)
{
	size_t i;

	if (len >= 2 && line[0] == '?' && line[1] == ' ') {
		line += 2;
		len -= 2;
	}
	if (len != 16)
		return 0;
	for (i = 0; i < 16; i++)
		if (!strchr("0123456789abcdef", line[i]))
			return 0;
	return 1;
}

static int is_error_line(const char *line, size_t len)
{
	const char *p;

	if (len < 2 || line[0] != '[' || line[len - 1] != ']')
		return 0;
	/* `[OFFSET, IP: KIND error: TEXT]` */
	for (p = line; p + 7 <= line + len; p++)
		if (!memcmp(p, "error: ", 7))
			return 1;
	return 0;
}

void count_lines(const char *text, unsigned long long *insns,
		 unsigned long long *errors)
{
	*insns = *errors = 0;
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);

		if (is_insn_line(text, len))
			++*insns;
		else if (is_error_line(text, len))
			++*errors;
		text += len + (nl ? 1 : 0);
	}
}
