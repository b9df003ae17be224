/* Inferior life cycle: launch under ptrace, kill, detach, interrupt.
 * The thread table lives in inferior_threads.c, resuming and waiting (the
 * all-stop machinery) in inferior_wait.c, memory in inferior_mem.c,
 * registers in inferior_regs.c. */
#include "inferior_internal.h"
#include "ptrev/ptrace_wait.h"
#include "ptrev/syscall_inject.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* SIGXFSZ as ptrev was given it (inferior_note_xfsz). */
static bool xfsz_ignored;

void inferior_note_xfsz(bool ignored)
{
	xfsz_ignored = ignored;
}

/* Child side of the launch: never returns. Only async-signal-safe calls,
 * since the parent may have threads. A failure's errno reaches the parent
 * through errpipe (closed by a successful exec: CLOEXEC). */
static void child_exec(const char *path, char *const argv[], char *const envp[], int fds[3],
		       int errpipe, const struct inferior_launch_opts *o)
{
	setpgid(0, 0); /* the terminal's ^C must reach ptrev, not the inferior */
	const struct inherited_limits *lim = &o->limits;
	if (lim->have_personality)
		personality(lim->personality);
	int pers = personality(0xffffffff);
	if (pers != -1 && !o->randomize)
		personality((unsigned long)pers | ADDR_NO_RANDOMIZE);
	if (o->cwd && chdir(o->cwd) < 0)
		goto fail;
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0 && fds[i] != i && dup2(fds[i], i) < 0)
			goto fail;
	/* Undo ptrev's own signal settings: an ignored signal stays ignored
	 * across exec (and so does the blocked mask), and ptrev ignores
	 * SIGPIPE, SIGXFSZ and (with --stdio) SIGINT. A replay gives the program the
	 * state it was recorded with instead: whoever started ptrev (gdb
	 * ignores SIGPIPE and SIGXFSZ in what it starts) must not decide. */
	sigset_t mask;
	sigemptyset(&mask);
	if (o->set_signals) {
		for (int sig = 1; sig <= 64; sig++) {
			bool ign = (o->sig_ignored >> (sig - 1)) & 1;
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, ign ? SIG_IGN : SIG_DFL); /* glibc's own fail: fine */
			/* not SIGTRAP: the exec's stop must come */
			if (((o->sig_blocked >> (sig - 1)) & 1) && sig != SIGTRAP)
				sigaddset(&mask, sig);
		}
	} else {
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGXFSZ, xfsz_ignored ? SIG_IGN : SIG_DFL);
	}
	sigprocmask(SIG_SETMASK, &mask, NULL);
	for (int res = 0; res < 16; res++) {
		if (!lim->have_limit[res])
			continue;
		struct rlimit rl = {lim->limit_cur[res], lim->limit_max[res]};
		setrlimit((__rlimit_resource_t)res, &rl); /* above our hard limit: ours stays */
	}
	if (lim->have_umask)
		umask((mode_t)lim->umask);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		goto fail;
	execve(path, argv, envp);
fail:;
	int e = errno;
	ssize_t r = write(errpipe, &e, sizeof(e));
	(void)r;
	_exit(127);
}

/* Wait for the stop after the last of 1 + wrapper_execs execves (the
 * traps before it are a wrapper's own execs: let them run on). Returns 0,
 * or -1 with a message. */
static int wait_exec_stop(pid_t pid, const char *path, unsigned wrapper_execs, char *err,
			  size_t errlen)
{
	bool wrapped = wrapper_execs > 0;
	for (;;) {
		int st;
		if (ptrace_waitpid(pid, &st, __WALL) < 0) {
			snprintf(err, errlen, "cannot run %s: %s", path, strerror(errno));
			return -1;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			snprintf(err, errlen, "cannot run %s: it ended during startup%s", path,
				 wrapped ? " (the wrapper did not exec the program)" : "");
			return -1;
		}
		if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && wrapper_execs > 0) {
			wrapper_execs--;
			ptrace(PTRACE_CONT, pid, NULL, NULL);
			continue;
		}
		if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP)
			return 0;
		/* Some other signal before the exec: let it through. */
		if (WIFSTOPPED(st))
			ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(st));
	}
}

int inferior_launch(struct inferior *inf, const char *path, char *const argv[],
		    char *const envp[], int stdin_fd, int stdout_fd, int stderr_fd,
		    char *err, size_t errlen)
{
	struct inferior_launch_opts o = {.stdin_fd = stdin_fd, .stdout_fd = stdout_fd,
					 .stderr_fd = stderr_fd};
	return inferior_launch_with(inf, path, argv, envp, &o, err, errlen);
}

int inferior_launch_with(struct inferior *inf, const char *path, char *const argv[],
			 char *const envp[], const struct inferior_launch_opts *o, char *err,
			 size_t errlen)
{
	inf->pid = 0;
	inf->exited = false;
	inf->memfd = -1;
	inf->nthreads = 0;
	inf->nbps = 0;
	memset(inf->hw, 0, sizeof(inf->hw));
	inf->dr7 = 0;

	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot run %s: pipe: %s", path, strerror(errno));
		return -1;
	}
	int fds[3] = { o->stdin_fd, o->stdout_fd, o->stderr_fd };
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot run %s: fork: %s", path, strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		child_exec(path, argv, envp, fds, pfd[1], o);
	}
	close(pfd[1]);
	int child_errno;
	ssize_t r;
	do
		r = read(pfd[0], &child_errno, sizeof(child_errno));
	while (r < 0 && errno == EINTR);
	close(pfd[0]);

	if (r == (ssize_t)sizeof(child_errno)) {
		/* exec failed: the child has exited (or is about to); reap it. */
		ptrace_waitpid(pid, NULL, __WALL);
		snprintf(err, errlen, "cannot run %s: %s", path, strerror(child_errno));
		return -1;
	}
	if (wait_exec_stop(pid, path, o->wrapper_execs, err, errlen) < 0) {
		kill(pid, SIGKILL);
		ptrace_waitpid(pid, NULL, __WALL | WNOHANG);
		return -1;
	}
	if (o->exec_again && syscall_inject_exec(pid, o->exec_again, argv, envp, err, errlen) < 0) {
		kill(pid, SIGKILL); /* stopped, alive: reaped once the kill lands */
		ptrace_waitpid(pid, NULL, __WALL);
		return -1;
	}
	/* EXITKILL: if ptrev dies, the kernel kills the inferior too. */
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL)) < 0) {
		snprintf(err, errlen, "cannot trace %s: %s", path, strerror(errno));
		kill(pid, SIGKILL);
		ptrace_waitpid(pid, NULL, __WALL);
		return -1;
	}
	inf->pid = pid;
	inf_open_memfd(inf);
	if (!inf_add_thread(inf, pid)) {
		snprintf(err, errlen, "cannot run %s: out of memory", path);
		inferior_kill(inf);
		return -1;
	}
	return 0;
}

/* Attach to each thread of pid not traced yet; how many were new, -1 when
 * the first cannot be attached (errno set). Threads may start meanwhile:
 * the caller repeats until none is new. */
static int attach_new_threads(struct inferior *inf, pid_t pid)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int added = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		if (tid <= 0 || inferior_thread(inf, tid))
			continue;
		if (ptrace(PTRACE_ATTACH, tid, NULL, NULL) < 0) {
			if (inf->nthreads == 0) {
				int e = errno;
				closedir(d);
				errno = e;
				return -1;
			}
			continue; /* it ended meanwhile */
		}
		if (inf_collect_new_thread(inf, tid)) {
			/* clones from now on; no EXITKILL: the process is not ours */
			ptrace(PTRACE_SETOPTIONS, tid, NULL, (void *)(long)PTRACE_O_TRACECLONE);
			added++;
		}
	}
	closedir(d);
	return added;
}

int inferior_attach(struct inferior *inf, pid_t pid, char *err, size_t errlen)
{
	memset(inf, 0, sizeof *inf);
	inf->memfd = -1;
	if (pid <= 0 || kill(pid, 0) != 0) {
		snprintf(err, errlen, "cannot attach to process %d: %s", (int)pid,
			 pid <= 0 ? "not a process id" : strerror(errno));
		return -1;
	}
	inf->pid = pid;
	inf->attached = true;
	int n;
	while ((n = attach_new_threads(inf, pid)) > 0)
		;
	if (n < 0 || inf->nthreads == 0) {
		int e = n < 0 ? errno : ESRCH;
		snprintf(err, errlen, "cannot attach to process %d: %s%s", (int)pid, strerror(e),
			 e == EPERM ? " (another tracer, or /proc/sys/kernel/yama/ptrace_scope)" : "");
		for (size_t i = 0; i < inf->nthreads; i++)
			ptrace(PTRACE_DETACH, inf->threads[i].tid, NULL, NULL);
		free(inf->threads);
		memset(inf, 0, sizeof *inf);
		inf->memfd = -1;
		return -1;
	}
	inf_open_memfd(inf);
	return 0;
}

/* Reap one traced task until it has exited; gone already is fine too. */
static void reap_task(pid_t tid)
{
	for (;;) {
		int st;
		if (ptrace_waitpid(tid, &st, __WALL) < 0 || WIFEXITED(st) || WIFSIGNALED(st))
			return;
	}
}

/* Every thread of the process now, from /proc (threads we may not have
 * seen yet included), reaped after the leader is killed. */
static void reap_all(struct inferior *inf)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)inf->pid);
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			if (tid > 0 && tid != inf->pid)
				reap_task(tid);
		}
		closedir(d);
	}
	for (size_t i = 0; i < inf->nthreads; i++)
		if (inf->threads[i].tid != inf->pid)
			reap_task(inf->threads[i].tid);
	/* The leader reports last, once its thread group is empty. */
	reap_task(inf->pid);
}

void inferior_kill(struct inferior *inf)
{
	if (inf->fork_child) {
		/* a fork gdb was told of and never let go: it goes too */
		kill(inf->fork_child, SIGKILL);
		ptrace_waitpid(inf->fork_child, NULL, __WALL);
		inf->fork_child = 0;
	}
	if (!inf->pid)
		return;
	if (!inf->exited) {
		kill(inf->pid, SIGKILL);
		reap_all(inf);
	}
	inf_mark_gone(inf);
	inf->pid = 0;
}

/* out: a new inferior for pid, a stopped fork child of a process with
 * like's settings (ptrev started the parent, so the child too). */
static int adopt(struct inferior *out, pid_t pid, const struct inferior *like)
{
	bool report_forks = like->report_forks, report_vforks = like->report_vforks;
	bool report_exec = like->report_exec, attached = like->attached;
	bool pass[65];
	memcpy(pass, like->pass_signals, sizeof pass);
	memset(out, 0, sizeof *out);
	out->memfd = -1;
	out->pid = pid;
	out->attached = attached;
	if (!inf_add_thread(out, pid))
		return -1;
	inf_open_memfd(out);
	inferior_follow_forks(out, true);
	out->report_forks = report_forks;
	out->report_vforks = report_vforks;
	out->report_exec = report_exec;
	memcpy(out->pass_signals, pass, sizeof pass);
	return 0;
}

/* follow-fork-mode child (inferior.h): here with the life cycle, since it
 * detaches one process and takes on another. */
int inferior_follow_fork_child(struct inferior *inf)
{
	pid_t child = inf->fork_child;
	if (!child)
		return -1;
	struct inferior like = *inf;
	inf->fork_child = 0;
	inferior_detach(inf);
	inferior_destroy(inf);
	return adopt(inf, child, &like);
}

int inferior_take_fork_child(struct inferior *inf, struct inferior *child)
{
	pid_t pid = inf->fork_child;
	if (!pid)
		return -1;
	if (adopt(child, pid, inf) != 0) {
		free(child->threads); /* it stays held by inf */
		child->threads = NULL;
		return -1;
	}
	child->vfork_parent = inf->fork_child_vfork ? inf->pid : 0;
	if (!inf->fork_child_vfork && inf->nbps) {
		/* A forked child has a copy of the parent's memory, int3s and
		 * all, and gdb takes its breakpoints for inserted there too
		 * (gdbserver copies its breakpoint list to the child). They
		 * were taken out while it was held: put back, in its own
		 * table. */
		struct sw_breakpoint *bps = malloc(inf->nbps * sizeof *bps);
		if (bps) {
			memcpy(bps, inf->bps, inf->nbps * sizeof *bps);
			child->bps = bps;
			child->nbps = child->cap_bps = inf->nbps;
			static const uint8_t int3 = 0xcc;
			for (size_t i = 0; i < child->nbps; i++)
				inf_mem_write_raw(child, bps[i].addr, &int3, 1);
		}
	}
	if (!inf->fork_child_vfork && inf->dr7) {
		/* Debug registers are not inherited: the parent's watchpoints
		 * and hardware breakpoints are put in the child's, as
		 * gdbserver does (low_new_fork). */
		memcpy(child->hw, inf->hw, sizeof child->hw);
		child->dr7 = inf->dr7;
		inf_dr_apply_thread(child, pid);
	}
	inf->fork_child = 0;
	return 0;
}

int inferior_detach(struct inferior *inf)
{
	if (!inf->pid || inf->exited)
		return -1;
	inf_stop_all(inf);
	inferior_detach_fork_child(inf); /* its breakpoints are out already */
	inf_remove_all_swbreaks(inf);
	memset(inf->hw, 0, sizeof(inf->hw));
	inf->dr7 = 0;
	bool sigstop_queued = false;
	for (size_t i = 0; i < inf->nthreads; i++) {
		inf_dr_clear_thread(inf->threads[i].tid);
		if (inf->threads[i].stop_expected)
			sigstop_queued = true;
	}
	/* A SIGSTOP we sent but never collected would stop the process right
	 * after detach; SIGCONT discards pending stop signals (gdbserver does
	 * the same). */
	if (sigstop_queued)
		kill(inf->pid, SIGCONT);
	for (size_t i = 0; i < inf->nthreads; i++) {
		struct inf_thread *t = &inf->threads[i];
		int sig = 0;
		/* A signal seen but not yet reported still belongs to the program. */
		if (t->has_pending && t->pending.kind == STOP_SIGNAL)
			sig = t->pending.sig;
		ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)sig);
	}
	inf_mark_gone(inf);
	inf->exited = false;
	inf->pid = 0;
	return 0;
}

void inferior_destroy(struct inferior *inf)
{
	if (inf->pid && !inf->exited)
		inferior_kill(inf);
	inf_forget(inf);
	free(inf->threads);
	free(inf->bps);
	inf->threads = NULL;
	inf->bps = NULL;
	inf->nthreads = inf->cap_threads = 0;
	inf->nbps = inf->cap_bps = 0;
}

void inferior_pause(struct inferior *inf)
{
	if (inf->pid && !inf->exited)
		inf_stop_all(inf);
}

int inferior_interrupt(struct inferior *inf)
{
	if (!inf->pid || inf->exited)
		return -1;
	return kill(inf->pid, SIGINT) < 0 ? -1 : 0;
}
