/* The command line: `ptrev serve|record|replay|info|decode ...`.
 * Each subcommand parses its own options and calls into its module. */
#include "ptrev/cli.h"
#include "ptrev/debugregs.h"
#include "ptrev/tsc_trap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "ptrev/gdb_server.h"
#include "ptrev/inferior.h"
#include "ptrev/materialise.h"
#include "ptrev/recorder.h"
#include "ptrev/target.h"
#include "ptrev/timeline.h"
#include "ptrev/trace_info.h"
#include "ptrev/transport.h"

extern char **environ;

static void usage(FILE *f)
{
	fputs("usage:\n"
	      "  ptrev serve  [--listen HOST:PORT [--reconnect] | --stdio] [--backend auto|pt|event|sw]\n"
	      "               [--no-record | -o FILE [--no-copy] [--force]] [--no-stop-at-exit]\n"
	      "               [--wrapper WRAPPER [ARGS...] --] [--disable-packet=LIST]\n"
	      "               (-- PROG [ARGS...] | --attach PID | --multi [-- PROG [ARGS...]])\n"
	      "  ptrev record [--backend auto|pt|event|sw] [--psb-period BYTES] [--no-copy] [--force]\n"
	      "               -o FILE -- PROG [ARGS...]\n"
	      "  ptrev replay [--listen HOST:PORT | --stdio] FILE\n"
	      "  ptrev info   FILE | --machine\n"
	      "  ptrev decode FILE [--insn]\n"
	      "  ptrev decode --raw PT [--image FILE:ADDR]... [--pages ADDRFILE:DUMPFILE]...\n"
	      "               [--elf FILE[:BIAS]]... [--cpu F/M[/S]]\n"
	      "\n"
	      "--listen defaults to 127.0.0.1:1234; port 0 picks a free port.\n"
	      "--stdio speaks the protocol on stdin/stdout: target remote | ptrev serve --stdio -- PROG\n"
	      "--reconnect: when gdb disconnects, the program waits, stopped, for the next gdb\n"
	      "(gdbserver without --once); without it ptrev ends the program and exits.\n"
	      "--multi: for gdb's target extended-remote: `run` starts (again) the program gdb names,\n"
	      "`kill` and the program's end leave ptrev waiting; `monitor exit` ends it.\n"
	      "serve records the program it starts (in memory; -o FILE: to FILE), with the event\n"
	      "recorder (auto), for reverse execution; --no-record: as gdbserver, no history.\n"
	      "--attach PID serves a running process (not recorded unless --record is given);\n"
	      "--wrapper runs the program through WRAPPER, which execs it;\n"
	      "--disable-packet=vCont,T,Tthread,qC,qfThreadInfo,threads as gdbserver.\n"
	      "gdbserver's own form works too: ptrev serve [options] HOST:PORT|- PROG [ARGS...],\n"
	      "--multi HOST:PORT, --attach HOST:PORT PID.\n",
	      f);
}

struct serve_opts {
	const char *listen;   /* NULL with --stdio */
	bool stdio;
	const char *backend;
	const char *output;
	bool record_said;     /* --record or -o given (in memory unless -o) */
	bool no_record;       /* --no-record given: what serve starts is not
				 recorded (recorder_for) */
	bool backend_said;    /* --backend given */
	bool no_copy;         /* do not copy binaries into the recording */
	bool force;           /* -o may replace a file that is not a recording */
	bool exit_stop;       /* recording: hold the program before it ends */
	bool selftest;        /* gdbserver's --selftest: none built in */
	bool reconnect;       /* TCP: a dropped connection keeps the program */
	bool multi;           /* extended-remote server; PROG optional */
	pid_t attach;         /* --attach PID: serve that running process */
	const char *disable;  /* --disable-packet=LIST (gdbserver's) */
	char **wrapper;       /* --wrapper W ARGS... --: the program runs
				 through it; NULL-terminated, or NULL */
	size_t nwrapper;
	char **prog_argv;     /* PROG ARGS..., NULL-terminated */
};

/* Is a gdbserver's COMM argument, where the connection goes: [HOST]:PORT,
 * or "-" / "stdio" for stdin and stdout? (A program's name has no colon
 * before digits alone; one that does is given after "--".) */
static bool is_comm(const char *a)
{
	if (strcmp(a, "-") == 0 || strcmp(a, "stdio") == 0)
		return true;
	const char *colon = strrchr(a, ':');
	if (!colon || !colon[1] || strchr(a, '/'))
		return false;
	for (const char *p = colon + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* COMM as --listen's HOST:PORT; NULL for stdin and stdout. */
static const char *comm_address(const char *a)
{
	return strcmp(a, "-") && strcmp(a, "stdio") ? a : NULL;
}

/* Where the connection goes, said once: by --listen, --stdio, or as
 * gdbserver's COMM (gdbserver [OPTIONS] COMM PROG, --attach COMM PID,
 * --multi COMM). */
static int take_comm(struct serve_opts *o, bool *said, const char *how, const char *listen)
{
	if (*said) {
		fprintf(stderr, "ptrev serve: where gdb connects is given twice (%s): give one of "
			"--listen HOST:PORT, --stdio, or gdbserver's HOST:PORT or -\n", how);
		return -1;
	}
	*said = true;
	o->stdio = listen == NULL;
	if (listen)
		o->listen = listen;
	return 0;
}

static int parse_serve(int argc, char **argv, struct serve_opts *o)
{
	memset(o, 0, sizeof *o);
	o->listen = "127.0.0.1:1234";
	o->backend = "auto";
	o->exit_stop = true;
	bool comm = false;
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else if (strcmp(a, "--stdio") == 0) {
			if (take_comm(o, &comm, a, NULL) < 0)
				return -1;
		} else if (strcmp(a, "--listen") == 0 && i + 1 < argc) {
			if (take_comm(o, &comm, a, argv[++i]) < 0)
				return -1;
		} else if (strncmp(a, "--listen=", 9) == 0) {
			if (take_comm(o, &comm, "--listen", a + 9) < 0)
				return -1;
		} else if (strcmp(a, "--backend") == 0 && i + 1 < argc) {
			o->backend = argv[++i];
			o->backend_said = true;
		} else if (strcmp(a, "-o") == 0 && i + 1 < argc) {
			o->output = argv[++i];
			o->record_said = true;
		} else if (strcmp(a, "--record") == 0) {
			o->record_said = true;
		} else if (strcmp(a, "--no-copy") == 0) {
			o->no_copy = true;
		} else if (strcmp(a, "--force") == 0) {
			o->force = true;
		} else if (strcmp(a, "--wrapper") == 0) {
			/* gdbserver's syntax: the wrapper's words up to "--" */
			int w = i + 1;
			while (w < argc && strcmp(argv[w], "--") != 0)
				w++;
			if (w >= argc || w == i + 1) {
				fputs("ptrev serve: --wrapper WRAPPER [ARGS...] -- needs a wrapper "
				      "and the \"--\" that ends it\n", stderr);
				return -1;
			}
			o->wrapper = argv + i + 1;
			o->nwrapper = (size_t)(w - i - 1);
			i = w;
		} else if (strcmp(a, "--attach") == 0 && i + 1 < argc) {
			/* gdbserver's order: --attach COMM PID */
			if (is_comm(argv[i + 1]) && i + 2 < argc &&
			    take_comm(o, &comm, argv[i + 1], comm_address(argv[i + 1])) < 0)
				return -1;
			if (is_comm(argv[i + 1]) && i + 2 < argc)
				i++;
			char *end;
			long pid = strtol(argv[++i], &end, 10);
			if (*end || pid <= 0 || pid > INT_MAX) {
				fprintf(stderr, "ptrev serve: --attach needs a process id, not '%s'\n",
					argv[i]);
				return -1;
			}
			o->attach = (pid_t)pid;
		} else if (strncmp(a, "--disable-packet=", 17) == 0) {
			o->disable = a + 17;
		} else if (strcmp(a, "--multi") == 0) {
			o->multi = true;
		} else if (strcmp(a, "--reconnect") == 0) {
			o->reconnect = true;
		} else if (strcmp(a, "--once") == 0) {
			o->reconnect = false; /* gdbserver's name for the default */
		} else if (strcmp(a, "--no-stop-at-exit") == 0) {
			o->exit_stop = false;
		} else if (strcmp(a, "--no-record") == 0) {
			o->no_record = true;
		} else if (strcmp(a, "--selftest") == 0) {
			o->selftest = true; /* alone: nothing else is needed */
			return 0;
		} else if (is_comm(a)) {
			/* gdbserver's COMM: gdbserver :1234 PROG, gdbserver - PROG */
			if (take_comm(o, &comm, a, comm_address(a)) < 0)
				return -1;
		} else if (strcmp(a, "--listen") == 0 || strcmp(a, "--backend") == 0 ||
			   strcmp(a, "-o") == 0 || strcmp(a, "--attach") == 0) {
			fprintf(stderr, "ptrev serve: %s needs a value\n", a); /* the last word */
			return -1;
		} else if (a[0] == '-') {
			fprintf(stderr, "ptrev serve: unknown option '%s'\n", a);
			return -1;
		} else {
			break; /* PROG without "--" */
		}
	}
	if (o->attach && i < argc) {
		fputs("ptrev serve: --attach PID serves that process: give no program\n", stderr);
		return -1;
	}
	if (i >= argc && !o->multi && !o->attach) {
		fputs("ptrev serve: no program given (ptrev serve [options] -- PROG [ARGS...], "
		      "or --multi to let gdb's `run` start it)\n", stderr);
		return -1;
	}
	if (strcmp(o->backend, "auto") && strcmp(o->backend, "sw") && strcmp(o->backend, "pt") &&
	    strcmp(o->backend, "event")) {
		fprintf(stderr, "ptrev serve: unknown backend '%s' (auto, pt, event or sw)\n",
			o->backend);
		return -1;
	}
	if (o->no_record && (o->record_said || o->backend_said)) {
		fprintf(stderr, "ptrev serve: %s records, and --no-record records nothing: give "
			"one of them\n", o->output ? "-o FILE" : o->record_said ? "--record"
			: "--backend (the recorder)");
		return -1;
	}
	if (strcmp(o->backend, "event") == 0 && o->attach) {
		fputs("ptrev serve: the event backend records a program from its start, not an "
		      "attached one: use --backend sw\n", stderr);
		return -1;
	}
	if (!o->no_record && strcmp(o->backend, "pt") == 0) {
		fputs("ptrev serve: live recording with the pt backend is not supported yet; "
		      "use --backend sw, or `ptrev record --backend pt`\n", stderr);
		return -1;
	}
	o->prog_argv = argv + i;
	return 0;
}

/* The TCP socket gdb connects to: opened before the program starts, as
 * gdbserver does, so that an address in use or one that does not resolve
 * ends ptrev before anything runs. */
struct listener {
	int fd;              /* -1 with --stdio */
	char bound[300];     /* HOST:PORT as bound (port 0 resolved) */
};

static int open_listener(bool stdio, const char *listen, struct listener *l)
{
	char err[512];
	l->fd = -1;
	l->bound[0] = '\0';
	if (stdio)
		return 0;
	l->fd = transport_listen(listen, l->bound, sizeof l->bound, err, sizeof err);
	if (l->fd < 0) {
		fprintf(stderr, "ptrev: %s\n", err);
		return -1;
	}
	return 0;
}

/* Accept gdb over stdio or TCP and run the session; with srv->keep_on_close
 * (TCP only) accept the next gdb each time one disconnects while the
 * program lives, as gdbserver does without --once. */
static int serve_connection(struct gdb_server *srv, struct listener *l)
{
	char err[512];
	if (l->fd < 0) {
		/* gdb's Ctrl-C arrives as a 0x03 byte; the terminal's SIGINT
		 * reaches gdb's whole process group, us included: ignore it. */
		signal(SIGINT, SIG_IGN);
		fputs("Remote debugging using stdio\n", stderr);
		return gdb_server_run(srv, 0, 1);
	}
	int lfd = l->fd;
	const char *bound = l->bound;
	fprintf(stderr, "Listening on %s\n", bound);
	fflush(stderr);
	int rc;
	for (;;) {
		int cfd = transport_accept(lfd, err, sizeof err);
		if (cfd < 0) {
			fprintf(stderr, "ptrev: %s\n", err);
			target_kill(srv->target);
			rc = 1;
			break;
		}
		fcntl(cfd, F_SETFD, FD_CLOEXEC);
		char peer[1200];
		transport_peer(cfd, peer, sizeof peer);
		fprintf(stderr, "Remote debugging from %s\n", peer);
		fflush(stderr);
		rc = gdb_server_run(srv, cfd, cfd);
		close(cfd);
		if (rc != GDB_SERVER_KEPT)
			break;
		fprintf(stderr, "ptrev: gdb disconnected; the program waits, stopped, for the next "
				"connection (Listening on %s)\n", bound);
		fflush(stderr);
	}
	close(lfd);
	l->fd = -1;
	return rc;
}

/* The recorder for a process serve starts, or attached to: NULL for
 * none. One it starts is recorded unless --no-record says not, by the
 * event recorder where the backend is auto; one it attaches to only when
 * asked (--record, -o, --backend), by the sw recorder where auto, as the
 * event recorder needs the program's first instruction and the sw one
 * steps every block. */
static const char *recorder_for(const struct serve_opts *o, bool attached)
{
	bool rec = attached ? o->record_said || o->backend_said : !o->no_record;
	if (!rec)
		return NULL;
	if (strcmp(o->backend, "auto") == 0)
		return attached ? "sw" : "event";
	return o->backend;
}

/* The live target t as gdb gets it: recorded as recorder_for says, the
 * recording naming the program by the file execve was given (a replay
 * execs it again, and the kernel puts that very string on the stack: a
 * program found in PATH by its path, not as the user named it) and the
 * argv it was given (a script's, not what its #! interpreter got).
 * attached: program is the executable, argv its command line then. NULL
 * with err (t is then gone: killed, or let go when attached). */
static struct target *record_if_asked(const struct serve_opts *o, struct target *t,
				      const char *program, char *const argv[], bool attached,
				      char *err, size_t errlen)
{
	const char *recorder = recorder_for(o, attached);
	if (!recorder) {
		if (attached)
			fprintf(stderr, "ptrev: the process is not recorded (--record records it "
				"from here, with the sw recorder)\n");
		return t;
	}
	char why[400];
	bool event = strcmp(recorder, "event") == 0;
	struct target_record_opts ro = {.path = o->output, .program = program,
					.argv = (char **)argv,
					.no_copy = o->no_copy,
					.stop_before_exit = o->exit_stop,
					.backend = event ? "event" : "sw"};
	cli_event_bounds(&ro.signal_us, &ro.slice_us);
	struct target *top = target_record_start(t, &ro, why, sizeof why);
	if (!top) {
		snprintf(err, errlen, "cannot record: %s", why);
		if (target_attached(t))
			target_detach(t);
		else
			target_kill(t);
		target_free(t);
		return NULL;
	}
	fprintf(stderr, "ptrev: recording with the %s backend%s%s\n", event ? "event" : "sw",
		o->output ? " to " : " in memory", o->output ? o->output : "");
	return top;
}

/* What err begins with when the program (or wrapper) was not found. */
#define NOT_FOUND_PREFIX "exec: "

/* name found as cli_find_program finds it, in out; -1 with err when it is
 * not, in the words of gdbserver's shell ("exec: NAME: not found", "exec:
 * PATH: No such file or directory"), which GDB's testsuite matches; WHAT
 * says what it is where that is not the program. */
static int find_or_say(const char *what, const char *name, char *out, size_t len, char *err,
		       size_t errlen)
{
	if (cli_find_program(name, out, len) == 0)
		return 0;
	snprintf(err, errlen, NOT_FOUND_PREFIX "%s: %s%s", name,
		 strchr(name, '/') ? strerror(errno) : "not found", what);
	return -1;
}

/* Start a program for gdb (the command line's, or one extended-remote's
 * `run` names): found in PATH, as gdbserver (through its shell) and `ptrev
 * record` find it, argv[0] kept as given; given the terminal; recorded
 * when asked. NULL with err. */
static struct target *launch_program(void *ctx, char *const argv[],
				     const struct gdb_run_settings *rs, char *err, size_t errlen)
{
	const struct serve_opts *o = ctx;
	/* What gdb set for `run` (its environment, directory; the command
	 * line's program: ptrev's). A recording needs the layout a replay
	 * will have: randomisation stays off. */
	char *const *envp = rs ? rs->envp : environ;
	struct inferior_launch_opts lo = {.stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
					  .cwd = rs ? rs->cwd : NULL,
					  .randomize = rs && rs->randomize && o->no_record};
	if (rs && rs->randomize && !lo.randomize)
		fprintf(stderr, "ptrev: address-space randomization stays off while recording "
			"(a replay needs the recorded layout)\n");
	char prog[PATH_MAX], wrapper[PATH_MAX];
	if (find_or_say("", argv[0], prog, sizeof prog, err, errlen) < 0)
		return NULL;
	/* Through a wrapper: it is what is executed first, with the
	 * program's command line after its own words; it execs the program. */
	char **line = NULL;
	if (o->wrapper) {
		if (find_or_say(" (the wrapper)", o->wrapper[0], wrapper, sizeof wrapper, err,
				errlen) < 0)
			return NULL;
		size_t n = 0;
		while (argv[n])
			n++;
		line = calloc(o->nwrapper + n + 1, sizeof *line);
		if (!line) {
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
		memcpy(line, o->wrapper, o->nwrapper * sizeof *line);
		line[o->nwrapper] = prog;
		memcpy(line + o->nwrapper + 1, argv + 1, (n - 1) * sizeof *line);
	}
	int devnull = -1;
	if (o->stdio) {
		/* stdin/stdout carry the protocol: the program reads nothing and
		 * writes to our stderr. */
		devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		lo.stdin_fd = devnull;
		lo.stdout_fd = 2;
		lo.stderr_fd = 2;
	}
	lo.wrapper_execs = line ? 1 : 0;
	struct target *t = target_live_launch(line ? wrapper : prog, line ? line : argv, envp, &lo,
					      err, errlen);
	if (devnull >= 0)
		close(devnull);
	if (!t) {
		free(line);
		return NULL;
	}
	fprintf(stderr, "Process %s created; pid = %d\n", argv[0], (int)target_pid(t));
	/* With --stdio the terminal is gdb's; the program reads /dev/null. */
	if (!o->stdio)
		cli_give_terminal(target_pid(t));
	/* The wrapper execs the program as prog, with argv[1...]. */
	t = record_if_asked(o, t, prog, line ? line + o->nwrapper : argv, false, err, errlen);
	free(line);
	return t;
}

/* gdb's `attach PID` in extended mode, or --attach PID: the running
 * process, recorded from here when asked. NULL with err. */
static struct target *attach_process(void *ctx, pid_t pid, char *err, size_t errlen)
{
	const struct serve_opts *o = ctx;
	struct target *t = target_live_attach(pid, err, errlen);
	if (!t)
		return NULL;
	fprintf(stderr, "Attached; pid = %d\n", (int)pid);
	/* A recording names the program: the process's own command line,
	 * its executable first (argv[0] may be anything). */
	char path[64], exe[PATH_MAX], cmdline[8192];
	char *argv[256] = {exe};
	size_t n = 1;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	ssize_t len = readlink(path, exe, sizeof exe - 1);
	exe[len > 0 ? len : 0] = '\0';
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	FILE *f = fopen(path, "re");
	size_t got = f ? fread(cmdline, 1, sizeof cmdline - 1, f) : 0;
	if (f)
		fclose(f);
	cmdline[got] = '\0';
	for (size_t off = strlen(cmdline) + 1; off < got && n + 1 < 256; off += strlen(cmdline + off) + 1)
		argv[n++] = cmdline + off;
	argv[n] = NULL;
	return record_if_asked(o, t, exe, argv, true, err, errlen);
}

/* Start-up failed after the port was opened: nothing is served. */
static int abandon(struct gdb_server *srv, struct listener *l, int rc)
{
	gdb_server_destroy(srv);
	if (l->fd >= 0)
		close(l->fd);
	return rc;
}

static int cmd_serve(int argc, char **argv)
{
	static struct serve_opts o;
	if (parse_serve(argc, argv, &o) != 0)
		return 2;
	if (o.selftest) {
		/* gdbserver's --selftest runs the unit tests built into it; a
		 * build without them says this line, which ptrev says too:
		 * ptrev's own tests are its test suite. */
		fputs("ptrev serve: ptrev has no self tests built in (its tests are the test "
		      "suite: meson test)\n", stderr);
		puts("Selftests have been disabled for this build.");
		return 0;
	}

	/* A dropped connection must be an error return, not a signal. */
	signal(SIGPIPE, SIG_IGN);

	char why[512];
	if (o.output && cli_check_output(o.output, o.force, why, sizeof why) != 0) {
		fprintf(stderr, "ptrev: %s\n", why);
		return 2;
	}
	struct listener listener;
	if (open_listener(o.stdio, o.listen, &listener) != 0)
		return 1;
	static struct gdb_server srv;
	gdb_server_init(&srv);
	if (o.disable && gdb_server_disable_packets(&srv, o.disable, why, sizeof why) != 0) {
		fprintf(stderr, "ptrev serve: %s\n", why);
		return abandon(&srv, &listener, 2);
	}
	srv.launch = launch_program;
	srv.attach = attach_process;
	srv.launch_ctx = &o;
	srv.multi = o.multi;
	srv.launch_records = recorder_for(&o, false) != NULL;
	/* gdbserver's words: the program's output goes to stderr (its
	 * stdin is /dev/null), since stdin/stdout carry the protocol. */
	if (o.stdio)
		fputs("stdin/stdout redirected\n", stderr);
	if (o.attach || o.prog_argv[0]) {
		srv.target = o.attach ? attach_process(&o, o.attach, why, sizeof why)
				      : launch_program(&o, o.prog_argv, NULL, why, sizeof why);
		if (!srv.target) {
			fprintf(stderr, "ptrev: %s\n", why);
			/* As gdbserver ends when its program cannot be run. */
			if (!o.attach && strncmp(why, NOT_FOUND_PREFIX, strlen(NOT_FOUND_PREFIX)) == 0)
				fputs("During startup program exited with code 127.\nExiting\n", stderr);
			return abandon(&srv, &listener, 1);
		}
		if (!o.attach)
			gdb_extended_remember(&srv, o.prog_argv); /* for R and an empty vRun */
	}

	/* A --multi server outlives its connections, as gdbserver's does. */
	srv.keep_on_close = (o.reconnect || o.multi) && !o.stdio;
	int rc = serve_connection(&srv, &listener);
	gdb_server_destroy(&srv);
	return rc;
}

/* `ptrev replay [--stdio | --listen HOST:PORT] FILE`: serve a saved
 * recording. The program stands where the recording ended. */
static int cmd_replay(int argc, char **argv)
{
	const char *listen = "127.0.0.1:1234", *file = NULL;
	bool stdio = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--stdio") == 0)
			stdio = true;
		else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
			listen = argv[++i];
		else if (strncmp(argv[i], "--listen=", 9) == 0)
			listen = argv[i] + 9;
		else if (strcmp(argv[i], "--listen") == 0) {
			fputs("ptrev replay: --listen needs a value (HOST:PORT)\n", stderr);
			return 2;
		} else if (argv[i][0] == '-' || file) {
			fprintf(stderr, "ptrev replay: unexpected argument '%s'\n"
				"usage: ptrev replay [--listen HOST:PORT | --stdio] FILE\n", argv[i]);
			return 2;
		} else
			file = argv[i];
	}
	if (!file) {
		fputs("usage: ptrev replay [--listen HOST:PORT | --stdio] FILE\n", stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	/* Over stdio gdb is the parent and the only peer: when it dies
	 * (killed, timed out) during a long move, nobody is left to read
	 * what a replay finds, and nothing of a saved recording can be lost. */
	if (stdio)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* gdb sent its first packet as it started this command: from here
	 * on, until the session begins, it must hear something (reading a
	 * large recording takes seconds too). */
	struct cli_keepalive *keepalive = stdio ? cli_keepalive_start(STDOUT_FILENO) : NULL;
	char err[512];
	static struct trace_data td;
	if (trace_read_file(file, &td, err, sizeof err) != 0) {
		cli_keepalive_stop(keepalive);
		fprintf(stderr, "ptrev replay: %s: %s\n", file, err);
		return 1;
	}
	cli_say_torn(file, &td);
	cli_say_untrapped_tsc(file, &td);
	static struct gdb_server srv;
	gdb_server_init(&srv);
	size_t nthreads = 0;
	if (materialise_needed(&td)) {
		/* The end first (quick: native); the history when gdb first
		 * needs it. */
		srv.target = target_history_new_event(&td, true, err, sizeof err);
		for (size_t i = 0; i < td.nthreads; i++)
			nthreads += !td.threads[i].exited;
	} else {
		struct timeline *tl = timeline_open(&td, true, err, sizeof err);
		nthreads = tl ? timeline_thread_count(tl) : 0;
		srv.target = tl ? target_history_new(tl, &td, err, sizeof err) : NULL;
	}
	cli_keepalive_stop(keepalive);
	if (!srv.target) {
		fprintf(stderr, "ptrev replay: %s: %s\n", file, err);
		trace_data_free(&td);
		return 1;
	}
	fprintf(stderr, "Replaying %s (%zu thread%s)\n", file, nthreads, nthreads == 1 ? "" : "s");
	struct listener listener;
	int rc = 1;
	if (open_listener(stdio, listen, &listener) == 0)
		rc = serve_connection(&srv, &listener);
	gdb_server_destroy(&srv);
	trace_data_free(&td);
	return rc;
}

int cli_main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	/* Asked now, before anything is traced: the probes' children must
	 * not meet a waitpid(-1) of ours (ptrev/debugregs.h, tsc_trap.h). */
	inf_dr_traps();
	tsc_traps();
	if (strcmp(cmd, "serve") == 0)
		return cmd_serve(argc - 1, argv + 1);
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "decode") == 0)
		return decode_main(argc - 1, argv + 1);
	if (strcmp(cmd, "info") == 0)
		return trace_info_main(argc - 1, argv + 1);
	if (strcmp(cmd, "record") == 0)
		return record_main(argc - 1, argv + 1);
	if (strcmp(cmd, "replay") == 0)
		return cmd_replay(argc - 1, argv + 1);
	fprintf(stderr, "ptrev: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
