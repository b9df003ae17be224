/* Forks and vforks with a breakpoint on work(), which the children call:
 * the children must not die of the breakpoint's int3 (ptrev takes it out
 * of their memory and lets them go, as gdbserver and gdb do), and the
 * parent stops at work() each time it calls it itself. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int work(int x)
{
    return x * 2;
}

static int status_of(pid_t p)
{
    int st;
    if (waitpid(p, &st, 0) != p)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(work(21) == 42 ? 0 : 1);
    int forked = status_of(p);
    p = vfork();
    if (p == 0) {
        work(5);
        execl("/bin/true", "true", (char *)0);
        _exit(127);
    }
    int vforked = status_of(p);
    printf("fork child %d, vfork child %d\n", forked, vforked);
    return work(1) == 2 && forked == 0 && vforked == 0 ? 0 : 1;
}
