/* qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH — build the object, send a slice. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrev/gdb_server.h"
#include "ptrev/hex.h"

/* Builds the object; returns 0, a negative errno, or 1 for an unknown one. */
static int build_object(struct gdb_server *s, const char *object, const char *annex,
			struct strbuf *obj)
{
	if (strcmp(object, "features") == 0) {
		if (strcmp(annex, "target.xml") != 0)
			return -ENOENT;
		/* No program yet (extended mode): as gdbserver, no description
		 * until there is one (gdb asks again after `run`). */
		if (!s->target && !s->fuzzing)
			return -ESRCH;
		strbuf_puts(obj, amd64_tdesc_xml(gdb_layout(s)));
		return 0;
	}
	if (strcmp(object, "threads") == 0) {
		gdb_threads_xml(s, obj);
		return 0;
	}
	if (strcmp(object, "auxv") == 0)
		return target_auxv(s->target, obj);
	if (strcmp(object, "exec-file") == 0)
		return target_exec_file(s->target, obj);
	if (strcmp(object, "libraries-svr4") == 0)
		return target_libraries_svr4(s->target, s->g_tid, annex, obj);
	if (strcmp(object, "btrace") == 0) {
		int r = gdb_btrace_xml(s, annex, obj);
		return r == 0 ? 0 : r == -2 ? -EOPNOTSUPP : -EINVAL;
	}
	if (strcmp(object, "btrace-conf") == 0)
		return gdb_btrace_conf_xml(s, obj) == 0 ? 0 : -EINVAL;
	if (strcmp(object, "siginfo") == 0)
		return target_siginfo(s->target, s->g_tid, obj);
	/* The host's processes: a host read the fuzzer must not do. */
	if (strcmp(object, "osdata") == 0 && !s->fuzzing)
		return gdb_osdata_xml(annex, obj);
	return 1;
}

bool gdb_xfer_packet(struct gdb_server *s, char *pkt, size_t len)
{
	(void)len;
	/* Split "qXfer:object:read:annex:offset,length" in place. */
	char *object = pkt + 6;
	char *op = strchr(object, ':');
	if (!op)
		return false;
	*op++ = '\0';
	char *annex = strchr(op, ':');
	if (!annex)
		return false;
	*annex++ = '\0';
	if (strcmp(op, "read") != 0)
		return false; /* no writable objects */
	char *range = strrchr(annex, ':');
	if (!range) {
		strbuf_puts(&s->reply, "E00");
		return true;
	}
	*range++ = '\0';
	uint64_t offset, length;
	const char *p = range, *end = range + strlen(range);
	if (!hex_parse_u64(&p, end, &offset) || *p++ != ',' ||
	    !hex_parse_u64(&p, end, &length) || p != end) {
		strbuf_puts(&s->reply, "E00");
		return true;
	}
	/* A piece after the first: from the snapshot the first was cut
	 * from. */
	char key[512];
	snprintf(key, sizeof key, "%s:%s", object, annex);
	bool cached = offset > 0 && s->xfer_key && strcmp(s->xfer_key, key) == 0;
	if (!cached) {
		gdb_xfer_forget(s);
		int r = build_object(s, object, annex, &s->xfer_obj);
		if (r == 1) {
			strbuf_free(&s->xfer_obj);
			return false;
		}
		if (r < 0) {
			strbuf_free(&s->xfer_obj);
			strbuf_puts(&s->reply, "E01");
			return true;
		}
		s->xfer_key = strdup(key);
	}
	const struct strbuf obj = s->xfer_obj;
	/* Escaping can double the data: keep the reply within PacketSize. */
	uint64_t max = (RSP_MAX_PACKET - 8) / 2;
	if (length > max)
		length = max;
	if (offset >= obj.len) {
		strbuf_putc(&s->reply, 'l');
	} else {
		uint64_t n = obj.len - offset;
		bool last = n <= length;
		if (!last)
			n = length;
		strbuf_putc(&s->reply, last ? 'l' : 'm');
		rsp_escape_binary(&s->reply, obj.data + offset, (size_t)n);
	}
	return true;
}

void gdb_xfer_forget(struct gdb_server *s)
{
	free(s->xfer_key);
	s->xfer_key = NULL;
	strbuf_free(&s->xfer_obj);
}
