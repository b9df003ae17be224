/* Reference single-stepper for the recorder tests, written independently
 * of server/: run PROG [ARGS] under ptrace, single-step every thread from
 * its first instruction to its end, print one line per thread as it is
 * created (`T TID`, creation order) and one line per completed
 * instruction (`TID IP`). The program's stdout/stderr go to /dev/null.
 *
 * Completed means: the step moved the IP (an unfinished REP iteration does
 * not), or the thread ended inside the syscall it was executing. A signal
 * stop with an unmoved IP is a fault or a signal before the instruction;
 * the step that delivers a signal to a handler stops on the handler's first
 * instruction without completing anything. rseq is refused, as the
 * recorders refuse it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct th {
	pid_t tid;
	unsigned long long ip;
	int deliver;
	int delivering;
	int started;
	int in_syscall;   /* the instruction being stepped is `syscall` */
};

static struct th ths[64];
static int nth;
static int memfd;

static struct th *find(pid_t tid)
{
	for (int i = 0; i < nth; i++)
		if (ths[i].tid == tid)
			return &ths[i];
	return NULL;
}

static struct th *add(pid_t tid)
{
	struct th *t = find(tid);
	if (t)
		return t;
	if (nth == 64) {
		fprintf(stderr, "ref_step: too many threads\n");
		exit(2);
	}
	t = &ths[nth++];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	printf("T %d\n", (int)tid);
	return t;
}

static unsigned long long get_ip(pid_t tid)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
		return 0;
	return r.rip;
}

static int is_syscall_at(unsigned long long ip);

static void step(struct th *t)
{
	int sig = t->deliver;
	/* Looked at now: once the process is gone its memory is too. */
	t->in_syscall = is_syscall_at(t->ip);
	t->deliver = 0;
	t->delivering = sig;
	/* The recorders refuse rseq (as rr does): so does this reference,
	 * with a syscall number that fails with ENOSYS. */
	if (t->in_syscall && !sig &&
	    ptrace(PTRACE_PEEKUSER, t->tid, offsetof(struct user_regs_struct, rax), 0) == SYS_rseq)
		ptrace(PTRACE_POKEUSER, t->tid, offsetof(struct user_regs_struct, rax), (void *)-1L);
	ptrace(PTRACE_SINGLESTEP, t->tid, 0, (void *)(long)sig);
}

static int is_syscall_at(unsigned long long ip)
{
	unsigned char b[2];
	return pread(memfd, b, 2, (off_t)ip) == 2 && b[0] == 0x0f && b[1] == 0x05;
}

int main(int argc, char **argv)
{
	pid_t pid;
	int st, exit_status = 0;
	char path[64];
	if (argc < 2) {
		fprintf(stderr, "usage: ref_step PROG [ARGS...]\n");
		return 2;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		personality(ADDR_NO_RANDOMIZE);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execve(argv[1], argv + 1, environ);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		fprintf(stderr, "ref_step: %s did not start\n", argv[1]);
		return 2;
	}
	ptrace(PTRACE_SETOPTIONS, pid, 0,
	       (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL));
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	memfd = open(path, O_RDONLY);
	struct th *m = add(pid);
	m->started = 1;
	m->ip = get_ip(pid);
	step(m);
	for (;;) {
		pid_t tid = waitpid(-1, &st, __WALL);
		struct th *t;
		unsigned long long nip;

		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		t = find(tid);
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			/* Ended in a syscall (exit, exit_group, blocked):
			 * the syscall ran. */
			if (t && t->started && !t->delivering && t->in_syscall)
				printf("%d %016llx\n", (int)tid, t->ip);
			if (t)
				t->tid = -1;
			if (tid == pid)
				exit_status = st;
			continue;
		}
		if (!t) {
			/* New thread before its clone event: it starts here. */
			t = add(tid);
		}
		if (st >> 16 == PTRACE_EVENT_CLONE) {
			unsigned long msg;
			ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg);
			add((pid_t)msg);
			ptrace(PTRACE_SINGLESTEP, tid, 0, 0);
			continue;
		}
		if (!t->started) {
			/* Its first stop (SIGSTOP): the first instruction. */
			t->started = 1;
			t->ip = get_ip(tid);
			step(t);
			continue;
		}
		nip = get_ip(tid);
		if (WSTOPSIG(st) == SIGTRAP && t->delivering) {
			siginfo_t si;
			ptrace(PTRACE_GETSIGINFO, tid, 0, &si);
			if (si.si_code == SIGTRAP) { /* at the handler */
				t->delivering = 0;
				t->ip = nip;
				step(t);
				continue;
			}
		}
		if (WSTOPSIG(st) != SIGTRAP) {
			t->deliver = WSTOPSIG(st);
		} else {
			siginfo_t si;
			ptrace(PTRACE_GETSIGINFO, tid, 0, &si);
			if (si.si_code == 0x80) /* SI_KERNEL: an int3's SIGTRAP */
				t->deliver = SIGTRAP;
		}
		if (nip != t->ip)
			printf("%d %016llx\n", (int)tid, t->ip);
		t->ip = nip;
		step(t);
	}
	fflush(stdout);
	if (WIFSIGNALED(exit_status))
		return 128 + WTERMSIG(exit_status) > 255 ? 255 : 128 + WTERMSIG(exit_status);
	return WEXITSTATUS(exit_status);
}
