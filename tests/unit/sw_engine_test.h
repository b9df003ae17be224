/* Helpers of the sw engine's tests (test_sw_engine.c, and the block
 * stepper's cases in test_sw_engine_blocks.c): instruction lists per
 * thread from ref_step (tests/record/ref_step, the independent
 * single-stepper) and from a recording (decoded with libipt), comparing
 * them, and driving the engine as the gdb server does. Each test includes
 * it once; main sets progdir and refstep. */
#ifndef PTREV_TESTS_SW_ENGINE_TEST_H
#define PTREV_TESTS_SW_ENGINE_TEST_H

#include "ptrev/inferior.h"
#include "ptrev/sw_engine.h"
#include "ptrev/trace_decode.h"
#include "ptrev/trace_file.h"

#include "../../decode/trace_internal.h"

#include <fcntl.h>
#include <intel-pt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../check.h"

extern char **environ;

static const char *progdir;
static char refstep[PATH_MAX];

/* Each test uses some of these. */
#define HELPER static __attribute__((unused))

/* ---- instruction lists per thread, threads in creation order ---------- */
struct ilist {
	uint64_t *ip;
	size_t n, cap;
};

struct tlists {
	int n;
	long tid[16];
	struct ilist l[16];
};

HELPER void push(struct ilist *l, uint64_t ip)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->ip = realloc(l->ip, l->cap * sizeof *l->ip);
		if (!l->ip)
			abort();
	}
	l->ip[l->n++] = ip;
}

HELPER struct ilist *thread_list(struct tlists *t, long tid)
{
	for (int i = 0; i < t->n; i++)
		if (t->tid[i] == tid)
			return &t->l[i];
	if (t->n == 16)
		abort();
	t->tid[t->n] = tid;
	memset(&t->l[t->n], 0, sizeof t->l[t->n]);
	return &t->l[t->n++];
}

HELPER void tlists_free(struct tlists *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->l[i].ip);
	t->n = 0;
}

/* ref_step PROG ARGS: the ground truth, run with exactly our environment
 * (a shell would change it, and glibc's start-up reads it). */
HELPER int ref_lists(char *const argv[], struct tlists *out)
{
	char line[256];
	char *args[16] = { refstep };
	int fds[2], st;
	for (int i = 0; argv[i] && i < 14; i++)
		args[i + 1] = argv[i];
	memset(out, 0, sizeof *out);
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execve(refstep, args, environ);
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		long tid;
		unsigned long long ip;
		if (line[0] == 'T' && sscanf(line, "T %ld", &tid) == 1)
			thread_list(out, tid);
		else if (sscanf(line, "%ld %llx", &tid, &ip) == 2)
			push(thread_list(out, tid), ip);
	}
	fclose(f);
	waitpid(pid, &st, 0);
	return 0;
}

/* The recording as libipt decodes it. */
HELPER int decode_lists(const struct trace_data *td, struct tlists *out)
{
	struct trace_image ti;
	char err[512];

	memset(out, 0, sizeof *out);
	if (trace_image_build(&ti, td, err, sizeof err) < 0) {
		printf("image: %s\n", err);
		return -1;
	}
	for (size_t i = 0; i < td->nthreads; i++)
		if (!td->threads[i].exited)
			thread_list(out, td->threads[i].tid);
	for (size_t s = 0; s < td->nstreams; s++) {
		struct ilist *l = thread_list(out, td->streams[s].tid);
		struct pt_config cfg;
		pt_config_init(&cfg);
		cfg.begin = td->streams[s].pt;
		cfg.end = td->streams[s].pt + td->streams[s].pt_len;
		struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
		if (!d)
			continue;
		pt_insn_set_image(d, ti.image);
		int st = pt_insn_sync_forward(d);
		while (st >= 0) {
			while (st & pts_event_pending) {
				struct pt_event ev;
				st = pt_insn_event(d, &ev, sizeof ev);
				if (st < 0)
					break;
			}
			if (st < 0)
				break;
			struct pt_insn insn;
			st = pt_insn_next(d, &insn, sizeof insn);
			if (st < 0 && st != -pte_eos) {
				printf("decode error in thread %d at %#llx: %s\n",
				       (int)td->streams[s].tid,
				       (unsigned long long)insn.ip,
				       pt_errstr(pt_errcode(st)));
				failures++;
				break;
			}
			if (st < 0)
				break;
			push(l, insn.ip);
		}
		pt_insn_free_decoder(d);
	}
	trace_image_free(&ti);
	return 0;
}

/* Does thread list b (recording) equal a[from..]? */
HELPER void compare(const char *what, const struct ilist *a, size_t from,
		    const struct ilist *b)
{
	size_t n = a->n - from;
	for (size_t i = 0; i < n && i < b->n; i++) {
		if (a->ip[from + i] != b->ip[i]) {
			CHECK(0, "%s: instruction %zu: stepped %#llx, recorded %#llx",
			      what, i, (unsigned long long)a->ip[from + i],
			      (unsigned long long)b->ip[i]);
			return;
		}
	}
	CHECK(n == b->n, "%s: stepped %zu instructions, recorded %zu", what, n, b->n);
}

HELPER void compare_all(const char *what, const struct tlists *ref,
			const struct trace_data *td)
{
	struct tlists rec;
	char name[128];

	if (decode_lists(td, &rec) < 0) {
		CHECK(0, "%s: cannot decode", what);
		return;
	}
	CHECK(rec.n == ref->n, "%s: %d threads stepped, %d recorded", what, ref->n, rec.n);
	for (int i = 0; i < ref->n && i < rec.n; i++) {
		snprintf(name, sizeof name, "%s thread #%d", what, i);
		compare(name, &ref->l[i], 0, &rec.l[i]);
	}
	tlists_free(&rec);
}

/* ---- helpers ---------------------------------------------------------- */
HELPER uint64_t sym(const char *prog, const char *name)
{
	char cmd[PATH_MAX + 32], line[512];
	uint64_t addr = 0;
	snprintf(cmd, sizeof cmd, "nm '%s'", prog);
	FILE *f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long a;
		char type, s[400];
		if (sscanf(line, "%llx %c %399s", &a, &type, s) == 3 && !strcmp(s, name))
			addr = a;
	}
	pclose(f);
	return addr;
}

HELPER void prog_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", progdir, name);
}

HELPER int launch(struct inferior *inf, char *const argv[])
{
	char err[256];
	int null = open("/dev/null", O_RDWR);
	memset(inf, 0, sizeof *inf);
	inf->memfd = -1;
	int rc = inferior_launch(inf, argv[0], argv, environ, null, null, null,
				 err, sizeof err);
	close(null);
	if (rc < 0)
		printf("launch: %s\n", err);
	return rc;
}

HELPER struct sw_engine *engine(struct inferior *inf)
{
	char err[256];
	struct sw_engine *e = sw_engine_new(inf, NULL, NULL, err, sizeof err);
	if (!e)
		printf("sw_engine_new: %s\n", err);
	return e;
}

HELPER uint64_t pc_of(struct inferior *inf, pid_t tid)
{
	struct user_regs_struct r;
	return inferior_get_regs(inf, tid, &r) == 0 ? r.rip : 0;
}

/* gdb's continue: every thread, sig for one of them. */
HELPER int cont(struct sw_engine *e, struct inferior *inf, pid_t sigtid, int sig,
		struct stop_event *ev)
{
	size_t n = inf->nthreads;
	pid_t tids[64];
	for (size_t i = 0; i < n && i < 64; i++)
		tids[i] = inf->threads[i].tid;
	for (size_t i = 0; i < n && i < 64; i++)
		sw_engine_resume(e, tids[i], false, tids[i] == sigtid ? sig : 0);
	return sw_engine_wait(e, ev, true);
}

HELPER int step(struct sw_engine *e, pid_t tid, struct stop_event *ev)
{
	if (sw_engine_resume(e, tid, true, 0) < 0)
		return -1;
	return sw_engine_wait(e, ev, true);
}

HELPER void finish(struct sw_engine *e, struct trace_end *end)
{
	char err[256];
	CHECK(sw_engine_finish(e, end, false, err, sizeof err) == 0, "finish: %s", err);
}

HELPER size_t index_of(const struct ilist *l, uint64_t ip)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->ip[i] == ip)
			return i;
	return l->n;
}

#endif
