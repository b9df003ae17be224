/* The session log gdbserver users turn on with `monitor set debug 1` and
 * `monitor set remote-debug 1`: each packet (remote-debug), or each resume
 * and the stop it ended in (debug), on stderr, where the server's own
 * messages go. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ptrev/gdb_server.h"

/* Packets that set the program going: their reply is a stop. */
static bool is_resume(const char *pkt, size_t len)
{
	if (len >= 6 && memcmp(pkt, "vCont;", 6) == 0)
		return true;
	if (len >= 2 && pkt[0] == 'b' && (pkt[1] == 'c' || pkt[1] == 's'))
		return true;
	return len >= 1 && pkt[0] && strchr("cCsS", pkt[0]) != NULL;
}

static void log_line(const struct gdb_server *s, const char *what, const char *pkt,
		     size_t len)
{
	char stamp[32] = "";
	if (s->debug_timestamp) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		struct tm tm;
		localtime_r(&ts.tv_sec, &tm);
		size_t n = strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);
		snprintf(stamp + n, sizeof stamp - n, ".%06ld ", ts.tv_nsec / 1000);
	}
	/* Binary payloads (X, vFile) are shown escaped; long ones cut. */
	enum { SHOWN = 400 };
	char text[SHOWN * 4 + 1];
	size_t o = 0;
	for (size_t i = 0; i < len && i < SHOWN; i++) {
		unsigned char c = (unsigned char)pkt[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			text[o++] = (char)c;
		else
			o += (size_t)snprintf(text + o, sizeof text - o, "\\x%02x", c);
	}
	text[o] = '\0';
	fprintf(stderr, "%sptrev: %s \"%s\"%s\n", stamp, what, text,
		len > SHOWN ? "..." : "");
}

void gdb_debug_log_received(struct gdb_server *s, const char *pkt, size_t len)
{
	s->log_resumed = is_resume(pkt, len);
	if (s->remote_debug)
		log_line(s, "getpkt", pkt, len);
	else if (s->debug && s->log_resumed)
		log_line(s, "resume", pkt, len);
}

void gdb_debug_log_sent(struct gdb_server *s, const char *pkt, size_t len)
{
	if (s->remote_debug)
		log_line(s, "putpkt", pkt, len);
	else if (s->debug && s->log_resumed)
		log_line(s, "stop", pkt, len);
	s->log_resumed = false;
}
