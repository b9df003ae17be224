/* Recording a launched inferior with hardware PT: one intel_pt event per
 * thread, opened while the thread is stopped before its first user-space
 * instruction, then the whole process runs at full speed under PTRACE_CONT.
 *
 * This loop drives ptrace itself rather than through inferior_wait():
 * inferior_wait resumes a new thread as soon as it is created, but its
 * event must be opened first or its first instructions go untraced. The
 * inferior's thread table is kept up to date with the inferior module's
 * own helpers, so the caller can still kill or destroy it afterwards.
 *
 * The rings are drained at every ptrace stop and, while all threads run,
 * whenever poll() says an AUX area passed its watermark (or every 20 ms),
 * so the hardware rarely finds its buffer full. */
#include "pt_backend_internal.h"
#include "ptrev/inferior_raw.h"
#include "ptrev/ptrace_wait.h"

#include <cpuid.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Family/model/stepping as libipt's pt_cpu wants them (errata). */
static void cpu_fms(char *buf, size_t len)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d)) {
		snprintf(buf, len, "unknown");
		return;
	}
	unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf, stepping = a & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family == 0x6 || family >= 0xf)
		model |= ((a >> 16) & 0xf) << 4;
	snprintf(buf, len, "%u/%u/%u", family, model, stepping);
}

static int write_meta(struct pt_rec *r, const char *key, const char *fmt, unsigned long long v)
{
	char val[64];
	snprintf(val, sizeof(val), fmt, v);
	if (trace_write_meta(r->w, key, val) < 0) {
		snprintf(r->err, r->errlen, "cannot write the recording");
		return -1;
	}
	return 0;
}

static int resume(struct pt_rec *r, pid_t tid, int sig)
{
	struct inf_thread *t = inferior_thread(r->inf, tid);
	if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig) < 0 && errno != ESRCH) {
		snprintf(r->err, r->errlen, "cannot resume thread %d: %s", (int)tid,
			 strerror(errno));
		return -1;
	}
	if (t)
		t->running = true;
	return 0;
}

static int write_thread(struct pt_rec *r, pid_t tid, pid_t parent, bool exited, int code)
{
	struct trace_thread th = { .tid = tid, .parent = parent, .exited = exited,
				   .exit_code = code };
	if (trace_write_thread(r->w, &th) < 0) {
		snprintf(r->err, r->errlen, "cannot write the recording");
		return -1;
	}
	return 0;
}

/* A new thread may be resumed once its event exists and its first stop
 * (the SIGSTOP of PTRACE_O_TRACECLONE) has been seen; both orders occur. */
static bool take_early(struct pt_rec *r, pid_t tid)
{
	for (size_t i = 0; i < r->nearly; i++)
		if (r->early[i] == tid) {
			r->early[i] = r->early[--r->nearly];
			return true;
		}
	return false;
}

static int on_clone(struct pt_rec *r, pid_t parent)
{
	unsigned long msg = 0;
	ptrace(PTRACE_GETEVENTMSG, parent, NULL, &msg);
	pid_t ntid = (pid_t)msg;
	if (ntid > 0 && !pt_tev_find(r, ntid)) {
		if (!inferior_thread(r->inf, ntid) && !inf_add_thread(r->inf, ntid)) {
			snprintf(r->err, r->errlen, "out of memory");
			return -1;
		}
		if (pt_tev_open(r, ntid) < 0 || write_thread(r, ntid, parent, false, 0) < 0)
			return -1;
		if (r->verbose)
			fprintf(stderr, "ptrev: pt: thread %d started\n", (int)ntid);
		if (take_early(r, ntid)) {
			pt_tev_find(r, ntid)->started = true;
			if (resume(r, ntid, 0) < 0)
				return -1;
		}
	}
	return resume(r, parent, 0);
}

static bool is_group_stop(pid_t tid, int sig)
{
	if (sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
		return false;
	siginfo_t si;
	return ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) < 0 && errno == EINVAL;
}

/* One waitpid status. Returns 1 when the whole process is gone, 0 to go
 * on, -1 on error. */
static int on_status(struct pt_rec *r, pid_t tid, int st, struct trace_end *end)
{
	struct pt_tev *t = pt_tev_find(r, tid);
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (pt_tev_close(r, tid) < 0)
			return -1;
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (write_thread(r, tid, 0, true, code) < 0)
			return -1;
		if (tid != r->inf->pid) {
			inf_remove_thread(r->inf, tid);
			return 0;
		}
		end->status_kind = WIFEXITED(st) ? 0 : 1;
		end->status = WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st);
		return 1;
	}
	if (!WIFSTOPPED(st))
		return 0;
	int sig = WSTOPSIG(st), event = (st >> 16) & 0xff;
	/* The thread is off the CPU: its trace up to here is in memory. */
	if (t && pt_tev_drain(r, t) < 0)
		return -1;
	if (event == PTRACE_EVENT_CLONE)
		return on_clone(r, tid) < 0 ? -1 : 0;
	if (event == PTRACE_EVENT_EXEC) {
		/* A new program: its mappings (vDSO included) come from /proc. */
		if (pt_snapshot_maps(r, tid) < 0)
			return -1;
		return resume(r, tid, 0);
	}
	if (event != 0)
		return resume(r, tid, 0);
	if (!t) {
		/* A new thread's first stop, before its creator's clone event. */
		if (sig == SIGSTOP && r->nearly < sizeof(r->early) / sizeof(r->early[0])) {
			r->early[r->nearly++] = tid;
			if (!inferior_thread(r->inf, tid))
				inf_add_thread(r->inf, tid);
			return 0;
		}
		return resume(r, tid, 0);
	}
	if (!t->started && sig == SIGSTOP) {
		t->started = true;
		return resume(r, tid, 0);
	}
	if (is_group_stop(tid, sig))
		return resume(r, tid, 0);
	end->signals++;
	return resume(r, tid, sig); /* the program's own signal: deliver it */
}

static int drain_all(struct pt_rec *r, int timeout_ms)
{
	struct pollfd fds[256];
	size_t n = r->ntevs < 256 ? r->ntevs : 256;
	for (size_t i = 0; i < n; i++)
		fds[i] = (struct pollfd){ .fd = r->tevs[i].fd, .events = POLLIN };
	if (poll(fds, (nfds_t)n, timeout_ms) < 0 && errno != EINTR) {
		snprintf(r->err, r->errlen, "poll: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < r->ntevs; i++)
		if (pt_tev_drain(r, &r->tevs[i]) < 0)
			return -1;
	return 0;
}

static int run(struct pt_rec *r, struct trace_end *end)
{
	pid_t pid = r->inf->pid;
	/* TRACEEXEC: without it an execve stops with a SIGTRAP we would have
	 * to tell apart from a real one. */
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) < 0) {
		snprintf(r->err, r->errlen, "cannot set ptrace options: %s", strerror(errno));
		return -1;
	}
	if (pt_snapshot_maps(r, 0) < 0)
		return -1;
	/* Only the initial thread exists when recording starts. */
	for (size_t i = 0; i < r->inf->nthreads; i++) {
		pid_t tid = r->inf->threads[i].tid;
		if (pt_tev_open(r, tid) < 0 || write_thread(r, tid, 0, false, 0) < 0)
			return -1;
		pt_tev_find(r, tid)->started = true;
	}
	for (size_t i = 0; i < r->inf->nthreads; i++)
		if (resume(r, r->inf->threads[i].tid, 0) < 0)
			return -1;
	for (;;) {
		int st;
		pid_t w = ptrace_waitpid(-1, &st, __WALL | WNOHANG);
		if (w < 0) {
			if (errno == ECHILD) { /* reaped behind our back */
				end->status_kind = 2;
				return 0;
			}
			snprintf(r->err, r->errlen, "waitpid: %s", strerror(errno));
			return -1;
		}
		if (r->stop && *r->stop) {
			end->status_kind = 2;
			return 0;
		}
		if (w == 0) {
			if (drain_all(r, 20) < 0)
				return -1;
			continue;
		}
		int rc = on_status(r, w, st, end);
		if (rc < 0)
			return -1;
		if (rc == 1)
			return 0;
	}
}

int pt_backend_record(struct inferior *inf, struct trace_writer *w,
		      const struct pt_backend_opts *o, struct trace_end *end,
		      char *err, size_t errlen)
{
	memset(end, 0, sizeof(*end));
	if (errlen)
		err[0] = 0;
	struct pt_pmu pmu;
	struct perf_event_attr attr;
	size_t aux_bytes, data_bytes;
	if (!inf->pid || inf->exited) {
		snprintf(err, errlen, "no process to record");
		return -1;
	}
	if (pt_backend_probe(err, errlen) < 0 ||
	    pt_pmu_load("/sys", &pmu, err, errlen) < 0 ||
	    pt_backend_sizes(o, &aux_bytes, &data_bytes, err, errlen) < 0 ||
	    pt_backend_make_attr(&pmu, o, &attr, err, errlen) < 0) {
		inferior_kill(inf);
		end->status_kind = 2;
		return -1;
	}
	attr.build_id = 1; /* MMAP2 with build-ids, where the kernel can */
	return pt_backend_record_with(inf, w, o, &attr, aux_bytes, end, err, errlen);
}

int pt_backend_record_with(struct inferior *inf, struct trace_writer *w,
			   const struct pt_backend_opts *o, const struct perf_event_attr *attr,
			   size_t aux_bytes, struct trace_end *end, char *err, size_t errlen)
{
	memset(end, 0, sizeof(*end));
	if (errlen)
		err[0] = 0;
	struct pt_rec r = { .inf = inf, .w = w, .err = err, .errlen = errlen, .attr = *attr,
			    .aux_bytes = aux_bytes,
			    .verbose = o && o->verbose, .stop = o ? o->stop : NULL };
	size_t ignored;
	if (!inf->pid || inf->exited) {
		snprintf(err, errlen, "no process to record");
		return -1;
	}
	if (pt_backend_sizes(o, &ignored, &r.data_bytes, err, errlen) < 0) {
		inferior_kill(inf);
		end->status_kind = 2;
		return -1;
	}

	char fms[32];
	cpu_fms(fms, sizeof(fms));
	r.sb = sideband_new(inf->pid, inf->memfd, w);
	int rc = 0;
	if (!r.sb) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	} else if (trace_write_meta(w, "pt_cpu", fms) < 0 ||
		   write_meta(&r, "pt_pmu_type", "%llu", r.attr.type) < 0 ||
		   write_meta(&r, "pt_config", "0x%llx", r.attr.config) < 0 ||
		   write_meta(&r, "pt_aux_bytes", "%llu", r.aux_bytes) < 0) {
		snprintf(err, errlen, "cannot write the recording");
		rc = -1;
	}

	uint64_t t0 = now_ns();
	if (rc == 0)
		rc = run(&r, end);
	if (rc < 0 || end->status_kind == 2) {
		/* Stopped or failed: the program must not run on untraced. */
		char keep[512];
		snprintf(keep, sizeof(keep), "%s", err);
		inferior_kill(inf);
		end->status_kind = 2;
		snprintf(err, errlen, "%s", keep);
	}
	/* Whatever happened, keep every byte the rings still hold. */
	while (r.ntevs) {
		pid_t tid = r.tevs[r.ntevs - 1].tid;
		if (pt_tev_close(&r, tid) < 0)
			rc = -1;
	}
	free(r.tevs);
	if (r.sb)
		sideband_free(r.sb);
	end->duration_ns = now_ns() - t0;
	inf_mark_gone(inf);
	if (write_meta(&r, "pt_bytes", "%llu", r.pt_bytes) < 0 ||
	    write_meta(&r, "pt_truncated", "%llu", r.truncated) < 0 ||
	    write_meta(&r, "pt_lost_records", "%llu", r.lost_records) < 0)
		rc = -1;
	if (r.truncated)
		fprintf(stderr, "ptrev: pt: the AUX area overflowed %llu time(s): parts of "
			"the trace are missing (use a larger AUX size)\n",
			(unsigned long long)r.truncated);
	return rc;
}
