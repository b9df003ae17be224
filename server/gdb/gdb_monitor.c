/* `monitor` commands (qRcmd): what gdb's user can ask ptrev directly.
 * Those gdbserver has (exit, set debug, set remote-debug, set debug-format)
 * behave as gdbserver's do, with its messages, which GDB's testsuite
 * matches; the target answers those about its recording (when, save,
 * checkpoints). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

/* The target's own monitor commands; console output may be sent meanwhile
 * (gdb_server_alive). */
static bool monitor_target(struct gdb_server *s, const char *cmd, const char *arg,
			   struct strbuf *out)
{
	s->console_open = true;
	bool known = target_monitor(s->target, s->g_tid, cmd, arg, out);
	s->console_open = false;
	return known;
}

static void cmd_help(struct strbuf *out)
{
	strbuf_puts(out,
		    "The following monitor commands are supported:\n"
		    "  monitor when                 the current instruction number in the history\n"
		    "  monitor save FILE            save the recording so far to FILE\n"
		    "  monitor checkpoints          list the replay checkpoints\n"
		    "  monitor history              how far an event recording's history is made\n"
		    "  monitor why                  why registers and memory are unavailable here\n"
		    "  monitor set debug 0|1        log each resume and its stop on ptrev's stderr\n"
		    "  monitor set remote-debug 0|1 log every packet on ptrev's stderr\n"
		    "  monitor set debug-format all|none|timestamp\n"
		    "                               start each log line with the time, or not\n"
		    "  monitor set libthread-db-search-path PATH\n"
		    "                               accepted as gdbserver's; ptrev needs no libthread_db\n"
		    "  monitor exit                 end the program and ptrev when gdb disconnects\n"
		    "  monitor help                 this list\n");
}

/* Whether gdb's current thread has its full state where it stands, and
 * if not, why (what gdb's <unavailable> values mean). */
/* Are rcx and r11 all that the selected thread's registers lack? */
static bool before_syscall(struct gdb_server *s)
{
	struct amd64_regfile *rf = malloc(sizeof *rf);
	bool yes = rf && target_fetch_registers(s->target, s->g_tid, rf) ==
				 TARGET_REGS_BEFORE_SYSCALL;
	free(rf);
	return yes;
}

static void cmd_why(struct gdb_server *s, struct strbuf *out)
{
	struct strbuf why = STRBUF_INIT;
	if (!s->target)
		strbuf_puts(out, "No program.\n");
	else if (target_state_unavailable(s->target, s->g_tid, &why) && why.data)
		strbuf_printf(out, "Registers and memory are unavailable here (only the PC and "
			      "read-only memory are known): %s.\n", why.data);
	else if (before_syscall(s))
		strbuf_puts(out, "All memory and every register but rcx and r11 are available here: "
			    "the thread stands before a syscall instruction that it has run "
			    "already (recorded, re-executed, or live), which overwrote those two.\n");
	else
		strbuf_puts(out, "Every register and all memory are available here.\n");
	strbuf_free(&why);
}

/* "0"/"1" (gdbserver also takes on/off). Returns -1 for anything else. */
static int parse_flag(const char *v)
{
	if (strcmp(v, "1") == 0 || strcmp(v, "on") == 0)
		return 1;
	if (strcmp(v, "0") == 0 || strcmp(v, "off") == 0)
		return 0;
	return -1;
}

/* `set ...`; false when it is none of ours. */
static bool cmd_set(struct gdb_server *s, const char *arg, struct strbuf *out)
{
	char what[32] = "", value[64] = "";
	if (sscanf(arg, "%31s %63s", what, value) != 2)
		return false;
	int on = parse_flag(value);
	if (strcmp(what, "debug") == 0 && on >= 0) {
		s->debug = on;
		strbuf_puts(out, on ? "Debug output enabled.\n" : "Debug output disabled.\n");
		return true;
	}
	if (strcmp(what, "remote-debug") == 0 && on >= 0) {
		s->remote_debug = on;
		strbuf_puts(out, on ? "Protocol debug output enabled.\n"
				    : "Protocol debug output disabled.\n");
		return true;
	}
	if (strcmp(what, "libthread-db-search-path") == 0) {
		/* gdbserver loads libthread_db from there for thread-local
		 * variables; ptrev reads glibc's descriptors itself (gdb_tls.c). */
		strbuf_puts(out, "ptrev loads no libthread_db (it reads glibc's thread_db "
			    "descriptors itself): this path changes nothing.\n");
		strbuf_printf(out, "libthread-db-search-path set to `%s'\n", value);
		return true;
	}
	if (strcmp(what, "debug-format") == 0) {
		/* ptrev's one format option is the timestamp */
		if (strcmp(value, "all") == 0 || strcmp(value, "timestamp") == 0) {
			s->debug_timestamp = true;
			strbuf_puts(out, strcmp(value, "all") == 0
					     ? "All extra debug format options enabled.\n"
					     : "Timestamps will be added to debug output.\n");
			return true;
		}
		if (strcmp(value, "none") == 0) {
			s->debug_timestamp = false;
			strbuf_puts(out, "All extra debug format options disabled.\n");
			return true;
		}
	}
	return false;
}

bool gdb_monitor_packet(struct gdb_server *s, const char *hex)
{
	size_t n = strlen(hex) / 2;
	char *cmd = calloc(1, n + 1);
	if (!cmd || strlen(hex) % 2 || !hex_decode(hex, n, (uint8_t *)cmd)) {
		free(cmd);
		strbuf_puts(&s->reply, "E01");
		return true;
	}
	struct strbuf out = STRBUF_INIT;
	char *arg = cmd + strcspn(cmd, " ");
	if (*arg)
		*arg++ = '\0';
	while (*arg == ' ')
		arg++;
	const char *final = "OK";
	if (strcmp(cmd, "help") == 0) {
		cmd_help(&out);
	} else if (strcmp(cmd, "exit") == 0 && *arg == '\0') {
		/* gdbserver's: the session ends after this reply; the program
		 * ptrev started is killed (a recording being made to a file is
		 * saved, as at any end of the session). */
		s->session_over = true;
	} else if (strcmp(cmd, "why") == 0 && *arg == '\0') {
		cmd_why(s, &out);
	} else if (strcmp(cmd, "set") == 0 && cmd_set(s, arg, &out)) {
		/* done */
	} else if (cmd[0] == '\0' || !monitor_target(s, cmd, arg, &out)) {
		/* gdb prints "Protocol error with Rcmd" for the E reply, as it
		 * does with gdbserver. */
		if (cmd[0] == '\0')
			strbuf_puts(&out, "Unknown monitor command (none given).\n\n");
		else
			strbuf_printf(&out, "Unknown monitor command '%s%s%s'.\n\n", cmd,
				      *arg ? " " : "", arg);
		cmd_help(&out);
		final = "E01";
	}
	/* The whole output as one O packet's hex, then the final OK (or E01):
	 * gdb prints console output from an O reply to qRcmd. An empty output
	 * is no O packet at all: gdb would print nothing anyway. */
	if (out.len) {
		strbuf_putc(&s->reply, 'O');
		strbuf_hex(&s->reply, out.data, out.len);
		s->monitor_final = final;
	} else {
		strbuf_puts(&s->reply, final);
	}
	strbuf_free(&out);
	free(cmd);
	return true;
}
