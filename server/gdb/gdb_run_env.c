/* What gdb sets for the programs it runs in extended mode (`set
 * environment`, `unset environment`, `set cwd`, `set
 * disable-randomization`), as gdbserver keeps them: QEnvironmentHexEncoded,
 * QEnvironmentUnset, QEnvironmentReset, QSetWorkingDir and
 * QDisableRandomization change the settings the next vRun (or R) starts
 * its program with; the program on the command line starts with ptrev's
 * own environment and directory. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

extern char **environ;

/* The hex payload as a C string (NULL: not hex, or out of memory). */
static char *unhex(const char *hex)
{
	size_t n = strlen(hex);
	char *s = n % 2 ? NULL : calloc(1, n / 2 + 1);
	if (s && !hex_decode(hex, n / 2, (uint8_t *)s)) {
		free(s);
		s = NULL;
	}
	return s;
}

static void free_vars(struct gdb_run_env *e)
{
	for (size_t i = 0; i < e->nvars; i++)
		free(e->vars[i]);
	free(e->vars);
	e->vars = NULL;
	e->nvars = 0;
	e->own = false;
}

/* From here on the environment is the session's copy (ptrev's to begin). */
static bool own_vars(struct gdb_run_env *e)
{
	if (e->own)
		return true;
	size_t n = 0;
	while (environ[n])
		n++;
	e->vars = calloc(n + 1, sizeof *e->vars);
	if (!e->vars)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(e->vars[e->nvars++] = strdup(environ[i]))) {
			free_vars(e);
			return false;
		}
	e->own = true;
	return true;
}

/* The variable named by name (up to '=' or its end), or -1. */
static long find_var(const struct gdb_run_env *e, const char *name)
{
	size_t len = strcspn(name, "=");
	for (size_t i = 0; i < e->nvars; i++)
		if (strncmp(e->vars[i], name, len) == 0 && e->vars[i][len] == '=')
			return (long)i;
	return -1;
}

static bool set_var(struct gdb_run_env *e, char *assignment)
{
	if (!strchr(assignment, '=') || !own_vars(e))
		return false;
	long at = find_var(e, assignment);
	if (at >= 0) {
		free(e->vars[at]);
		e->vars[at] = assignment;
		return true;
	}
	char **grown = realloc(e->vars, (e->nvars + 2) * sizeof *grown);
	if (!grown)
		return false;
	e->vars = grown;
	e->vars[e->nvars++] = assignment;
	e->vars[e->nvars] = NULL;
	return true;
}

static bool unset_var(struct gdb_run_env *e, const char *name)
{
	if (!own_vars(e))
		return false;
	long at = find_var(e, name);
	if (at >= 0) {
		free(e->vars[at]);
		memmove(e->vars + at, e->vars + at + 1, (e->nvars - (size_t)at) * sizeof *e->vars);
		e->nvars--;
	}
	return true;
}

bool gdb_run_env_packet(struct gdb_server *s, const char *pkt)
{
	struct gdb_run_env *e = &s->run_env;
	bool ok = false;
	if (strncmp(pkt, "QEnvironmentHexEncoded:", 23) == 0) {
		char *a = unhex(pkt + 23);
		ok = a && set_var(e, a);
		if (!ok)
			free(a);
	} else if (strncmp(pkt, "QEnvironmentUnset:", 18) == 0) {
		char *name = unhex(pkt + 18);
		ok = name && unset_var(e, name);
		free(name);
	} else if (strcmp(pkt, "QEnvironmentReset") == 0) {
		free_vars(e);
		ok = true;
	} else if (strncmp(pkt, "QSetWorkingDir:", 15) == 0) {
		char *dir = unhex(pkt + 15);
		ok = dir != NULL;
		free(e->cwd);
		e->cwd = dir && *dir ? dir : NULL; /* empty: ptrev's own */
		if (dir && !*dir)
			free(dir);
	} else if (strcmp(pkt, "QDisableRandomization:0") == 0 ||
		   strcmp(pkt, "QDisableRandomization:1") == 0) {
		e->randomize = pkt[22] == '0';
		ok = true;
	} else {
		return false;
	}
	strbuf_puts(&s->reply, ok ? "OK" : "E01");
	return true;
}

void gdb_run_env_settings(const struct gdb_server *s, struct gdb_run_settings *rs)
{
	rs->envp = s->run_env.own ? s->run_env.vars : environ;
	rs->cwd = s->run_env.cwd;
	rs->randomize = s->run_env.randomize;
}

void gdb_run_env_free(struct gdb_server *s)
{
	free_vars(&s->run_env);
	free(s->run_env.cwd);
	s->run_env.cwd = NULL;
}
