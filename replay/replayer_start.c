/* The replayer's start: the recorded program launched again as it was
 * (path, argv, environment, cwd, auxv, AT_RANDOM bytes, the vDSO hidden
 * when the recording hid it), stopped at its first instruction. */
#include "replayer_internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptrev/inferior.h"
#include "ptrev/start_state.h"
#include "ptrev/syscall_inject.h"

extern char **environ;

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

/* The recorded start state from META, or what we have here (and a
 * warning) when the recording predates it. */
int rp_start_state(struct replayer *r)
{
	const struct trace_data *td = r->td;
	size_t nargs = 0, nenv = 0;
	bool have_env = false;

	for (size_t i = 0; i < td->nmeta; i++) {
		nargs += strcmp(td->meta_keys[i], "arg") == 0;
		nenv += strcmp(td->meta_keys[i], "env") == 0;
	}
	const char *prog = trace_meta(td, "program");
	const char *cwd = trace_meta(td, "cwd");
	if (!prog || nargs == 0)
		return rp_fail(r, "the recording does not say which program ran");
	r->path = strdup(prog);
	r->cwd = cwd ? strdup(cwd) : NULL;
	r->argv = calloc(nargs + 1, sizeof *r->argv);
	if (!r->path || !r->argv)
		return rp_fail(r, "out of memory");
	nargs = 0;
	for (size_t i = 0; i < td->nmeta; i++)
		if (strcmp(td->meta_keys[i], "arg") == 0)
			r->argv[nargs++] = td->meta_values[i];
	for (size_t i = 0; i < td->nmeta; i++)
		if (strcmp(td->meta_keys[i], "env_count") == 0)
			have_env = true; /* an empty environment, recorded */
	if (nenv || have_env) {
		r->envp = calloc(nenv + 1, sizeof *r->envp);
		if (!r->envp)
			return rp_fail(r, "out of memory");
		nenv = 0;
		for (size_t i = 0; i < td->nmeta; i++)
			if (strcmp(td->meta_keys[i], "env") == 0)
				r->envp[nenv++] = td->meta_values[i];
	}
	const char *ar = trace_meta(td, "at_random");
	uint8_t *bytes = NULL;
	size_t len = 0;
	if (ar && hex_decode(ar, &bytes, &len) == 0 && len == 16) {
		memcpy(r->at_random, bytes, 16);
		r->have_at_random = true;
	}
	free(bytes);
	const char *av = trace_meta(td, "auxv");
	if (av && hex_decode(av, &r->auxv, &r->auxv_len) < 0)
		r->auxv = NULL;
	if (!r->envp || !r->have_at_random || !r->auxv)
		snprintf(r->warning, sizeof r->warning,
			 "the recording lacks its start state (%s%s%s); using this "
			 "process's: values derived from them (stack layout, stack "
			 "canary, pointer guard) may differ from the recording",
			 r->envp ? "" : "environment ",
			 r->have_at_random ? "" : "AT_RANDOM ",
			 r->auxv ? "" : "auxv");
	return 0;
}

/* The launched process must see what the recorded one saw. */
static int match_start(struct replayer *r)
{
	size_t n = 0;
	uint8_t *auxv = start_state_read_proc(r->base.pid, "auxv", &n);
	uint64_t at_random = start_state_auxv_value(auxv, n, AT_RANDOM);
	int rc = 0;

	if (r->have_at_random) {
		if (!at_random ||
		    pwrite(r->base.memfd, r->at_random, 16, (off_t)at_random) != 16)
			rc = rp_fail(r, "cannot put the recorded AT_RANDOM bytes in place");
	}
	if (rc == 0 && r->auxv && (r->auxv_len != n || (n && memcmp(r->auxv, auxv, n) != 0))) {
		/* Entry by entry, to name the first difference. */
		for (size_t i = 0; i + 16 <= r->auxv_len; i += 16) {
			uint64_t t, v;
			memcpy(&t, r->auxv + i, 8);
			memcpy(&v, r->auxv + i + 8, 8);
			if (t == AT_NULL)
				break;
			uint64_t here = start_state_auxv_value(auxv, n, t);
			if (here != v) {
				rc = rp_fail(r, "this machine starts the program with "
					     "auxv entry %llu = %#llx, the recording "
					     "had %#llx: replay would differ",
					     (unsigned long long)t, (unsigned long long)here,
					     (unsigned long long)v);
				break;
			}
		}
	}
	free(auxv);
	return rc;
}

int rp_launch_base(struct replayer *r)
{
	struct inferior inf;
	char err[512];
	int devnull, cwdfd = -1, rc;

	if (!r->path && rp_start_state(r) < 0)
		return -1;
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (r->cwd) {
		/* The program path (and AT_EXECFN on its stack) is the string
		 * the recorder executed, relative to the recorded cwd. */
		cwdfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		bool entered = cwdfd >= 0 && chdir(r->cwd) == 0;
		if (!entered && r->path[0] != '/') {
			int e = cwdfd < 0 ? EBADF : errno;
			if (cwdfd >= 0)
				close(cwdfd);
			if (devnull >= 0)
				close(devnull);
			return rp_fail(r, "cannot enter the recorded working directory "
				       "%s: %s", r->cwd, strerror(e));
		}
		if (!entered) {
			/* Gone (another machine): an absolute program path does
			 * not need it, and file syscalls are emulated. */
			if (cwdfd >= 0)
				close(cwdfd);
			cwdfd = -1;
		}
	}
	memset(&inf, 0, sizeof inf);
	inf.memfd = -1;
	rc = inferior_launch(&inf, r->path, r->argv, r->envp ? r->envp : environ,
			     devnull, devnull, devnull, err, sizeof err);
	if (cwdfd >= 0) {
		if (fchdir(cwdfd) < 0)
			rc = rc < 0 ? rc : -2;
		close(cwdfd);
	}
	if (devnull >= 0)
		close(devnull);
	if (rc == -1) {
		inferior_destroy(&inf);
		return rp_fail(r, "cannot start the recorded program again: %s", err);
	}
	r->base.pid = inf.pid;
	r->base.pos = 0;
	r->base.memfd = -1;
	if (inf.memfd >= 0)
		close(inf.memfd);
	inf.pid = 0;
	inferior_destroy(&inf);
	r->stats.launches++;
	if (rc == -2)
		return rp_fail(r, "cannot return to our working directory");
	if (ptrace(PTRACE_SETOPTIONS, r->base.pid, NULL,
		   (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE |
				  PTRACE_O_EXITKILL)) < 0 ||
	    rp_open_mem(&r->base) < 0)
		return rp_fail(r, "cannot trace the replay process: %s", strerror(errno));
	if (match_start(r) < 0)
		return -1;
	if (r->vdso_hidden && start_state_hide_vdso(r->base.pid) < 0)
		return rp_fail(r, "cannot hide the vDSO as the recording did");
	/* rdtsc traps, as it did while recording, and takes recorded values. */
	uint64_t args[6] = { PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0, 0 };
	int64_t res = 0;
	int pending = 0;
	if (syscall_inject(r->base.pid, SYS_prctl, args, &res, &pending, err,
			   sizeof err) < 0 || res < 0 || pending)
		return rp_fail(r, "cannot make rdtsc trap in the replay process%s%s",
			       res < 0 ? "" : ": ", res < 0 ? "" : err);
	struct user_regs_struct regs;
	uint64_t ip0;
	if (ptrace(PTRACE_GETREGS, r->base.pid, NULL, &regs) < 0)
		return rp_fail(r, "replay process: %s", strerror(errno));
	if (history_insn_count(r->h) && history_ip_at(r->h, 0, &ip0) == 0 &&
	    ip0 != regs.rip)
		return rp_fail(r, "the program starts at %#llx, the recording at %#llx "
			       "(a different binary?)", (unsigned long long)regs.rip,
			       (unsigned long long)ip0);
	return 0;
}
