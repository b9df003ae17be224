/* `ptrev info FILE`: what a recording holds, one `key: value` per line.
 * Counts come from the END record; a recording without one (recorder
 * killed) is summarised from the records that are there and says it is
 * incomplete. */
#include "ptrev/cli.h"
#include "ptrev/materialise.h"
#include "ptrev/trace_info.h"

#include <inttypes.h>
#include <intel-pt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define INCOMPLETE_WHY "recording incomplete: the recorder stopped before the program ended"

uint64_t trace_count_psb(const uint8_t *pt, size_t len)
{
	if (!len)
		return 0;
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)pt;
	cfg.end = (uint8_t *)pt + len;
	struct pt_packet_decoder *dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec)
		return 0;
	uint64_t count = 0, last = UINT64_MAX;
	while (pt_pkt_sync_forward(dec) >= 0) {
		uint64_t at = 0;
		pt_pkt_get_offset(dec, &at);
		if (at == last)
			break; /* no progress: never loop forever on bad data */
		last = at;
		struct pt_packet pkt;
		int r;
		while ((r = pt_pkt_next(dec, &pkt, sizeof pkt)) >= 0)
			if (pkt.type == ppt_psb)
				count++;
		if (r == -pte_eos)
			break;
	}
	pt_pkt_free_decoder(dec);
	return count;
}

/* A META value on one line: control characters as \xHH, backslash doubled. */
static void put_text(FILE *out, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '\\')
			fputs("\\\\", out);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(out, "\\x%02x", *c);
		else
			fputc(*c, out);
	}
}

/* An argument as a shell would need it: bare if plain, else '...'. */
static void put_arg(FILE *out, const char *s)
{
	bool plain = *s != '\0';
	for (const char *c = s; *c && plain; c++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			       "0123456789-_./=:,+@%", *c) != NULL;
	if (plain) {
		put_text(out, s);
		return;
	}
	fputc('\'', out);
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			fputs("'\\''", out);
		} else {
			char one[2] = {*c, '\0'};
			put_text(out, one);
		}
	}
	fputc('\'', out);
}

/* The descriptors and session the program started with (META "fd" and
 * "session", ptrev/start_files.h); nothing for recordings made before. */
static void start_files_lines(FILE *out, const struct trace_data *td)
{
	bool any = false;
	for (size_t i = 0; i < td->nmeta; i++) {
		int fd, used = 0;
		char how[128];
		const char *v = td->meta_values[i];
		if (strcmp(td->meta_keys[i], "fd") != 0 ||
		    sscanf(v, "%d %127s %n", &fd, how, &used) != 2 || !used)
			continue;
		if (!any)
			fputs("open at start:\n", out);
		any = true;
		fprintf(out, "  %d: ", fd);
		put_text(out, v + used);
		fputs(" (", out);
		for (const char *c = how; *c; c++)
			if (*c == ',')
				fputs(", ", out);
			else
				fputc(*c, out);
		fputs(")\n", out);
	}
	const char *s = trace_meta(td, "session");
	char group[16], session[16], fg[8];
	int at = 0;
	if (!s || sscanf(s, "group=%15s session=%15s foreground=%7s terminal=%n", group, session,
			 fg, &at) != 3 || !at)
		return;
	bool gl = strcmp(group, "leader") == 0, sl = strcmp(session, "leader") == 0;
	fprintf(out, "session: %s, ", sl && gl ? "leader of its session and process group"
				      : gl ? "leader of its process group"
					   : "in another process's group");
	if (strcmp(s + at, "none") == 0) {
		fputs("no controlling terminal\n", out);
		return;
	}
	fputs("terminal ", out);
	put_text(out, s + at);
	fprintf(out, " (its group %s)\n",
		strcmp(fg, "yes") == 0 ? "in the foreground" : "in the background");
}

static void meta_line(FILE *out, const struct trace_data *td, const char *label,
		      const char *key)
{
	const char *v = trace_meta(td, key);
	fprintf(out, "%s: ", label);
	if (v)
		put_text(out, v);
	else
		fputs("unknown", out);
	fputc('\n', out);
}

/* "cpu" is vendor/family/model/stepping in one value; a recording with
 * the four parts as separate keys (cpu_vendor, cpu_family, cpu_model,
 * cpu_stepping) is shown the same way. */
static void cpu_line(FILE *out, const struct trace_data *td)
{
	const char *v = trace_meta(td, "cpu_vendor"), *f = trace_meta(td, "cpu_family");
	const char *m = trace_meta(td, "cpu_model"), *st = trace_meta(td, "cpu_stepping");
	if (trace_meta(td, "cpu") || !v || !f || !m) {
		meta_line(out, td, "cpu", "cpu");
		return;
	}
	fputs("cpu: ", out);
	put_text(out, v);
	fputc('/', out);
	put_text(out, f);
	fputc('/', out);
	put_text(out, m);
	if (st) {
		fputc('/', out);
		put_text(out, st);
	}
	fputc('\n', out);
}

static void arguments_line(FILE *out, const struct trace_data *td)
{
	/* "arg" records are the whole argv; argv[0] is the program's name. */
	size_t seen = 0, shown = 0;
	fputs("arguments:", out);
	for (size_t i = 0; i < td->nmeta; i++) {
		if (strcmp(td->meta_keys[i], "arg") != 0 || seen++ == 0)
			continue;
		fputc(' ', out);
		put_arg(out, td->meta_values[i]);
		shown++;
	}
	if (!shown)
		fputs(seen ? " (none)" : " unknown", out);
	fputc('\n', out);
}

static bool has_tid(const pid_t *tids, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

/* Every thread that started or left a trace, in order of appearance.
 * Returns how many there are. */
static size_t threads_line(FILE *out, const struct trace_data *td)
{
	size_t max = td->nthreads + td->nstreams, n = 0;
	pid_t *tids = malloc((max ? max : 1) * sizeof *tids);
	if (!tids)
		abort();
	for (size_t i = 0; i < td->nthreads; i++)
		if (!has_tid(tids, n, td->threads[i].tid))
			tids[n++] = td->threads[i].tid;
	for (size_t i = 0; i < td->nstreams; i++)
		if (!has_tid(tids, n, td->streams[i].tid))
			tids[n++] = td->streams[i].tid;
	fprintf(out, "threads: %zu", n);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%d", i ? ", " : " (", (int)tids[i]);
	fputs(n ? ")\n" : "\n", out);
	free(tids);
	return n;
}

/* The SCHED runs are merged, so each boundary between two of them is a
 * switch from one thread to another. Several threads without a schedule
 * (pt backend, older recordings) have no global order to count in. */
static void switches_line(FILE *out, const struct trace_data *td, size_t nthreads)
{
	if (td->nsched)
		fprintf(out, "thread switches: %zu\n", td->nsched - 1);
	else if (nthreads > 1)
		fputs("thread switches: not recorded\n", out);
}

static void status_line(FILE *out, const struct trace_data *td)
{
	fputs("status: ", out);
	if (!td->complete) {
		fputs("incomplete (no END record: the recorder stopped before the program ended)\n",
		      out);
		return;
	}
	const struct trace_end *e = &td->end;
	if (e->status_kind == 0) {
		fprintf(out, "exited with code %d\n", e->status);
	} else if (e->status_kind == 1) {
		const char *abbrev = sigabbrev_np(e->status);
		if (abbrev)
			fprintf(out, "killed by signal SIG%s\n", abbrev);
		else
			fprintf(out, "killed by signal %d\n", e->status);
	} else {
		fputs("recording stopped before the program ended", out);
		const char *abbrev = e->status > 0 ? sigabbrev_np(e->status) : NULL;
		if (abbrev)
			fprintf(out, " (the recorder received SIG%s)", abbrev);
		fputc('\n', out);
	}
}

/* Copies of the mapped binaries (FILE records), whole ones counted. */
static void binaries_line(FILE *out, const struct trace_data *td)
{
	size_t n = 0;
	uint64_t bytes = 0;
	for (size_t i = 0; i < td->nfiles; i++) {
		if (td->files[i].len == td->files[i].size) {
			n++;
			bytes += td->files[i].size;
		}
	}
	if (n)
		fprintf(out, "binaries: %zu copied (%" PRIu64 " bytes)\n", n, bytes);
	else
		fputs("binaries: not copied (--no-copy)\n", out);
}

void trace_info_print(FILE *out, const char *path, const struct trace_data *td)
{
	const struct trace_end *e = &td->end;
	uint64_t trace_bytes = 0, psb = 0;
	for (size_t i = 0; i < td->nstreams; i++)
		trace_bytes += td->streams[i].pt_len;
	if (td->complete) {
		psb = e->psb_count;
	} else {
		for (size_t i = 0; i < td->nstreams; i++)
			psb += trace_count_psb(td->streams[i].pt, td->streams[i].pt_len);
	}

	fputs("file: ", out);
	put_text(out, path);
	fputc('\n', out);
	fprintf(out, "format version: %d\n", TRACE_FORMAT_VERSION);
	meta_line(out, td, "backend", "backend");
	meta_line(out, td, "program", "program");
	arguments_line(out, td);
	meta_line(out, td, "pid", "pid");
	meta_line(out, td, "cwd", "cwd");
	start_files_lines(out, td);
	cpu_line(out, td);
	/* Where the recorder was bound: its replays run there. */
	if (trace_meta(td, "cpu_index"))
		meta_line(out, td, "ran on cpu", "cpu_index");
	meta_line(out, td, "start time", "start_time");
	const char *started = trace_meta(td, "started");
	if (started && strcmp(started, "exec") == 0)
		fputs("started: at the program's exec by the program ptrev launched (what ran "
		      "before the exec is not recorded)\n", out);
	else if (started && strcmp(started, "mid_run") == 0)
		fputs("started: in mid-run (attached, or recording begun while the program "
		      "ran)\n", out);
	meta_line(out, td, "ptrev version", "ptrev_version");
	switches_line(out, td, threads_line(out, td));
	bool unmade = materialise_needed(td);
	if (unmade)
		fputs("history: not made yet (an event recording: `ptrev decode`, or the first "
		      "move in `ptrev replay`, makes it by re-executing the recording)\n"
		      "instructions: unknown until the history is made\n", out);
	else if (td->complete)
		fprintf(out, "instructions: %" PRIu64 "\n", e->instructions);
	else
		fputs("instructions: unknown (" INCOMPLETE_WHY ")\n", out);
	fprintf(out, "psb packets: %" PRIu64 "\n", psb);
	meta_line(out, td, "psb period", "psb_period");
	fprintf(out, "trace bytes: %" PRIu64 "\n", trace_bytes);
	if (td->complete && e->instructions && !unmade)
		fprintf(out, "bits per instruction: %.2f\n",
			(double)trace_bytes * 8.0 / (double)e->instructions);
	else
		fputs("bits per instruction: unknown\n", out);
	fprintf(out, "syscalls: %" PRIu64 "\n", td->complete ? e->syscalls : td->nsyscalls);
	fprintf(out, "signals: %" PRIu64 "\n", td->complete ? e->signals : td->nsignals);
	fprintf(out, "rdtsc: %zu%s\n", td->nrdtsc,
		cli_recorded_untrapped_tsc(td)
			? " (rdtsc did not trap where this was recorded: the values the program "
			  "read are not in it)" : "");
	if (unmade) {
		/* The entry's point (event_entry.c) apart: it marks no place
		 * the recorder stopped a thread for a signal or a switch. */
		size_t entry = 0;
		for (size_t i = 0; i < td->nstates; i++)
			entry += td->states[i].nmem != 0;
		fprintf(out, "state points: %zu\n", td->nstates - entry);
		if (entry)
			fprintf(out, "entry point: %zu STATE point%s with the memory the dynamic "
				"loader's TSC values were in (rdtsc did not trap)\n", entry,
				entry == 1 ? "" : "s");
	}
	if (td->ngdb_writes) {
		size_t regs = 0;
		for (size_t i = 0; i < td->ngdb_writes; i++)
			regs += td->gdb_writes[i].regs;
		/* A made history also holds its points' memory this way
		 * (materialise.c). */
		fprintf(out, "changes made again by a replay: %zu (%zu of memory, %zu of "
			"registers: gdb's, and in a made history the memory the loader's TSC "
			"values were in)\n", td->ngdb_writes, td->ngdb_writes - regs, regs);
	}
	fprintf(out, "mappings: %zu\n", td->nmmaps);
	binaries_line(out, td);
	if (td->nskipped)
		fprintf(out, "skipped records: %zu (types this ptrev does not know)\n",
			td->nskipped);
	if (td->torn[0])
		fprintf(out, "file ends early: %s; the records before it are used\n", td->torn);
	if (td->complete)
		fprintf(out, "duration: %.3f s\n", (double)e->duration_ns / 1e9);
	else
		fputs("duration: unknown (" INCOMPLETE_WHY ")\n", out);
	status_line(out, td);
}

int trace_info_main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: ptrev info FILE\n       ptrev info --machine");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--machine"))
		return machine_info_main();
	if (argc != 2) {
		fputs("usage: ptrev info FILE\n       ptrev info --machine\n", stderr);
		return 2;
	}
	struct trace_data td;
	char err[512];
	if (trace_read_file(argv[1], &td, err, sizeof err) < 0) {
		fprintf(stderr, "ptrev info: %s: %s\n", argv[1], err);
		return 1;
	}
	trace_info_print(stdout, argv[1], &td);
	fflush(stdout);
	trace_data_free(&td);
	return 0;
}
