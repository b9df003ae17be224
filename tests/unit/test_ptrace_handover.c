/* Tests of handing a stopped tracee to another tracer thread
 * (common/ptrace/ptrace_handover.c): a child traced by a thread of this
 * test is parked there and adopted by the main thread, which then reads
 * its registers (the same as the first tracer saw: it ran nothing in
 * between), writes one, resumes it and sees it exit with the status that
 * register gives: no other stop comes first. One let go on (SIGCONT)
 * while parked is still taken; one that is gone is not, with a message;
 * ptrace_park_kill ends and reaps a parked one. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/ptrace_handover.h"
#include "ptrev/ptrace_wait.h"
#include "../check.h"

/* The child stops itself, then exits with what rbx holds when it is
 * resumed (0 unless a tracer changed it). */
static void child(void)
{
	ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	raise(SIGSTOP);
	long status;
	__asm__ volatile("xor %%ebx, %%ebx\n\t"
			 "int3\n\t"
			 "mov %%rbx, %0"
			 : "=r"(status)
			 :
			 : "rbx");
	_exit((int)status);
}

struct parking {
	pid_t pid;
	struct user_regs_struct regs; /* what the first tracer saw */
	int rc;
};

/* The first tracer: a thread other than main, as the job that makes a
 * tail is. It attaches (the child is main's, so it seizes and waits for
 * the int3 stop), then parks it. */
static void *first_tracer(void *arg)
{
	struct parking *p = arg;
	int st = 0;
	p->rc = -1;
	if (ptrace(PTRACE_SEIZE, p->pid, NULL, NULL) < 0)
		return NULL;
	/* Resumed from its SIGSTOP by main's detach below: it reaches int3. */
	kill(p->pid, SIGCONT);
	if (ptrace_wait_task(p->pid, &st) < 0)
		return NULL;
	/* Until the int3's SIGTRAP (a seized tracee also reports SIGCONT's
	 * end of its group-stop as a PTRACE_EVENT_STOP with SIGTRAP). */
	while (WIFSTOPPED(st) && (WSTOPSIG(st) != SIGTRAP || st >> 16)) {
		ptrace(PTRACE_CONT, p->pid, NULL, NULL);
		if (ptrace_wait_task(p->pid, &st) < 0)
			return NULL;
	}
	if (!WIFSTOPPED(st) || ptrace(PTRACE_GETREGS, p->pid, NULL, &p->regs) < 0)
		return NULL;
	p->rc = ptrace_park(p->pid);
	return NULL;
}

int main(void)
{
	pid_t c = fork();
	if (c == 0)
		child();
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st), "the child stops");
	/* Main lets it go stopped, so that the thread can take it. */
	ptrace(PTRACE_DETACH, c, NULL, (void *)(long)SIGSTOP);
	struct parking p = {.pid = c};
	pthread_t th;
	CHECK(pthread_create(&th, NULL, first_tracer, &p) == 0, "a thread");
	pthread_join(th, NULL);
	CHECK(p.rc == 0, "the thread traced the child to its int3 and parked it: %s",
	      strerror(errno));

	char err[256] = "";
	CHECK(ptrace_adopt(c, PTRACE_O_EXITKILL, err, sizeof err) == 0, "main adopts it: %s", err);
	struct user_regs_struct regs;
	CHECK(ptrace(PTRACE_GETREGS, c, NULL, &regs) == 0, "its registers: %s", strerror(errno));
	CHECK(regs.rip == p.regs.rip && regs.rsp == p.regs.rsp && regs.rbx == 0,
	      "where the first tracer left it (rip %#llx, was %#llx)", (unsigned long long)regs.rip,
	      (unsigned long long)p.regs.rip);
	regs.rbx = 42;
	CHECK(ptrace(PTRACE_SETREGS, c, NULL, &regs) == 0, "a register set");
	CHECK(ptrace(PTRACE_CONT, c, NULL, NULL) == 0, "resumed: %s", strerror(errno));
	pid_t w = ptrace_waitpid(c, &st, __WALL);
	CHECK(w == c && WIFEXITED(st) && WEXITSTATUS(st) == 42,
	      "it ran on and exited with the register's value (status %#x)", st);

	/* A parked process that someone else let go on (SIGCONT) is still
	 * taken, stopped where it runs. */
	pid_t d = fork();
	if (d == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (;;)
			pause();
	}
	CHECK(waitpid(d, &st, 0) == d && WIFSTOPPED(st), "a third child stops");
	CHECK(ptrace_park(d) == 0, "parked: %s", strerror(errno));
	kill(d, SIGCONT);
	CHECK(ptrace_adopt(d, PTRACE_O_EXITKILL, err, sizeof err) == 0,
	      "adopted after a SIGCONT: %s", err);
	ptrace_park_kill(d);
	/* No such process: a message. */
	CHECK(ptrace_adopt(d, 0, err, sizeof err) < 0 && strstr(err, "taking over"),
	      "adopting a process that is gone fails (%s)", err);

	/* A parked copy nobody adopts: killed and reaped. */
	pid_t e = fork();
	if (e == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(0);
	}
	CHECK(waitpid(e, &st, 0) == e && WIFSTOPPED(st), "another child stops");
	CHECK(ptrace_park(e) == 0, "parked: %s", strerror(errno));
	ptrace_park_kill(e);
	CHECK(kill(e, 0) < 0 && errno == ESRCH, "killed and reaped by ptrace_park_kill");
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
