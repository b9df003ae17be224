/* Runs itself again through execv with an argument: gdb (told of the
 * exec) loads the new program and stops at main in it too. */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc > 1) {
        printf("after exec: %s\n", argv[1]);
        return 0;
    }
    char *again[] = {argv[0], "again", NULL};
    fflush(stdout);
    execv("/proc/self/exe", again);
    perror("execv");
    return 1;
}
