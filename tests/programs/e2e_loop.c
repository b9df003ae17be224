/* Runs for a while (bounded) so gdb can interrupt it; prints when it ends so
 * a detached run is visible. */
#include <stdio.h>
#include <unistd.h>

volatile int spins = 0;

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? 200 : 20;   /* about 4 s or 0.2 s */
    for (int i = 0; i < rounds; i++) {
        spins++;
        usleep(20000);
    }
    printf("loop done spins=%d\n", spins);
    return 0;
}
