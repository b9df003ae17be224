/* `monitor` commands (qRcmd): what gdb's user can ask ptrev directly.
 * The target answers those about its recording (when, save, checkpoints). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

static void cmd_help(struct strbuf *out)
{
	strbuf_puts(out,
		    "ptrev monitor commands:\n"
		    "  monitor when          the current instruction number in the history\n"
		    "  monitor save FILE     save the recording so far to FILE\n"
		    "  monitor checkpoints   list the replay checkpoints\n"
		    "  monitor help          this list\n");
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
	if (strcmp(cmd, "help") == 0 || cmd[0] == '\0')
		cmd_help(&out);
	else if (!target_monitor(s->target, s->g_tid, cmd, arg, &out))
		strbuf_printf(&out, "Unknown monitor command '%s'; try \"monitor help\".\n", cmd);
	/* The whole output as one O packet's hex, then the final OK: gdb prints
	 * console output from an O reply to qRcmd. */
	strbuf_putc(&s->reply, 'O');
	strbuf_hex(&s->reply, out.data ? out.data : "", out.len);
	s->monitor_then_ok = true;
	strbuf_free(&out);
	free(cmd);
	return true;
}
