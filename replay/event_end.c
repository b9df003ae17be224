/* The state at the end of an event recording, before its history is made
 * (include/ptrev/event_end.h): a native event replay held before the
 * program's end. */
#include "ptrev/event_end.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>

#include "event_replay.h"

struct event_end {
	struct erp e;
	uint64_t replay_ns; /* how long the native replay to the end took */
};

struct event_end *event_end_open(const struct trace_data *td, struct event_end_failure *at,
				 char *err, size_t errlen)
{
	if (at)
		*at = (struct event_end_failure){0};
	struct event_end *ee = calloc(1, sizeof *ee);
	if (!ee) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	uint64_t t0 = erp_now_ns();
	if (erp_replay_to_end(&ee->e, td) < 0) {
		snprintf(err, errlen, "%s", ee->e.why);
		if (at)
			*at = ee->e.failed_at;
		event_end_close(ee);
		return NULL;
	}
	ee->replay_ns = erp_now_ns() - t0;
	return ee;
}

void event_end_close(struct event_end *ee)
{
	if (!ee)
		return;
	erp_free(&ee->e);
	free(ee);
}

pid_t event_end_take_copy(struct event_end *ee, size_t from, size_t *next)
{
	struct erp_copy c = erp_take_copy(&ee->e, from);
	*next = c.next;
	return c.pid;
}

size_t event_end_threads(struct event_end *ee, pid_t **ids)
{
	size_t n = 0;
	*ids = malloc((ee->e.nthreads ? ee->e.nthreads : 1) * sizeof **ids);
	for (size_t i = 0; *ids && i < ee->e.nthreads; i++)
		if (ee->e.threads[i].tid && !ee->e.threads[i].gone)
			(*ids)[n++] = ee->e.threads[i].rec_tid;
	return n;
}

/* Does t stand at the entry of the syscall that ends the program
 * (exit_group, or the exit of its last thread)? */
static bool ends_program_here(const struct erp *e, const struct erp_thread *t)
{
	if (t->next >= t->nev || t->ev[t->next].kind != ERP_SYSCALL)
		return false;
	const struct trace_syscall *s = t->ev[t->next].rec;
	if (s->nr == SYS_exit_group)
		return true;
	if (s->nr != SYS_exit)
		return false;
	for (size_t i = 0; i < e->nthreads; i++)
		if (&e->threads[i] != t && e->threads[i].tid && !e->threads[i].gone)
			return false;
	return true;
}

int event_end_registers(struct event_end *ee, pid_t tid, struct amd64_regfile *rf)
{
	struct erp_thread *t = erp_thread_rec(&ee->e, tid);
	if (erp_regfile(&ee->e, t, rf) < 0)
		return -1;
	int before = 0;
	if (t->at_entry && ends_program_here(&ee->e, t)) {
		/* The program's last instruction: the history shows the
		 * state before it (nothing exists after it). */
		rf->gpr.rip -= 2; /* syscall and int $0x80 are 2 bytes */
		rf->gpr.rax = rf->gpr.orig_rax;
		rf->gpr.rcx = rf->gpr.r11 = 0;
		before = 1;
	} else if (t->at_entry && t->next < t->nev && t->ev[t->next].kind == ERP_SYSCALL) {
		/* Held at the entry of the syscall that ends it (the exit,
		 * or the last one a cut-short thread order reaches): the
		 * syscall instruction has run (rip past it, rcx and r11 as it
		 * set them: the end of an sw recording's history too), the
		 * syscall has not. rax is what the program put there; the
		 * -ENOSYS the kernel shows at a syscall entry is not the
		 * program's. */
		rf->gpr.rax = rf->gpr.orig_rax;
	}
	return before;
}

ssize_t event_end_read(struct event_end *ee, uint64_t addr, void *buf, size_t len)
{
	return erp_read_mem(&ee->e, addr, buf, len);
}

/* What one native stop costs here besides the program's own run (two
 * ptrace stops bound to one CPU: bench/stop_cost). */
#define STOP_COST_NS 20000

/* The program's own run in the stretch before event k of t: the thread's
 * CPU time in the replay where the kernel counts it, else the replay's
 * wall time less the stop's (an estimate that came out at a third of
 * sort's last stretches, some 30 us each: a stop costs less than
 * STOP_COST_NS inside a run's wall time, and a tail chosen by it held
 * three times the run it was to). */
static uint64_t ran_ns(const struct erp_thread *t, size_t k)
{
	if (t->ev[k].native_cpu_ns)
		return t->ev[k].native_cpu_ns;
	uint64_t ns = t->ev[k].native_ns;
	return ns > STOP_COST_NS ? ns - STOP_COST_NS : 0;
}

uint64_t event_end_tail_ns(const struct event_end *ee, size_t from, size_t end)
{
	if (ee->e.nthreads != 1)
		return 0;
	uint64_t ran = 0;
	for (size_t k = from; k < end && k < ee->e.threads[0].nev; k++)
		ran += ran_ns(&ee->e.threads[0], k);
	return ran;
}

size_t event_end_tail_from(const struct event_end *ee, uint64_t budget_ns)
{
	return ee->e.nthreads == 1 ? event_end_tail_back(ee, ee->e.threads[0].nev, budget_ns) : 0;
}

/* The program's own run in run i of the recorded order (the same
 * estimate): the stretches before each of its events. */
static uint64_t run_ns(const struct event_end *ee, size_t i)
{
	const struct trace_sched_run *run = &ee->e.td->sched[i];
	const struct erp_thread *t = erp_thread_rec((struct erp *)&ee->e, run->tid);
	uint64_t ran = 0;
	for (uint64_t k = run->pos; t && k < run->pos + run->count && k < t->nev; k++)
		ran += ran_ns(t, k);
	return ran;
}

size_t event_end_tail_run(const struct event_end *ee, uint64_t budget_ns)
{
	const struct trace_data *td = ee->e.td;
	return td && td->nsched >= 2 ? event_end_run_back(ee, td->nsched - 1, budget_ns) : 0;
}

uint64_t event_end_runs_ns(const struct event_end *ee, size_t from)
{
	return event_end_runs_between_ns(ee, from, SIZE_MAX);
}

uint64_t event_end_runs_between_ns(const struct event_end *ee, size_t from, size_t to)
{
	uint64_t ran = 0;
	for (size_t i = from; ee->e.td && i < ee->e.td->nsched && i < to; i++)
		ran += run_ns(ee, i);
	return ran;
}

size_t event_end_run_back(const struct event_end *ee, size_t last, uint64_t budget_ns)
{
	const struct trace_data *td = ee->e.td;
	if (ee->e.nthreads < 2 || !td || last >= td->nsched)
		return 0;
	uint64_t ran = 0;
	size_t i = last + 1;
	while (i > 1) {
		ran += run_ns(ee, --i);
		if (ran >= budget_ns)
			break;
	}
	return i;
}

size_t event_end_run_on(const struct event_end *ee, size_t first, uint64_t budget_ns)
{
	const struct trace_data *td = ee->e.td;
	uint64_t ran = 0;
	for (size_t i = first; td && i + 1 < td->nsched; i++) {
		ran += run_ns(ee, i);
		if (ran >= budget_ns)
			return i;
	}
	return SIZE_MAX;
}

size_t event_end_tail_runs_of(const struct event_end *ee, size_t n)
{
	const struct trace_data *td = ee->e.td;
	if (ee->e.nthreads < 2 || !td || n == 0 || n >= td->nsched)
		return 0;
	return td->nsched - n;
}

size_t event_end_tail_back(const struct event_end *ee, size_t end, uint64_t budget_ns)
{
	if (ee->e.nthreads != 1)
		return 0;
	const struct erp_thread *t = &ee->e.threads[0];
	uint64_t ran = 0;
	size_t k = end < t->nev ? end : t->nev;
	while (k > 1) {
		ran += ran_ns(t, k - 1);
		k--;
		if (ran >= budget_ns)
			break;
	}
	k = event_end_clear_of_signals(ee, k);
	return k > 1 ? k : 0;
}

size_t event_end_piece_back(const struct event_end *ee, size_t end, uint64_t budget_ns)
{
	if (ee->e.nthreads != 1 || end == 0 || end > ee->e.threads[0].nev)
		return end ? end - 1 : 0;
	const struct erp_thread *t = &ee->e.threads[0];
	size_t k = end - 1; /* the last stretch, whatever it costs */
	uint64_t ran = ran_ns(t, k);
	while (k > 1 && ran + ran_ns(t, k - 1) <= budget_ns)
		ran += ran_ns(t, --k);
	return k;
}

/* The one thread's stretches from the one before its event k (taken
 * whatever it costs) on, while the next, before limit, fits in budget_ns
 * with those taken: the last taken. */
static size_t fit_on(const struct event_end *ee, size_t k, size_t limit, uint64_t budget_ns)
{
	const struct erp_thread *t = &ee->e.threads[0];
	uint64_t ran = ran_ns(t, k);
	while (k + 1 < limit && ran + ran_ns(t, k + 1) <= budget_ns)
		ran += ran_ns(t, ++k);
	return k;
}

size_t event_end_piece_on(const struct event_end *ee, size_t last, uint64_t budget_ns)
{
	if (ee->e.nthreads != 1 || last + 2 >= ee->e.threads[0].nev)
		return SIZE_MAX;
	return fit_on(ee, last + 1, ee->e.threads[0].nev - 1, budget_ns);
}

size_t event_end_head_to(const struct event_end *ee, uint64_t budget_ns)
{
	if (ee->e.nthreads != 1 || ee->e.threads[0].nev < 2)
		return SIZE_MAX;
	size_t k = fit_on(ee, 0, ee->e.threads[0].nev - 1, budget_ns);
	return k + 2 < ee->e.threads[0].nev ? k : SIZE_MAX;
}

/* Is leaving out that much of a stretch worth a point? A point costs one
 * more native replay of the recording up to the stretch (at most what the
 * replay to the end took), single steps on to a cold PC and the traps of
 * each later replay finding it again (POINT_COST_NS together); a
 * nanosecond of the program's native run left out saves about
 * STEP_NS_PER_NATIVE_NS of stepping (some 5 instructions, at about 200,000
 * instructions a second: python3's and sort's last stretches ran 3-7
 * instructions a ns). So about 25 us for a replay of a tenth of a second,
 * half a millisecond for one of 12 s (dd's 300,000 syscalls); below the
 * fixed 0.2 ms this was before, sort's last stretch (50 us, with 13 more
 * after it) was stepped whole. */
#define POINT_COST_NS 500000000ull
#define STEP_NS_PER_NATIVE_NS 25000ull
#define MIN_SPLIT_FLOOR_NS 20000ull

static uint64_t min_split_ns(const struct event_end *ee)
{
	uint64_t ns = (ee->replay_ns + POINT_COST_NS) / STEP_NS_PER_NATIVE_NS;
	return ns > MIN_SPLIT_FLOOR_NS ? ns : MIN_SPLIT_FLOOR_NS;
}

uint64_t event_end_tail_split(const struct event_end *ee, size_t from, uint64_t budget_ns)
{
	if (ee->e.nthreads != 1 || from == 0)
		return 0;
	const struct erp_thread *t = &ee->e.threads[0];
	if (from >= t->nev)
		return 0;
	uint64_t after = event_end_tail_ns(ee, from + 1, t->nev); /* its stretches after the first */
	uint64_t first = ran_ns(t, from);
	if (after >= budget_ns || first < budget_ns - after + min_split_ns(ee))
		return 0;
	return first - (budget_ns - after);
}

bool event_end_stretch_ends_at_state(const struct event_end *ee, size_t from)
{
	if (ee->e.nthreads != 1 || from >= ee->e.threads[0].nev)
		return false;
	return ee->e.threads[0].ev[from].kind == ERP_STATE;
}

int event_end_tail_point(struct event_end *ee, const struct trace_data *td, size_t from,
			 uint64_t after_ns, bool leave_loop, struct trace_state *out,
			 uint8_t sp[STATE_RECORD_SP_LEN], uint64_t *ran_cpu_ns, char *err,
			 size_t errlen)
{
	struct erp e;
	struct erp_copy copy = ee ? erp_take_copy(&ee->e, from) : (struct erp_copy){0};
	int rc = erp_replay_until_from(&e, td, from, NULL, copy);
	if (rc == 0)
		rc = erp_take_point(&e, after_ns, leave_loop, out, sp);
	if (ran_cpu_ns)
		*ran_cpu_ns = rc >= 0 ? e.took_cpu_ns : 0;
	if (rc < 0)
		snprintf(err, errlen, "%s", e.why);
	erp_free(&e);
	return rc;
}

int event_end_point_after(struct event_end *ee, const struct trace_data *td,
			  const struct trace_state *from, uint64_t after_ns, bool leave_loop,
			  struct trace_state *out,
			  uint8_t sp[STATE_RECORD_SP_LEN], uint64_t *ran_cpu_ns, char *err,
			  size_t errlen)
{
	struct erp e;
	struct erp_copy copy = ee ? erp_take_copy(&ee->e, from->pos) : (struct erp_copy){0};
	int rc = erp_replay_until_from(&e, td, from->pos, from, copy);
	if (rc == 0)
		rc = erp_take_point(&e, after_ns, leave_loop, out, sp);
	if (ran_cpu_ns)
		*ran_cpu_ns = rc >= 0 ? e.took_cpu_ns : 0;
	/* The time taken counts from where the run began, the point from:
	 * the stretch ran that long before it. */
	if (rc > 0)
		out->ran_ns += from->ran_ns;
	if (rc < 0)
		snprintf(err, errlen, "%s", e.why);
	erp_free(&e);
	return rc;
}

size_t event_end_tail_of(const struct event_end *ee, size_t n)
{
	if (ee->e.nthreads != 1 || n == 0 || n >= ee->e.threads[0].nev)
		return 0;
	return event_end_clear_of_signals(ee, ee->e.threads[0].nev - n);
}

static bool is_signal(const struct event_end *ee, size_t k)
{
	return k < ee->e.threads[0].nev && ee->e.threads[0].ev[k].kind == ERP_SIGNAL;
}

size_t event_end_clear_of_signals(const struct event_end *ee, size_t from)
{
	if (ee->e.nthreads != 1)
		return from;
	while (from > 0 && (is_signal(ee, from) || is_signal(ee, from - 1)))
		from--;
	return from;
}

size_t event_end_last_signal_run(const struct event_end *ee, size_t lo, size_t hi)
{
	const struct trace_data *td = ee->e.td;
	for (size_t r = td && hi < td->nsched ? hi : td ? td->nsched : 0; r > lo; r--) {
		const struct trace_sched_run *run = &td->sched[r - 1];
		for (size_t i = 0; i < ee->e.nthreads; i++) {
			const struct erp_thread *t = &ee->e.threads[i];
			for (uint64_t k = run->pos; t->rec_tid == run->tid && k < run->pos + run->count &&
			     k < t->nev; k++)
				if (t->ev[k].kind == ERP_SIGNAL)
					return r;
		}
	}
	return 0;
}

size_t event_end_last_signal(const struct event_end *ee, size_t lo, size_t hi)
{
	if (ee->e.nthreads != 1)
		return 0;
	for (size_t k = hi; k > lo; k--)
		if (is_signal(ee, k - 1))
			return k;
	return 0;
}

int event_end_syscall_pc(struct event_end *ee, const struct trace_data *td, size_t k,
			 uint64_t *pc, char *err, size_t errlen)
{
	struct erp e;
	struct user_regs_struct regs;
	struct erp_copy copy = ee ? erp_take_copy(&ee->e, k + 1) : (struct erp_copy){0};
	int rc = erp_replay_until_from(&e, td, k + 1, NULL, copy);
	if (rc < 0) {
		snprintf(err, errlen, "%s", e.why);
	} else if (ptrace(PTRACE_GETREGS, e.threads[0].tid, NULL, &regs) < 0) {
		snprintf(err, errlen, "cannot read the registers after event %zu", k);
		rc = -1;
	} else {
		/* syscall is 0f 05: the two bytes before the PC it returned to. */
		errno = 0;
		long word = ptrace(PTRACE_PEEKTEXT, e.threads[0].tid, (void *)(regs.rip - 2), NULL);
		if (errno || (word & 0xffff) != 0x050f) {
			snprintf(err, errlen, "no syscall instruction before %#llx after event %zu",
				 (unsigned long long)regs.rip, k);
			rc = -1;
		}
		*pc = regs.rip - 2;
	}
	erp_free(&e);
	return rc < 0 ? -1 : 0;
}
