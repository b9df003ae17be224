/* Helpers for the `decode --raw` tests: run the decoder as a child process
 * and capture what it printed, so that a crash is seen as a crash. */
#ifndef PTREV_TESTS_RAW_TEST_RUN_H
#define PTREV_TESTS_RAW_TEST_RUN_H

#include <stddef.h>

struct run_result {
	int exited;		/* 1 when the child exited normally */
	int status;		/* its exit status, or the killing signal */
	char *out;		/* all of stdout, NUL-terminated */
	size_t out_len;
	char *err;		/* all of stderr, NUL-terminated */
	double seconds;		/* wall time */
};

/* Runs prefix[0..] followed by args[0..] (both NULL-terminated).
 * Returns 0, or -1 if the child could not be started. */
int run_decoder(char *const *prefix, char *const *args,
		struct run_result *r);
void run_result_free(struct run_result *r);

/* 1 when stderr shows a sanitizer report or the child died of a signal. */
int run_crashed(const struct run_result *r);

/* Reads a whole file; NULL if it cannot. */
char *read_whole_file(const char *path, size_t *len);

/* The test data folder: argv[1], or exits 77 with a message if absent. */
const char *testdata_dir_or_skip(int argc, char **argv);

/* Counts the instruction lines (`[? ]%016x`) and error lines (`[..: ...error:
 * ...]`) in ptxed-style output. */
void count_lines(const char *text, unsigned long long *insns,
		 unsigned long long *errors);

#endif
