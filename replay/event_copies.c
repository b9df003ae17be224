/* Event replay: copies of the one thread's replay process kept while its
 * history is stepped (erp_mid_copy: the whole history's checkpoints for
 * its replayer), and how much room copies may take (erp_copy_room, for
 * these and for the end replay's copies at events: event_replay.c). */
#include "event_replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ptrev/ptrace_handover.h"
#include "ptrev/process_copy.h"

/* The replay process's resident size in bytes (0: unknown). */
static uint64_t resident_bytes(pid_t pid)
{
	char path[64];
	unsigned long long size = 0, rss = 0;
	snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The memory the system has for new work (MemAvailable), bytes; 0:
 * unknown. */
static uint64_t available_bytes(void)
{
	char line[256];
	uint64_t v = 0;
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %" SCNu64, &v) == 1)
			break;
	fclose(f);
	return v * 1024;
}

/* Each copy holds on to the pages the replay writes after it was made
 * (copy-on-write): up to the program's resident size. All of them
 * together may take a quarter of the memory available. */
bool erp_copy_room(const struct erp *e)
{
	uint64_t rss = resident_bytes(e->pid), avail = available_bytes();
	return rss && avail && rss * (e->ncopies + e->nmid + 1) <= avail / 4;
}

/* Which copy to give up for a new one at pos: the one whose gap to the
 * copy before it is smallest for its distance from pos (as the
 * replayer's checkpoints: replay/checkpoint.c), so that they lie about
 * twice as far apart at each step back from the last: a move back from
 * the end of the history finds one close before it, however long it is. */
static size_t mid_victim(const struct erp *e, uint64_t pos)
{
	size_t best = 0;
	double best_score = 0;
	for (size_t i = 0; i < e->nmid; i++) {
		uint64_t below = i ? e->mid[i - 1].pos : 0;
		double score = (double)(e->mid[i].pos - below) / (double)(pos - e->mid[i].pos + 1);
		if (i == 0 || score < best_score) {
			best = i;
			best_score = score;
		}
	}
	return best;
}

void erp_mid_copy(struct erp *e, struct erp_thread *t)
{
	uint64_t every = e->obs ? e->obs->copy_every : 0;
	if (!every || e->nthreads != 1 || e->nsoft || t->insns < e->mid_last + every)
		return;
	e->mid_last = t->insns;
	if (e->nmid == ERP_MID_COPIES_MAX) {
		size_t v = mid_victim(e, t->insns);
		ptrace_park_kill(e->mid[v].pid);
		memmove(e->mid + v, e->mid + v + 1, (--e->nmid - v) * sizeof *e->mid);
	}
	char err[256];
	pid_t copy = 0;
	if (!erp_copy_room(e) || process_copy_sibling(t->tid, &copy, err, sizeof err) < 0)
		return; /* optional: the replayer runs from further back */
	e->mid[e->nmid++] = (struct erp_mid_copy){.pos = t->insns, .pid = copy};
}

size_t erp_take_mid_copies(struct erp *e, uint64_t *pos, pid_t *pid, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < e->nmid; i++) {
		/* The newest are the most useful (moves go back from the end). */
		if (e->nmid - i > max) {
			ptrace_park_kill(e->mid[i].pid);
		} else if (ptrace_park(e->mid[i].pid) == 0) { /* else killed */
			pos[n] = e->mid[i].pos;
			pid[n++] = e->mid[i].pid;
		}
	}
	e->nmid = 0;
	return n;
}
