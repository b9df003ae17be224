/* The replayer end to end. rep_basic is recorded with the real
 * `ptrev record --backend sw`; an independent run of the same program,
 * single-stepped under ptrace here (ref-style: fork, TRACEME, exec, no
 * ASLR, same environment, the recorded AT_RANDOM bytes), notes the full
 * registers and some memory words at chosen positions. The replayer then
 * seeks to those positions in random order and must agree exactly.
 *
 * Honesty of the reference: the program's inputs that differ between two
 * runs (pid, tid, clock, getrandom) are given to the reference run from the
 * recording's event log, only those (getpid, gettid, set_tid_address,
 * clock_gettime, getrandom); everything else it executes for real (the
 * file read, the pipe, memory). The input file is changed after the
 * reference run, before replaying: the replay must show the recorded
 * contents. Also checked: the recorded pid after the emulated getpid,
 * divergence detection on a tampered copy of the recording, and that
 * stepping back reuses checkpoints instead of re-running from the start.
 *
 * Usage: test_replayer PTREV PROGRAMS_DIR WORKDIR */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/debugregs.h"
#include "ptrev/event_end.h"
#include "ptrev/inferior.h"
#include "ptrev/materialise.h"
#include "ptrev/materialise_job.h"
#include "ptrev/ptrace_handover.h"
#include "ptrev/record_startup.h"
#include "ptrev/replayer.h"
#include "ptrev/trace_decode.h"
#include "ptrev/trace_file.h"

#include "../check.h"
#include "../one_cpu.h"

static char *test_env[] = { "PATH=/usr/bin:/bin", "REPTEST=1", "LC_ALL=C", NULL };

/* ---- recording ---- */

static const char *record_backend = "sw";

static int run_record(const char *ptrev, const char *out, char *const prog_argv[],
		      const char *stdout_file)
{
	char *argv[32];
	int n = 0, st;
	argv[n++] = (char *)ptrev;
	argv[n++] = "record";
	argv[n++] = "--backend";
	argv[n++] = (char *)record_backend;
	argv[n++] = "-o";
	argv[n++] = (char *)out;
	argv[n++] = "--";
	for (int i = 0; prog_argv[i]; i++)
		argv[n++] = prog_argv[i];
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(stdout_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		execve(ptrev, argv, test_env);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Rewrite a recording, with META additions and an optional tampering. */
static int copy_trace(const struct trace_data *td, const char *out,
		      const char *const *extra_meta, int64_t (*tamper)(const struct trace_syscall *))
{
	char err[256];
	struct trace_writer *w = trace_writer_open(out, err, sizeof err);
	if (!w)
		return -1;
	for (size_t i = 0; i < td->nmeta; i++)
		trace_write_meta(w, td->meta_keys[i], td->meta_values[i]);
	for (int i = 0; extra_meta && extra_meta[i]; i += 2)
		trace_write_meta(w, extra_meta[i], extra_meta[i + 1]);
	for (size_t i = 0; i < td->nthreads; i++)
		trace_write_thread(w, &td->threads[i]);
	for (size_t i = 0; i < td->nmmaps; i++)
		trace_write_mmap(w, &td->mmaps[i]);
	for (size_t i = 0; i < td->nmunmaps; i++)
		trace_write_munmap(w, &td->munmaps[i]);
	for (size_t i = 0; i < td->ncode; i++)
		trace_write_code(w, &td->code[i]);
	for (size_t i = 0; i < td->nstreams; i++)
		trace_write_pt(w, td->streams[i].tid, td->streams[i].pt, td->streams[i].pt_len);
	for (size_t i = 0; i < td->nsyscalls; i++) {
		struct trace_syscall s = td->syscalls[i];
		if (tamper)
			s.result = tamper(&s);
		trace_write_syscall(w, &s);
	}
	for (size_t i = 0; i < td->nsignals; i++)
		trace_write_signal(w, &td->signals[i]);
	for (size_t i = 0; i < td->nrdtsc; i++)
		trace_write_rdtsc(w, &td->rdtsc[i]);
	if (td->complete)
		trace_write_end(w, &td->end);
	return trace_writer_close(w, err, sizeof err);
}

/* Recordings from a recorder that does not store the environment yet: the
 * test knows it (it gave it), so add it to a copy. Without it the replay
 * starts with another stack layout and (rightly) reports a divergence. */
static int ensure_env(struct trace_data *td, const char *copy)
{
	char err[512];
	if (trace_meta(td, "env_count"))
		return 0;
	const char *extra[] = { "env", test_env[0], "env", test_env[1], "env",
				test_env[2], "env_count", "3", NULL };
	if (copy_trace(td, copy, extra, NULL) < 0)
		return -1;
	trace_data_free(td);
	if (trace_read_file(copy, td, err, sizeof err) < 0) {
		printf("FAIL: %s\n", err);
		return -1;
	}
	return 0;
}

static uint64_t symbol(const char *prog, const char *name)
{
	char cmd[1024], line[256];
	uint64_t addr = 0;
	snprintf(cmd, sizeof cmd, "nm %s", prog);
	FILE *f = popen(cmd, "r");
	while (f && fgets(line, sizeof line, f)) {
		char sym[200], type;
		unsigned long long a;
		if (sscanf(line, "%llx %c %199s", &a, &type, sym) == 3 && !strcmp(sym, name))
			addr = a;
	}
	if (f)
		pclose(f);
	return addr;
}

/* ---- the reference run ---- */

struct snap {
	uint64_t pos;
	bool have;
	struct user_regs_struct regs;
	uint64_t stack[8];
	uint64_t gsum, gheap, heap[4];
	uint8_t xstate[832];  /* legacy area (x87, MXCSR, XMM) and YMM_Hi128 */
	bool have_xstate;
};

struct prog_info {
	uint64_t g_sum, g_heap;
};

static void read_words(int memfd, uint64_t addr, uint64_t *out, size_t n)
{
	memset(out, 0, n * 8);
	if (pread(memfd, out, n * 8, (off_t)addr) < 0)
		memset(out, 0xee, n * 8);
}

/* XSAVE standard format: bytes 0..415 hold x87, MXCSR and XMM0-15 (the
 * rest of the legacy area and the header are bookkeeping that may differ
 * with the kernel's init optimisation); 576..831 the upper YMM halves. */
static bool xstate_equal(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, 416) == 0 && memcmp(a + 576, b + 576, 256) == 0;
}

static void take(pid_t pid, int memfd, const struct user_regs_struct *regs,
		 const struct prog_info *pi, struct snap *s)
{
	uint8_t xs[4096];
	struct iovec iov = { xs, sizeof xs };
	s->have_xstate = ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &iov) == 0 &&
			 iov.iov_len >= sizeof s->xstate;
	if (s->have_xstate)
		memcpy(s->xstate, xs, sizeof s->xstate);
	s->have = true;
	s->regs = *regs;
	read_words(memfd, regs->rsp, s->stack, 8);
	read_words(memfd, pi->g_sum, &s->gsum, 1);
	read_words(memfd, pi->g_heap, &s->gheap, 1);
	if (s->gheap)
		read_words(memfd, s->gheap, s->heap, 4);
	else
		memset(s->heap, 0, sizeof s->heap);
}

/* Ground truth for watchpoints (watch_case): while set, the reference
 * run notes the position after every instruction that changed the 8
 * bytes at addr (memory compared before and after: independent of debug
 * registers) or that a debug register saw write them (same-value writes:
 * glibc's memcpy of 8 bytes stores them twice), and after every one a
 * debug register saw access them. Positions come from single steps. */
struct watch_truth {
	uint64_t addr;
	uint64_t last;          /* the value after the last instruction */
	uint64_t dr6;           /* watch hits since the last completed one */
	uint64_t writes[64], values[64];
	size_t nwrites;
	size_t nchanges;        /* writes that changed the value */
	uint64_t accesses[64];
	size_t naccesses;
};
static struct watch_truth *g_truth;

#define DR_OFF(n) ((void *)(offsetof(struct user, u_debugreg) + (n) * 8))

static void truth_start(pid_t pid, int memfd)
{
	if (pread(memfd, &g_truth->last, 8, (off_t)g_truth->addr) != 8)
		g_truth->last = 0;
	/* DR0: the 8 bytes, read or write (R/W 11, LEN 10); DR1: written
	 * (R/W 01). */
	ptrace(PTRACE_POKEUSER, pid, DR_OFF(0), (void *)g_truth->addr);
	ptrace(PTRACE_POKEUSER, pid, DR_OFF(1), (void *)g_truth->addr);
	ptrace(PTRACE_POKEUSER, pid, DR_OFF(7), (void *)(1ul | 3ul << 16 | 2ul << 18 |
						 4ul | 1ul << 20 | 2ul << 22));
}

/* After every stop: a step of an instruction or of one REP iteration. */
static void truth_stop(pid_t pid)
{
	errno = 0;
	long dr6 = ptrace(PTRACE_PEEKUSER, pid, DR_OFF(6), NULL);
	if (!errno && (dr6 & 3)) {
		g_truth->dr6 |= (uint64_t)dr6 & 3;
		ptrace(PTRACE_POKEUSER, pid, DR_OFF(6), NULL);
	}
}

/* An instruction completed: the thread stands at pos. */
static void truth_completed(int memfd, uint64_t pos)
{
	struct watch_truth *t = g_truth;
	uint64_t v = 0;
	bool wrote = false;
	if (pread(memfd, &v, 8, (off_t)t->addr) != 8)
		v = t->last;
	if (v != t->last)
		t->nchanges++;
	if ((v != t->last || (t->dr6 & 2)) && t->nwrites < 64) {
		t->values[t->nwrites] = v;
		t->writes[t->nwrites++] = pos;
		t->last = v;
		wrote = true;
	}
	/* Kernel writes (read() into it) trip no debug register. */
	if ((t->dr6 || wrote) && t->naccesses < 64)
		t->accesses[t->naccesses++] = pos;
	t->dr6 = 0;
}

static bool substituted(uint64_t nr)
{
	return nr == SYS_getpid || nr == SYS_gettid || nr == SYS_set_tid_address ||
	       nr == SYS_clock_gettime || nr == SYS_getrandom;
}

static const struct trace_syscall *recorded_at(const struct trace_data *td, uint64_t pos)
{
	for (size_t i = 0; i < td->nsyscalls; i++)
		if (td->syscalls[i].pos == pos)
			return &td->syscalls[i];
	return NULL;
}

static bool signal_at(const struct trace_data *td, uint64_t pos)
{
	for (size_t i = 0; i < td->nsignals; i++)
		if (td->signals[i].pos == pos && td->signals[i].handler_ip)
			return true;
	return false;
}

/* Single-step prog from its first instruction, counting completed
 * instructions as the recorder does, snapshotting at snaps[].pos (sorted).
 * Returns the number of instructions, or -1. */
static long ref_run(const char *path, char *const argv[], const uint8_t at_random[16],
		    const struct trace_data *td, const struct prog_info *pi,
		    struct snap *snaps, size_t nsnaps)
{
	int st;
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		personality(ADDR_NO_RANDOMIZE);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execve(path, argv, test_env);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		return -1;
	ptrace(PTRACE_SETOPTIONS, pid, 0, (void *)(long)PTRACE_O_EXITKILL);
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/mem", (int)pid);
	int memfd = open(p, O_RDWR);
	snprintf(p, sizeof p, "/proc/%d/auxv", (int)pid);
	uint64_t auxv[128] = {0};
	int afd = open(p, O_RDONLY);
	ssize_t an = read(afd, auxv, sizeof auxv);
	close(afd);
	for (ssize_t i = 0; i + 1 < an / 8; i += 2)
		if (auxv[i] == AT_RANDOM && pwrite(memfd, at_random, 16, (off_t)auxv[i + 1]) != 16)
			return -1;
	/* The recorder turned the vDSO's clock functions into syscalls (META
	 * vdso=hidden): the reference program runs with the same code. */
	if (trace_meta(td, "vdso") && strcmp(trace_meta(td, "vdso"), "hidden") == 0 &&
	    startup_hide_vdso(pid) != 0)
		return -1;
	if (g_truth)
		truth_start(pid, memfd);
	uint64_t pos = 0;
	size_t next = 0;
	int deliver = 0;
	bool delivering = false, at_handler = false;
	struct user_regs_struct regs;
	ptrace(PTRACE_GETREGS, pid, 0, &regs);
	for (;;) {
		/* At a recorded signal's position the state is the one after
		 * delivery (the handler's first instruction), as in the
		 * history: not the instruction the signal interrupted. */
		while (next < nsnaps && snaps[next].pos == pos && !deliver &&
		       (!signal_at(td, pos) || at_handler))
			take(pid, memfd, &regs, pi, &snaps[next++]);
		at_handler = false;
		uint8_t b[3] = {0};
		bool is_sys = pread(memfd, b, 3, (off_t)regs.rip) >= 2 && b[0] == 0x0f && b[1] == 0x05;
		/* rdtsc/rdtscp: the TSC is an input too (ld.so reads it). */
		bool is_tsc = b[0] == 0x0f && (b[1] == 0x31 || (b[1] == 0x01 && b[2] == 0xf9));
		uint64_t nr = regs.rax;
		struct user_regs_struct now;
		delivering = deliver != 0;
		/* The recorders refuse rseq (ENOSYS): so does the reference,
		 * with a syscall number that fails so. */
		if (is_sys && nr == SYS_rseq && !deliver)
			ptrace(PTRACE_POKEUSER, pid, offsetof(struct user_regs_struct, rax), (void *)-1L);
		ptrace(PTRACE_SINGLESTEP, pid, 0, (void *)(long)deliver);
		deliver = 0;
		if (waitpid(pid, &st, __WALL) != pid)
			break;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (is_sys)
				pos++; /* it ended inside its exit syscall */
			break;
		}
		ptrace(PTRACE_GETREGS, pid, 0, &now);
		if (g_truth)
			truth_stop(pid);
		siginfo_t si;
		memset(&si, 0, sizeof si);
		ptrace(PTRACE_GETSIGINFO, pid, 0, &si);
		if (WSTOPSIG(st) == SIGTRAP && delivering && si.si_code == SIGTRAP) {
			regs = now; /* at the handler: nothing completed */
			delivering = false;
			at_handler = true;
			/* The kernel's signal frame is an input too: whether it
			 * writes parts of the XSAVE area depends on the CPU's
			 * state tracking, so take the recorded one. */
			for (size_t i = 0; i < td->nsigframes; i++) {
				const struct trace_sigframe *f = &td->sigframes[i];
				if (f->pos == pos && f->addr == now.rsp &&
				    pwrite(memfd, f->bytes, f->len, (off_t)f->addr) != (ssize_t)f->len)
					return -1;
			}
			continue;
		}
		delivering = false;
		if (WSTOPSIG(st) != SIGTRAP)
			deliver = WSTOPSIG(st);
		if (now.rip != regs.rip) {
			if (is_sys && substituted(nr)) {
				const struct trace_syscall *s = recorded_at(td, pos);
				if (!s || s->nr != nr) {
					printf("reference run: no recorded syscall %llu at %llu\n",
					       (unsigned long long)nr, (unsigned long long)pos);
					kill(pid, SIGKILL);
					waitpid(pid, &st, __WALL);
					return -1;
				}
				now.rax = (uint64_t)s->result;
				ptrace(PTRACE_SETREGS, pid, 0, &now);
				for (size_t i = 0; i < s->nwrites; i++)
					if (pwrite(memfd, s->writes[i].bytes, s->writes[i].len,
						   (off_t)s->writes[i].addr) < 0)
						return -1;
			}
			if (is_tsc) {
				const struct trace_rdtsc *t = NULL;
				for (size_t i = 0; i < td->nrdtsc; i++)
					if (td->rdtsc[i].pos == pos)
						t = &td->rdtsc[i];
				if (!t) {
					printf("reference run: no recorded rdtsc at %llu\n",
					       (unsigned long long)pos);
					kill(pid, SIGKILL);
					waitpid(pid, &st, __WALL);
					return -1;
				}
				now.rax = (uint32_t)t->value;
				now.rdx = t->value >> 32;
				if (t->is_rdtscp)
					now.rcx = t->aux;
				ptrace(PTRACE_SETREGS, pid, 0, &now);
			}
			pos++;
			if (g_truth)
				truth_completed(memfd, pos);
		}
		regs = now;
	}
	close(memfd);
	return (long)pos;
}

/* ---- comparing ---- */

static const char *reg_names[] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
	"rax", "rcx", "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags",
	"rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs",
};

static int compare(struct replayer *rp, const struct snap *s, const struct prog_info *pi)
{
	struct user_regs_struct regs;
	int bad = 0;
	if (replayer_get_regs(rp, &regs) < 0) {
		printf("FAIL: no registers at %llu\n", (unsigned long long)s->pos);
		return 1;
	}
	const unsigned long long *a = (const void *)&regs, *b = (const void *)&s->regs;
	for (size_t i = 0; i < sizeof regs / 8; i++) {
		if (a[i] != b[i]) {
			printf("FAIL: position %llu: %s = %#llx, reference %#llx\n",
			       (unsigned long long)s->pos, reg_names[i], a[i], b[i]);
			bad++;
		}
	}
	uint8_t xs[4096];
	size_t xlen = sizeof xs;
	if (s->have_xstate && (replayer_get_xstate(rp, xs, &xlen) < 0 || xlen < 832 ||
			       !xstate_equal(xs, s->xstate))) {
		printf("FAIL: position %llu: xstate (x87/SSE/AVX registers) differs\n",
		       (unsigned long long)s->pos);
		bad++;
	}
	uint64_t stack[8], gsum, gheap, heap[4] = {0};
	if (replayer_read_mem(rp, regs.rsp, stack, sizeof stack) != (ssize_t)sizeof stack)
		memset(stack, 0xee, sizeof stack);
	if (replayer_read_mem(rp, pi->g_sum, &gsum, 8) != 8)
		memset(&gsum, 0xee, 8);
	if (replayer_read_mem(rp, pi->g_heap, &gheap, 8) != 8)
		memset(&gheap, 0xee, 8);
	if (gheap)
		replayer_read_mem(rp, gheap, heap, sizeof heap);
	if (memcmp(stack, s->stack, sizeof stack)) {
		printf("FAIL: position %llu: stack words differ\n", (unsigned long long)s->pos);
		bad++;
	}
	if (gsum != s->gsum || gheap != s->gheap || memcmp(heap, s->heap, sizeof heap)) {
		printf("FAIL: position %llu: g_sum %#llx/%#llx g_heap %#llx/%#llx heap "
		       "%#llx/%#llx\n", (unsigned long long)s->pos,
		       (unsigned long long)gsum, (unsigned long long)s->gsum,
		       (unsigned long long)gheap, (unsigned long long)s->gheap,
		       (unsigned long long)heap[0], (unsigned long long)s->heap[0]);
		bad++;
	}
	return bad;
}

static int by_pos(const void *a, const void *b)
{
	const struct snap *x = a, *y = b;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int64_t tamper_read(const struct trace_syscall *s)
{
	/* The first read of the input file gets one byte fewer: the summing
	 * loop then runs one iteration less, so control flow differs. */
	if (s->nr == SYS_read && s->result > 1 && s->args[2] == 64)
		return s->result - 1;
	return s->result;
}

/* The vDSO: a recording that called into it is replayable only up to the
 * call (the kernel data its clock read is in no log), unless the recorder
 * hid it (META vdso=hidden). And startup_hide_vdso really hides it. */
static void vdso_case(const char *ptrev, const char *dir, const char *work)
{
	char prog[4096], trace[4096], outf[4096], err[512], why[512];
	snprintf(prog, sizeof prog, "%s/rep_vdso", dir);
	snprintf(trace, sizeof trace, "%s/rep_vdso.ptrev", work);
	snprintf(outf, sizeof outf, "%s/rep_vdso.out", work);
	char *pargv[] = { prog, NULL };
	CHECK(run_record(ptrev, trace, pargv, outf) == 0, "record rep_vdso");
	struct trace_data td;
	if (trace_read_file(trace, &td, err, sizeof err) < 0) {
		CHECK(0, "%s", err);
		return;
	}
	snprintf(trace, sizeof trace, "%s/rep_vdso-env.ptrev", work);
	if (ensure_env(&td, trace) < 0)
		return;
	const char *v = trace_meta(&td, "vdso");
	bool hidden = v && strcmp(v, "hidden") == 0;
	struct replayer *r = replayer_new(&td, err, sizeof err);
	CHECK(r, "replayer_new: %s", err);
	if (r) {
		uint64_t count = td.end.instructions;
		int rc = replayer_seek(r, 0, count - 1, why, sizeof why);
		if (hidden) {
			CHECK(rc == 0, "vDSO hidden, yet: %s", why);
		} else {
			CHECK(rc < 0 && strstr(why, "vDSO"), "seek after a vDSO call: "
			      "rc %d (%s)", rc, why);
			printf("vDSO case: %s\n", why);
		}
		CHECK(replayer_seek(r, 0, 50, why, sizeof why) == 0, "seek 50: %s", why);
		replayer_free(r);
	}
	trace_data_free(&td);

	/* The patch itself: the program no longer sees a vDSO. */
	int fds[2];
	if (pipe(fds) < 0)
		return;
	struct inferior inf;
	memset(&inf, 0, sizeof inf);
	inf.memfd = -1;
	if (inferior_launch(&inf, prog, pargv, test_env, -1, fds[1], -1, err, sizeof err) < 0) {
		CHECK(0, "launch: %s", err);
		return;
	}
	close(fds[1]);
	CHECK(startup_hide_vdso(inf.pid) == 0, "startup_hide_vdso");
	/* The patch itself: the program's clock read is now a real syscall
	 * (clock_gettime, 228), which a recorder logs. */
	int sys228 = 0, st0;
	ptrace(PTRACE_SETOPTIONS, inf.pid, 0, (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL));
	for (int guard = 0; guard < 100000; guard++) {
		if (ptrace(PTRACE_SYSCALL, inf.pid, 0, 0) != 0 || waitpid(inf.pid, &st0, __WALL) != inf.pid ||
		    !WIFSTOPPED(st0))
			break;
		struct user_regs_struct sr;
		if (WSTOPSIG(st0) == (SIGTRAP | 0x80) &&
		    ptrace(PTRACE_GETREGS, inf.pid, 0, &sr) == 0 && sr.orig_rax == 228)
			sys228++;
	}
	char out[64] = "";
	ssize_t n = read(fds[0], out, sizeof out - 1);
	out[n > 0 ? n : 0] = 0;
	CHECK(strncmp(out, "vdso 1", 6) == 0 && sys228 > 0, "after startup_hide_vdso the "
	      "program still sees its vDSO ('%s') and reads the clock by syscall (%d)",
	      out, sys228 / 2);
	close(fds[0]);
	inf.exited = true;
	if (inf.memfd >= 0)
		close(inf.memfd);
	inf.pid = 0;
	inferior_destroy(&inf);
}

static uint64_t read_global(struct replayer *r, uint64_t addr)
{
	uint64_t v = 0;
	replayer_read_mem(r, addr, &v, sizeof v);
	return v;
}

/* Signals the replay injects (raise's tgkill is emulated) and a syscall
 * interrupted by one (pause: the handler's frame must hold -EINTR). The
 * state at the end must be the recorded one; before each signal the
 * handler must not have run yet. */
static void signal_case(const char *ptrev, const char *dir, const char *work)
{
	char prog[4096], trace[4096], outf[4096], err[512], why[512];
	snprintf(prog, sizeof prog, "%s/rep_signal", dir);
	snprintf(trace, sizeof trace, "%s/rep_signal.ptrev", work);
	snprintf(outf, sizeof outf, "%s/rep_signal.out", work);
	char *pargv[] = { prog, NULL };
	CHECK(run_record(ptrev, trace, pargv, outf) == 0, "record rep_signal");
	struct trace_data td;
	if (trace_read_file(trace, &td, err, sizeof err) < 0) {
		CHECK(0, "%s", err);
		return;
	}
	snprintf(trace, sizeof trace, "%s/rep_signal-env.ptrev", work);
	if (ensure_env(&td, trace) < 0)
		return;
	CHECK(td.nsignals == 2, "rep_signal: %zu signals recorded", td.nsignals);
	struct replayer *r = replayer_new(&td, err, sizeof err);
	CHECK(r, "replayer_new: %s", err);
	uint64_t g_sig = symbol(prog, "g_sig"), g_count = symbol(prog, "g_count");
	uint64_t g_ret = symbol(prog, "g_ret"), g_errno = symbol(prog, "g_errno");
	if (r && td.nsignals == 2) {
		uint64_t count = td.end.instructions;
		CHECK(replayer_seek(r, 0, count - 1, why, sizeof why) == 0, "seek end: %s", why);
		CHECK((int)read_global(r, g_sig) == SIGUSR1 + SIGALRM, "g_sig %d",
		      (int)read_global(r, g_sig));
		CHECK((long)read_global(r, g_ret) == -1 && (long)read_global(r, g_errno) == EINTR,
		      "pause returned %ld errno %ld", (long)read_global(r, g_ret),
		      (long)read_global(r, g_errno));
		for (int i = 0; i < 2; i++) {
			uint64_t p = td.signals[i].pos;
			struct user_regs_struct regs;
			CHECK(replayer_seek(r, 0, p - 1, why, sizeof why) == 0, "seek %llu: %s",
			      (unsigned long long)(p - 1), why);
			CHECK((int)read_global(r, g_count) == i, "before signal %d: count %d", i,
			      (int)read_global(r, g_count));
			CHECK(replayer_seek(r, 0, p, why, sizeof why) == 0, "seek %llu: %s",
			      (unsigned long long)p, why);
			replayer_get_regs(r, &regs);
			CHECK(regs.rip == td.signals[i].handler_ip, "at signal %d: rip %#llx", i,
			      (unsigned long long)regs.rip);
			CHECK(replayer_seek(r, 0, p + 40, why, sizeof why) == 0, "seek: %s", why);
			CHECK((int)read_global(r, g_count) == i + 1, "after signal %d: count %d",
			      i, (int)read_global(r, g_count));
		}
	}
	replayer_free(r);
	trace_data_free(&td);
}

/* record_startup_meta: the environment, auxv and AT_RANDOM bytes of a
 * launched program, checked against what the program itself prints. */
static char *startup_meta_case(char *const pargv[], const char *work)
{
	char path[4096], err[512], *auxv = NULL;
	const char *prog = pargv[0];
	snprintf(path, sizeof path, "%s/startup.ptrev", work);
	int fds[2];
	if (pipe(fds) < 0)
		return NULL;
	struct inferior inf;
	memset(&inf, 0, sizeof inf);
	inf.memfd = -1;
	if (inferior_launch(&inf, prog, pargv, test_env, -1, fds[1], -1, err, sizeof err) < 0) {
		CHECK(0, "launch: %s", err);
		return NULL;
	}
	close(fds[1]);
	struct trace_writer *w = trace_writer_open(path, err, sizeof err);
	CHECK(w && record_startup_meta(w, inf.pid) == 0, "record_startup_meta");
	if (w)
		trace_writer_close(w, err, sizeof err);
	ptrace(PTRACE_CONT, inf.pid, 0, 0);
	char out[64] = "";
	ssize_t n = read(fds[0], out, 33);
	out[n > 32 ? 32 : 0] = 0;
	close(fds[0]);
	int st;
	waitpid(inf.pid, &st, __WALL);
	inf.exited = true;
	if (inf.memfd >= 0)
		close(inf.memfd);
	inf.pid = 0;
	inferior_destroy(&inf);
	struct trace_data td;
	if (trace_read_file(path, &td, err, sizeof err) < 0) {
		CHECK(0, "%s", err);
		return NULL;
	}
	int nenv = 0;
	for (size_t i = 0; i < td.nmeta; i++)
		if (!strcmp(td.meta_keys[i], "env")) {
			CHECK(nenv < 3 && !strcmp(td.meta_values[i], test_env[nenv]),
			      "env %d: %s", nenv, td.meta_values[i]);
			nenv++;
		}
	CHECK(nenv == 3, "%d env records", nenv);
	CHECK(trace_meta(&td, "env_count") && !strcmp(trace_meta(&td, "env_count"), "3"),
	      "env_count");
	const char *ar = trace_meta(&td, "at_random"), *av = trace_meta(&td, "auxv");
	CHECK(ar && !strcmp(ar, out), "at_random %s, the program printed %s", ar ? ar : "-", out);
	CHECK(av && strlen(av) % 32 == 0 && strlen(av) >= 32 * 10, "auxv hex");
	if (av)
		auxv = strdup(av);
	trace_data_free(&td);
	return auxv;
}

/* Record dir/NAME with the backend record_backend names (args: its
 * arguments, NULL-ended; an exit status up to max_status is the program's
 * own) and read the recording into *td (zeroed first: free it in any
 * case). 0, or -1 with the failure counted. */
static int recorded_data(const char *ptrev, const char *dir, const char *work, const char *name,
			 char *const args[], int max_status, struct trace_data *td)
{
	char prog[4096], trace[4096], outf[4096], err[512];
	snprintf(prog, sizeof prog, "%s/%s", dir, name);
	snprintf(trace, sizeof trace, "%s/%s-%s.ptrev", work, name, record_backend);
	snprintf(outf, sizeof outf, "%s/%s.out", work, name);
	char *pargv[8] = { prog };
	for (int i = 0; args && args[i] && i < 6; i++)
		pargv[i + 1] = args[i];
	memset(td, 0, sizeof *td);
	int rc = run_record(ptrev, trace, pargv, outf);
	CHECK(rc >= 0 && rc <= max_status, "record %s: %d", name, rc);
	if (trace_read_file(trace, td, err, sizeof err) < 0) {
		CHECK(0, "%s", err);
		return -1;
	}
	return 0;
}

/* The same with the sw backend, and a replayer over the recording. NULL,
 * the failure counted, when a step fails. */
static struct replayer *recorded(const char *ptrev, const char *dir, const char *work,
				 const char *name, char *const args[], int max_status,
				 struct trace_data *td)
{
	char err[512];
	if (recorded_data(ptrev, dir, work, name, args, max_status, td) < 0)
		return NULL;
	struct replayer *r = replayer_new(td, err, sizeof err);
	CHECK(r, "replayer_new: %s", err);
	return r;
}

/* More than one thread: refused with the message the server relies on. */
static void threads_case(const char *ptrev, const char *dir, const char *work)
{
	char why[512] = "";
	struct trace_data td;
	struct replayer *r = recorded(ptrev, dir, work, "rec_threads", NULL, 0, &td);
	if (r) {
		CHECK(replayer_seek(r, td.streams[0].tid, 10, why, sizeof why) < 0 &&
		      strstr(why, "multi-threaded full-state replay is not supported yet"),
		      "threads: %s", why);
		replayer_free(r);
	}
	trace_data_free(&td);
}

/* A seek across a long loop: the checkpoints left on the way are placed
 * where reaching them costs few stops (replayer.c, mark_at), not on an
 * instruction of the loop, which the run to it would stop at on every
 * iteration (tens of thousands of stops here; the end state must be the
 * same either way). */
static void hot_loop_case(const char *ptrev, const char *dir, const char *work)
{
	char why[512] = "";
	/* One round of 100,000 iterations: about 850,000 instructions in
	 * one stretch without a syscall. Its exit status is its total's low
	 * bit. */
	char *args[] = { "1", "100000", NULL };
	struct trace_data td;
	struct replayer *r = recorded(ptrev, dir, work, "tail_work", args, 1, &td);
	if (r) {
		struct replayer_stats st;
		uint64_t count = td.end.instructions;
		CHECK(count > 800000, "tail_work ran %llu instructions", (unsigned long long)count);
		CHECK(replayer_seek(r, 0, count - 1, why, sizeof why) == 0, "seek to the end: %s",
		      why);
		replayer_get_stats(r, &st);
		CHECK(st.stops < 5000, "a seek across the loop took %llu stops",
		      (unsigned long long)st.stops);
		CHECK(st.checkpoints >= 2, "it left %llu checkpoints",
		      (unsigned long long)st.checkpoints);
		printf("seek across a loop: %llu stops, %llu checkpoints\n",
		       (unsigned long long)st.stops, (unsigned long long)st.checkpoints);
		/* And back: reverse steps at the end still find checkpoints. */
		uint64_t before = st.insns_run;
		int ok = 1;
		for (int i = 1; i <= 10; i++)
			ok &= replayer_seek(r, 0, count - 1 - (uint64_t)i, why, sizeof why) == 0;
		replayer_get_stats(r, &st);
		CHECK(ok && st.insns_run - before < 10 * 2 * 2000ull,
		      "10 reverse steps at the end: %s, %llu instructions run", ok ? "ok" : why,
		      (unsigned long long)(st.insns_run - before));
		/* Into the loop (where gdb's Ctrl-C stops a computation): the
		 * reverse steps from there start at checkpoints left in the
		 * loop just before, not before the loop, a stop for each of
		 * some 50,000 iterations every time. */
		uint64_t mid = count / 2;
		ok = replayer_seek(r, 0, mid, why, sizeof why) == 0;
		replayer_get_stats(r, &st);
		uint64_t stops = st.stops;
		for (int i = 1; i <= 10; i++)
			ok &= replayer_seek(r, 0, mid - (uint64_t)i, why, sizeof why) == 0;
		replayer_get_stats(r, &st);
		CHECK(ok && st.stops - stops < 10 * 1000ull,
		      "10 reverse steps inside the loop: %s, %llu stops", ok ? "ok" : why,
		      (unsigned long long)(st.stops - stops));
		printf("reverse steps inside a loop: %llu stops\n",
		       (unsigned long long)(st.stops - stops));
		replayer_free(r);
	}
	trace_data_free(&td);
}

/* Where a program's own code is loaded (a PIE: the recording's first
 * mapping of its file at offset 0). */
static uint64_t load_base(const struct trace_data *td, const char *name)
{
	for (size_t i = 0; i < td->nmmaps; i++) {
		const char *slash = strrchr(td->mmaps[i].path, '/');
		if (slash && !strcmp(slash + 1, name) && td->mmaps[i].offset == 0)
			return td->mmaps[i].start;
	}
	return 0;
}

/* The native search for the last breakpoint hit before a tail's start
 * (event_end_tail_search), on an event recording of tail_work: each round
 * computes (calling fold every 256 iterations), writes its line, then
 * calls round_done; stretch k runs from event k - 1 to event k, so the
 * stretch that ends with round r's write holds round_done(r - 1) and
 * round r's computation, and a tail from event k begins after event
 * k - 1. */
/* A search's give-up question (event_give_up): counted, and answered. */
static bool ask_stop(void *ctx)
{
	++*(int *)ctx;
	return true;
}

static bool ask_go_on(void *ctx)
{
	++*(int *)ctx;
	return false;
}

/* tail_work's event recording (*td) and the event numbers of its six
 * writes, one a round: 0, or -1 after a failed check (nothing to free). */
static int tail_work_writes(const char *ptrev, const char *dir, const char *work,
			    struct trace_data *td, size_t writes[6])
{
	size_t nw = 0;
	record_backend = "event";
	int got = recorded_data(ptrev, dir, work, "tail_work", NULL, 1, td);
	record_backend = "sw";
	for (size_t i = 0; got == 0 && i < td->nsyscalls; i++)
		if (td->syscalls[i].nr == SYS_write && ++nw <= 6)
			writes[nw - 1] = (size_t)td->syscalls[i].pos;
	CHECK(got == 0 && nw == 6, "tail_work's event recording: %zu writes", nw);
	if (got == 0 && nw == 6)
		return 0;
	if (got == 0)
		trace_data_free(td);
	return -1;
}

/* tail_work's event recording (tail_work_writes), its program's path in
 * prog and load address in *base, and its end replayed (event_end_open):
 * NULL after a failed check (nothing to free). */
static struct event_end *tail_work_end(const char *ptrev, const char *dir, const char *work,
				       struct trace_data *td, size_t writes[6], char prog[4096],
				       uint64_t *base)
{
	char err[512];
	if (tail_work_writes(ptrev, dir, work, td, writes) < 0)
		return NULL;
	snprintf(prog, 4096, "%s/tail_work", dir);
	*base = load_base(td, "tail_work");
	struct event_end *ee = *base ? event_end_open(td, NULL, err, sizeof err) : NULL;
	CHECK(ee, "tail_work's end replayed (base %#llx): %s", (unsigned long long)*base,
	      ee ? "" : err);
	if (!ee)
		trace_data_free(td);
	return ee;
}

static void tail_search_case(const char *ptrev, const char *dir, const char *work)
{
	char err[512], prog[4096];
	struct trace_data td;
	size_t writes[6];
	if (tail_work_writes(ptrev, dir, work, &td, writes) < 0)
		return;
	snprintf(prog, sizeof prog, "%s/tail_work", dir);
	uint64_t base = load_base(&td, "tail_work");
	uint64_t done = base + symbol(prog, "round_done"), fold = base + symbol(prog, "fold");
	CHECK(base, "tail_work's load address");
	if (!base) {
		trace_data_free(&td);
		return;
	}
	size_t k = 0;
	uint64_t total = base + symbol(prog, "total");
	struct event_search_point pdone = {done, DR_EXEC, 1}, pfold = {fold, DR_EXEC, 1};
	struct event_search_point both[2] = {pdone, pfold};
	struct event_search_point never = {base, DR_EXEC, 1}; /* its ELF header */
	struct event_search_point wtotal = {total, DR_WRITE, 4};
	/* A tail that begins after round 5's write: round 4's round_done is the
	 * last hit before it, in the stretch that ends with round 5's write. */
	int rc = event_end_tail_search(&td, writes[5] + 1, NULL, &pdone, 1, &k, NULL, err, sizeof err);
	CHECK(rc == 1 && k == writes[5], "round_done before the last round's: %d, stretch "
	      "%zu (want %zu) %s", rc, k, writes[5], rc < 0 ? err : "");
	/* The same tail, fold: round 5's computation, in the stretch that
	 * ends with its write. */
	rc = event_end_tail_search(&td, writes[5] + 1, NULL, &pfold, 1, &k, NULL, err, sizeof err);
	CHECK(rc == 1 && k == writes[5], "fold before the last round's round_done: %d, stretch "
	      "%zu (want %zu) %s", rc, k, writes[5], rc < 0 ? err : "");
	/* A tail that begins after round 4's write holds round 4's round_done:
	 * the last hit before it is round 4's computation (fold), in the
	 * stretch that ends with that write. */
	rc = event_end_tail_search(&td, writes[5], NULL, both, 2, &k, NULL, err, sizeof err);
	CHECK(rc == 1 && k == writes[4], "fold or round_done before round 4's round_done: %d, "
	      "stretch %zu (want %zu) %s", rc, k, writes[4], rc < 0 ? err : "");
	/* A watchpoint: total is written by round_done only; before that tail,
	 * by round 3's, in the stretch that ends with round 4's write. */
	rc = event_end_tail_search(&td, writes[5], NULL, &wtotal, 1, &k, NULL, err, sizeof err);
	CHECK(rc == 1 && k == writes[4], "a write of total before round 4's round_done: %d, "
	      "stretch %zu (want %zu) %s", rc, k, writes[4], rc < 0 ? err : "");
	/* Before round 0's round_done, none; an address never executed, none. */
	rc = event_end_tail_search(&td, writes[0] + 1, NULL, &pdone, 1, &k, NULL, err, sizeof err);
	CHECK(rc == 0, "round_done before round 0's: %d %s", rc, rc < 0 ? err : "");
	rc = event_end_tail_search(&td, writes[0] + 1, NULL, &wtotal, 1, &k, NULL, err, sizeof err);
	CHECK(rc == 0, "a write of total before round 0's round_done: %d %s", rc,
	      rc < 0 ? err : "");
	rc = event_end_tail_search(&td, writes[5] + 1, NULL, &never, 1, &k, NULL, err, sizeof err);
	CHECK(rc == 0, "an address never executed: %d %s", rc, rc < 0 ? err : "");
	/* More points than the debug registers the search may use. */
	struct event_search_point four[4] = {pdone, pfold, never, wtotal};
	rc = event_end_tail_search(&td, writes[5] + 1, NULL, four, 4, &k, NULL, err, sizeof err);
	CHECK(rc < 0, "four points refused: %d", rc);
	/* Given up (gdb's Ctrl-C) when asked: -2, told apart from a failure;
	 * asked and not given up, found as before. */
	int asked = 0;
	struct event_give_up stop = {ask_stop, &asked}, go_on = {ask_go_on, &asked};
	rc = event_end_tail_search(&td, writes[5] + 1, NULL, &pdone, 1, &k, &stop, err, sizeof err);
	CHECK(rc == -2 && asked == 1, "given up: %d, asked %d", rc, asked);
	rc = event_end_tail_search(&td, writes[5] + 1, NULL, &pdone, 1, &k, &go_on, err, sizeof err);
	CHECK(rc == 1 && k == writes[5] && asked >= 2, "not given up: %d (%zu), asked %d", rc, k,
	      asked);
	trace_data_free(&td);
}

/* The run a thread of a multi-threaded event recording was in at its last
 * hit before a run (event_end_tail_search_run), on rev_threads: bump_a
 * only ever runs in worker A, bump_b in worker B, bump_s once, in B's
 * signal handler, and each worker's function runs once, at its start.
 * The threads are told apart by those functions alone: the run of the
 * last bump_s is one of B's (the thread of the last bump_b), the last
 * bump_a and worker_a's start are A's, another thread, and nothing calls
 * bump_s before its one call. Before this, a search armed the first
 * thread only (a new thread has none of its creator's debug registers):
 * no hit in a worker was seen. */
static void tail_search_run_case(const char *ptrev, const char *dir, const char *work)
{
	char err[512], prog[4096];
	struct trace_data td;
	record_backend = "event";
	int got = recorded_data(ptrev, dir, work, "rev_threads", NULL, 1, &td);
	record_backend = "sw";
	if (got < 0) {
		trace_data_free(&td);
		return;
	}
	snprintf(prog, sizeof prog, "%s/rev_threads", dir);
	struct event_search_point pa = {symbol(prog, "bump_a"), DR_EXEC, 1};
	struct event_search_point pb = {symbol(prog, "bump_b"), DR_EXEC, 1};
	struct event_search_point ps = {symbol(prog, "bump_s"), DR_EXEC, 1};
	struct event_search_point pw = {symbol(prog, "worker_a"), DR_EXEC, 1};
	struct event_search_point never = {0x400000, DR_EXEC, 1}; /* its ELF header */
	size_t last = td.nsched ? td.nsched - 1 : 0, ra = 0, rb = 0, rs = 0, rw = 0, r = 0;
	/* THREAD records: each thread's start and its exit. */
	CHECK(td.nthreads >= 3 && last > 4 && pa.addr && ps.addr,
	      "rev_threads' event recording: %zu THREAD records, %zu runs", td.nthreads, td.nsched);
	if (td.nthreads < 3 || last <= 4 || !pa.addr || !ps.addr) {
		trace_data_free(&td);
		return;
	}
	int rc_a = event_end_tail_search_run(&td, last, &pa, 1, &ra, NULL, NULL, err, sizeof err);
	int rc_b = event_end_tail_search_run(&td, last, &pb, 1, &rb, NULL, NULL, err, sizeof err);
	int rc_s = event_end_tail_search_run(&td, last, &ps, 1, &rs, NULL, NULL, err, sizeof err);
	int rc_w = event_end_tail_search_run(&td, last, &pw, 1, &rw, NULL, NULL, err, sizeof err);
	CHECK(rc_a == 1 && rc_b == 1 && rc_s == 1 && rc_w == 1 && ra < last && rb < last &&
	      rs < last && rw < last, "each worker's hits found before the last run: %d %d %d %d, "
	      "runs %zu %zu %zu %zu of %zu %s", rc_a, rc_b, rc_s, rc_w, ra, rb, rs, rw, td.nsched,
	      err);
	if (rc_a != 1 || rc_b != 1 || rc_s != 1 || rc_w != 1) {
		trace_data_free(&td);
		return;
	}
	pid_t a = td.sched[ra].tid, b = td.sched[rb].tid;
	CHECK(a != b && a != td.threads[0].tid && b != td.threads[0].tid &&
	      td.sched[rs].tid == b && td.sched[rw].tid == a && rw <= ra,
	      "the hits' runs are their threads': bump_a in %d, bump_b in %d, bump_s in %d, "
	      "worker_a in %d (main %d)", (int)a, (int)b, (int)td.sched[rs].tid,
	      (int)td.sched[rw].tid, (int)td.threads[0].tid);
	/* Up to the run of bump_s's one call: none before it; one run later,
	 * that run. */
	int rc = event_end_tail_search_run(&td, rs, &ps, 1, &r, NULL, NULL, err, sizeof err);
	CHECK(rc == 0, "no bump_s before the run of its one call: %d %s", rc, rc < 0 ? err : "");
	r = 0;
	rc = event_end_tail_search_run(&td, rs + 1, &ps, 1, &r, NULL, NULL, err, sizeof err);
	CHECK(rc == 1 && r == rs, "bump_s before the run after its call: %d, run %zu (want %zu)",
	      rc, r, rs);
	/* Two points: the later of their last hits. */
	struct event_search_point two[2] = {pw, ps};
	rc = event_end_tail_search_run(&td, last, two, 2, &r, NULL, NULL, err, sizeof err);
	CHECK(rc == 1 && r == (rs > rw ? rs : rw), "worker_a or bump_s: %d, run %zu", rc, r);
	rc = event_end_tail_search_run(&td, last, &never, 1, &r, NULL, NULL, err, sizeof err);
	CHECK(rc == 0, "an address never executed: %d %s", rc, rc < 0 ? err : "");
	rc = event_end_tail_search_run(&td, 0, &ps, 1, &r, NULL, NULL, err, sizeof err);
	CHECK(rc < 0, "no run before the first: %d", rc);
	trace_data_free(&td);
}

/* A piece of the history (materialise_cut): tail_work's event recording
 * cut at round 3's write, its tail from after round 1's write. The
 * oracle is the tail from the same event to the recording's end: the
 * piece must hold exactly its first stretches, the same events at the
 * same positions, and decode to the instructions up to round 3's write,
 * no more. */
static void piece_case(const char *ptrev, const char *dir, const char *work)
{
	char err[512];
	struct trace_data td, view, piece, tail;
	size_t writes[6];
	if (tail_work_writes(ptrev, dir, work, &td, writes) < 0)
		return;
	size_t from = writes[1] + 1, last = writes[3];
	CHECK(materialise_cut(&td, last, &view) == 0 && !view.complete &&
	      view.nsyscalls < td.nsyscalls && view.syscalls[view.nsyscalls - 1].pos == last,
	      "the recording cut at event %zu: %zu of %zu syscalls, the last at %llu", last,
	      view.nsyscalls, td.nsyscalls,
	      (unsigned long long)(view.nsyscalls ? view.syscalls[view.nsyscalls - 1].pos : 0));
	struct materialise_stats ps, ts;
	int prc = materialise_tail_to_memory(&view, from, NULL, 0, &piece, &ps, NULL, NULL, err,
					     sizeof err);
	CHECK(prc == 0, "the piece from event %zu to %zu: %s", from, last, prc ? err : "made");
	int trc = materialise_tail_to_memory(&td, from, NULL, 0, &tail, &ts, NULL, NULL, err,
					     sizeof err);
	CHECK(trc == 0, "the tail from event %zu: %s", from, trc ? err : "made");
	if (prc == 0 && trc == 0) {
		/* Its events: the tail's first ones, at the same positions. */
		bool same = piece.nsyscalls > 0 && piece.nsyscalls < tail.nsyscalls;
		for (size_t i = 0; same && i < piece.nsyscalls; i++)
			same = piece.syscalls[i].nr == tail.syscalls[i].nr &&
			       piece.syscalls[i].pos == tail.syscalls[i].pos;
		CHECK(same && piece.syscalls[piece.nsyscalls - 1].nr == SYS_write,
		      "the piece's %zu syscalls are the tail's first, at the same positions, "
		      "ending with round 3's write", piece.nsyscalls);
		/* Its instructions: those before the next event of the tail. */
		uint64_t pinsns = 0, perrs = 0, tinsns = 0, terrs = 0;
		int d1 = trace_decode_count(&piece, 0, &pinsns, &perrs, err, sizeof err);
		int d2 = trace_decode_count(&tail, 0, &tinsns, &terrs, err, sizeof err);
		uint64_t next = tail.syscalls[piece.nsyscalls].pos;
		uint64_t lastpos = piece.syscalls[piece.nsyscalls - 1].pos;
		CHECK(d1 == 0 && d2 == 0 && perrs == 0 && terrs == 0 && pinsns == ps.instructions &&
		      pinsns > lastpos && pinsns <= next && ps.instructions < ts.instructions,
		      "the piece decodes to %llu instructions (made %llu; its last event at %llu, "
		      "the tail's next at %llu of %llu), %llu errors",
		      (unsigned long long)pinsns, (unsigned long long)ps.instructions,
		      (unsigned long long)lastpos, (unsigned long long)next,
		      (unsigned long long)tinsns, (unsigned long long)perrs);
		printf("piece: %llu instructions, tail %llu\n", (unsigned long long)pinsns,
		       (unsigned long long)tinsns);
	}
	if (prc == 0)
		trace_data_free(&piece);
	if (trc == 0)
		trace_data_free(&tail);
	/* Events out of order: no cut. */
	struct trace_data bad = td;
	struct trace_syscall *sc = malloc(td.nsyscalls * sizeof *sc);
	if (sc && td.nsyscalls > 1) {
		memcpy(sc, td.syscalls, td.nsyscalls * sizeof *sc);
		sc[0] = td.syscalls[1];
		sc[1] = td.syscalls[0];
		bad.syscalls = sc;
		CHECK(materialise_cut(&bad, last, &view) < 0, "a recording whose events are out of "
		      "order is not cut");
	}
	free(sc);
	trace_data_free(&td);
}

/* A piece of the history that ends at a breakpoint's hit inside a stretch
 * (event_end_hit_point, materialise_cut_at): tail_work's fold, called
 * with i = 255, 511, ... (every 256th pass) in each round's stretch, 39
 * times in a round of 10,000 passes. The search names the last hit's
 * number in its stretch; the replay to hit n stops with fold's first
 * instruction to run and i = 256 n - 1 (the oracle: the program's own
 * arithmetic); hit 40 never comes. The piece from the stretch's start to
 * a hit decodes without errors and holds fewer instructions than the
 * piece of the whole stretch, the earlier hit's fewer still. */
static void hit_point_case(const char *ptrev, const char *dir, const char *work)
{
	char err[512], prog[4096];
	struct trace_data td;
	size_t writes[6];
	uint64_t base;
	struct event_end *ee = tail_work_end(ptrev, dir, work, &td, writes, prog, &base);
	if (!ee)
		return;
	uint64_t fold = base + symbol(prog, "fold");
	struct event_search_point pfold = {fold, DR_EXEC, 1};
	size_t k = 0;
	uint64_t nth = 0;
	int rc = event_end_tail_search_near(ee, &td, writes[5] + 1, NULL, &pfold, 1, &k, &nth, NULL,
					    err, sizeof err);
	CHECK(rc == 1 && k == writes[5] && nth == 39, "fold's last hit before round 5's "
	      "round_done: %d, stretch %zu (want %zu), hit %llu of it (want 39) %s", rc, k,
	      writes[5], (unsigned long long)nth, rc < 0 ? err : "");
	uint64_t insns[2] = {0, 0}, cpu[2] = {0, 0};
	const uint64_t hits[2] = {1, 39};
	for (size_t h = 0; h < 2; h++) {
		struct trace_state st;
		uint8_t sp[STATE_RECORD_SP_LEN];
		rc = event_end_hit_point(ee, &td, writes[5], hits[h], &pfold, 1, NULL, &st, sp,
					 &cpu[h], err, sizeof err);
		uint64_t i = st.regs[13] & 0xffffffffu; /* rsi: fold's i */
		CHECK(rc == 1 && st.regs[16] == fold && i == 256 * hits[h] - 1 &&
		      st.pos == writes[5] && st.sp_len > 0, "hit %llu of fold: %d at %#llx, i %llu, "
		      "event %llu %s", (unsigned long long)hits[h], rc,
		      (unsigned long long)st.regs[16], (unsigned long long)i,
		      (unsigned long long)st.pos, rc < 0 ? err : "");
		if (rc != 1)
			continue;
		struct trace_data view, piece;
		struct trace_state *owned = NULL;
		struct materialise_stats ps;
		int cut = materialise_cut_at(&td, &st, &view, &owned);
		CHECK(cut == 0 && view.nstates > 0 &&
		      view.states[view.nstates - 1].regs[16] == fold &&
		      view.syscalls[view.nsyscalls - 1].pos < writes[5],
		      "the recording cut at hit %llu: its last event the hit",
		      (unsigned long long)hits[h]);
		int prc = cut ? -1 : materialise_tail_to_memory(&view, writes[5], NULL, 0, &piece,
								&ps, NULL, NULL, err, sizeof err);
		CHECK(prc == 0, "the piece to hit %llu: %s", (unsigned long long)hits[h],
		      prc ? err : "made");
		if (prc == 0) {
			uint64_t n = 0, errs = 0;
			int d = trace_decode_count(&piece, 0, &n, &errs, err, sizeof err);
			CHECK(d == 0 && errs == 0 && n == ps.instructions, "it decodes to %llu "
			      "instructions (made %llu), %llu errors", (unsigned long long)n,
			      (unsigned long long)ps.instructions, (unsigned long long)errs);
			insns[h] = n;
			trace_data_free(&piece);
		}
		free(owned);
	}
	struct trace_data view, whole;
	struct materialise_stats ws;
	int wrc = materialise_cut(&td, writes[5], &view) == 0
			  ? materialise_tail_to_memory(&view, writes[5], NULL, 0, &whole, &ws, NULL,
						       NULL, err, sizeof err)
			  : -1;
	CHECK(wrc == 0 && insns[0] > 0 && insns[0] < insns[1] && insns[1] < ws.instructions,
	      "the pieces to hits 1 and 39 hold %llu and %llu instructions, the whole stretch's "
	      "%llu", (unsigned long long)insns[0], (unsigned long long)insns[1],
	      (unsigned long long)(wrc == 0 ? ws.instructions : 0));
	if (wrc == 0)
		trace_data_free(&whole);
	/* The thread's own run to each hit, counted by the hit's replay:
	 * what point_before_hit measures the way to a hit by. */
	CHECK(cpu[0] > 0 && cpu[1] > cpu[0], "the thread ran %llu ns to hit 1, %llu ns to hit 39",
	      (unsigned long long)cpu[0], (unsigned long long)cpu[1]);
	struct trace_state st;
	uint8_t sp[STATE_RECORD_SP_LEN];
	rc = event_end_hit_point(ee, &td, writes[5], 40, &pfold, 1, NULL, &st, sp, NULL, err,
				 sizeof err);
	CHECK(rc == 0, "hit 40 of fold in a stretch of 39: none (%d: %s)", rc, err);
	event_end_close(ee);
	trace_data_free(&td);
}

/* The end's copies (event_end_open on a one-thread recording: copies of
 * its replay kept before the events 16, 32, ... from the end), on
 * tail_work's event recording. A search for the last hit before a tail
 * (event_end_tail_search_near) starts at the copy nearest before it and
 * goes back copy by copy: it must find what the search from the
 * program's start finds (the oracle), hit or none. A tail made from a
 * copy (materialise_copies.from) must be the tail made from the start:
 * the same events at the same positions, the same instructions. */
static void end_copies_case(const char *ptrev, const char *dir, const char *work)
{
	char err[512], prog[4096];
	struct trace_data td;
	size_t writes[6];
	uint64_t base;
	struct event_end *ee = tail_work_end(ptrev, dir, work, &td, writes, prog, &base);
	if (!ee)
		return;
	size_t nev = materialise_event_count(&td), next = 0;
	pid_t probe = event_end_take_copy(ee, nev, &next);
	CHECK(probe > 0 && next + 16 == nev, "a copy 16 events before the end (%zu of %zu)", next,
	      nev);
	ptrace_park_kill(probe);
	struct event_search_point pdone = {base + symbol(prog, "round_done"), DR_EXEC, 1};
	struct event_search_point pfold = {base + symbol(prog, "fold"), DR_EXEC, 1};
	struct event_search_point wtotal = {base + symbol(prog, "total"), DR_WRITE, 4};
	struct event_search_point never = {base, DR_EXEC, 1};
	const struct {
		struct event_search_point p;
		size_t from;
	} cases[] = {
		{pdone, writes[5] + 1}, {pfold, writes[5] + 1}, {wtotal, writes[5]},
		{pdone, writes[2] + 1}, {wtotal, writes[1]}, {pdone, writes[0] + 1},
		{never, writes[5] + 1}, {pdone, nev - 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t k1 = 0, k2 = 0;
		int r1 = event_end_tail_search(&td, cases[i].from, NULL, &cases[i].p, 1, &k1, NULL,
					       err, sizeof err);
		int r2 = event_end_tail_search_near(ee, &td, cases[i].from, NULL, &cases[i].p, 1,
						    &k2, NULL, NULL, err, sizeof err);
		CHECK(r1 >= 0 && r1 == r2 && (r1 == 0 || k1 == k2),
		      "search %zu before event %zu: from the copies %d (%zu), from the start %d "
		      "(%zu) %s", i, cases[i].from, r2, k2, r1, k1, r1 < 0 || r2 < 0 ? err : "");
	}
	/* A tail from after round 5's write, from a copy and from the start. */
	size_t from = writes[5] + 1;
	struct materialise_copies copies = {0};
	copies.from = event_end_take_copy(ee, from, &copies.from_next);
	struct trace_data a, b;
	struct materialise_stats sa, sb;
	int ra = materialise_tail_to_memory(&td, from, NULL, 0, &a, &sa, NULL, &copies, err,
					    sizeof err);
	ptrace_park_kill(copies.start);
	int rb = materialise_tail_to_memory(&td, from, NULL, 0, &b, &sb, NULL, NULL, err,
					    sizeof err);
	CHECK(ra == 0 && rb == 0, "the tail from event %zu, from a copy and from the start: %s",
	      from, err);
	if (ra == 0 && rb == 0) {
		uint64_t na = 0, nb = 0, ea = 0, eb = 0;
		bool same = a.nsyscalls == b.nsyscalls;
		for (size_t i = 0; same && i < a.nsyscalls; i++)
			same = a.syscalls[i].nr == b.syscalls[i].nr &&
			       a.syscalls[i].pos == b.syscalls[i].pos;
		CHECK(trace_decode_count(&a, 0, &na, &ea, err, sizeof err) == 0 &&
		      trace_decode_count(&b, 0, &nb, &eb, err, sizeof err) == 0 && same &&
		      na == nb && ea == 0 && eb == 0 && na == sa.instructions,
		      "the same tail: %llu and %llu instructions, syscalls %s",
		      (unsigned long long)na, (unsigned long long)nb, same ? "the same" : "differ");
		CHECK(sa.resumed_at > 0 && sa.resumed_at == copies.from_next && sb.resumed_at == 0,
		      "the first began at the copy (%zu events done), the second at the start (%zu)",
		      sa.resumed_at, sb.resumed_at);
		printf("end copies: a tail of %llu instructions from event %zu, made from the copy "
		       "at event %zu\n", (unsigned long long)na, from, sa.resumed_at);
	}
	if (ra == 0)
		trace_data_free(&a);
	if (rb == 0)
		trace_data_free(&b);
	event_end_close(ee);
	trace_data_free(&td);
}

/* Compare what two replayers of the same history show at pos: every
 * general register and the 64 bytes at the stack pointer. */
static bool same_state_at(struct replayer *a, struct replayer *b, uint64_t pos, char *why,
			  size_t whylen)
{
	struct user_regs_struct ra, rb;
	uint8_t ma[64], mb[64];
	if (replayer_seek(a, 0, pos, why, whylen) < 0 || replayer_seek(b, 0, pos, why, whylen) < 0)
		return false;
	if (replayer_get_regs(a, &ra) < 0 || replayer_get_regs(b, &rb) < 0) {
		snprintf(why, whylen, "no registers");
		return false;
	}
	if (replayer_read_mem(a, ra.rsp, ma, sizeof ma) != (ssize_t)sizeof ma ||
	    replayer_read_mem(b, rb.rsp, mb, sizeof mb) != (ssize_t)sizeof mb) {
		snprintf(why, whylen, "no stack");
		return false;
	}
	if (memcmp(&ra, &rb, sizeof ra) != 0 || memcmp(ma, mb, sizeof ma) != 0) {
		snprintf(why, whylen, "they differ at %llu (rip %#llx and %#llx)",
			 (unsigned long long)pos, (unsigned long long)ra.rip,
			 (unsigned long long)rb.rip);
		return false;
	}
	return true;
}

/* A tail's replayer starting from the copy its materialisation parked
 * where the tail begins (start_copy, ptrace_handover.h) instead of
 * replaying the recording natively to there once more: made by another
 * thread (a job, as the gdb session makes its tails) and adopted by this
 * one. The oracle: a replayer of the same tail that replays to its start,
 * at the tail's first, middle and last positions. A copy nobody uses is
 * killed with its replayer. */
static void start_copy_case(const char *ptrev, const char *dir, const char *work)
{
	char err[512], why[512] = "";
	struct trace_data td, tail;
	struct materialise_stats ts;
	size_t writes[6];
	if (tail_work_writes(ptrev, dir, work, &td, writes) < 0)
		return;
	size_t from = writes[4] + 1;
	struct materialise_copies copies = {0};
	struct materialise_job *j = materialise_job_start_tail(&td, from, NULL, 0, &copies, err,
								sizeof err);
	int rc = j ? materialise_job_finish(j, &tail, &ts, &copies, err, sizeof err) : -1;
	pid_t copy = copies.start;
	CHECK(rc == 0 && copy > 0, "the tail from event %zu made in a job, a copy parked where "
	      "it begins: %s (copy %d)", from, rc ? err : "made", (int)copy);
	if (rc < 0) {
		trace_data_free(&td);
		return;
	}
	uint64_t n = 0, errs = 0;
	CHECK(trace_decode_count(&tail, 0, &n, &errs, err, sizeof err) == 0 && errs == 0 &&
	      n > 100, "the tail decodes to %llu instructions", (unsigned long long)n);
	struct replayer *adopted = replayer_new(&tail, err, sizeof err);
	struct replayer *replayed = replayer_new(&tail, err, sizeof err);
	CHECK(adopted && replayed, "replayers of the tail: %s", err);
	if (adopted && replayed) {
		replayer_seal(adopted);
		replayer_seal(replayed);
		replayer_set_events(adopted, &td);
		replayer_set_events(replayed, &td);
		replayer_give_start(adopted, copy);
		copy = 0;
		uint64_t at[] = {0, n / 2, n - 1};
		for (size_t i = 0; i < 3; i++)
			CHECK(same_state_at(adopted, replayed, at[i], why, sizeof why),
			      "at position %llu of the tail, the adopted copy's state is the "
			      "replayed one's: %s", (unsigned long long)at[i], why);
		struct replayer_stats a, b;
		replayer_get_stats(adopted, &a);
		replayer_get_stats(replayed, &b);
		printf("start copy: a tail of %llu instructions from event %zu, adopted %llu\n",
		       (unsigned long long)n, from, (unsigned long long)a.adopted);
		CHECK(a.adopted == 1 && a.launches == 1 && b.adopted == 0 && b.launches == 1,
		      "the first replayer started from the copy (adopted %llu of %llu launches), "
		      "the second replayed (%llu of %llu)", (unsigned long long)a.adopted,
		      (unsigned long long)a.launches, (unsigned long long)b.adopted,
		      (unsigned long long)b.launches);
	}
	replayer_free(adopted);
	replayer_free(replayed);
	trace_data_free(&tail);
	/* Made in this thread, given to a replayer that never shows a state:
	 * killed with it. */
	rc = materialise_tail_to_memory(&td, from, NULL, 0, &tail, &ts, NULL, &copies, err,
					sizeof err);
	copy = copies.start;
	CHECK(rc == 0 && copy > 0, "the same tail made in this thread, a copy parked: %s (%d)",
	      rc ? err : "made", (int)copy);
	if (rc == 0) {
		struct replayer *unused = replayer_new(&tail, err, sizeof err);
		if (unused)
			replayer_give_start(unused, copy);
		replayer_free(unused);
		if (!unused)
			ptrace_park_kill(copy);
		CHECK(copy > 0 && kill(copy, 0) < 0 && errno == ESRCH,
		      "the unused copy %d is gone with its replayer", (int)copy);
		trace_data_free(&tail);
	}
	trace_data_free(&td);
}

/* The whole history's checkpoints (materialise_copies' cps): copies of
 * its replay that its making (in a job, as the session makes it) leaves
 * on the way, inside stretches too, about twice as far apart at each
 * step back from the end, given to its replayer and adopted as its first
 * checkpoints. The oracle: a replayer of the same history without them,
 * at the newest copies' positions, one instruction before and after each,
 * the middle and the end. A copy given for a position it does not stand
 * at is dropped; copies given to a replayer that shows nothing are killed
 * with it. */
static void checkpoints_case(const char *ptrev, const char *dir, const char *work)
{
	char err[512], why[512] = "";
	struct trace_data td, made;
	struct materialise_stats ms;
	size_t writes[6];
	if (tail_work_writes(ptrev, dir, work, &td, writes) < 0)
		return;
	struct materialise_copies copies = {0};
	struct materialise_job *j = materialise_job_start(&td, err, sizeof err);
	int rc = j ? materialise_job_finish(j, &made, &ms, &copies, err, sizeof err) : -1;
	CHECK(rc == 0 && copies.ncps >= 6, "the whole history made in a job, %zu copies kept on "
	      "the way: %s", copies.ncps, rc ? err : "made");
	if (rc < 0 || copies.ncps < 6) {
		materialise_copies_kill(&copies);
		if (rc == 0)
			trace_data_free(&made);
		trace_data_free(&td);
		return;
	}
	uint64_t n = ms.instructions;
	size_t k = copies.ncps;
	/* The newer half in a shorter span than the older. */
	bool spaced = copies.cp_pos[k - 1] < n && n - copies.cp_pos[k - 1] < n / 16 &&
		      copies.cp_pos[k - 1] - copies.cp_pos[k / 2] <
			      copies.cp_pos[k / 2] - copies.cp_pos[0];
	for (size_t i = 1; i < k; i++)
		spaced &= copies.cp_pos[i] > copies.cp_pos[i - 1];
	for (size_t i = 0; i < k; i++)
		printf("checkpoint %zu at %llu\n", i, (unsigned long long)copies.cp_pos[i]);
	CHECK(spaced, "the copies lie closer together towards the end (%zu, the newest at %llu of "
	      "%llu instructions)", k, (unsigned long long)copies.cp_pos[k - 1],
	      (unsigned long long)n);
	struct replayer *given = replayer_new(&made, err, sizeof err);
	struct replayer *plain = replayer_new(&made, err, sizeof err);
	CHECK(given && plain, "replayers of the whole history: %s", err);
	uint64_t at[3 * 6 + 2];
	size_t nat = 0;
	for (size_t i = k - 6; i < k; i++) {
		at[nat++] = copies.cp_pos[i] - 1;
		at[nat++] = copies.cp_pos[i];
		at[nat++] = copies.cp_pos[i] + 1;
	}
	at[nat++] = n / 2;
	at[nat++] = n - 1;
	/* The oldest given one instruction further on than it stands. */
	copies.cp_pos[0]++;
	if (given && plain) {
		replayer_seal(given);
		replayer_seal(plain);
		replayer_set_events(given, &td);
		replayer_set_events(plain, &td);
		replayer_give_checkpoints(given, copies.cp_pos, copies.cp_pid, k);
		copies.ncps = 0;
		for (size_t i = 0; i < nat; i++)
			CHECK(same_state_at(given, plain, at[i], why, sizeof why),
			      "at position %llu, the state from the given copies is the replayed "
			      "one's: %s", (unsigned long long)at[i], why);
		struct replayer_stats a, b;
		replayer_get_stats(given, &a);
		replayer_get_stats(plain, &b);
		printf("checkpoints: %zu copies given for %llu instructions, %llu adopted\n", k,
		       (unsigned long long)n, (unsigned long long)a.given);
		CHECK(a.given == k - 1 && b.given == 0,
		      "every copy adopted but the one given for another position (%llu of %zu), "
		      "none without (%llu)", (unsigned long long)a.given, k,
		      (unsigned long long)b.given);
	}
	replayer_free(given);
	replayer_free(plain);
	materialise_copies_kill(&copies);
	trace_data_free(&made);
	/* Made in this thread, given to a replayer that never shows a state:
	 * killed with it. */
	rc = materialise_tail_to_memory(&td, 0, NULL, 0, &made, &ms, NULL, &copies, err,
					sizeof err);
	CHECK(rc == 0 && copies.ncps > 0, "the same history made in this thread, %zu copies: %s",
	      copies.ncps, rc ? err : "made");
	if (rc == 0) {
		pid_t pids[MATERIALISE_CHECKPOINTS];
		k = copies.ncps;
		memcpy(pids, copies.cp_pid, k * sizeof *pids);
		struct replayer *unused = replayer_new(&made, err, sizeof err);
		if (unused) {
			replayer_give_checkpoints(unused, copies.cp_pos, copies.cp_pid, k);
			copies.ncps = 0;
		}
		replayer_free(unused);
		materialise_copies_kill(&copies);
		bool gone = true;
		for (size_t i = 0; i < k; i++)
			gone &= kill(pids[i], 0) < 0 && errno == ESRCH;
		CHECK(gone, "the %zu unused copies are gone with their replayer", k);
		trace_data_free(&made);
	}
	trace_data_free(&td);
}

/* Record NAME, single-step it independently, compare the replayed state at
 * many positions; full: also the checks that need rep_basic's layout
 * (recorded pid, heap contents, reverse steps, a tampered copy). */
static int state_case(const char *ptrev, const char *dir, const char *work,
		      const char *name, bool full)
{
	char prog[4096], input[4096], trace[4096], trace2[4096], tampered[4096], outf[4096];
	snprintf(prog, sizeof prog, "%s/%s", dir, name);
	snprintf(input, sizeof input, "%s/input-%s.txt", work, name);
	snprintf(trace, sizeof trace, "%s/%s.ptrev", work, name);
	snprintf(trace2, sizeof trace2, "%s/%s-start.ptrev", work, name);
	snprintf(tampered, sizeof tampered, "%s/%s-tampered.ptrev", work, name);
	snprintf(outf, sizeof outf, "%s/%s.out", work, name);
	printf("== %s\n", name);
	FILE *f = fopen(input, "w");
	fputs("the recorded input: 0123456789 abcdefghij\n", f);
	fclose(f);

	char *pargv[] = { prog, input, NULL };
	int rc = run_record(ptrev, trace, pargv, outf);
	if (rc != 0) {
		printf("FAIL: ptrev record exited %d\n", rc);
		return 1;
	}
	struct trace_data td;
	char err[512];
	if (trace_read_file(trace, &td, err, sizeof err) < 0) {
		printf("FAIL: %s\n", err);
		return 1;
	}
	/* The AT_RANDOM bytes: from the recording, else from the program's
	 * own output (then added to a copy, with the environment we gave). */
	uint8_t at_random[16];
	const char *ar = trace_meta(&td, "at_random");
	char printed[64] = "";
	f = fopen(outf, "r");
	if (!f || !fgets(printed, sizeof printed, f)) {
		printf("FAIL: no output from the recorded program\n");
		return 1;
	}
	fclose(f);
	printed[32] = 0;
	if (!ar) {
		printf("note: the recording has no start state (record_startup_meta "
		       "not called by the recorder yet): adding it to a copy\n");
		/* The auxv as record_startup_meta reads it from a launch with
		 * the same argv and environment (also checks that function). */
		char *auxv = startup_meta_case(pargv, work);
		const char *extra[] = { "env", test_env[0], "env", test_env[1], "env",
					test_env[2], "env_count", "3", "at_random", printed,
					auxv ? "auxv" : NULL, auxv, NULL };
		if (copy_trace(&td, trace2, extra, NULL) < 0) {
			printf("FAIL: cannot copy the recording\n");
			return 1;
		}
		free(auxv);
		trace_data_free(&td);
		if (trace_read_file(trace2, &td, err, sizeof err) < 0) {
			printf("FAIL: %s\n", err);
			return 1;
		}
		ar = trace_meta(&td, "at_random");
	}
	CHECK(strcmp(ar, printed) == 0, "at_random META %s, program printed %s", ar, printed);
	for (int i = 0; i < 16; i++) {
		unsigned v;
		sscanf(ar + 2 * i, "%2x", &v);
		at_random[i] = (uint8_t)v;
	}

	struct prog_info pi = { symbol(prog, "g_sum"), symbol(prog, "g_heap") };
	CHECK(pi.g_sum && pi.g_heap, "symbols of rep_basic");
	uint64_t count = td.end.instructions;
	printf("recorded %llu instructions, %zu syscalls, %zu signals, %zu rdtsc\n",
	       (unsigned long long)count, td.nsyscalls, td.nsignals, td.nrdtsc);

	/* Positions: spread over the run, and the instruction after every
	 * syscall and signal (where emulation shows). */
	size_t cap = 400, n = 0;
	struct snap *snaps = calloc(cap, sizeof *snaps);
	srand(1234);
	for (int i = 0; i < 120; i++)
		snaps[n++].pos = (uint64_t)rand() % count;
	for (size_t i = 0; i < td.nsyscalls && n + 2 < cap; i++) {
		if (td.syscalls[i].pos + 1 < count)
			snaps[n++].pos = td.syscalls[i].pos + 1;
	}
	for (size_t i = 0; i < td.nsignals && n + 2 < cap; i++)
		snaps[n++].pos = td.signals[i].pos;
	snaps[n++].pos = count - 1;
	qsort(snaps, n, sizeof *snaps, by_pos);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || snaps[m - 1].pos != snaps[i].pos)
			snaps[m++] = snaps[i];
	n = m;

	long ref_count = ref_run(prog, pargv, at_random, &td, &pi, snaps, n);
	CHECK(ref_count == (long)count, "reference run: %ld instructions, recording %llu",
	      ref_count, (unsigned long long)count);

	/* The input changes after recording: replay must not care. */
	f = fopen(input, "w");
	fputs("CHANGED!\n", f);
	fclose(f);

	struct replayer *rp = replayer_new(&td, err, sizeof err);
	if (!rp) {
		printf("FAIL: replayer_new: %s\n", err);
		return 1;
	}
	/* Random order: forward and backward moves. */
	size_t *order = malloc(n * sizeof *order);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)rand() % (i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	int compared = 0;
	for (size_t k = 0; k < n; k++) {
		struct snap *s = &snaps[order[k]];
		char why[512];
		if (!s->have)
			continue;
		if (replayer_seek(rp, 0, s->pos, why, sizeof why) < 0) {
			printf("FAIL: seek %llu: %s\n", (unsigned long long)s->pos, why);
			failures++;
			continue;
		}
		CHECK(replayer_position(rp) == s->pos, "position after seek");
		int bad = compare(rp, s, &pi);
		failures += bad;
		compared++;
		if (failures > 20)
			break;
	}
	printf("compared %d positions\n", compared);
	if (replayer_warning(rp))
		printf("warning: %s\n", replayer_warning(rp));
	if (!full) {
		replayer_free(rp);
		trace_data_free(&td);
		free(order);
		free(snaps);
		return 0;
	}

	/* The recorded pid after the emulated getpid; the recorded file
	 * contents in the heap at the end. */
	const char *pidstr = trace_meta(&td, "pid");
	for (size_t i = 0; i < td.nsyscalls; i++) {
		if (td.syscalls[i].nr != SYS_getpid)
			continue;
		char why[512];
		struct user_regs_struct regs;
		CHECK(replayer_seek(rp, 0, td.syscalls[i].pos + 1, why, sizeof why) == 0,
		      "seek after getpid: %s", why);
		replayer_get_regs(rp, &regs);
		CHECK(pidstr && (long long)regs.rax == atoll(pidstr),
		      "getpid gave %lld, recorded pid %s", (long long)regs.rax, pidstr);
	}
	{
		char why[512], heap[16] = "";
		uint64_t gheap = 0;
		CHECK(replayer_seek(rp, 0, count - 1, why, sizeof why) == 0, "seek end: %s", why);
		replayer_read_mem(rp, pi.g_heap, &gheap, 8);
		replayer_read_mem(rp, gheap, heap, 12);
		CHECK(memcmp(heap, "the recorded", 12) == 0, "heap shows '%.12s', not the "
		      "recorded input", heap);
	}

	/* Stepping back one instruction at a time reuses checkpoints. */
	{
		struct replayer_stats a, b;
		char why[512];
		uint64_t start = count - 1;
		replayer_get_stats(rp, &a);
		int ok = 1;
		for (int i = 1; i <= 30; i++)
			ok &= replayer_seek(rp, 0, start - (uint64_t)i, why, sizeof why) == 0;
		replayer_get_stats(rp, &b);
		CHECK(ok, "reverse steps: %s", why);
		CHECK(b.launches == a.launches, "a reverse step relaunched the program");
		CHECK(b.insns_run - a.insns_run < 30 * 2 * 2000ull,
		      "30 reverse steps ran %llu instructions",
		      (unsigned long long)(b.insns_run - a.insns_run));
		printf("30 reverse steps: %llu instructions run, %llu forks, %llu "
		       "checkpoints\n", (unsigned long long)(b.insns_run - a.insns_run),
		       (unsigned long long)(b.forks - a.forks),
		       (unsigned long long)b.checkpoints);
		struct strbuf sb = STRBUF_INIT;
		replayer_checkpoints(rp, &sb);
		CHECK(sb.len > 0, "checkpoint list");
		strbuf_free(&sb);
	}
	replayer_free(rp);

	/* Divergence: a tampered read result changes control flow. */
	if (copy_trace(&td, tampered, NULL, tamper_read) == 0) {
		struct trace_data t2;
		if (trace_read_file(tampered, &t2, err, sizeof err) == 0) {
			struct replayer *r2 = replayer_new(&t2, err, sizeof err);
			char why[512] = "";
			CHECK(r2, "replayer on the tampered copy: %s", err);
			if (r2) {
				/* Inside the loop the tampering shortened, before
				 * any later syscall: addresses there still match,
				 * only the count is off. Must not be shown. */
				uint64_t rd = 0;
				for (size_t i = 0; i < t2.nsyscalls; i++)
					if (t2.syscalls[i].nr == SYS_read && t2.syscalls[i].args[2] == 64)
						rd = t2.syscalls[i].pos;
				int s0 = replayer_seek(r2, 0, rd + 80, why, sizeof why);
				CHECK(rd && s0 < 0, "seek into the diverged loop succeeded");
				printf("divergence inside the loop: %s\n", why);
				int s1 = replayer_seek(r2, 0, count - 1, why, sizeof why);
				CHECK(s1 < 0, "seek past a tampered syscall result succeeded");
				printf("divergence reported: %s\n", why);
				CHECK(strstr(why, "diverged") != NULL, "reason: %s", why);
				CHECK(replayer_get_regs(r2, &(struct user_regs_struct){0}) < 0,
				      "registers shown after a divergence");
				/* Before the tampered syscall all is well. */
				CHECK(replayer_seek(r2, 0, 100, why, sizeof why) == 0,
				      "seek before the tampering: %s", why);
				replayer_free(r2);
			}
			trace_data_free(&t2);
		}
	} else {
		CHECK(0, "cannot write the tampered copy");
	}
	trace_data_free(&td);
	free(order);
	free(snaps);
	return 0;
}

/* The answer a search must give: the largest (prev) position < at, or
 * the smallest (next) > at, from list (sorted); 0 when none. */
static uint64_t expect(const uint64_t *list, size_t n, uint64_t at, bool prev)
{
	uint64_t best = 0;
	for (size_t i = 0; i < n; i++) {
		if (prev && list[i] < at)
			best = list[i];
		if (!prev && list[i] > at)
			return list[i];
	}
	return best;
}

static void check_search(struct replayer *r, const struct watch_truth *t, uint64_t at,
			 bool prev, int type, int *queries)
{
	const uint64_t *list = type == 2 ? t->writes : t->accesses;
	size_t n = type == 2 ? t->nwrites : t->naccesses;
	uint64_t want = expect(list, n, at, prev), got = 0;
	char why[512] = "";
	int rc = prev ? replayer_find_prev_access(r, 0, at, t->addr, 8, type, &got, why, sizeof why)
		      : replayer_find_next_access(r, 0, at, t->addr, 8, type, &got, why, sizeof why);
	(*queries)++;
	CHECK(rc == (want ? 1 : 0) && (!want || got == want),
	      "find_%s_access(type %d, %llu): rc %d pos %llu, expected %llu (%s)",
	      prev ? "prev" : "next", type, (unsigned long long)at, rc,
	      (unsigned long long)got, (unsigned long long)want, why);
	if (rc != 1 || type != 2)
		return;
	/* Seeking there shows the new value. */
	for (size_t i = 0; i < t->nwrites; i++) {
		if (t->writes[i] != got)
			continue;
		CHECK(replayer_seek(r, 0, got, why, sizeof why) == 0, "seek %llu: %s",
		      (unsigned long long)got, why);
		CHECK(read_global(r, t->addr) == t->values[i], "at %llu g_watch is %llu, "
		      "the write put %llu", (unsigned long long)got,
		      (unsigned long long)read_global(r, t->addr),
		      (unsigned long long)t->values[i]);
	}
}

/* Watchpoints in reverse (and forward in the past): every write to and
 * access of rep_watch's g_watch found by the replayer at exactly the
 * positions the single-stepped reference run saw. */
static void watch_case(const char *ptrev, const char *dir, const char *work)
{
	char prog[4096], trace[4096], outf[4096], err[512], why[512];
	snprintf(prog, sizeof prog, "%s/rep_watch", dir);
	snprintf(trace, sizeof trace, "%s/rep_watch.ptrev", work);
	snprintf(outf, sizeof outf, "%s/rep_watch.out", work);
	char *pargv[] = { prog, NULL };
	printf("== rep_watch\n");
	CHECK(run_record(ptrev, trace, pargv, outf) == 0, "record rep_watch");
	struct trace_data td;
	if (trace_read_file(trace, &td, err, sizeof err) < 0) {
		CHECK(0, "%s", err);
		return;
	}
	snprintf(trace, sizeof trace, "%s/rep_watch-env.ptrev", work);
	if (ensure_env(&td, trace) < 0)
		return;
	const char *ar = trace_meta(&td, "at_random");
	uint8_t at_random[16] = {0};
	CHECK(ar && strlen(ar) == 32, "rep_watch: no at_random in the recording");
	for (int i = 0; ar && i < 16; i++) {
		unsigned v;
		sscanf(ar + 2 * i, "%2x", &v);
		at_random[i] = (uint8_t)v;
	}
	static struct watch_truth truth;
	memset(&truth, 0, sizeof truth);
	truth.addr = symbol(prog, "g_watch");
	CHECK(truth.addr, "symbol g_watch");
	g_truth = &truth;
	struct prog_info pi = { 0, 0 };
	uint64_t count = td.end.instructions;
	long ref = ref_run(prog, pargv, at_random, &td, &pi, NULL, 0);
	g_truth = NULL;
	CHECK(ref == (long)count, "reference run: %ld instructions, recording %llu", ref,
	      (unsigned long long)count);
	/* 5 loop writes, the function, memcpy, read(), 3 increments. */
	CHECK(truth.nchanges == 11 && truth.nwrites >= 11, "reference run saw %zu "
	      "changes, %zu writes", truth.nchanges, truth.nwrites);
	CHECK(truth.naccesses > truth.nwrites, "reference run saw %zu accesses",
	      truth.naccesses);
	printf("writes at:");
	for (size_t i = 0; i < truth.nwrites; i++)
		printf(" %llu", (unsigned long long)truth.writes[i]);
	printf("\naccesses at:");
	for (size_t i = 0; i < truth.naccesses; i++)
		printf(" %llu", (unsigned long long)truth.accesses[i]);
	printf("\n");
	struct replayer *r = replayer_new(&td, err, sizeof err);
	CHECK(r, "replayer_new: %s", err);
	if (!r || ref != (long)count || truth.nwrites == 0) {
		replayer_free(r);
		trace_data_free(&td);
		return;
	}
	/* The shown state survives the searches. */
	uint64_t shown = truth.writes[truth.nwrites / 2] + 5;
	struct user_regs_struct before_regs, after_regs;
	CHECK(replayer_seek(r, 0, shown, why, sizeof why) == 0, "seek: %s", why);
	replayer_get_regs(r, &before_regs);

	uint64_t at[256];
	size_t nat = 0;
	for (size_t i = 0; i < truth.nwrites; i++)
		for (int d = -1; d <= 2; d++)
			at[nat++] = truth.writes[i] + (uint64_t)d;
	for (size_t i = 0; i < truth.naccesses; i++)
		at[nat++] = truth.accesses[i];
	srand(77);
	for (int i = 0; i < 8; i++)
		at[nat++] = (uint64_t)rand() % count;
	at[nat++] = 0;
	at[nat++] = 1;
	at[nat++] = count - 1;
	at[nat++] = count;
	int queries = 0;
	for (size_t i = 0; i < nat && failures < 20; i++) {
		check_search(r, &truth, at[i], true, 2, &queries);
		check_search(r, &truth, at[i], false, 2, &queries);
	}
	for (size_t i = 0; i < truth.naccesses && failures < 20; i++) {
		check_search(r, &truth, truth.accesses[i], true, 4, &queries);
		check_search(r, &truth, truth.accesses[i] - 1, false, 4, &queries);
	}
	printf("%d searches\n", queries);
	/* Leave a shown state, then check it is unchanged by a search. */
	CHECK(replayer_seek(r, 0, shown, why, sizeof why) == 0, "seek: %s", why);
	uint64_t got;
	CHECK(replayer_find_prev_access(r, 0, count, truth.addr, 8, 2, &got, why,
					sizeof why) == 1, "search: %s", why);
	CHECK(replayer_position(r) == shown && replayer_get_regs(r, &after_regs) == 0 &&
	      memcmp(&before_regs, &after_regs, sizeof after_regs) == 0,
	      "the shown state changed with a search");
	/* Unwatchable ranges say why. */
	CHECK(replayer_find_prev_access(r, 0, count, truth.addr + 1, 40, 2, &got, why,
					sizeof why) < 0 && why[0], "a 40-byte range");
	CHECK(replayer_find_prev_access(r, 0, count, truth.addr, 8, 1, &got, why,
					sizeof why) < 0, "type 1");
	replayer_free(r);
	trace_data_free(&td);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: test_replayer PTREV PROGRAMS_DIR WORKDIR\n");
		return 2;
	}
	const char *ptrev = argv[1], *dir = argv[2], *work = argv[3];
	stay_on_one_cpu();  /* cpuid is not recorded (../one_cpu.h) */
	mkdir(work, 0755);
	if (argc > 4 && !strcmp(argv[4], "watch")) {
		watch_case(ptrev, dir, work);
		printf("%s (%d failures)\n", failures ? "FAILED" : "ok", failures);
		return failures ? 1 : 0;
	}
	if (state_case(ptrev, dir, work, "rep_basic", true) != 0)
		failures++;
	/* Dynamically linked: ld.so maps libc from files the replay opens
	 * itself (the program's open() is emulated). */
	if (state_case(ptrev, dir, work, "rep_basic_dyn", false) != 0)
		failures++;
	vdso_case(ptrev, dir, work);
	signal_case(ptrev, dir, work);
	threads_case(ptrev, dir, work);
	hot_loop_case(ptrev, dir, work);
	tail_search_case(ptrev, dir, work);
	tail_search_run_case(ptrev, dir, work);
	piece_case(ptrev, dir, work);
	hit_point_case(ptrev, dir, work);
	start_copy_case(ptrev, dir, work);
	checkpoints_case(ptrev, dir, work);
	end_copies_case(ptrev, dir, work);
	printf("%s (%d failures)\n", failures ? "FAILED" : "ok", failures);
	return failures ? 1 : 0;
}
