/* `ptrev decode FILE [--insn]` (the command line is server/cli's): every
 * thread's instruction history, decoded
 * with the loop and the line formats of `ptrev decode --raw` (raw_loop.c,
 * raw_print.c) against the code rebuilt from the recording's sideband
 * (trace_image.c); --insn adds symbols (trace_symbols.c) and disassembly. */
#include "ptrev/trace_decode.h"
#include "raw_internal.h"
#include "trace_internal.h"

#include <Zydis/Zydis.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define PROG "ptrev decode"

/* A META value as an unsigned number no larger than @max; -1 if absent. */
static long meta_number(const struct trace_data *td, const char *key,
			unsigned long max)
{
	const char *v = trace_meta(td, key);
	unsigned long n;
	char *end;

	if (!v || !*v)
		return -1;
	n = strtoul(v, &end, 10);
	return *end || n > max ? -1 : (long)n;
}

/* Hardware traces get libipt's workarounds for the errata of the cpu that
 * wrote them (as `ptxed --cpu`), from the recorder's META cpu_* keys. The
 * sw backend's trace is exactly what the spec says and needs none. */
static void set_cpu(struct pt_config *config, const struct trace_data *td)
{
	const char *backend = trace_meta(td, "backend");
	const char *vendor = trace_meta(td, "cpu_vendor");
	long family = meta_number(td, "cpu_family", 0xffff);
	long model = meta_number(td, "cpu_model", 0xff);
	long stepping = meta_number(td, "cpu_stepping", 0xff);

	if (!backend || strcmp(backend, "pt") || !vendor ||
	    strcmp(vendor, "GenuineIntel") || family < 0 || model < 0)
		return;
	config->cpu.vendor = pcv_intel;
	config->cpu.family = (uint16_t)family;
	config->cpu.model = (uint8_t)model;
	config->cpu.stepping = (uint8_t)(stepping < 0 ? 0 : stepping);
	if (pt_cpu_errata(&config->errata, &config->cpu) < 0) {
		memset(&config->cpu, 0, sizeof(config->cpu));
		memset(&config->errata, 0, sizeof(config->errata));
	}
}

/* Decodes one thread's PT into @out. Returns 1 if a PSB was found, 0 if
 * not, -1 if no decoder could be made (@err says why). */
static int decode_stream(const struct trace_data *td,
			 const struct trace_thread_stream *s,
			 struct pt_image *image, struct raw_out *out,
			 char *err, size_t errlen)
{
	struct raw_loop_result result = {0};
	struct pt_insn_decoder *decoder;
	struct pt_config config;
	int rc;

	if (!s->pt_len)
		return 0;
	pt_config_init(&config);
	config.begin = s->pt;
	config.end = s->pt + s->pt_len;
	set_cpu(&config, td);
	decoder = pt_insn_alloc_decoder(&config);
	if (!decoder) {
		snprintf(err, errlen, "cannot create a PT decoder");
		return -1;
	}
	rc = pt_insn_set_image(decoder, image);
	if (rc < 0) {
		snprintf(err, errlen, "cannot set the image: %s",
			 pt_errstr(pt_errcode(rc)));
		pt_insn_free_decoder(decoder);
		return -1;
	}
	raw_decode_loop(decoder, out, &result);
	pt_insn_free_decoder(decoder);
	return result.synced;
}

int trace_decode_count(const struct trace_data *td, pid_t tid,
		       uint64_t *insns, uint64_t *errors, char *err,
		       size_t errlen)
{
	struct trace_image ti;
	struct raw_out *out;
	size_t i;
	int found = 0, rc = 0;

	*insns = 0;
	*errors = 0;
	out = malloc(sizeof(*out));
	if (!out) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	raw_out_init(out, NULL, 1);
	if (trace_image_build(&ti, td, err, errlen) < 0) {
		free(out);
		return -1;
	}
	for (i = 0; i < td->nstreams && rc >= 0; i++) {
		if (tid && td->streams[i].tid != tid)
			continue;
		found = 1;
		rc = decode_stream(td, &td->streams[i], ti.image, out, err,
				   errlen);
		/* A stream without a PSB decodes to nothing: count it. */
		if (rc == 0 && td->streams[i].pt_len)
			out->errors++;
	}
	trace_image_free(&ti);
	if (rc >= 0 && !found) {
		snprintf(err, errlen, "no PT for thread %d", (int)tid);
		rc = -1;
	}
	*insns = out->instructions;
	*errors = out->errors;
	free(out);
	return rc < 0 ? -1 : 0;
}

/* ---- --insn ----------------------------------------------------------------- */

/* Appends `<NAME+OFF>` for @ip to @dst; returns the length (0: none). */
static size_t put_symbol(const struct trace_symbols *syms, uint64_t ip,
			 char *dst, size_t room)
{
	const char *name;
	uint64_t off;
	int n;

	if (trace_symbols_lookup(syms, ip, &name, &off) < 0)
		return 0;
	n = snprintf(dst, room, "<%s+%" PRIu64 ">", name, off);
	if (n < 0)
		return 0;
	return (size_t)n < room ? (size_t)n : room - 1;
}

/* What --insn needs per line: symbols and a disassembler set up once. */
struct annotator {
	const struct trace_symbols *syms;
	ZydisDecoder decoder;
	ZydisFormatter formatter;
};

static int annotator_init(struct annotator *a,
			  const struct trace_symbols *syms)
{
	a->syms = syms;
	/* AT&T, gdb's default syntax, and lower-case hex as gdb prints it. */
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&a->decoder,
					   ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisFormatterInit(&a->formatter,
					     ZYDIS_FORMATTER_STYLE_ATT)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&a->formatter,
				ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, 0)))
		return -1;
	/* Numbers as short as they go: 0x401000 and $0x8, not
	 * 0x0000000000401000 and $0x08. */
	if (!ZYAN_SUCCESS(ZydisFormatterSetProperty(&a->formatter,
				ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE,
				ZYDIS_PADDING_DISABLED)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&a->formatter,
				ZYDIS_FORMATTER_PROP_ADDR_PADDING_RELATIVE,
				ZYDIS_PADDING_DISABLED)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&a->formatter,
				ZYDIS_FORMATTER_PROP_DISP_PADDING,
				ZYDIS_PADDING_DISABLED)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&a->formatter,
				ZYDIS_FORMATTER_PROP_IMM_PADDING,
				ZYDIS_PADDING_DISABLED)))
		return -1;
	return 0;
}

/* The absolute target of a direct (relative) branch, if @info is one. */
static int branch_target(const ZydisDecodedInstruction *info,
			 const ZydisDecodedOperand *ops, uint64_t ip,
			 uint64_t *target)
{
	ZyanU64 t;

	if (info->meta.category != ZYDIS_CATEGORY_CALL &&
	    info->meta.category != ZYDIS_CATEGORY_COND_BR &&
	    info->meta.category != ZYDIS_CATEGORY_UNCOND_BR)
		return -1;
	if (info->operand_count_visible < 1 ||
	    ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
	    !ops[0].imm.is_relative)
		return -1;
	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(info, &ops[0], ip, &t)))
		return -1;
	*target = t;
	return 0;
}

/* raw_out's annotation hook: `  <sym+off>  disassembly[ <target>]`. */
static size_t annotate(void *arg, const struct pt_insn *insn, char *dst,
		       size_t room)
{
	const struct annotator *a = arg;
	ZydisDecodedInstruction info;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	size_t used, n;
	uint64_t target;

	/* The symbol takes at most half the room, the disassembly
	 * (at most 96 bytes in Zydis' own buffers) and the branch target's
	 * symbol share the rest. */
	if (room < 256)
		return 0;
	memcpy(dst, "  ", 2);
	used = 2;
	n = put_symbol(a->syms, insn->ip, dst + used, room / 2);
	if (n) {
		used += n;
		memcpy(dst + used, "  ", 2);
		used += 2;
	}
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&a->decoder, insn->raw,
						 insn->size, &info, ops)) ||
	    !ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&a->formatter,
				&info, ops, info.operand_count_visible,
				dst + used, 128, insn->ip, NULL))) {
		memcpy(dst + used, "(bad)", 5);
		return used + 5;
	}
	used += strlen(dst + used);
	if (branch_target(&info, ops, insn->ip, &target) == 0) {
		dst[used++] = ' ';
		n = put_symbol(a->syms, target, dst + used, room - used);
		used = n ? used + n : used - 1;
	}
	return used;
}

/* ---- printing a recording's history --------------------------------------- */

/* The streams in the order their threads were created (the THREAD
 * records' order), then any stream without a THREAD record in file
 * order. Returns a malloc'ed array of stream indexes, or NULL. */
static size_t *thread_order(const struct trace_data *td)
{
	size_t *order = calloc(td->nstreams + 1, sizeof(*order));
	unsigned char *placed = calloc(td->nstreams + 1, 1);
	size_t n = 0, i, k;

	if (!order || !placed) {
		free(order);
		free(placed);
		return NULL;
	}
	for (i = 0; i < td->nthreads; i++) {
		for (k = 0; k < td->nstreams; k++) {
			if (!placed[k] &&
			    td->streams[k].tid == td->threads[i].tid) {
				placed[k] = 1;
				order[n++] = k;
			}
		}
	}
	for (k = 0; k < td->nstreams; k++) {
		if (!placed[k])
			order[n++] = k;
	}
	free(placed);
	return order;
}

/* Prints every thread's history; returns the exit status. */
static int decode_all(const char *path, bool insn, const struct trace_data *td,
		      struct pt_image *image, struct trace_symbols *syms)
{
	struct raw_out *out = malloc(sizeof(*out));
	size_t *order = thread_order(td);
	struct annotator annot;
	char err[256];
	size_t i;
	int status = 0;

	if (!out || !order) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		free(out);
		free(order);
		return 1;
	}
	raw_out_init(out, stdout, 0);
	if (insn) {
		if (annotator_init(&annot, syms) < 0) {
			fprintf(stderr, "%s: cannot set up the disassembler\n",
				PROG);
			free(out);
			free(order);
			return 1;
		}
		out->annotate = annotate;
		out->annotate_arg = &annot;
	}
	for (i = 0; i < td->nstreams; i++) {
		const struct trace_thread_stream *s = &td->streams[order[i]];
		int rc;

		if (td->nstreams > 1) {
			/* Through the buffer, to keep the order of lines. */
			raw_out_flush(out);
			printf("[thread %d]\n", (int)s->tid);
		}
		rc = decode_stream(td, s, image, out, err, sizeof(err));
		if (rc < 0) {
			raw_out_flush(out);
			fprintf(stderr, "%s: %s: thread %d: %s\n", PROG,
				path, (int)s->tid, err);
			status = 1;
		} else if (rc == 0 && s->pt_len) {
			raw_out_flush(out);
			fprintf(stderr, "%s: %s: thread %d: no PSB packet in "
				"its %zu bytes of trace\n", PROG, path,
				(int)s->tid, s->pt_len);
			status = 1;
		}
	}
	raw_out_flush(out);
	if (out->errors) {
		fprintf(stderr, "%s: %" PRIu64 " error%s while decoding '%s'\n",
			PROG, out->errors, out->errors == 1 ? "" : "s",
			path);
		status = 1;
	}
	if (!td->nstreams) {
		fprintf(stderr, "%s: '%s' holds no trace\n", PROG, path);
		status = 1;
	}
	free(out);
	free(order);
	return status;
}

int trace_decode_print(const struct trace_data *td, const char *path, bool insn)
{
	struct trace_symbols *syms = NULL;
	struct trace_image ti;
	char err[512];
	int status;

	if (trace_image_build(&ti, td, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s: %s\n", PROG, path, err);
		return 1;
	}
	if (insn) {
		syms = trace_symbols_load(td);
		if (!syms) {
			fprintf(stderr, "%s: out of memory\n", PROG);
			trace_image_free(&ti);
			return 1;
		}
	}
	status = decode_all(path, insn, td, ti.image, syms);
	trace_symbols_free(syms);
	trace_image_free(&ti);
	return status;
}
