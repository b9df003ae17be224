/* Writes through a NULL pointer: SIGSEGV in a nested frame. */
#include <stddef.h>

void store(int *where, int value)
{
    *where = value;
}

int main(void)
{
    store(NULL, 42);
    return 0;
}
