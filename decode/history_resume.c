/* Where a thread stands after its last recorded instruction.
 *
 * The instruction that was about to run when the history ends (a crashing
 * one that faulted, or the one a stopped thread would run next) is not in
 * the history: it never completed. The trace still names it: tracing was
 * disabled asynchronously there (FUP + TIP.PGD, as hardware does on a
 * fault or kernel entry and the sw encoder does at its end), and libipt
 * reports that event with its IP. */
#include "history_internal.h"

int history_resume_ip(struct history *h, uint64_t *ip)
{
	if (h->nseg == 0)
		return 0;
	struct pt_config cfg;
	hist_config(h, &cfg);
	struct pt_insn_decoder *dec = pt_insn_alloc_decoder(&cfg);
	if (!dec)
		return -1;
	int found = 0;
	int status = pt_insn_set_image(dec, h->cfg.image);
	if (status >= 0)
		status = pt_insn_sync_set(dec, h->seg[h->seg[h->nseg - 1].decode_from].pub.offset);
	while (status >= 0) {
		while (status & pts_event_pending) {
			struct pt_event ev;
			status = pt_insn_event(dec, &ev, sizeof ev);
			if (status < 0)
				break;
			if (ev.type == ptev_async_disabled) {
				*ip = ev.variant.async_disabled.at;
				found = 1;
			} else if (ev.type == ptev_enabled) {
				found = 0; /* execution went on after it */
			}
		}
		if (status < 0)
			break;
		struct pt_insn insn;
		status = pt_insn_next(dec, &insn, sizeof insn);
		if (status >= 0)
			found = 0; /* an instruction ran after the last disable */
	}
	pt_insn_free_decoder(dec);
	return found;
}
