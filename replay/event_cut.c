/* An event recording cut short at the entry of one of its syscalls
 * (include/ptrev/event_cut.h). What the cut keeps follows from how an
 * event replay ends a recording whose recorder was killed
 * (event_replay.c): a run of the recorded order that goes one event past
 * its thread's last is that thread running on to a syscall the log does
 * not hold, where it stands at the end. */
#include "ptrev/event_cut.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "ptrev/syscall_table.h"

/* How many of a thread's events the cut keeps (those numbered below n),
 * and whether its end (THREAD exit record) came before the cut. */
struct kept {
	pid_t tid;
	uint64_t n;
	bool ended;
};

struct cut {
	const struct trace_data *td;
	struct kept *k;
	size_t nk;
};

static struct kept *kept_of(struct cut *c, pid_t tid)
{
	for (size_t i = 0; i < c->nk; i++)
		if (c->k[i].tid == tid)
			return &c->k[i];
	struct kept *k = realloc(c->k, (c->nk + 1) * sizeof *k);
	if (!k)
		return NULL;
	c->k = k;
	c->k[c->nk] = (struct kept){tid, 0, false};
	return &c->k[c->nk++];
}

static const struct trace_syscall *syscall_at(const struct trace_data *td, pid_t tid,
					      uint64_t pos)
{
	for (size_t i = 0; i < td->nsyscalls; i++)
		if (td->syscalls[i].tid == tid && td->syscalls[i].pos == pos)
			return &td->syscalls[i];
	return NULL;
}

/* The records of n, each size bytes with its thread at tid_off and its
 * position at pos_off, that the cut keeps: those of thread 0 (the
 * program's start), and those at a position below the thread's kept count
 * (at or below it, with `upto`: a mapping or gdb's change made after the
 * event before). A new array in *out (NULL for none); -1 out of memory. */
static int keep_records(struct cut *c, const void *v, size_t n, size_t size, size_t tid_off,
			size_t pos_off, bool upto, void **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	if (n == 0)
		return 0;
	char *dst = malloc(n * size);
	if (!dst)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *r = (const char *)v + i * size;
		pid_t tid;
		uint64_t pos;
		memcpy(&tid, r + tid_off, sizeof tid);
		memcpy(&pos, r + pos_off, sizeof pos);
		struct kept *k = tid ? kept_of(c, tid) : NULL;
		if (tid && !k) {
			free(dst);
			return -1;
		}
		if (!tid || pos < k->n || (upto && pos == k->n))
			memcpy(dst + (*nout)++ * size, r, size);
	}
	*out = dst;
	return 0;
}

bool event_cut_completes_in_run(const struct trace_syscall *s)
{
	return s->nr == SYS_exit || s->nr == SYS_exit_group || s->nr == SYS_clone ||
	       s->nr == SYS_clone3 || syscall_keeps_cpu(s->nr) || s->kept_cpu;
}

/* Each thread's kept count from the recorded order: runs before run i
 * whole, run i (tid's, holding event) up to the syscall. Another
 * thread's last run ended at the entry of a syscall it was in when the
 * cut came: that syscall is left out (the thread stands at its entry,
 * not held), unless it was the thread's exit or one that completed in
 * that run (a worker's mprotect: kept, the thread shown after it, as the
 * whole history shows it). */
static int keep_from_order(struct cut *c, pid_t tid, uint64_t event, size_t *cut_run,
			   char *err, size_t errlen)
{
	const struct trace_data *td = c->td;
	size_t i = 0;
	while (i < td->nsched && !(td->sched[i].tid == tid && td->sched[i].pos <= event &&
				   event < td->sched[i].pos + td->sched[i].count))
		i++;
	if (i == td->nsched) {
		snprintf(err, errlen, "the recording's thread order does not hold event %llu of "
			 "thread %d", (unsigned long long)event, (int)tid);
		return -1;
	}
	*cut_run = i;
	/* Each thread's last run before run i says where it stands. */
	for (size_t r = 0; r < i; r++) {
		struct kept *k = kept_of(c, td->sched[r].tid);
		if (!k)
			return -1;
		k->n = td->sched[r].pos + td->sched[r].count;
	}
	struct kept *cut = kept_of(c, tid);
	if (!cut)
		return -1;
	cut->n = event;
	/* ...and what its last event was: one look at the syscalls per
	 * thread, not per run (a recording has hundreds of thousands). */
	for (size_t j = 0; j < c->nk; j++) {
		struct kept *k = &c->k[j];
		const struct trace_syscall *s =
			k == cut || !k->n ? NULL : syscall_at(td, k->tid, k->n - 1);
		k->ended = s && s->nr == SYS_exit;
		if (s && !k->ended && !event_cut_completes_in_run(s))
			k->n--;
	}
	return 0;
}

int event_cut(const struct trace_data *td, pid_t tid, uint64_t event, struct trace_data *out,
	      char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (!syscall_at(td, tid, event)) {
		snprintf(err, errlen, "thread %d has no syscall event %llu", (int)tid,
			 (unsigned long long)event);
		return -1;
	}
	struct cut c = {td, NULL, 0};
	size_t cut_run = 0;
	struct trace_sched_run *sched = NULL;
	size_t nsched = 0;
	if (td->nsched) {
		if (keep_from_order(&c, tid, event, &cut_run, err, errlen) < 0)
			goto fail;
		nsched = cut_run + 1;
		sched = malloc(nsched * sizeof *sched);
		if (!sched)
			goto oom;
		memcpy(sched, td->sched, nsched * sizeof *sched);
		sched[cut_run].count = event - sched[cut_run].pos + 1;
	} else {
		/* No thread order: one thread, its events one run (older
		 * recordings). The run goes one past its kept events. */
		struct kept *k = kept_of(&c, tid);
		sched = malloc(sizeof *sched);
		if (!k || !sched)
			goto oom;
		k->n = event;
		*sched = (struct trace_sched_run){tid, 0, event + 1};
		nsched = 1;
	}
	*out = *td;
	out->priv = NULL;
	out->sched = sched;
	out->nsched = nsched;
	out->complete = false;
	memset(&out->end, 0, sizeof out->end);
	out->syscalls = NULL;
	out->signals = NULL;
	out->rdtsc = NULL;
	out->states = NULL;
	out->sigframes = NULL;
	out->mmaps = NULL;
	out->munmaps = NULL;
	out->gdb_writes = NULL;
	out->threads = NULL;
	out->nthreads = 0;
#define KEEP(field, nfield, type, upto)                                                        \
	if (keep_records(&c, td->field, td->nfield, sizeof(type), offsetof(type, tid),          \
			 offsetof(type, pos), upto, (void **)&out->field, &out->nfield) < 0)       \
		goto oom_out;
	KEEP(syscalls, nsyscalls, struct trace_syscall, false)
	KEEP(signals, nsignals, struct trace_signal, false)
	KEEP(rdtsc, nrdtsc, struct trace_rdtsc, false)
	KEEP(states, nstates, struct trace_state, false)
	KEEP(sigframes, nsigframes, struct trace_sigframe, false)
	KEEP(mmaps, nmmaps, struct trace_mmap, true)
	KEEP(munmaps, nmunmaps, struct trace_munmap, true)
	KEEP(gdb_writes, ngdb_writes, struct trace_gdb_write, true)
#undef KEEP
	/* THREAD records: a start whose clone (the creator's event) is
	 * kept; an end that came before the cut. */
	if (td->nthreads && !(out->threads = malloc(td->nthreads * sizeof *out->threads)))
		goto oom_out;
	for (size_t i = 0; i < td->nthreads; i++) {
		const struct trace_thread *th = &td->threads[i];
		struct kept *k = kept_of(&c, th->exited ? th->tid : th->parent);
		if (!k)
			goto oom_out;
		bool keep = th->exited ? k->ended : (!th->parent || th->pos < k->n);
		if (keep)
			out->threads[out->nthreads++] = *th;
	}
	free(c.k);
	return 0;
oom_out:
	event_cut_free(out);
	sched = NULL;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	free(sched);
	free(c.k);
	memset(out, 0, sizeof *out);
	return -1;
}

int event_cut_after_run(const struct trace_data *td, size_t run, struct trace_data *out,
			char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	const struct trace_sched_run *r = run < td->nsched ? &td->sched[run] : NULL;
	const struct trace_syscall *s = r && r->count ? syscall_at(td, r->tid, r->pos + r->count - 1)
					      : NULL;
	if (!s || event_cut_completes_in_run(s)) {
		snprintf(err, errlen, "run %zu does not end in a syscall", run);
		return -1;
	}
	return event_cut(td, r->tid, r->pos + r->count - 1, out, err, errlen);
}

int event_cut_before(const struct trace_data *td, pid_t tid, uint64_t event,
		     struct trace_data *out, uint64_t *at, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	int tries = 0;
	for (uint64_t k = event; k-- > 0 && tries < EVENT_CUT_BEFORE_TRIES;) {
		if (!syscall_at(td, tid, k))
			continue;
		tries++;
		if (event_cut(td, tid, k, out, err, errlen) == 0) {
			*at = k;
			return 0;
		}
	}
	snprintf(err, errlen, "thread %d has no syscall before its event %llu to end at",
		 (int)tid, (unsigned long long)event);
	return -1;
}

int event_cut_where_failed(const struct trace_data *td, pid_t tid, uint64_t event,
			   bool diverged, struct trace_data *out, uint64_t *at, char *err,
			   size_t errlen)
{
	*at = event;
	return diverged ? event_cut_before(td, tid, event, out, at, err, errlen)
			: event_cut(td, tid, event, out, err, errlen);
}

void event_cut_free(struct trace_data *out)
{
	free(out->syscalls);
	free(out->signals);
	free(out->rdtsc);
	free(out->states);
	free(out->sigframes);
	free(out->mmaps);
	free(out->munmaps);
	free(out->gdb_writes);
	free(out->threads);
	free(out->sched);
	memset(out, 0, sizeof *out);
}
