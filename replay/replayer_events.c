/* The recorded events of the replayed thread (syscalls, signals, rdtsc
 * values), indexed by position, and the lookups every run makes: the next
 * event at or after a position. */
#include "replayer_internal.h"
#include "gdb_write.h"

#include <stdlib.h>

static int by_sys_pos(const void *a, const void *b)
{
	const struct trace_syscall *x = *(const struct trace_syscall *const *)a;
	const struct trace_syscall *y = *(const struct trace_syscall *const *)b;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int by_sig_pos(const void *a, const void *b)
{
	const struct trace_signal *x = *(const struct trace_signal *const *)a;
	const struct trace_signal *y = *(const struct trace_signal *const *)b;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int by_tsc_pos(const void *a, const void *b)
{
	const struct trace_rdtsc *x = *(const struct trace_rdtsc *const *)a;
	const struct trace_rdtsc *y = *(const struct trace_rdtsc *const *)b;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Rebuilt from scratch: td's arrays may have moved since the last time. */
int rp_index_events(struct replayer *r)
{
	const struct trace_data *td = r->td;

	free(r->sys);
	free(r->sig);
	free(r->tsc);
	free(r->gw);
	r->gw = calloc(td->ngdb_writes + 1, sizeof *r->gw);
	r->ngw = 0;
	r->sys = calloc(td->nsyscalls + 1, sizeof *r->sys);
	r->sig = calloc(td->nsignals + 1, sizeof *r->sig);
	r->tsc = calloc(td->nrdtsc + 1, sizeof *r->tsc);
	r->nsys = r->nsig = r->ntsc = 0;
	if (!r->sys || !r->sig || !r->tsc || !r->gw)
		return -1;
	for (size_t i = 0; i < td->ngdb_writes; i++)
		if (td->gdb_writes[i].tid == r->tid)
			r->gw[r->ngw++] = &td->gdb_writes[i];
	qsort(r->gw, r->ngw, sizeof *r->gw, gdb_write_by_pos);
	for (size_t i = 0; i < td->nsyscalls; i++)
		if (td->syscalls[i].tid == r->tid)
			r->sys[r->nsys++] = &td->syscalls[i];
	for (size_t i = 0; i < td->nsignals; i++)
		if (td->signals[i].tid == r->tid)
			r->sig[r->nsig++] = &td->signals[i];
	for (size_t i = 0; i < td->nrdtsc; i++)
		if (td->rdtsc[i].tid == r->tid)
			r->tsc[r->ntsc++] = &td->rdtsc[i];
	qsort(r->sys, r->nsys, sizeof *r->sys, by_sys_pos);
	qsort(r->sig, r->nsig, sizeof *r->sig, by_sig_pos);
	qsort(r->tsc, r->ntsc, sizeof *r->tsc, by_tsc_pos);
	return 0;
}

/* ---- lookups (arrays sorted by position) ---- */

static size_t first_sys_at_or_after(const struct replayer *r, uint64_t pos)
{
	size_t lo = 0, hi = r->nsys;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->sys[mid]->pos < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct trace_syscall *rp_next_sys(const struct replayer *r, uint64_t pos)
{
	size_t i = first_sys_at_or_after(r, pos);
	return i < r->nsys ? r->sys[i] : NULL;
}

const struct trace_rdtsc *rp_next_tsc(const struct replayer *r, uint64_t pos)
{
	size_t lo = 0, hi = r->ntsc;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->tsc[mid]->pos < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->ntsc ? r->tsc[lo] : NULL;
}

/* The first recorded signal with a handler after position pos. Signals
 * without a handler (ignored, or harmless by default) change nothing the
 * program can see and are not delivered again; a fatal one ends the
 * history. */
const struct trace_signal *rp_next_sig(const struct replayer *r, uint64_t pos)
{
	for (size_t i = 0; i < r->nsig; i++)
		if (r->sig[i]->pos > pos && r->sig[i]->handler_ip)
			return r->sig[i];
	return NULL;
}

uint64_t rp_next_gdb_write(const struct replayer *r, uint64_t pos)
{
	size_t lo = 0, hi = r->ngw;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->gw[mid]->pos <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->ngw ? r->gw[lo]->pos : UINT64_MAX;
}

bool rp_gdb_moves_pc(const struct replayer *r, uint64_t pos)
{
	for (size_t i = 0; i < r->ngw; i++)
		if (r->gw[i]->pos == pos && r->gw[i]->regs)
			return true;
	return false;
}
