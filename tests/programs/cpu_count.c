/* Prints how many CPUs it may run on, then how many a fork child may:
 * under a recorder the program is bound to one CPU with ptrev, and a
 * child it lets go gets the CPUs the program had before. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int cpus(void)
{
    cpu_set_t s;
    return sched_getaffinity(0, sizeof s, &s) == 0 ? CPU_COUNT(&s) : -1;
}

int main(void)
{
    printf("program %d\n", cpus());
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        printf("child %d\n", cpus());
        return 0;
    }
    waitpid(p, NULL, 0);
    return 0;
}
