/* `ptrev record [--backend auto|pt|event|sw] [--psb-period BYTES] [--no-copy]
 * -o FILE -- PROG [ARGS...]`: launch PROG under ptrace, record it with the
 * chosen backend (auto: the CPU's PT where perf offers it, else the event
 * backend) into FILE, exit with its status. The recording holds a
 * copy of every binary mapped executable unless --no-copy is given. The
 * file is finished (END) however the recording ends: exit, death by a
 * signal, or ptrev itself being told to stop (SIGINT/SIGTERM). */
#include "ptrev/cpu_bind.h"
#include "ptrev/cli.h"
#include "ptrev/record_file.h"
#include "ptrev/record_meta.h"
#include "ptrev/record_startup.h"
#include "ptrev/recorder.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrev/event_backend.h"
#include "ptrev/pt_backend.h"
#include "ptrev/pt_encoder.h"

extern char **environ;

static volatile sig_atomic_t stop_signal;
static volatile pid_t child_pid;

/* Stop the recording: the program is killed at once (the backends then
 * see every thread end and finish their streams where each one stood),
 * and the flag makes the END record say "recorder stopped". Killing from
 * here also wakes a backend waiting on a program blocked forever. */
static void on_stop_signal(int sig)
{
	stop_signal = sig;
	if (child_pid > 0)
		kill(child_pid, SIGKILL);
}

static int usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "ptrev record: %s\n", msg);
	fputs("usage: ptrev record [--backend auto|pt|event|sw] [--psb-period BYTES] "
	      "[--no-copy] [--force] -o FILE -- PROG [ARGS...]\n", stderr);
	return 2;
}

/* Hardware PSB periods are powers of two from 2 KiB: 2^(N+11) bytes. */
static int hw_psb_exponent(unsigned long bytes)
{
	for (int n = 0; n < 20; n++)
		if (bytes == 1ul << (n + 11))
			return n;
	return -1;
}

int record_main(int argc, char **argv)
{
	const char *backend = "auto", *out = NULL;
	unsigned long psb_period = 0;
	bool no_copy = false, force = false;
	char prog[4096], why[256] = "", err[512] = "";
	struct inferior inf;
	struct trace_writer *w;
	struct trace_end end;
	struct sigaction sa;
	int i, rc, status;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
			backend = argv[++i];
		} else if (strncmp(argv[i], "--backend=", 10) == 0) {
			backend = argv[i] + 10;
		} else if (strcmp(argv[i], "--psb-period") == 0 && i + 1 < argc) {
			char *end_p;
			psb_period = strtoul(argv[++i], &end_p, 0);
			if (*end_p || psb_period < 16 || psb_period > (1ul << 30))
				return usage("--psb-period wants a byte count "
					     "(16 to 1 GiB)");
		} else if (strcmp(argv[i], "--no-copy") == 0) {
			no_copy = true;
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else if (strcmp(argv[i], "--force") == 0) {
			force = true;
		} else if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--backend") == 0 ||
			    strcmp(argv[i], "--psb-period") == 0) && i + 1 >= argc) {
			char m[128];
			snprintf(m, sizeof m, "%s needs a value", argv[i]);
			return usage(m);
		} else if (argv[i][0] == '-') {
			char m[256];
			snprintf(m, sizeof m, "unknown option %s", argv[i]);
			return usage(m);
		} else {
			break; /* PROG without "--" */
		}
	}
	if (!out)
		return usage("-o FILE is required");
	if (i >= argc)
		return usage("no program given");
	if (strcmp(backend, "auto") && strcmp(backend, "pt") && strcmp(backend, "sw") &&
	    strcmp(backend, "event"))
		return usage("--backend is auto, pt, event or sw");

	if (strcmp(backend, "sw") != 0 && strcmp(backend, "event") != 0) {
		bool usable = pt_backend_probe(why, sizeof why) == 0;
		if (!usable && strcmp(backend, "pt") == 0) {
			fprintf(stderr, "ptrev: cannot record with Intel PT: %s\n", why);
			return 2;
		}
		/* Without PT the event backend records at about native speed;
		 * its history is made when the recording is replayed. */
		backend = usable ? "pt" : "event";
	}
	if (strcmp(backend, "pt") == 0 && psb_period &&
	    hw_psb_exponent(psb_period) < 0) {
		fprintf(stderr, "ptrev: --psb-period %lu: Intel PT supports only "
			"powers of two from 2048\n", psb_period);
		return 2;
	}
	if (cli_find_program(argv[i], prog, sizeof prog) < 0) {
		fprintf(stderr, "ptrev: cannot run %s: %s\n", argv[i],
			strerror(ENOENT));
		return 2;
	}
	if (cli_check_output(out, force, err, sizeof err) != 0) {
		fprintf(stderr, "ptrev: %s\n", err);
		return 2;
	}
	w = trace_writer_open(out, err, sizeof err);
	if (!w) {
		fprintf(stderr, "ptrev: %s\n", err);
		return 2;
	}
	/* A full disk stops the recording, not the program (end of main). */
	trace_writer_keep_going(w);
	memset(&inf, 0, sizeof inf);
	inf.memfd = -1;
	if (inferior_launch(&inf, prog, argv + i, environ, -1, -1, -1, err,
			    sizeof err) < 0) {
		fprintf(stderr, "ptrev: %s\n", err);
		trace_writer_close(w, why, sizeof why);
		unlink(out);
		inferior_destroy(&inf);
		return 2;
	}
	child_pid = inf.pid;
	/* The program runs in a process group of its own; on ptrev's
	 * terminal it gets the terminal, as a shell gives it to what it runs
	 * (serve does the same): a program that reads it or sets its modes
	 * was stopped by SIGTTIN or SIGTTOU, and the recording hung. Ctrl-C
	 * there reaches the program then, which dies of it or handles it as
	 * it would natively (recorded either way). */
	cli_give_terminal(inf.pid);
	/* The pt backend's program runs freely; the others stop at events. */
	if (strcmp(backend, "pt") != 0)
		cpu_bind_tracer_and(inf.pid);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);  /* no SA_RESTART: waits return EINTR */
	sigaction(SIGTERM, &sa, NULL);

	record_write_meta(w, backend, prog, argv + i, inf.pid,
		   strcmp(backend, "pt") != 0 ? (psb_period ? (unsigned)psb_period
				   : PTENC_DEFAULT_PSB_PERIOD) : (unsigned)psb_period);
	/* What a full-state replay needs to start identically: environment,
	 * auxv, AT_RANDOM; and no vDSO, whose clock reads no log would see. */
	if (strcmp(backend, "pt") != 0 &&
	    (record_startup_hide_vdso(w, inf.pid) < 0 || record_startup_meta(w, inf.pid) < 0))
		fprintf(stderr, "ptrev: could not record the start state; "
			"replays may not show full state\n");
	if (strcmp(backend, "sw") == 0) {
		struct sw_record_opts o = { .psb_period = (uint32_t)psb_period,
					    .stop = &stop_signal, .no_copy = no_copy };
		rc = sw_backend_record(&inf, w, &o, &end, err, sizeof err);
	} else if (strcmp(backend, "event") == 0) {
		struct event_record_opts o = {.stop = &stop_signal, .no_copy = no_copy,
					      .psb_period = psb_period ? (unsigned)psb_period
								       : PTENC_DEFAULT_PSB_PERIOD};
		cli_event_bounds(&o.signal_us, &o.slice_us);
		rc = event_backend_record(&inf, w, &o, &end, err, sizeof err);
	} else {
		struct pt_backend_opts o;
		memset(&o, 0, sizeof o);
		if (no_copy) /* its sideband copies regardless, for now */
			fprintf(stderr, "ptrev: --no-copy is not supported by the pt "
				"backend yet: binaries are copied\n");
		o.psb_period = psb_period ? hw_psb_exponent(psb_period) : 0;
		o.stop = &stop_signal;
		rc = pt_backend_record(&inf, w, &o, &end, err, sizeof err);
	}
	child_pid = 0;
	if (rc < 0)
		fprintf(stderr, "ptrev: recording failed: %s\n", err);
	if (stop_signal || rc < 0) {
		end.status_kind = 2;
		end.status = stop_signal;
	}
	trace_write_end(w, &end);
	if (record_file_close(w, out, "the program ran on unrecorded") < 0)
		rc = -1;
	if (inf.memfd >= 0)
		close(inf.memfd);
	inferior_destroy(&inf);
	if (stop_signal)
		return 128 + stop_signal;
	if (rc < 0)
		return 2;
	status = end.status_kind == 0 ? end.status : 128 + end.status;
	return status;
}
