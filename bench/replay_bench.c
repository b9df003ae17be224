/* Replayer benchmark: seek latency at the end of 10^6- and 10^7-instruction
 * recordings of bench_prog (sw backend): the first seek (a run from the
 * start), reverse-stepi-like moves (N-1, N-2, ...), a jump back to the
 * middle and reverse steps there, a forward step; and the memory the
 * checkpoints hold (private pages copied on write, from smaps_rollup).
 *
 *   replay_bench PTREV BENCH_PROG WORKDIR [ITERATIONS...]
 *
 * bench_prog runs about 50 instructions per iteration: 20000 iterations
 * give ~10^6 instructions, 200000 ~10^7 (recording those single-steps the
 * program: minutes on a slow machine). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrev/replayer.h"
#include "ptrev/trace_file.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int record(const char *ptrev, const char *prog, const char *iters, const char *out)
{
	pid_t pid = fork();
	int st;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl(ptrev, ptrev, "record", "--backend", "sw", "-o", out, "--", prog,
		      iters, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Private (copied) and resident kB of a process. */
static void proc_mem(int pid, long *priv_kb, long *rss_kb)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", pid);
	FILE *f = fopen(path, "r");
	*priv_kb = *rss_kb = 0;
	while (f && fgets(line, sizeof line, f)) {
		long v;
		if (sscanf(line, "Private_Dirty: %ld", &v) == 1)
			*priv_kb += v;
		else if (sscanf(line, "Private_Clean: %ld", &v) == 1)
			*priv_kb += v;
		else if (sscanf(line, "Rss: %ld", &v) == 1)
			*rss_kb = v;
	}
	if (f)
		fclose(f);
}

static int seek(struct replayer *r, uint64_t pos, double *ms)
{
	char why[512];
	double t0 = now();
	int rc = replayer_seek(r, 0, pos, why, sizeof why);
	*ms = (now() - t0) * 1e3;
	if (rc < 0)
		fprintf(stderr, "seek %llu: %s\n", (unsigned long long)pos, why);
	return rc;
}

static void steps_back(struct replayer *r, uint64_t from, int n, const char *what)
{
	double sum = 0, max = 0, ms;
	struct replayer_stats a, b;
	replayer_get_stats(r, &a);
	for (int i = 1; i <= n; i++) {
		if (seek(r, from - (uint64_t)i, &ms) < 0)
			return;
		sum += ms;
		if (ms > max)
			max = ms;
	}
	replayer_get_stats(r, &b);
	printf("  %-34s mean %7.2f ms  max %7.2f ms  (%.0f insns re-executed/step)\n",
	       what, sum / n, max, (double)(b.insns_run - a.insns_run) / n);
}

static void one(const char *ptrev, const char *prog, const char *work, const char *iters)
{
	char out[4096], err[512];
	snprintf(out, sizeof out, "%s/bench-%s.ptrev", work, iters);
	double t0 = now();
	if (record(ptrev, prog, iters, out) < 0) {
		printf("recording %s iterations failed\n", iters);
		return;
	}
	double trec = now() - t0;
	struct trace_data td;
	if (trace_read_file(out, &td, err, sizeof err) < 0) {
		printf("%s\n", err);
		return;
	}
	uint64_t count = td.end.instructions;
	printf("bench_prog %s: %llu instructions (recorded in %.1f s)\n", iters,
	       (unsigned long long)count, trec);
	t0 = now();
	struct replayer *r = replayer_new(&td, err, sizeof err);
	if (!r) {
		printf("replayer_new: %s\n", err);
		trace_data_free(&td);
		return;
	}
	printf("  replayer_new (history index)       %7.1f ms\n", (now() - t0) * 1e3);
	double ms;
	uint64_t end = count - 1;
	if (seek(r, end, &ms) == 0)
		printf("  first seek to the end              %7.1f ms\n", ms);
	steps_back(r, end, 50, "reverse-stepi at the end (x50)");
	if (seek(r, end - 49, &ms) == 0)
		printf("  forward stepi                      %7.2f ms\n", ms);
	if (seek(r, count / 2, &ms) == 0)
		printf("  jump back to the middle            %7.1f ms\n", ms);
	steps_back(r, count / 2, 50, "reverse-stepi in the middle (x50)");
	if (seek(r, end, &ms) == 0)
		printf("  jump to the end again              %7.1f ms\n", ms);
	steps_back(r, end - 1000, 20, "reverse-stepi 1000 back (x20)");

	struct strbuf sb = STRBUF_INIT;
	replayer_checkpoints(r, &sb);
	long tot_priv = 0, tot_rss = 0;
	int ncp = 0;
	for (const char *l = strbuf_str(&sb); *l;) {
		unsigned long long pos;
		int pid;
		if (sscanf(l, "%llu %d", &pos, &pid) == 2) {
			long p, rs;
			proc_mem(pid, &p, &rs);
			tot_priv += p;
			tot_rss += rs;
			ncp++;
		}
		const char *nl = strchr(l, '\n');
		if (!nl)
			break;
		l = nl + 1;
	}
	struct replayer_stats st;
	replayer_get_stats(r, &st);
	printf("  checkpoints: %d processes, private (copied) memory %ld kB, "
	       "resident %ld kB\n", ncp, tot_priv, tot_rss);
	printf("  totals: %llu launches, %llu forks, %llu instructions re-executed, "
	       "%llu ptrace stops\n", (unsigned long long)st.launches,
	       (unsigned long long)st.forks, (unsigned long long)st.insns_run,
	       (unsigned long long)st.stops);
	strbuf_free(&sb);
	replayer_free(r);
	trace_data_free(&td);
	unlink(out);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: replay_bench PTREV BENCH_PROG WORKDIR [ITERATIONS...]\n");
		return 2;
	}
	mkdir(argv[3], 0755);
	if (argc == 4) {
		one(argv[1], argv[2], argv[3], "20000");
		one(argv[1], argv[2], argv[3], "200000");
	}
	for (int i = 4; i < argc; i++)
		one(argv[1], argv[2], argv[3], argv[i]);
	return 0;
}
