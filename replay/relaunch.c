/* Starting the recorded program again as it started (replay/relaunch.h). */
#include "relaunch.h"
#include "ptrev/binary_copies.h"

#include "ptrev/cpu_bind.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptrev/inferior.h"
#include "ptrev/ptrace_handover.h"
#include "ptrev/ptrace_wait.h"
#include "ptrev/start_state.h"
#include "ptrev/syscall_inject.h"
#include "ptrev/tsc_trap.h"

extern char **environ;

static int fail(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}

static int hex_decode(const char *hex, uint8_t **out, size_t *len)
{
	size_t n = strlen(hex);
	if (n % 2)
		return -1;
	*out = malloc(n / 2 + 1);
	if (!*out)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
			free(*out);
			*out = NULL;
			return -1;
		}
		(*out)[i] = (uint8_t)v;
	}
	*len = n / 2;
	return 0;
}

void relaunch_free(struct relaunch *rl)
{
	free(rl->path);
	free(rl->exe);
	free(rl->cwd);
	free(rl->argv);
	free(rl->envp);
	free(rl->auxv);
	memset(rl, 0, sizeof *rl);
}

/* Does the program path name the file only from inside the process
 * (/proc/self/exe, /proc/thread-self/..., /proc/PID/... of its own pid),
 * so that exec'd by ptrev it names ptrev's? */
static bool names_from_inside(const char *path, const char *pid)
{
	char own[64];
	snprintf(own, sizeof own, "/proc/%s/", pid ? pid : "self");
	return strncmp(path, "/proc/self/", 11) == 0 || strncmp(path, "/proc/thread-self/", 18) == 0 ||
	       (pid && strncmp(path, own, strlen(own)) == 0);
}

int relaunch_read(struct relaunch *rl, const struct trace_data *td, char *why, size_t whylen)
{
	size_t nargs = 0, nenv = 0;
	bool have_env = false;

	memset(rl, 0, sizeof *rl);
	rl->td = td;
	for (size_t i = 0; i < td->nmeta; i++) {
		nargs += strcmp(td->meta_keys[i], "arg") == 0;
		nenv += strcmp(td->meta_keys[i], "env") == 0;
	}
	const char *prog = trace_meta(td, "program");
	const char *cwd = trace_meta(td, "cwd");
	const char *started = trace_meta(td, "started");
	if (started && strcmp(started, "mid_run") == 0)
		return fail(why, whylen, "the recording started in mid-run (attached, or record "
			    "btrace), so there is no start to re-execute from: only the PC and "
			    "read-only memory are known");
	if (!prog || nargs == 0)
		return fail(why, whylen, "the recording does not say which program ran");
	rl->path = strdup(prog);
	rl->cwd = cwd ? strdup(cwd) : NULL;
	const char *exe = trace_meta(td, "exe");
	rl->exe = exe ? strdup(exe) : NULL;
	rl->path_inside = names_from_inside(prog, trace_meta(td, "pid"));
	rl->argv = calloc(nargs + 1, sizeof *rl->argv);
	if (!rl->path || !rl->argv)
		return fail(why, whylen, "out of memory");
	nargs = 0;
	for (size_t i = 0; i < td->nmeta; i++)
		if (strcmp(td->meta_keys[i], "arg") == 0)
			rl->argv[nargs++] = td->meta_values[i];
	for (size_t i = 0; i < td->nmeta; i++)
		if (strcmp(td->meta_keys[i], "env_count") == 0)
			have_env = true; /* an empty environment, recorded */
	if (nenv || have_env) {
		rl->envp = calloc(nenv + 1, sizeof *rl->envp);
		if (!rl->envp)
			return fail(why, whylen, "out of memory");
		nenv = 0;
		for (size_t i = 0; i < td->nmeta; i++)
			if (strcmp(td->meta_keys[i], "env") == 0)
				rl->envp[nenv++] = td->meta_values[i];
	}
	const char *ci = trace_meta(td, "cpu_index");
	rl->cpu = ci ? atoi(ci) : -1;
	const char *ar = trace_meta(td, "at_random");
	uint8_t *bytes = NULL;
	size_t len = 0;
	if (ar && hex_decode(ar, &bytes, &len) == 0 && len == 16) {
		memcpy(rl->at_random, bytes, 16);
		rl->have_at_random = true;
	}
	free(bytes);
	const char *ign = trace_meta(td, "sig_ignored"), *blk = trace_meta(td, "sig_blocked");
	char *end_ign = NULL, *end_blk = NULL;
	if (ign && blk) {
		rl->sig_ignored = strtoull(ign, &end_ign, 16);
		rl->sig_blocked = strtoull(blk, &end_blk, 16);
		rl->have_signals = *ign && *blk && !*end_ign && !*end_blk;
	}
	struct inherited_limits *lim = &rl->limits;
	for (int res = 0; res < 16; res++) {
		char key[32];
		snprintf(key, sizeof key, "rlimit_%d", res);
		const char *v = trace_meta(td, key);
		lim->have_limit[res] = v && sscanf(v, "%llx:%llx", &lim->limit_cur[res],
						   &lim->limit_max[res]) == 2;
	}
	const char *um = trace_meta(td, "umask");
	lim->have_umask = um && sscanf(um, "%o", &lim->umask) == 1;
	const char *pe = trace_meta(td, "personality");
	lim->have_personality = pe && sscanf(pe, "%lx", &lim->personality) == 1;
	const char *tsc = trace_meta(td, TSC_META_KEY);
	rl->tsc_untrapped = tsc && strcmp(tsc, TSC_META_UNTRAPPED) == 0;
	const char *av = trace_meta(td, "auxv");
	if (av && hex_decode(av, &rl->auxv, &rl->auxv_len) < 0)
		rl->auxv = NULL;
	if (!rl->envp || !rl->have_at_random || !rl->auxv)
		snprintf(rl->warning, sizeof rl->warning,
			 "the recording lacks its start state (%s%s%s); using this "
			 "process's: values derived from them (stack layout, stack "
			 "canary, pointer guard) may differ from the recording",
			 rl->envp ? "" : "environment ",
			 rl->have_at_random ? "" : "AT_RANDOM ",
			 rl->auxv ? "" : "auxv");
	return 0;
}

/* The launched process must see what the recorded one saw. */
static int match_start(const struct relaunch *rl, pid_t pid, int memfd, char *why,
		       size_t whylen)
{
	size_t n = 0;
	uint8_t *auxv = start_state_read_proc(pid, "auxv", &n);
	uint64_t at_random = start_state_auxv_value(auxv, n, AT_RANDOM);
	int rc = 0;

	if (rl->have_at_random) {
		if (!at_random || pwrite(memfd, rl->at_random, 16, (off_t)at_random) != 16)
			rc = fail(why, whylen, "cannot put the recorded AT_RANDOM bytes in place");
	}
	if (rc == 0 && rl->auxv &&
	    (rl->auxv_len != n || (n && memcmp(rl->auxv, auxv, n) != 0))) {
		/* Entry by entry, to name the first difference. */
		for (size_t i = 0; i + 16 <= rl->auxv_len; i += 16) {
			uint64_t t, v;
			memcpy(&t, rl->auxv + i, 8);
			memcpy(&v, rl->auxv + i + 8, 8);
			if (t == AT_NULL)
				break;
			uint64_t here = start_state_auxv_value(auxv, n, t);
			if (here != v) {
				rc = fail(why, whylen, "this machine starts the program with auxv "
					  "entry %llu = %#llx, the recording had %#llx: replay "
					  "would differ", (unsigned long long)t,
					  (unsigned long long)here, (unsigned long long)v);
				break;
			}
		}
	}
	free(auxv);
	return rc;
}

int relaunch_adopt(const struct relaunch *rl, pid_t pid, int *memfd, char *why, size_t whylen)
{
	char err[256], path[64];
	*memfd = -1;
	if (ptrace_adopt(pid, RELAUNCH_PTRACE_OPTIONS, err, sizeof err) < 0)
		return fail(why, whylen, "%s", err);
	cpu_bind_tracer_and_on(pid, rl->cpu);
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	*memfd = open(path, O_RDWR | O_CLOEXEC);
	if (*memfd < 0) {
		int e = errno;
		ptrace_park_kill(pid);
		return fail(why, whylen, "the copy's memory: %s", strerror(e));
	}
	return 0;
}

/* After the exec of the recording's copy of the program (binary_copies.h)
 * through a path of the recorded path's length in a directory of ours:
 * the recorded path in place of that one on the stack (AT_EXECFN's
 * string), the recorded loader name in the program's memory where the
 * loader's copy ran too (binary_copy_exe_fix), and the recorded working
 * directory entered. The directory is written below the stack pointer
 * (past the red zone) for the chdir, and what was there put back. */
static int as_recorded(const struct relaunch *rl, const struct binary_copy_exec *x, pid_t pid,
		       int memfd, char *why, size_t whylen)
{
	size_t n = 0;
	uint8_t *auxv = start_state_read_proc(pid, "auxv", &n);
	uint64_t execfn = start_state_auxv_value(auxv, n, AT_EXECFN);
	uint64_t at_phdr = start_state_auxv_value(auxv, n, AT_PHDR);
	free(auxv);
	size_t len = strlen(rl->path);
	if (!execfn || pwrite(memfd, rl->path, len, (off_t)execfn) != (ssize_t)len)
		return fail(why, whylen, "cannot put the recorded program path on the stack");
	if (binary_copy_exe_fix(x, memfd, at_phdr) < 0)
		return fail(why, whylen, "cannot put the recorded loader's name back in the "
			    "program's memory");
	struct user_regs_struct r;
	len = rl->cwd ? strlen(rl->cwd) + 1 : 0;
	if (!len || len > 4096 || ptrace(PTRACE_GETREGS, pid, NULL, &r) < 0)
		return 0;
	uint64_t at = (r.rsp - 256 - len) & ~15ull;
	char saved[4096], err[256];
	int64_t res = -1;
	int pending = 0;
	const uint64_t args[6] = {at};
	if (pread(memfd, saved, len, (off_t)at) == (ssize_t)len &&
	    pwrite(memfd, rl->cwd, len, (off_t)at) == (ssize_t)len) {
		syscall_inject(pid, SYS_chdir, args, &res, &pending, err, sizeof err);
		if (pwrite(memfd, saved, len, (off_t)at) != (ssize_t)len)
			return fail(why, whylen, "cannot restore the stack after entering %s",
				    rl->cwd);
	}
	/* A directory that is gone (another machine) is not needed: file
	 * syscalls are emulated. */
	return 0;
}

/* Everything after the launch: options, memory, the start state, the
 * vDSO, rdtsc. ran_copy: the program's file was the recording's copy. */
static int prepare(const struct relaunch *rl, bool hide_vdso,
		   const struct binary_copy_exec *ran_copy, pid_t pid, int *memfd, char *why,
		   size_t whylen)
{
	char path[64], err[512];
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)RELAUNCH_PTRACE_OPTIONS) < 0)
		return fail(why, whylen, "cannot trace the replay process: %s", strerror(errno));
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	*memfd = open(path, O_RDWR | O_CLOEXEC);
	if (*memfd < 0)
		return fail(why, whylen, "cannot trace the replay process: %s", strerror(errno));
	if (ran_copy && as_recorded(rl, ran_copy, pid, *memfd, why, whylen) < 0)
		return -1;
	if (match_start(rl, pid, *memfd, why, whylen) < 0)
		return -1;
	if (hide_vdso && start_state_hide_vdso(pid) < 0)
		return fail(why, whylen, "cannot hide the vDSO as the recording did");
	/* rdtsc traps, as it did while recording, and takes recorded values;
	 * where it did not, the program reads the TSC itself, as it did. */
	if (rl->tsc_untrapped)
		return 0;
	uint64_t args[6] = {PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0, 0};
	int64_t res = 0;
	int pending = 0;
	if (syscall_inject(pid, SYS_prctl, args, &res, &pending, err, sizeof err) < 0 || res < 0 ||
	    pending)
		return fail(why, whylen, "cannot make rdtsc trap in the replay process%s%s",
			    res < 0 ? "" : ": ", res < 0 ? "" : err);
	return 0;
}

int relaunch_start(const struct relaunch *rl, bool hide_vdso, pid_t *pid, int *memfd, char *why,
		   size_t whylen)
{
	struct inferior inf;
	char err[512];
	int devnull, rc;
	const char *cwd = NULL;

	*pid = 0;
	*memfd = -1;
	if (rl->cwd) {
		/* The program path (and AT_EXECFN on its stack) is the string
		 * the recorder executed, relative to the recorded cwd. The
		 * child enters it (ours stays: another thread of ptrev may be
		 * using it). */
		struct stat sb;
		int e = stat(rl->cwd, &sb) < 0 ? errno : S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
		if (!e)
			cwd = rl->cwd;
		else if (rl->path[0] != '/')
			return fail(why, whylen, "cannot enter the recorded working directory %s: %s",
				    rl->cwd, strerror(e));
		/* Else gone (another machine): an absolute program path does
		 * not need it, and file syscalls are emulated. */
	}
	/* /proc/self/exe: the file it named runs first, and execs that
	 * string again from inside, as the program did. */
	const char *path = rl->path, *again = NULL;
	if (rl->path_inside && !rl->exe)
		return fail(why, whylen, "the program ran as %s, which names it only from inside "
			    "the process, and the recording does not say which file that was (one "
			    "made before ptrev kept it: record it again)",
			    rl->path);
	if (rl->path_inside) {
		path = rl->exe;
		again = rl->path;
	}
	/* The file at the path, or the loader, changed since the recording
	 * (rebuilt, deleted, upgraded): the copies run, through a path of
	 * ours as long. */
	struct binary_copy_exec copy = {0};
	if (!rl->path_inside && rl->td) {
		rc = binary_copy_exe(rl->td, rl->path, rl->cwd, rl->auxv, rl->auxv_len, &copy, err,
				     sizeof err);
		if (rc < 0)
			return fail(why, whylen, "cannot start the recorded program again: %s", err);
		if (rc > 0) {
			cwd = copy.dir;
			path = copy.rel;
		}
	}
	const struct binary_copy_exec *ran_copy = copy.dir ? &copy : NULL;
	cpu_bind_tracer_on(rl->cpu);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	memset(&inf, 0, sizeof inf);
	inf.memfd = -1;
	struct inferior_launch_opts o = {.stdin_fd = devnull, .stdout_fd = devnull,
					 .stderr_fd = devnull, .set_signals = rl->have_signals,
					 .sig_ignored = rl->sig_ignored,
					 .sig_blocked = rl->sig_blocked, .limits = rl->limits,
					 .cwd = cwd, .exec_again = again};
	rc = inferior_launch_with(&inf, path, rl->argv, rl->envp ? rl->envp : environ, &o,
				  err, sizeof err);
	if (devnull >= 0)
		close(devnull);
	binary_copy_exe_done(&copy); /* exec'd: the files are open */
	if (rc == -1) {
		inferior_destroy(&inf);
		return fail(why, whylen, "cannot start the recorded program again: %s", err);
	}
	/* A replay stops at every event, as the recording did; on the CPU
	 * it ran on (ptrev/cpu_bind.h), said once where that cannot be. */
	static atomic_bool told;
	if (cpu_bind_tracer_and_on(inf.pid, rl->cpu) == 0 && rl->cpu >= 0 &&
	    !atomic_exchange(&told, true))
		fprintf(stderr, "ptrev: the recording ran on CPU %d, which this replay cannot use: "
			"a program that keeps what CPUID says of its CPU (static glibc does) may "
			"diverge where the replay compares its memory\n", rl->cpu);
	pid_t p = inf.pid;
	if (inf.memfd >= 0)
		close(inf.memfd);
	inf.pid = 0;
	inferior_destroy(&inf);
	rc = prepare(rl, hide_vdso, ran_copy, p, memfd, why, whylen);
	free(copy.interp);
	if (rc < 0) {
		kill(p, SIGKILL);
		ptrace_waitpid(p, NULL, __WALL);
		if (*memfd >= 0)
			close(*memfd);
		*memfd = -1;
		return -1;
	}
	*pid = p;
	return 0;
}
