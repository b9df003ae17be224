/* Runs itself again through execv with an argument: gdb (told of the
 * exec) loads the new program and stops at main in it too. With "fork",
 * a forked child does that exec while the parent waits for it. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char *again[] = {argv[0], "again", NULL};
    if (argc > 1 && strcmp(argv[1], "fork") == 0) {
        pid_t p = fork();
        if (p == 0) {
            execv("/proc/self/exe", again);
            _exit(127);
        }
        int st;
        waitpid(p, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    if (argc > 1) {
        printf("after exec: %s\n", argv[1]);
        return 0;
    }
    fflush(stdout);
    execv("/proc/self/exe", again);
    perror("execv");
    return 1;
}
