/* `monitor` commands (qRcmd): what gdb's user can ask ptrev directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptrev/gdb_history.h"
#include "ptrev/history_schedule.h"
#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"
#include "ptrev/replayer.h"
#include "ptrev/sw_engine.h"

/* The recording in memory: a live one, or the saved one being replayed. */
static const struct trace_data *recording(struct gdb_server *s)
{
	if (s->engine)
		return sw_engine_data(s->engine);
	return s->hist ? s->hist->td : NULL;
}

static void cmd_when(struct gdb_server *s, struct strbuf *out)
{
	struct gdb_hist_thread *t = gdb_replay_thread(s);
	if (!t) {
		strbuf_puts(out, "No recording: start ptrev serve with --record or -o FILE.\n");
		return;
	}
	gdb_history_sync(s->hist);
	uint64_t n = history_insn_count(t->h);
	bool end = gdb_history_at_end(s->hist, t);
	strbuf_printf(out, "Current instruction: %llu of %llu (thread %d)%s\n",
		      (unsigned long long)t->pos, (unsigned long long)n, (int)t->tid,
		      !end ? "" : s->hist->saved ? ", at the end of the recording"
						 : ", the present");
	if (s->hist->global)
		strbuf_printf(out, "All threads: instruction %llu of %llu\n",
			      (unsigned long long)s->hist->gpos,
			      (unsigned long long)sched_map_total(s->hist->sched));
}

static void cmd_save(struct gdb_server *s, const char *path, struct strbuf *out)
{
	const struct trace_data *td = recording(s);
	if (!td) {
		strbuf_puts(out, "No recording to save: start ptrev serve with --record or -o FILE.\n");
		return;
	}
	if (!*path) {
		strbuf_puts(out, "usage: monitor save FILE\n");
		return;
	}
	/* A live recording goes on: the copy ends as if the recorder had
	 * stopped here; a saved one keeps how it ended. */
	struct trace_end end = td->end;
	if (s->engine) {
		memset(&end, 0, sizeof end);
		end.status_kind = 2;
		for (size_t i = 0; i < s->hist->nthreads; i++)
			end.instructions += history_insn_count(s->hist->threads[i].h);
		end.syscalls = td->nsyscalls;
		end.signals = td->nsignals;
	}
	char err[512];
	if (trace_save(td, path, td->complete || s->engine ? &end : NULL, err, sizeof err) != 0)
		strbuf_printf(out, "Could not save the recording: %s\n", err);
	else
		strbuf_printf(out, "Recording saved to %s.\n", path);
}

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
	if (strcmp(cmd, "when") == 0)
		cmd_when(s, &out);
	else if (strcmp(cmd, "save") == 0)
		cmd_save(s, arg, &out);
	else if (strcmp(cmd, "checkpoints") == 0)
		gdb_monitor_checkpoints(s, &out);
	else if (strcmp(cmd, "help") == 0 || cmd[0] == '\0')
		cmd_help(&out);
	else
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

void gdb_monitor_checkpoints(struct gdb_server *s, struct strbuf *out)
{
	if (!s->replayer) {
		strbuf_puts(out, "No checkpoints: no full-state replay has run yet.\n");
		return;
	}
	strbuf_puts(out, "Checkpoints (instruction position, process):\n");
	replayer_checkpoints(s->replayer, out);
}
