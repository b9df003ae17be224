/* Runs itself again through /proc/self/exe (as programs that re-exec
 * themselves do), then recurses: the second image is what a recording
 * that follows the exec holds. /proc/self/exe names the program only from
 * inside it: exec'd so by ptrev, it is ptrev. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int depth(int n)
{
    return n ? 1 + depth(n - 1) : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "again") == 0) {
        printf("again: %d\n", depth(5));
        return 0;
    }
    printf("first\n");
    fflush(stdout);
    execl("/proc/self/exe", argv[0], "again", (char *)0);
    perror("exec /proc/self/exe");
    return 1;
}
