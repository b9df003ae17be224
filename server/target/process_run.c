/* Running a real process as gdb asked (vCont actions, continue or step per
 * thread, signals to deliver) until its next reportable stop. A breakpoint
 * whose target-side condition is false is stepped over and the execution
 * goes on, so gdb never sees it, as with gdbserver. Shared by the live
 * target (ptrace) and the recording target (the sw recorder). */
#include "target_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int process_thread_core(pid_t pid, pid_t tid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name may contain spaces and parentheses: skip to the
	 * last ')' and count fields from there (field 3 follows it). */
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	int field = 2;
	for (p++; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	int core;
	return sscanf(p, "%d", &core) == 1 ? core : -1;
}

/* Each thread takes the leftmost action that names it. Returns how many
 * threads were resumed. */
static int resume_all(struct process_run *pr, bool first)
{
	struct inferior *inf = pr->inf;
	/* Resume a copy of the tid list: resuming may not change it, but be
	 * safe. */
	size_t nt = inf->nthreads;
	pid_t tids[nt ? nt : 1];
	for (size_t i = 0; i < nt; i++)
		tids[i] = inf->threads[i].tid;
	int resumed = 0;
	for (size_t i = 0; i < nt; i++) {
		for (size_t j = 0; j < pr->nacts; j++) {
			const struct target_action *a = &pr->acts[j];
			if (a->tid != -1 && a->tid != tids[i])
				continue;
			/* A signal is delivered once, not again after a
			 * breakpoint whose condition was false. */
			if (pr->exec->resume(pr->ctx, tids[i], a->kind == 's', first ? a->sig : 0) == 0)
				resumed++;
			break;
		}
	}
	return resumed;
}

void process_present_pc(struct target *t, struct target_stop *stop)
{
	struct amd64_regfile *rf = malloc(sizeof *rf);
	if (rf && target_regs_pc_known(target_fetch_registers(t, stop->tid, rf))) {
		stop->rip = rf->gpr.rip;
		stop->have_pc = true;
	}
	free(rf);
}

int process_run_resume(struct process_run *pr, const struct target_resume *r)
{
	if (!pr->inf->pid || pr->inf->exited || r->nactions > PROCESS_MAX_ACTIONS)
		return TARGET_REFUSED;
	memcpy(pr->acts, r->actions, r->nactions * sizeof *r->actions);
	pr->nacts = r->nactions;
	pr->stops = r->stops;
	return resume_all(pr, true) > 0 ? 0 : TARGET_REFUSED;
}

static bool breakpoint_to_skip(struct process_run *pr, const struct stop_event *ev)
{
	if (ev->kind != STOP_SWBREAK && ev->kind != STOP_HWBREAK)
		return false;
	struct user_regs_struct regs;
	if (!pr->stops || !pr->stops->holds || inferior_get_regs(pr->inf, ev->tid, &regs) != 0)
		return false;
	return !pr->stops->holds(pr->stops->ctx, ev->tid, regs.rip);
}

/* Execute the instruction under a breakpoint in ev's thread alone. Returns
 * true when the step finished normally; otherwise *ev becomes the event to
 * report instead. */
static bool step_over(struct process_run *pr, struct stop_event *ev)
{
	struct inferior *inf = pr->inf;
	struct user_regs_struct regs;
	if (inferior_get_regs(inf, ev->tid, &regs) != 0)
		return false;
	/* An int3 must be lifted for the step; a hardware execution breakpoint
	 * does not fire again (the kernel resumes it with RF set). */
	bool lift = ev->kind == STOP_SWBREAK && inferior_has_swbreak(inf, regs.rip);
	if (lift)
		inferior_remove_swbreak(inf, regs.rip);
	struct stop_event step;
	bool ok = pr->exec->resume(pr->ctx, ev->tid, true, 0) == 0 &&
		  pr->exec->wait(pr->ctx, &step, true) == 1;
	if (lift && !inf->exited)
		inferior_insert_swbreak(inf, regs.rip);
	if (!ok)
		return false;
	if (step.kind == STOP_STEP && step.tid == ev->tid)
		return true;
	*ev = step;
	return false;
}

static void stop_from_event(struct inferior *inf, const struct stop_event *ev,
			    struct target_stop *stop)
{
	static const enum target_stop_kind kinds[] = {
		[STOP_NONE] = TARGET_STOP_NONE, [STOP_SIGNAL] = TARGET_STOP_SIGNAL,
		[STOP_STEP] = TARGET_STOP_STEP, [STOP_SWBREAK] = TARGET_STOP_SWBREAK,
		[STOP_HWBREAK] = TARGET_STOP_HWBREAK, [STOP_WATCH] = TARGET_STOP_WATCH,
		[STOP_EXITED] = TARGET_STOP_EXITED, [STOP_KILLED] = TARGET_STOP_KILLED,
		[STOP_FORK] = TARGET_STOP_FORK, [STOP_VFORK] = TARGET_STOP_VFORK,
		[STOP_VFORK_DONE] = TARGET_STOP_VFORK_DONE, [STOP_EXEC] = TARGET_STOP_EXEC,
		[STOP_NO_RESUMED] = TARGET_STOP_NO_RESUMED,
	};
	memset(stop, 0, sizeof *stop);
	stop->kind = kinds[ev->kind];
	stop->tid = ev->tid;
	stop->sig = ev->sig;
	stop->exit_code = ev->exit_code;
	stop->watch_addr = ev->watch_addr;
	stop->watch_type = ev->watch_type;
	stop->child = ev->child;
	stop->core = -1;
	if (ev->kind == STOP_EXITED || ev->kind == STOP_KILLED || ev->kind == STOP_NO_RESUMED)
		return;
	struct user_regs_struct regs;
	if (inferior_get_regs(inf, ev->tid, &regs) == 0) {
		stop->have_frame_regs = stop->have_pc = true;
		stop->rbp = regs.rbp;
		stop->rsp = regs.rsp;
		stop->rip = regs.rip;
	}
	stop->core = process_thread_core(inf->pid, ev->tid);
}

int process_run_wait(struct process_run *pr, struct target_stop *stop, bool block)
{
	struct stop_event ev;
	int r = pr->exec->wait(pr->ctx, &ev, block);
	if (r != 1)
		return r;
	/* A breakpoint whose target-side condition is false: step the thread
	 * past it and carry on, as if it had not been hit. If something else
	 * happens during the step, that is reported instead. */
	if (breakpoint_to_skip(pr, &ev) && step_over(pr, &ev) && resume_all(pr, false) > 0)
		return 0;
	stop_from_event(pr->inf, &ev, stop);
	return 1;
}
