/* The lines `ptxed --no-inst --check` prints (libipt 2.0.5, default options:
 * no offsets, no times, no event IPs), written through a large buffer because
 * a big trace prints millions of instruction lines. */
#include "raw_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

void raw_out_init(struct raw_out *out, FILE *file, int quiet)
{
	out->file = file;
	out->quiet = quiet;
	out->instructions = 0;
	out->errors = 0;
	out->annotate = NULL;
	out->annotate_arg = NULL;
	out->used = 0;
}

void raw_out_flush(struct raw_out *out)
{
	if (out->used && out->file)
		fwrite(out->buf, 1, out->used, out->file);
	out->used = 0;
	if (out->file)
		fflush(out->file);
}

/* Room for @len more bytes; a single line is always far below the size. */
static char *reserve(struct raw_out *out, size_t len)
{
	if (out->used + len > sizeof(out->buf)) {
		fwrite(out->buf, 1, out->used, out->file);
		out->used = 0;
	}
	return out->buf + out->used;
}

static void emitf(struct raw_out *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void emitf(struct raw_out *out, const char *fmt, ...)
{
	enum { max_line = 512 };
	char *dst = reserve(out, max_line);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, max_line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n >= max_line)
		n = max_line - 1;
	out->used += (size_t)n;
}

/* Room for an instruction line's annotation: a symbol and a disassembly. */
enum { annotation_max = 1024 };

void raw_print_insn(struct raw_out *out, const struct pt_insn *insn)
{
	static const char hex[] = "0123456789abcdef";
	char *dst;
	int i;

	out->instructions++;
	if (out->quiet)
		return;

	/* printf("%016" PRIx64) costs more than the decoding itself. */
	dst = reserve(out, 2 + 16 + 1 + (out->annotate ? annotation_max : 0));
	if (insn->speculative) {
		*dst++ = '?';
		*dst++ = ' ';
	}
	for (i = 15; i >= 0; i--)
		*dst++ = hex[(insn->ip >> (4 * i)) & 0xf];
	if (out->annotate)
		dst += out->annotate(out->annotate_arg, insn, dst,
				     annotation_max);
	*dst++ = '\n';
	out->used = (size_t)(dst - out->buf);
}

static const char *exec_mode_name(enum pt_exec_mode mode)
{
	switch (mode) {
	case ptem_unknown:
		return "<unknown>";
	case ptem_16bit:
		return "16-bit";
	case ptem_32bit:
		return "32-bit";
	case ptem_64bit:
		return "64-bit";
	}
	return "<invalid>";
}

void raw_print_event(struct raw_out *out, const struct pt_event *ev)
{
	if (out->quiet)
		return;

	switch (ev->type) {
	case ptev_enabled:
		emitf(out, "[%s]\n",
		      ev->variant.enabled.resumed ? "resumed" : "enabled");
		return;
	case ptev_disabled:
	case ptev_async_disabled:
		emitf(out, "[disabled]\n");
		return;
	case ptev_async_branch:
		emitf(out, "[interrupt]\n");
		return;
	case ptev_paging:
		emitf(out, "[paging, cr3: %016" PRIx64 "%s]\n",
		      ev->variant.paging.cr3,
		      ev->variant.paging.non_root ? ", nr" : "");
		return;
	case ptev_async_paging:
		emitf(out, "[paging, cr3: %016" PRIx64 "%s]\n",
		      ev->variant.async_paging.cr3,
		      ev->variant.async_paging.non_root ? ", nr" : "");
		return;
	case ptev_overflow:
		emitf(out, "[overflow]\n");
		return;
	case ptev_exec_mode:
		emitf(out, "[exec mode: %s]\n",
		      exec_mode_name(ev->variant.exec_mode.mode));
		return;
	case ptev_tsx:
		emitf(out, "[%s]\n", ev->variant.tsx.aborted ? "aborted" :
		      ev->variant.tsx.speculative ? "begin transaction" :
		      "committed");
		return;
	case ptev_stop:
		emitf(out, "[stopped]\n");
		return;
	case ptev_vmcs:
		emitf(out, "[vmcs, base: %016" PRIx64 "]\n",
		      ev->variant.vmcs.base);
		return;
	case ptev_async_vmcs:
		emitf(out, "[vmcs, base: %016" PRIx64 "]\n",
		      ev->variant.async_vmcs.base);
		return;
	case ptev_exstop:
		emitf(out, "[exstop]\n");
		return;
	case ptev_mwait:
		emitf(out, "[mwait %" PRIx32 " %" PRIx32 "]\n",
		      ev->variant.mwait.hints, ev->variant.mwait.ext);
		return;
	case ptev_pwre:
		/* C-states are encoded minus one, modulo 16. */
		emitf(out, "[pwre c%u.%u%s]\n",
		      (unsigned)(ev->variant.pwre.state + 1) & 0xf,
		      (unsigned)(ev->variant.pwre.sub_state + 1) & 0xf,
		      ev->variant.pwre.hw ? " hw" : "");
		return;
	case ptev_pwrx:
		emitf(out, "[pwrx %s%s%sc%u (c%u)]\n",
		      ev->variant.pwrx.interrupt ? "int: " : "",
		      ev->variant.pwrx.store ? "st: " : "",
		      ev->variant.pwrx.autonomous ? "hw: " : "",
		      (unsigned)(ev->variant.pwrx.last + 1) & 0xf,
		      (unsigned)(ev->variant.pwrx.deepest + 1) & 0xf);
		return;
	case ptev_ptwrite:
		emitf(out, "[ptwrite: %" PRIx64 "]\n",
		      ev->variant.ptwrite.payload);
		return;
	case ptev_tick:
		emitf(out, "[tick]\n");
		return;
	case ptev_cbr:
		emitf(out, "[cbr: %x]\n", (unsigned)ev->variant.cbr.ratio);
		return;
	case ptev_mnt:
		emitf(out, "[mnt: %" PRIx64 "]\n", ev->variant.mnt.payload);
		return;
	}
	/* An event type newer than libipt 2.0.5: ptxed prints empty brackets. */
	emitf(out, "[]\n");
}

void raw_print_end_of_trace(struct raw_out *out)
{
	if (!out->quiet)
		emitf(out, "[end of trace]\n");
}

void raw_print_error(struct raw_out *out, int have_offset, uint64_t offset,
		     int offset_errcode, uint64_t ip, const char *kind,
		     int errcode)
{
	const char *text = pt_errstr(pt_errcode(errcode));

	out->errors++;
	if (out->quiet)
		return;

	if (have_offset) {
		emitf(out, "[%" PRIx64 ", %" PRIx64 ": %s: %s]\n", offset, ip,
		      kind, text);
		return;
	}
	emitf(out, "could not determine offset: %s\n",
	      pt_errstr(pt_errcode(offset_errcode)));
	emitf(out, "[?, %" PRIx64 ": %s: %s]\n", ip, kind, text);
}

void raw_print_check_error(struct raw_out *out, uint64_t offset, uint64_t ip,
			   const char *text)
{
	out->errors++;
	if (!out->quiet)
		emitf(out, "[%" PRIx64 ", %" PRIx64 ": check error: %s]\n",
		      offset, ip, text);
}
