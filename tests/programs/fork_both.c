/* gdb debugs the parent and its child at once (set detach-on-fork off),
 * or follows a vfork's child while the parent waits (follow-fork-mode
 * child): the parent calls work() before it waits for the child, so that
 * either can be run first. usage: fork_both fork|vfork */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int work(int x)
{
    return x * 2;
}

int main(int argc, char **argv)
{
    int use_vfork = argc > 1 && strcmp(argv[1], "vfork") == 0;
    pid_t p = use_vfork ? vfork() : fork();
    if (p == 0) {
        if (use_vfork) {
            work(5);
            execl("/bin/true", "true", (char *)0);
        }
        _exit(work(21) == 42 ? 0 : 1);
    }
    int mine = work(1);
    int st;
    if (waitpid(p, &st, 0) != p)
        return 2;
    printf("child %d, parent %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128, mine);
    return mine == 2 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
