/* General queries and settings: q and Q packets other than qXfer. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_server.h"
#include "ptrev/gdb_signals.h"
#include "ptrev/hex.h"

static bool has_feature(const char *list, const char *feature)
{
	size_t n = strlen(feature);
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, feature, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static void handle_qsupported(struct gdb_server *s, const char *args)
{
	s->gdb_swbreak = has_feature(args, "swbreak+");
	s->gdb_hwbreak = has_feature(args, "hwbreak+");
	s->gdb_multiprocess = has_feature(args, "multiprocess+");
	s->gdb_no_resumed = has_feature(args, "no-resumed+");
	/* Forks reported as gdbserver does, where the target can hold the
	 * child (live; while recording, forks only); gdb names fork children
	 * with the multiprocess extensions. */
	bool fork = has_feature(args, "fork-events+") && s->gdb_multiprocess;
	bool vfork = has_feature(args, "vfork-events+") && s->gdb_multiprocess;
	bool exec = has_feature(args, "exec-events+") && s->gdb_multiprocess;
	s->fork_events = s->vfork_events = s->exec_events = false;
	if ((fork || vfork || exec) && target_report_forks(s->target, &fork, &vfork, &exec)) {
		s->fork_events = fork;
		s->vfork_events = vfork;
		s->exec_events = exec;
	}
	strbuf_printf(&s->reply, "PacketSize=%x", RSP_MAX_PACKET);
	strbuf_puts(&s->reply,
		    ";QPassSignals+;QProgramSignals+;QStartNoAckMode+"
		    ";qXfer:features:read+;qXfer:auxv:read+;qXfer:exec-file:read+"
		    ";qXfer:libraries-svr4:read+;augmented-libraries-svr4-read+"
		    ";qXfer:siginfo:read+;qXfer:osdata:read+"
		    ";qXfer:threads:read+;vContSupported+;ConditionalBreakpoints+"
		    ";QNonStop+");
	/* Reverse execution needs a history: a recording being made (serve's
	 * default, -o), one that `run` will make in extended mode, or a saved
	 * one being replayed. */
	s->reverse_offered = target_can_reverse(s->target) || (s->multi && s->launch_records);
	if (s->reverse_offered)
		strbuf_puts(&s->reply, ";ReverseStep+;ReverseContinue+");
	if (target_can_record(s->target))
		strbuf_puts(&s->reply, ";Qbtrace:pt+;Qbtrace-conf:pt:size+;Qbtrace:off+"
			    ";qXfer:btrace:read+;qXfer:btrace-conf:read+");
	/* What `run` starts the program with, where ptrev can run one. */
	if (s->launch)
		strbuf_puts(&s->reply, ";QEnvironmentHexEncoded+;QEnvironmentUnset+"
			    ";QEnvironmentReset+;QSetWorkingDir+;QDisableRandomization+");
	if (s->gdb_multiprocess)
		strbuf_puts(&s->reply, ";multiprocess+");
	if (s->fork_events)
		strbuf_puts(&s->reply, ";fork-events+");
	if (s->vfork_events)
		strbuf_puts(&s->reply, ";vfork-events+");
	if (s->exec_events)
		strbuf_puts(&s->reply, ";exec-events+");
	if (s->gdb_swbreak)
		strbuf_puts(&s->reply, ";swbreak+");
	if (s->gdb_hwbreak)
		strbuf_puts(&s->reply, ";hwbreak+");
}

/* QPassSignals:a;b;... (gdb numbers): deliver these without stopping. */
static void handle_pass_signals(struct gdb_server *s, const char *list)
{
	bool pass[65] = {false};
	const char *p = list;
	while (*p) {
		uint64_t sig;
		if (!hex_parse_u64(&p, p + strlen(p), &sig)) {
			strbuf_puts(&s->reply, "E01");
			return;
		}
		int host = sig < 1000 ? gdb_signal_to_host((int)sig) : 0;
		if (host > 0 && host < 65)
			pass[host] = true;
		if (*p == ';')
			p++;
		else if (*p) {
			strbuf_puts(&s->reply, "E01");
			return;
		}
	}
	target_pass_signals(s->target, pass);
	strbuf_puts(&s->reply, "OK");
}

/* qfThreadInfo / qsThreadInfo: every thread of every process gdb debugs,
 * in one answer (qs ends the list). */
static void handle_thread_info(struct gdb_server *s, bool first)
{
	pid_t pid, *ids;
	size_t n;
	struct target *t;
	bool any = false;
	for (size_t k = 0; first && gdb_procs_threads(s, k, &pid, &t, &ids, &n); k++) {
		for (size_t i = 0; i < n; i++) {
			strbuf_putc(&s->reply, any ? ',' : 'm');
			gdb_format_thread_id_in(s, &s->reply, pid, ids[i]);
			any = true;
		}
		free(ids);
	}
	if (!any)
		strbuf_putc(&s->reply, 'l');
}

bool gdb_query_packet(struct gdb_server *s, char *pkt, size_t len)
{
	(void)len;
	if (strncmp(pkt, "qSupported", 10) == 0) {
		handle_qsupported(s, pkt[10] == ':' ? pkt + 11 : "");
	} else if (strncmp(pkt, "qXfer:", 6) == 0) {
		return gdb_xfer_packet(s, pkt, len);
	} else if (strcmp(pkt, "QStartNoAckMode") == 0) {
		strbuf_puts(&s->reply, "OK"); /* the loop switches after sending */
	} else if (strncmp(pkt, "qRcmd,", 6) == 0) {
		if (s->fuzzing)
			return false; /* monitor save writes files */
		return gdb_monitor_packet(s, pkt + 6);
	} else if (strncmp(pkt, "Qbtrace", 7) == 0) {
		return gdb_btrace_packet(s, pkt);
	} else if (strncmp(pkt, "QPassSignals:", 13) == 0) {
		handle_pass_signals(s, pkt + 13);
	} else if (strncmp(pkt, "QProgramSignals:", 16) == 0) {
		/* Which signals gdb lets the program see; all-stop delivery is
		 * already decided per resume, so there is nothing to keep. */
		strbuf_puts(&s->reply, "OK");
	} else if (strncmp(pkt, "QEnvironment", 12) == 0 || strncmp(pkt, "QSetWorkingDir:", 15) == 0 ||
		   strncmp(pkt, "QDisableRandomization:", 22) == 0) {
		return gdb_run_env_packet(s, pkt);
	} else if (strncmp(pkt, "qAttached", 9) == 0) {
		/* A process ptrev created gdb kills on quit; one it attached
		 * to, gdb detaches from. */
		strbuf_puts(&s->reply, !s->target ? "E01" : target_attached(s->target) ? "1" : "0");
	} else if ((strcmp(pkt, "qC") == 0 && s->no_qC) ||
		   ((strcmp(pkt, "qfThreadInfo") == 0 || strcmp(pkt, "qsThreadInfo") == 0) &&
		    s->no_qfThreadInfo)) {
		/* --disable-packet: unknown, gdb falls back */
	} else if (strcmp(pkt, "qC") == 0) {
		if (s->g_tid > 0 && target_thread_exists(s->target, s->g_tid)) {
			strbuf_puts(&s->reply, "QC");
			gdb_format_thread_id(s, &s->reply, s->g_tid);
		} else {
			strbuf_puts(&s->reply, "E01");
		}
	} else if (strcmp(pkt, "qfThreadInfo") == 0) {
		handle_thread_info(s, true);
	} else if (strcmp(pkt, "qsThreadInfo") == 0) {
		handle_thread_info(s, false);
	} else if (strcmp(pkt, "qTStatus") == 0) {
		/* No trace experiment ever runs; answering as gdbserver does
		 * keeps gdb's (and MI's) start-up output identical. */
		strbuf_puts(&s->reply, "T0;tnotrun:0;tframes:0;tcreated:0;tfree:500000;"
			    "tsize:500000;circular:0;disconn:0;starttime:0;stoptime:0;"
			    "username:;notes::");
	} else if (strcmp(pkt, "qTfV") == 0) {
		/* The one built-in trace state variable, trace_timestamp. */
		strbuf_puts(&s->reply, "1:0:1:");
		strbuf_hex(&s->reply, "trace_timestamp", 15);
	} else if (strcmp(pkt, "qTsV") == 0 || strcmp(pkt, "qTfP") == 0 ||
		   strcmp(pkt, "qTsP") == 0) {
		strbuf_putc(&s->reply, 'l');
	} else if (strncmp(pkt, "qSymbol:", 8) == 0) {
		gdb_tls_symbol_packet(s, pkt);
	} else if (strncmp(pkt, "qGetTLSAddr:", 12) == 0) {
		gdb_tls_address_packet(s, pkt);
	} else {
		return false; /* qTStatus, qOffsets, ...: empty = unsupported */
	}
	return true;
}
