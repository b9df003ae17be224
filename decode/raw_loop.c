/* The decode loop of `ptrev decode --raw`. Its shape follows ptxed's
 * instruction-decoder loop (libipt 2.0.5) step by step, because the output
 * must be identical: which IP an error line shows and where decoding resumes
 * after an error both fall out of the order of these calls. */
#include "raw_internal.h"

#include <string.h>

/* The error line for @errcode, at the decoder's current trace offset. */
static void diagnose(struct pt_insn_decoder *decoder, struct raw_out *out,
		     uint64_t ip, const char *kind, int errcode)
{
	uint64_t pos = 0;
	int err = pt_insn_get_offset(decoder, &pos);

	raw_print_error(out, err >= 0, pos, err, ip, kind, errcode);
}

/* Prints every pending event; returns the last status, or an error. */
static int drain_events(struct pt_insn_decoder *decoder, struct raw_out *out,
			int status)
{
	while (status & pts_event_pending) {
		struct pt_event event;

		status = pt_insn_event(decoder, &event, sizeof(event));
		if (status < 0)
			return status;

		/* Status updates only refresh state ptxed does not show. */
		if (!event.status_update)
			raw_print_event(out, &event);
	}
	return status;
}

/* What ptxed's --check can say without a disassembler: the instruction must
 * come from a section of the image. */
static void check_insn(struct raw_out *out, const struct pt_insn *insn,
		       uint64_t offset)
{
	if (insn->isid <= 0)
		raw_print_check_error(out, offset, insn->ip, "bad isid");
}

static void emit_insn(struct raw_out *out, const struct pt_insn *insn,
		      uint64_t offset)
{
	raw_print_insn(out, insn);
	check_insn(out, insn, offset);
}

/* Decodes from a synchronisation point until an error or the end of the
 * trace; returns that negative status (-pte_eos at the end). @insn stays
 * valid for the caller's error line, as in ptxed. */
static int decode_from_sync(struct pt_insn_decoder *decoder,
			    struct raw_out *out, int status,
			    struct pt_insn *insn)
{
	uint64_t offset = 0;

	for (;;) {
		status = drain_events(decoder, out, status);
		if (status < 0)
			break;

		if (status & pts_eos) {
			if (!(status & pts_ip_suppressed))
				raw_print_end_of_trace(out);
			status = -pte_eos;
			break;
		}

		/* --check reports problems at the instruction's offset. */
		if (pt_insn_get_offset(decoder, &offset) < 0)
			break;

		status = pt_insn_next(decoder, insn, sizeof(*insn));
		if (status < 0) {
			/* The instruction may have decoded even though what
			 * follows it failed. */
			if (insn->iclass != ptic_error)
				emit_insn(out, insn, offset);
			break;
		}
		emit_insn(out, insn, offset);
	}

	/* Leaving the loop without an error would be a bug. */
	if (!status)
		status = -pte_internal;
	return status;
}

void raw_decode_loop(struct pt_insn_decoder *decoder, struct raw_out *out,
		     struct raw_loop_result *result)
{
	uint64_t sync = 0;

	result->synced = 0;
	for (;;) {
		struct pt_insn insn;
		int status;

		/* The IP is what an error line shows before anything decoded;
		 * zeroing the rest keeps a failed first pt_insn_next() from
		 * reading as a decoded instruction. */
		memset(&insn, 0, sizeof(insn));

		status = pt_insn_sync_forward(decoder);
		if (status < 0) {
			uint64_t new_sync;

			if (status == -pte_eos)
				break;

			diagnose(decoder, out, insn.ip, "sync error", status);

			/* Without progress we never will: stop. The error is
			 * deliberately reported once per try, as ptxed does. */
			if (pt_insn_get_offset(decoder, &new_sync) < 0 ||
			    new_sync <= sync)
				break;
			sync = new_sync;
			continue;
		}
		result->synced = 1;

		status = decode_from_sync(decoder, out, status, &insn);
		if (status == -pte_eos)
			break;

		diagnose(decoder, out, insn.ip, "error", status);
	}
}
