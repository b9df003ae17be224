/* `ptrev record --backend sw` end to end: the recording of a test program,
 * decoded by `ptrev decode`, must list exactly the instructions that an
 * independent single-stepper (ref_step) sees, per thread, start to exit;
 * and the file must hold what the event log promises.
 * PTREV_TEST_BACKEND=event records with the event backend instead: its
 * history, made by re-executing the recording, must be the same, and what
 * is checked of the file is checked of that history.
 *
 * usage: test_record CASE PTREV REF_STEP PROGRAMS_DIR WORK_DIR
 * CASE: syscalls signal plt switch recurse longjmp loop threads avx512
 *       exit segv missing killed sigterm */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrev/history_schedule.h"
#include "ptrev/materialise.h"
#include "ptrev/trace_file.h"

#include "../check.h"
#include "../one_cpu.h"
static const char *ptrev, *ref_step, *progdir, *workdir;
static const char *backend = "sw"; /* PTREV_TEST_BACKEND: sw or event */

/* Run argv with stdout/stderr to files (NULL: /dev/null); returns the
 * wait status. argv[0] "ptrev" means our ptrev. If pid_out, do not wait:
 * return 0 and the pid. */
static int run(char *const argv[], const char *out, const char *errf,
	       pid_t *pid_out)
{
	pid_t pid;
	int st;

	fflush(NULL); /* or the child writes our buffered lines again */
	pid = fork();

	if (pid == 0) {
		int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(errf ? errf : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(o, 1);
		dup2(e, 2);
		execv(strcmp(argv[0], "ptrev") == 0 ? ptrev : argv[0], argv);
		_exit(127);
	}
	if (pid_out) {
		*pid_out = pid;
		return 0;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

static char *slurp(const char *path, size_t *len)
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
	if (len)
		*len = n;
	return buf;
}

/* Per-thread instruction lists, threads in creation order. */
struct tlist {
	long tid;
	char **ip;
	size_t n, cap;
};

struct history {
	struct tlist t[16];
	int n;
};

static struct tlist *hist_thread(struct history *h, long tid, bool create)
{
	for (int i = 0; i < h->n; i++)
		if (h->t[i].tid == tid)
			return &h->t[i];
	if (!create || h->n == 16)
		return NULL;
	memset(&h->t[h->n], 0, sizeof h->t[0]);
	h->t[h->n].tid = tid;
	return &h->t[h->n++];
}

static void tl_add(struct tlist *t, char *ip)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 65536;
		t->ip = realloc(t->ip, t->cap * sizeof *t->ip);
	}
	t->ip[t->n++] = ip;
}

static void hist_free(struct history *h)
{
	for (int i = 0; i < h->n; i++)
		free(h->t[i].ip);
}

/* ref_step's output: "T TID" per new thread, "TID IP" per instruction. */
static void parse_ref(char *txt, struct history *h)
{
	for (char *line = strtok(txt, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp = 0;
		if (strcmp(line, "T") == 0) {
			hist_thread(h, atol(sp + 1), true);
		} else {
			struct tlist *t = hist_thread(h, atol(line), true);
			if (t)
				tl_add(t, sp + 1);
		}
	}
}

/* `ptrev decode` output: "[thread TID]" headers (several threads), one
 * %016x IP per instruction, events in brackets. Errors are failures. */
static void parse_decode(char *txt, struct history *h, long single_tid)
{
	struct tlist *cur = NULL;
	for (char *line = strtok(txt, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "[thread ", 8) == 0) {
			cur = hist_thread(h, atol(line + 8), true);
			continue;
		}
		if (line[0] == '[') {
			CHECK(!strstr(line, "error"), "decode: %s", line);
			continue;
		}
		if (!cur)
			cur = hist_thread(h, single_tid, true);
		tl_add(cur, line);
	}
}

static void compare_thread(const char *what, int k, const struct tlist *ref,
			   const struct tlist *dec)
{
	size_t n = ref->n < dec->n ? ref->n : dec->n;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ref->ip[i], dec->ip[i]) != 0) {
			CHECK(0, "%s thread #%d: instruction %zu: stepped %s, "
			      "decoded %s", what, k, i, ref->ip[i], dec->ip[i]);
			return;
		}
	}
	CHECK(ref->n == dec->n, "%s thread #%d: stepped %zu instructions, "
	      "decoded %zu", what, k, ref->n, dec->n);
}

static const char *path_in(char *buf, size_t len, const char *dir,
			   const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

/* Record prog, decode, step it with ref_step, compare. Returns the wait
 * status of `ptrev record`; td is read (caller frees). */
static int record_and_compare(const char *name, const char *arg,
			      const char *psb, struct trace_data *td)
{
	char prog[4200], file[4200], out[4200], errf[4200], refout[4200];
	char err[512];
	char *rec_argv[12];
	int st, n = 0, rst;
	struct history ref = {0}, dec = {0};
	char *rtxt, *dtxt;

	path_in(prog, sizeof prog, progdir, name);
	snprintf(file, sizeof file, "%s/%s.ptrev", workdir, name);
	snprintf(errf, sizeof errf, "%s/%s.record.err", workdir, name);
	rec_argv[n++] = "ptrev";
	rec_argv[n++] = "record";
	rec_argv[n++] = "--backend";
	rec_argv[n++] = (char *)backend;
	if (psb && strcmp(backend, "sw") == 0) {
		rec_argv[n++] = "--psb-period";
		rec_argv[n++] = (char *)psb;
	}
	rec_argv[n++] = "-o";
	rec_argv[n++] = file;
	rec_argv[n++] = "--";
	rec_argv[n++] = prog;
	if (arg)
		rec_argv[n++] = (char *)arg;
	rec_argv[n] = NULL;
	st = run(rec_argv, NULL, errf, NULL);

	memset(td, 0, sizeof *td);
	if (trace_read_file(file, td, err, sizeof err) < 0) {
		CHECK(0, "%s: cannot read the recording: %s", name, err);
		return st;
	}
	CHECK(td->complete, "%s: recording has no END record", name);
	CHECK(trace_meta(td, "backend") && strcmp(trace_meta(td, "backend"), backend) == 0,
	      "%s: META backend is not %s", name, backend);
	if (strcmp(backend, "event") == 0) {
		struct trace_data made;
		struct materialise_stats ms;
		CHECK(materialise_needed(td), "%s: an event recording with a history", name);
		if (materialise_to_memory(td, &made, &ms, NULL, err, sizeof err) != 0) {
			CHECK(0, "%s: cannot make the history: %s", name, err);
			return st;
		}
		trace_data_free(td);
		*td = made;
	}

	/* Decode. */
	{
		char *dec_argv[] = { "ptrev", "decode", file, NULL };
		snprintf(out, sizeof out, "%s/%s.decode", workdir, name);
		snprintf(errf, sizeof errf, "%s/%s.decode.err", workdir, name);
		int dst = run(dec_argv, out, errf, NULL);
		CHECK(WIFEXITED(dst) && WEXITSTATUS(dst) == 0,
		      "%s: ptrev decode failed (status %#x, see %s)", name, dst, errf);
	}
	/* The reference. */
	{
		char *ref_argv[] = { (char *)ref_step, prog, (char *)arg, NULL };
		snprintf(refout, sizeof refout, "%s/%s.ref", workdir, name);
		rst = run(ref_argv, refout, NULL, NULL);
		CHECK(WIFEXITED(rst) && WIFEXITED(st) &&
		      WEXITSTATUS(rst) == WEXITSTATUS(st),
		      "%s: ref_step status %#x, ptrev record %#x", name, rst, st);
	}
	rtxt = slurp(refout, NULL);
	dtxt = slurp(out, NULL);
	if (!rtxt || !dtxt) {
		CHECK(0, "%s: missing output", name);
		goto out;
	}
	parse_ref(rtxt, &ref);
	/* Threads of the recording in creation order: its THREAD records. */
	for (size_t i = 0; i < td->nthreads; i++)
		if (!td->threads[i].exited)
			hist_thread(&dec, td->threads[i].tid, true);
	parse_decode(dtxt, &dec, dec.n ? dec.t[0].tid : 0);
	CHECK(ref.n == dec.n, "%s: %d threads stepped, %d recorded", name,
	      ref.n, dec.n);
	for (int k = 0; k < ref.n && k < dec.n; k++)
		compare_thread(name, k, &ref.t[k], &dec.t[k]);
	{
		size_t total = 0;
		for (int k = 0; k < ref.n; k++)
			total += ref.t[k].n;
		printf("%s: %d thread(s), %zu instructions, %llu bytes, %llu PSBs, "
		       "%zu syscalls, %zu signals, %zu rdtsc\n", name, ref.n, total,
		       (unsigned long long)td->file_size,
		       (unsigned long long)td->end.psb_count, td->nsyscalls,
		       td->nsignals, td->nrdtsc);
		CHECK(td->end.instructions == total, "%s: END says %llu "
		      "instructions, stepped %zu", name,
		      (unsigned long long)td->end.instructions, total);
	}
	/* The schedule places every instruction of every thread exactly once,
	 * each thread's runs following on from each other from its first. */
	{
		struct sched_map *m = sched_map_new();
		size_t bad = 0;
		for (size_t i = 0; m && i < td->nsched; i++)
			bad += sched_map_add(m, &td->sched[i]) != 0;
		CHECK(m && bad == 0, "%s: %zu schedule runs out of order", name, bad);
		for (int k = 0; m && k < dec.n; k++) {
			uint64_t start = 1;
			CHECK(sched_map_thread_start(m, (pid_t)dec.t[k].tid, &start) && start == 0 &&
			      sched_map_thread_end(m, (pid_t)dec.t[k].tid) == dec.t[k].n,
			      "%s: thread %ld: the schedule holds %llu of its %zu instructions",
			      name, dec.t[k].tid,
			      (unsigned long long)sched_map_thread_end(m, (pid_t)dec.t[k].tid),
			      dec.t[k].n);
		}
		if (m)
			printf("%s: %zu schedule runs, %llu instructions\n", name, td->nsched,
			       (unsigned long long)sched_map_total(m));
		sched_map_free(m);
	}
out:
	hist_free(&ref);
	hist_free(&dec);
	free(rtxt);
	free(dtxt);
	return st;
}

static const struct trace_syscall *find_syscall(const struct trace_data *td,
						uint64_t nr)
{
	for (size_t i = 0; i < td->nsyscalls; i++)
		if (td->syscalls[i].nr == nr)
			return &td->syscalls[i];
	return NULL;
}

static void expect_exit(const char *name, int st, int code)
{
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == code,
	      "%s: ptrev record status %#x, want exit %d", name, st, code);
}

static void case_syscalls(void)
{
	struct trace_data td;
	const struct trace_syscall *s;
	bool vdso_code = false, own_build_id = false;

	expect_exit("rec_syscalls", record_and_compare("rec_syscalls", NULL, NULL, &td), 0);
	s = find_syscall(&td, SYS_read);
	CHECK(s && s->result == 8 && s->nwrites == 1 && s->writes[0].len == 8 &&
	      memcmp(s->writes[0].bytes, "recorded", 8) == 0,
	      "read: result and bytes not logged");
	s = find_syscall(&td, SYS_pipe2);
	CHECK(s && s->result == 0 && s->nwrites == 1 && s->writes[0].len == 8,
	      "pipe2: fds not logged");
	s = find_syscall(&td, SYS_getrandom);
	CHECK(s && s->result == 8 && s->nwrites == 1 && s->writes[0].len == 8,
	      "getrandom: bytes not logged");
	s = find_syscall(&td, SYS_clock_gettime);
	CHECK(s && s->nwrites == 1 && s->writes[0].len == 16,
	      "clock_gettime: timespec not logged");
	s = find_syscall(&td, SYS_getpid);
	CHECK(s && s->result == (int64_t)atol(trace_meta(&td, "pid") ? trace_meta(&td, "pid") : "0"),
	      "getpid: result is not the recorded pid");
	s = find_syscall(&td, SYS_write);
	CHECK(s && !s->unknown && s->nwrites == 0, "write: not logged");
	CHECK(td.nrdtsc >= 1, "no RDTSC record (PR_SET_TSC trapping)");
	for (size_t i = 0; i < td.nmmaps; i++) {
		if (strcmp(td.mmaps[i].path, "[vdso]") == 0)
			for (size_t k = 0; k < td.ncode; k++)
				if (td.code[k].addr == td.mmaps[i].start)
					vdso_code = true;
		if (strstr(td.mmaps[i].path, "rec_syscalls") &&
		    td.mmaps[i].build_id_len == 20)
			own_build_id = true;
	}
	CHECK(vdso_code, "no CODE record for the [vdso] mapping");
	CHECK(own_build_id, "no MMAP record with the program's build-id");
	trace_data_free(&td);
}

static void case_signal(void)
{
	struct trace_data td;
	bool usr1 = false, alrm = false;

	expect_exit("rec_signal", record_and_compare("rec_signal", NULL, NULL, &td), 0);
	for (size_t i = 0; i < td.nsignals; i++) {
		if (td.signals[i].signo == SIGUSR1 && td.signals[i].handler_ip)
			usr1 = true;
		if (td.signals[i].signo == SIGALRM && td.signals[i].handler_ip)
			alrm = true;
	}
	CHECK(usr1 && alrm, "SIGNAL records with handlers: SIGUSR1 %d, SIGALRM %d",
	      usr1, alrm);
	/* Each handler's frame is logged: the kernel's rt_sigframe (440
	 * bytes) and the FPU area above it that its sigcontext points to. */
	for (size_t i = 0; i < td.nsignals; i++) {
		const struct trace_signal *g = &td.signals[i];
		const struct trace_sigframe *f = NULL;
		if (!g->handler_ip)
			continue;
		for (size_t j = 0; j < td.nsigframes; j++)
			if (td.sigframes[j].tid == g->tid && td.sigframes[j].pos == g->pos)
				f = &td.sigframes[j];
		uint64_t fp = 0;
		if (f && f->len >= 440)
			memcpy(&fp, f->bytes + 8 + 40 + 184, sizeof fp);
		CHECK(f && fp >= f->addr + 440 && fp + 512 <= f->addr + f->len,
		      "signal %d at %llu: no SIGFRAME holding its FPU area (%zu bytes)",
		      g->signo, (unsigned long long)g->pos, f ? f->len : 0);
	}
	trace_data_free(&td);
}

static void case_simple(const char *name, const char *psb)
{
	struct trace_data td;
	expect_exit(name, record_and_compare(name, NULL, psb, &td), 0);
	if (strcmp(name, "rec_loop") == 0 && strcmp(backend, "sw") == 0)
		CHECK(td.end.psb_count >= 200, "rec_loop: only %llu PSBs",
		      (unsigned long long)td.end.psb_count);
	if (strcmp(name, "rec_threads") == 0) {
		int started = 0, exited = 0;
		for (size_t i = 0; i < td.nthreads; i++)
			td.threads[i].exited ? exited++ : started++;
		CHECK(started == 3 && exited == 3, "rec_threads: %d THREAD starts, "
		      "%d exits (want 3, 3)", started, exited);
	}
	trace_data_free(&td);
}

static void case_avx512(void)
{
	unsigned a, b, c, d;
	bool has = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 16));
	printf("AVX-512F %s: rec_avx512 runs its %s path\n",
	       has ? "supported" : "NOT supported on this machine",
	       has ? "AVX-512" : "non-AVX-512");
	case_simple("rec_avx512", NULL);
}

static void case_segv(void)
{
	struct trace_data td;
	int st = record_and_compare("rec_exit", "x", NULL, &td);
	const struct trace_signal *last = td.nsignals ? &td.signals[td.nsignals - 1] : NULL;

	expect_exit("rec_exit x", st, 139);
	CHECK(td.end.status_kind == 1 && td.end.status == SIGSEGV,
	      "END status %d/%d, want killed by SIGSEGV", td.end.status_kind,
	      td.end.status);
	CHECK(last && last->signo == SIGSEGV && last->handler_ip == 0,
	      "the last SIGNAL record is not the fatal SIGSEGV");
	trace_data_free(&td);
}

static void case_exit(void)
{
	struct trace_data td;
	expect_exit("rec_exit", record_and_compare("rec_exit", NULL, NULL, &td), 3);
	CHECK(td.end.status_kind == 0 && td.end.status == 3,
	      "END status %d/%d, want exit 3", td.end.status_kind, td.end.status);
	trace_data_free(&td);
}

static void case_missing(void)
{
	char file[4200], errf[4200], *txt;
	char *argv[] = { "ptrev", "record", "--backend", "sw", "-o", file, "--",
			 "/nonexistent/rec_program", NULL };
	int st;

	snprintf(file, sizeof file, "%s/missing.ptrev", workdir);
	snprintf(errf, sizeof errf, "%s/missing.err", workdir);
	st = run(argv, NULL, errf, NULL);
	txt = slurp(errf, NULL);
	expect_exit("missing program", st, 2);
	CHECK(txt && strstr(txt, "/nonexistent/rec_program") &&
	      strstr(txt, "No such file"), "unclear error: %s", txt ? txt : "");
	free(txt);
}

/* -o: an existing file that is not a recording is kept unless --force
 * (a recording is replaced); -o without its value is named. */
static void case_output(void)
{
	char file[4200], errf[4200], prog[4200], *txt;
	char *argv[] = { "ptrev", "record", "--backend", "sw", "-o", file, "--", prog, NULL };
	char *forced[] = { "ptrev", "record", "--backend", "sw", "--force", "-o", file, "--",
			   prog, NULL };
	char *novalue[] = { "ptrev", "record", "-o", NULL };
	FILE *f;
	int st;

	snprintf(file, sizeof file, "%s/document.txt", workdir);
	snprintf(errf, sizeof errf, "%s/output.err", workdir);
	path_in(prog, sizeof prog, progdir, "rec_exit");
	f = fopen(file, "w");
	fputs("a document, not a recording\n", f);
	fclose(f);
	st = run(argv, NULL, errf, NULL);
	expect_exit("-o over a document", st, 2);
	txt = slurp(errf, NULL);
	CHECK(txt && strstr(txt, "not a ptrev recording") && strstr(txt, "--force"),
	      "unclear refusal: %s", txt ? txt : "");
	free(txt);
	txt = slurp(file, NULL);
	CHECK(txt && strcmp(txt, "a document, not a recording\n") == 0,
	      "the document was changed");
	free(txt);
	st = run(forced, NULL, NULL, NULL);
	CHECK(WIFEXITED(st), "--force: ptrev did not exit");
	CHECK(trace_file_looks_like_recording(file), "--force: no recording written");
	st = run(argv, NULL, NULL, NULL);
	CHECK(WIFEXITED(st) && trace_file_looks_like_recording(file),
	      "a recording is not replaced by a new one");
	st = run(novalue, NULL, errf, NULL);
	expect_exit("-o without a value", st, 2);
	txt = slurp(errf, NULL);
	CHECK(txt && strstr(txt, "-o needs a value"), "unclear usage error: %s", txt ? txt : "");
	free(txt);
}

/* Stop ptrev in the middle of a recording with sig. */
static void case_stopped(int sig)
{
	char file[4200], prog[4200], err[512];
	/* Long enough to be in the middle after 1.5 s at any speed. */
	char *argv[] = { "ptrev", "record", "--backend", "sw", "-o", file, "--",
			 prog, "100000000", NULL };
	struct trace_data td;
	struct timespec ts = { 1, 500000000 };
	pid_t pid;
	int st;

	snprintf(file, sizeof file, "%s/stopped%d.ptrev", workdir, sig);
	path_in(prog, sizeof prog, progdir, "rec_loop");
	run(argv, NULL, NULL, &pid);
	nanosleep(&ts, NULL);
	kill(pid, sig);
	waitpid(pid, &st, 0);
	if (sig == SIGKILL)
		CHECK(WIFSIGNALED(st), "ptrev survived SIGKILL?");
	else
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig,
		      "ptrev status %#x after signal %d, want exit %d", st, sig,
		      128 + sig);
	if (trace_read_file(file, &td, err, sizeof err) < 0) {
		CHECK(0, "recording of a stopped recorder unreadable: %s", err);
		return;
	}
	if (sig == SIGKILL) {
		CHECK(!td.complete, "a killed recorder's file says complete");
	} else {
		CHECK(td.complete && td.end.status_kind == 2,
		      "END missing or not 'recorder stopped' (%d)", td.end.status_kind);
	}
	printf("signal %d after 1.5 s: %zu PT streams, %zu mmaps, complete=%d\n",
	       sig, td.nstreams, td.nmmaps, td.complete);
	trace_data_free(&td);
}

int main(int argc, char **argv)
{
	const char *c;
	char mk[4300];

	if (argc != 6) {
		fprintf(stderr, "usage: test_record CASE PTREV REF_STEP PROGRAMS_DIR WORK_DIR\n");
		return 2;
	}
	stay_on_one_cpu();  /* every run compared on one CPU (../one_cpu.h) */
	c = argv[1];
	if (getenv("PTREV_TEST_BACKEND"))
		backend = getenv("PTREV_TEST_BACKEND");
	ptrev = argv[2];
	ref_step = argv[3];
	progdir = argv[4];
	workdir = argv[5];
	snprintf(mk, sizeof mk, "mkdir -p '%s'", workdir);
	if (system(mk) != 0)
		return 2;

	if (strcmp(c, "syscalls") == 0)
		case_syscalls();
	else if (strcmp(c, "signal") == 0)
		case_signal();
	else if (strcmp(c, "loop") == 0)
		case_simple("rec_loop", "256");
	else if (strcmp(c, "avx512") == 0)
		case_avx512();
	else if (strcmp(c, "exit") == 0)
		case_exit();
	else if (strcmp(c, "segv") == 0)
		case_segv();
	else if (strcmp(c, "missing") == 0)
		case_missing();
	else if (strcmp(c, "output") == 0)
		case_output();
	else if (strcmp(c, "killed") == 0)
		case_stopped(SIGKILL);
	else if (strcmp(c, "sigterm") == 0)
		case_stopped(SIGTERM);
	else {
		char name[64];
		snprintf(name, sizeof name, "rec_%s", c);
		case_simple(name, NULL);
	}
	if (failures) {
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("%s: all checks passed\n", c);
	return 0;
}
