/* Tests of the CPU-time timer (common/ptrace/cpu_timer.c): armed on a
 * traced child that computes, it stops the child with its own signal,
 * which the tracer tells from others (si_fd); armed again on the same
 * descriptor it stops it again; a signal the child has pending is seen
 * (cpu_timer_pending) and one it has not is not. The CPU clock
 * (cpu_clock_open) counts the child's computing (two timer periods of it
 * at least) and not the time it is stopped. A child that blocks every
 * signal gets the timer's stop where the tracer lets it through
 * (cpu_timer_let_through), its own mask back afterwards; not let
 * through, the signal stays pending and it runs on to its end. Skipped
 * (77) where the
 * kernel gives no task-clock event (a container's seccomp,
 * perf_event_paranoid). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrev/cpu_timer.h"
#include "../check.h"

static volatile unsigned long counter;

/* A traced child that blocks every signal and computes for a while. */
static void blocked_signals(void)
{
	pid_t c = fork();
	if (c == 0) {
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (unsigned long i = 0; i < 400000000ul; i++)
			counter++;
		_exit(3);
	}
	int st, fd = -1;
	uint64_t saved = 0, now = 0;
	CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st), "the blocking child stops");
	CHECK((fd = cpu_timer_open(c)) >= 0);
	CHECK(cpu_timer_arm(fd, 1000000) == 0);
	CHECK(cpu_timer_let_through(c, &saved) && (saved & (1ull << (CPU_TIMER_SIGNAL - 1))),
	      "its mask changed (it blocked the signal: %#llx)", (unsigned long long)saved);
	CHECK(ptrace(PTRACE_CONT, c, NULL, NULL) == 0);
	CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st) && WSTOPSIG(st) == CPU_TIMER_SIGNAL,
	      "let through, the timer stops it (status %#x)", st);
	CHECK(cpu_timer_mask_back(c, saved) == 0 &&
	      ptrace(PTRACE_GETSIGMASK, c, (void *)sizeof now, &now) == 0 && now == saved,
	      "its own mask back (%#llx)", (unsigned long long)now);
	/* Not let through: pending, never taken; the child computes on. */
	CHECK(cpu_timer_arm(fd, 1000000) == 0);
	CHECK(ptrace(PTRACE_CONT, c, NULL, NULL) == 0);
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 3,
	      "not let through, it runs to its end (status %#x)", st);
	cpu_timer_close(fd);
}

int main(void)
{
	pid_t c = fork();
	if (c == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (;;)
			counter++;
	}
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st), "the child stops");
	int fd = cpu_timer_open(c);
	int clock = cpu_clock_open(c);
	if (fd < 0 || clock < 0) {
		printf("SKIP: no task-clock event here: %s\n", strerror(errno));
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
		return 77;
	}
	for (int round = 0; round < 2; round++) {
		CHECK(cpu_timer_arm(fd, 1000000) == 0, "armed (round %d)", round);
		CHECK(ptrace(PTRACE_CONT, c, NULL, NULL) == 0);
		CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st) && WSTOPSIG(st) == CPU_TIMER_SIGNAL,
		      "round %d: stopped by the timer's signal (status %#x)", round, st);
		siginfo_t si;
		memset(&si, 0, sizeof si);
		CHECK(ptrace(PTRACE_GETSIGINFO, c, NULL, &si) == 0);
		CHECK(cpu_timer_is(fd, &si), "round %d: its signal, told by si_fd (%d)", round,
		      si.si_fd);
		cpu_timer_disarm(fd);
		CHECK(!cpu_timer_pending(c, CPU_TIMER_SIGNAL), "round %d: nothing pending", round);
	}
	uint64_t ran = cpu_clock_read(clock);
	CHECK(ran >= 2000000 && ran < 1000000000ull, "the clock counted its two runs of 1 ms at "
	      "least (%llu ns)", (unsigned long long)ran);
	usleep(20000);
	uint64_t later = cpu_clock_read(clock);
	CHECK(later >= ran && later - ran < 1000000, "not the 20 ms it was stopped (%llu ns more)",
	      (unsigned long long)(later - ran));
	CHECK(cpu_clock_read(-1) == 0, "no clock reads 0");
	close(clock);
	/* A signal sent and not taken yet: pending. */
	syscall(SYS_tgkill, c, c, CPU_TIMER_SIGNAL);
	CHECK(cpu_timer_pending(c, CPU_TIMER_SIGNAL), "a pending signal seen");
	siginfo_t other;
	memset(&other, 0, sizeof other);
	other.si_signo = CPU_TIMER_SIGNAL;
	other.si_fd = fd + 1;
	CHECK(!cpu_timer_is(fd, &other), "another descriptor's signal is not the timer's");
	CHECK(!cpu_timer_is(-1, &other), "no timer, no timer's signal");
	cpu_timer_close(fd);
	kill(c, SIGKILL);
	waitpid(c, &st, 0);
	blocked_signals();
	return failures != 0;
}
