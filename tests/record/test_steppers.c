/* The sw backend's two steppers record the same thing: a test program
 * recorded with the single-stepper (PTREV_SW_STEPPER=insn), the block
 * stepper (block, the default) and the block stepper on debug registers
 * (block-hw) must decode (`ptrev decode`) to the same instructions per
 * thread, with the same events at the same positions: syscalls (number),
 * signals (number, handler), rdtsc, the END summary; and, for a program
 * with one thread, the same schedule. (With several threads the
 * interleaving depends on when syscalls running beside the others return,
 * in either stepper: each thread's own history must still match.)
 *
 * The three runs get environments of one size (PTREV_SW_STEPPER's value
 * padded by another variable): the program inherits it, and its start-up
 * code's path depends on where the stack begins.
 *
 * usage: test_steppers PTREV PROGRAMS_DIR WORK_DIR PROGRAM [ARG] */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/trace_file.h"

#include "../check.h"
#include "../one_cpu.h"

static const char *ptrev, *workdir;

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 65536 > cap) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = realloc(buf, cap + 1);
		}
		r = fread(buf + n, 1, cap - n, f);
		if (r == 0)
			break;
		n += r;
	}
	fclose(f);
	buf[n] = 0;
	return buf;
}

/* Run argv with stdout to out (NULL: /dev/null), stderr to errf, env
 * PTREV_SW_STEPPER=stepper plus padding. Returns the wait status. */
static int run(char *const argv[], const char *stepper, const char *out,
	       const char *errf)
{
	/* block-hw is the longest value: the others are padded to it. */
	static const char pad[] = "xxxxxxxxxxxxxxxx";
	int st;

	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(errf ? errf : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(o, 1);
		dup2(e, 2);
		if (stepper) {
			setenv("PTREV_SW_STEPPER", stepper, 1);
			setenv("PTREV_TEST_PAD", pad + strlen(stepper), 1);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

/* One recording, as decoded and as read. */
struct rec {
	const char *stepper;
	int status;
	struct trace_data td;
	/* threads in creation order: tid and decoded IP lines */
	int n;
	long tid[16];
	char **ip[16];
	size_t nip[16], cap[16];
	char *text;
};

static int thread_index(const struct rec *r, long tid)
{
	for (int i = 0; i < r->n; i++)
		if (r->tid[i] == tid)
			return i;
	return -1;
}

static int add_thread(struct rec *r, long tid)
{
	int i = thread_index(r, tid);
	if (i >= 0 || r->n == 16)
		return i;
	r->tid[r->n] = tid;
	return r->n++;
}

static void parse_decode(struct rec *r)
{
	int cur = r->n ? 0 : -1;
	for (char *line = strtok(r->text, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "[thread ", 8)) {
			cur = add_thread(r, atol(line + 8));
			continue;
		}
		if (line[0] == '[') {
			CHECK(!strstr(line, "error"), "%s: decode: %s", r->stepper, line);
			continue;
		}
		if (cur < 0)
			continue;
		if (r->nip[cur] == r->cap[cur]) {
			r->cap[cur] = r->cap[cur] ? 2 * r->cap[cur] : 65536;
			r->ip[cur] = realloc(r->ip[cur], r->cap[cur] * sizeof *r->ip[cur]);
		}
		r->ip[cur][r->nip[cur]++] = line;
	}
}

static int record(struct rec *r, const char *stepper, const char *prog, const char *arg)
{
	char file[9000], out[9100], errf[9100], err[512];
	const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	char *rec_argv[] = { (char *)ptrev, "record", "--backend", "sw", "-o", file, "--",
			     (char *)prog, (char *)arg, NULL };
	char *dec_argv[] = { (char *)ptrev, "decode", file, NULL };

	memset(r, 0, sizeof *r);
	r->stepper = stepper;
	snprintf(file, sizeof file, "%s/%s%s-%s.ptrev", workdir, base, arg ? "-arg" : "", stepper);
	snprintf(errf, sizeof errf, "%s.record.err", file);
	/* This VM now and then loses a debug register's hit; the recorder
	 * says so and stops (bstep_run). That is the machine, not the
	 * stepper: recorded again, at most twice. */
	for (int attempt = 0; attempt < 3; attempt++) {
		r->status = run(rec_argv, stepper, NULL, errf);
		char *said = slurp(errf);
		bool lost = said && strstr(said, "did not stop it");
		free(said);
		if (!lost)
			break;
		printf("%s: the VM lost a debug register's hit; recording again\n", stepper);
	}
	if (trace_read_file(file, &r->td, err, sizeof err) < 0) {
		CHECK(0, "%s: cannot read %s: %s", stepper, file, err);
		return -1;
	}
	snprintf(out, sizeof out, "%s.decode", file);
	snprintf(errf, sizeof errf, "%s.decode.err", file);
	int st = run(dec_argv, NULL, out, errf);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: ptrev decode failed (see %s)",
	      stepper, errf);
	r->text = slurp(out);
	if (!r->text)
		return -1;
	/* Threads in creation order: the THREAD records that start one. */
	for (size_t i = 0; i < r->td.nthreads; i++)
		if (!r->td.threads[i].exited)
			add_thread(r, r->td.threads[i].tid);
	parse_decode(r);
	return 0;
}

static void rec_free(struct rec *r)
{
	for (int i = 0; i < 16; i++)
		free(r->ip[i]);
	free(r->text);
	trace_data_free(&r->td);
}

/* Events of one kind as comparable lines: "thread# pos what", sorted, so
 * that threads' interleaving in the file does not matter. */
struct lines {
	char **l;
	size_t n, cap;
};

static void add_line(struct lines *ls, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_line(struct lines *ls, const char *fmt, ...)
{
	va_list ap;
	char buf[256];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (ls->n == ls->cap) {
		ls->cap = ls->cap ? 2 * ls->cap : 64;
		ls->l = realloc(ls->l, ls->cap * sizeof *ls->l);
	}
	ls->l[ls->n++] = strdup(buf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void events(const struct rec *r, struct lines *ls)
{
	const struct trace_data *td = &r->td;

	memset(ls, 0, sizeof *ls);
	for (size_t i = 0; i < td->nsyscalls; i++)
		add_line(ls, "%d %020llu syscall %llu", thread_index(r, td->syscalls[i].tid),
			 (unsigned long long)td->syscalls[i].pos,
			 (unsigned long long)td->syscalls[i].nr);
	for (size_t i = 0; i < td->nsignals; i++)
		add_line(ls, "%d %020llu signal %d handler %#llx",
			 thread_index(r, td->signals[i].tid),
			 (unsigned long long)td->signals[i].pos, td->signals[i].signo,
			 (unsigned long long)td->signals[i].handler_ip);
	for (size_t i = 0; i < td->nrdtsc; i++)
		add_line(ls, "%d %020llu rdtsc%s", thread_index(r, td->rdtsc[i].tid),
			 (unsigned long long)td->rdtsc[i].pos, td->rdtsc[i].is_rdtscp ? "p" : "");
	qsort(ls->l, ls->n, sizeof *ls->l, cmp_str);
}

/* The schedule as runs of one thread, adjacent runs of a thread merged
 * (a run split at a flush is one run). */
static void schedule(const struct rec *r, struct lines *ls)
{
	const struct trace_data *td = &r->td;
	long tid = 0;
	uint64_t pos = 0, count = 0;

	memset(ls, 0, sizeof *ls);
	for (size_t i = 0; i <= td->nsched; i++) {
		const struct trace_sched_run *s = i < td->nsched ? &td->sched[i] : NULL;
		if (s && count && s->tid == tid && s->pos == pos + count) {
			count += s->count;
			continue;
		}
		if (count)
			add_line(ls, "thread %d from %llu: %llu", thread_index(r, tid),
				 (unsigned long long)pos, (unsigned long long)count);
		if (s) {
			tid = s->tid;
			pos = s->pos;
			count = s->count;
		}
	}
}

static void compare_lines(const char *what, const char *a_name, const struct lines *a,
			  const char *b_name, const struct lines *b)
{
	size_t n = a->n < b->n ? a->n : b->n;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(a->l[i], b->l[i])) {
			CHECK(0, "%s #%zu: %s has \"%s\", %s \"%s\"", what, i, a_name, a->l[i],
			      b_name, b->l[i]);
			return;
		}
	}
	CHECK(a->n == b->n, "%s: %s has %zu, %s %zu", what, a_name, a->n, b_name, b->n);
}

static void lines_free(struct lines *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		free(ls->l[i]);
	free(ls->l);
}

static void compare(const struct rec *a, const struct rec *b)
{
	struct lines ea, eb;

	CHECK(a->status == b->status, "status: %s %#x, %s %#x", a->stepper, a->status,
	      b->stepper, b->status);
	CHECK(a->n == b->n, "threads: %s %d, %s %d", a->stepper, a->n, b->stepper, b->n);
	for (int k = 0; k < a->n && k < b->n; k++) {
		size_t n = a->nip[k] < b->nip[k] ? a->nip[k] : b->nip[k], i;
		for (i = 0; i < n && !strcmp(a->ip[k][i], b->ip[k][i]); i++)
			;
		CHECK(i == n && a->nip[k] == b->nip[k], "thread #%d: %s and %s differ at "
		      "instruction %zu of %zu/%zu (%s vs %s)", k, a->stepper, b->stepper, i,
		      a->nip[k], b->nip[k], i < a->nip[k] ? a->ip[k][i] : "end",
		      i < b->nip[k] ? b->ip[k][i] : "end");
	}
	CHECK(a->td.end.instructions == b->td.end.instructions &&
	      a->td.end.syscalls == b->td.end.syscalls &&
	      a->td.end.signals == b->td.end.signals &&
	      a->td.end.status_kind == b->td.end.status_kind &&
	      a->td.end.status == b->td.end.status,
	      "END: %s %llu instructions, %s %llu", a->stepper,
	      (unsigned long long)a->td.end.instructions, b->stepper,
	      (unsigned long long)b->td.end.instructions);
	events(a, &ea);
	events(b, &eb);
	compare_lines("events", a->stepper, &ea, b->stepper, &eb);
	lines_free(&ea);
	lines_free(&eb);
	if (a->n == 1) {
		schedule(a, &ea);
		schedule(b, &eb);
		compare_lines("schedule", a->stepper, &ea, b->stepper, &eb);
		lines_free(&ea);
		lines_free(&eb);
	}
}

int main(int argc, char **argv)
{
	static const char *steppers[] = { "insn", "block", "block-hw" };
	struct rec r[3];
	char prog[4200], mk[4300];

	if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: test_steppers PTREV PROGRAMS_DIR WORK_DIR PROGRAM [ARG]\n");
		return 2;
	}
	stay_on_one_cpu();  /* every run compared on one CPU (../one_cpu.h) */
	ptrev = argv[1];
	workdir = argv[3];
	snprintf(prog, sizeof prog, "%s/%s", argv[2], argv[4]);
	snprintf(mk, sizeof mk, "mkdir -p '%s'", workdir);
	if (system(mk) != 0)
		return 2;
	for (int i = 0; i < 3; i++)
		record(&r[i], steppers[i], prog, argc == 6 ? argv[5] : NULL);
	for (int i = 1; i < 3; i++)
		compare(&r[0], &r[i]);
	{
		size_t total = 0;
		for (int k = 0; k < r[0].n; k++)
			total += r[0].nip[k];
		printf("%s%s%s: %d thread(s), %zu instructions, %zu syscalls, %zu signals, "
		       "%zu rdtsc, %zu schedule runs: the same with insn, block, block-hw\n",
		       argv[4], argc == 6 ? " " : "", argc == 6 ? argv[5] : "", r[0].n, total,
		       r[0].td.nsyscalls, r[0].td.nsignals, r[0].td.nrdtsc, r[0].td.nsched);
		CHECK(total > 0 && total == r[0].td.end.instructions, "decoded %zu, END %llu",
		      total, (unsigned long long)r[0].td.end.instructions);
	}
	for (int i = 0; i < 3; i++)
		rec_free(&r[i]);
	if (failures) {
		printf("%d failure(s)\n", failures);
		return 1;
	}
	return 0;
}
