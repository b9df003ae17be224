/* gdb's extended-remote mode (`target extended-remote`, gdbserver's
 * --multi): the session outlives the program. `!` turns it on; vRun starts
 * a program (again), vAttach takes a running one, R restarts the last
 * one started, and kill, detach or the
 * program's end leave the session waiting for the next vRun. Programs are
 * started by the launcher the command line gives (s->launch: found in
 * PATH, given the terminal, recorded when asked). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

static void free_argv(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

void gdb_extended_destroy(struct gdb_server *s)
{
	free_argv(s->run_argv);
	s->run_argv = NULL;
	gdb_run_env_free(s);
}

void gdb_extended_end_program(struct gdb_server *s)
{
	gdb_procs_free(s); /* the other processes gdb debugged go with it */
	target_kill(s->target); /* a recording is finished and saved */
	target_free(s->target);
	s->target = NULL;
	gdb_forget_program(s);
	memset(&s->last, 0, sizeof s->last);
	s->last.kind = TARGET_STOP_EXITED;
}

/* t is the program now, stopped where it stands: gdb's thread and the
 * stop `?` reports are its. */
static void adopt(struct gdb_server *s, struct target *t)
{
	s->target = t;
	gdb_report_forks_of(s, t);
	memset(&s->last, 0, sizeof s->last); /* nothing reported of it yet */
	struct target_stop first;
	if (target_current_stop(s->target, 0, &s->last, &first) == 0) {
		s->last = first;
		s->g_tid = first.tid;
	}
}

/* Start argv (taken over) in place of any program there is; 0, or -1
 * with the reason on stderr. */
static int start(struct gdb_server *s, char **argv)
{
	char err[512];
	if (s->target)
		gdb_extended_end_program(s);
	struct gdb_run_settings rs;
	gdb_run_env_settings(s, &rs);
	struct target *t = s->launch(s->launch_ctx, argv, &rs, err, sizeof err);
	if (!t) {
		fprintf(stderr, "ptrev: %s\n", err);
		free_argv(argv);
		return -1;
	}
	if (argv != s->run_argv) {
		free_argv(s->run_argv);
		s->run_argv = argv;
	}
	adopt(s, t);
	return 0;
}

static char **copy_argv(char *const argv[])
{
	size_t n = 0;
	while (argv[n])
		n++;
	char **copy = calloc(n + 1, sizeof *copy);
	for (size_t i = 0; copy && i < n; i++)
		if (!(copy[i] = strdup(argv[i]))) {
			free_argv(copy);
			return NULL;
		}
	return copy;
}

/* vRun;PROG;ARG...: each hex encoded; an empty PROG is the last program
 * started (gdb sends that when `set remote exec-file` is unset). */
static char **parse_vrun(const struct gdb_server *s, const char *spec)
{
	size_t nfields = 1;
	for (const char *p = spec; *p; p++)
		nfields += *p == ';';
	char **argv = calloc(nfields + 1, sizeof *argv);
	if (!argv)
		return NULL;
	const char *p = spec;
	for (size_t i = 0; i < nfields; i++) {
		size_t hexlen = strcspn(p, ";");
		if (hexlen % 2 || !(argv[i] = calloc(1, hexlen / 2 + 1)) ||
		    !hex_decode(p, hexlen / 2, (uint8_t *)argv[i])) {
			free_argv(argv);
			return NULL;
		}
		p += hexlen + (p[hexlen] == ';');
	}
	if (argv[0][0] == '\0') {
		if (!s->run_argv) {
			free_argv(argv);
			return NULL;
		}
		free(argv[0]);
		argv[0] = strdup(s->run_argv[0]);
		if (!argv[0]) {
			free_argv(argv);
			return NULL;
		}
	}
	return argv;
}

void gdb_extended_remember(struct gdb_server *s, char *const argv[])
{
	free_argv(s->run_argv);
	s->run_argv = copy_argv(argv);
}

bool gdb_extended_packet(struct gdb_server *s, char *pkt, bool *no_reply)
{
	if (strcmp(pkt, "!") == 0) {
		/* Without a launcher (a saved recording) there is nothing to
		 * run: the packet is unsupported, gdb then refuses `run`. */
		if (s->launch) {
			s->extended = true;
			strbuf_puts(&s->reply, "OK");
		}
		return true;
	}
	if (strcmp(pkt, "R") == 0 || strncmp(pkt, "R0", 2) == 0) {
		/* Restart the last program; gdb asks `?` next (no reply). */
		*no_reply = true;
		if (s->extended && s->run_argv) {
			char **argv = copy_argv(s->run_argv);
			if (argv)
				start(s, argv);
		}
		return true;
	}
	if (strncmp(pkt, "vAttach;", 8) == 0) {
		char *end;
		long pid = strtol(pkt + 8, &end, 16);
		char err[512];
		struct target *t = NULL;
		if (!s->attach || *end || pid <= 0) {
			strbuf_puts(&s->reply, "E01");
			return true;
		}
		if (s->target)
			gdb_extended_end_program(s);
		t = s->attach(s->launch_ctx, (pid_t)pid, err, sizeof err);
		if (!t) {
			fprintf(stderr, "ptrev: %s\n", err);
			strbuf_puts(&s->reply, "E01");
			return true;
		}
		adopt(s, t);
		gdb_stop_reply(s, &s->last);
		return true;
	}
	if (strncmp(pkt, "vRun;", 5) == 0) {
		if (!s->launch) {
			strbuf_puts(&s->reply, "E01");
			return true;
		}
		char **argv = parse_vrun(s, pkt + 5);
		if (!argv || start(s, argv) != 0) {
			if (!argv)
				fprintf(stderr, "ptrev: vRun: malformed, or no program to run\n");
			strbuf_puts(&s->reply, "E01");
			return true;
		}
		gdb_stop_reply(s, &s->last);
		return true;
	}
	return false;
}
