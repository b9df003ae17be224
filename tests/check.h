/* The tests' one failure check. CHECK(cond) or CHECK(cond, "fmt", ...)
 * counts a failure in `failures` and says where, which condition and why,
 * then carries on; a test program includes this once and exits non-zero
 * when failures is. Messages go to stdout, flushed, so that they stay in
 * order with a test's own progress lines. */
#ifndef PTREV_TESTS_CHECK_H
#define PTREV_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int failures;

/* fmt always starts with a space (CHECK prepends one), so that a check
 * without a message still hands printf a non-empty format. */
static inline __attribute__((format(printf, 4, 5)))
void check_failed(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	failures++;
	printf("FAIL %s:%d: %s", file, line, cond);
	if (fmt[1]) {
		putchar(':');
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	putchar('\n');
	fflush(stdout);
}

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond))                                                   \
			check_failed(__FILE__, __LINE__, #cond, " " __VA_ARGS__); \
	} while (0)

#endif
