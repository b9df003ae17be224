/* Exits with the code given as argv[1] (0 when absent); the argument also
 * checks that the server passes arguments through. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 0;
    printf("exiting with %d\n", code);
    exit(code);
}
