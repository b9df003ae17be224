/* Inferior for the differential e2e tests: nested calls, a loop for a
 * conditional breakpoint, and aggregates (struct, array, pointer, union) to
 * print.  Everything is deterministic; keep it tiny and -O0. */
#include <stdio.h>
#include <string.h>

struct point { int x, y; };
struct shape { const char *name; struct point corner[2]; double area; };
union word { unsigned int u; unsigned char b[4]; float f; };

int global_counter = 7;
unsigned char buffer[16];
struct shape box = { "box", { { 1, 2 }, { 4, 6 } }, 12.5 };
int squares[6] = { 0, 1, 4, 9, 16, 25 };

int leaf(int v)
{
    int doubled = v * 2;
    return doubled + 1;
}

int middle(int a, int b)
{
    int sum = a + b;
    int r = leaf(sum);
    return r - 1;
}

int outer(int n)
{
    int acc = 0;
    acc += middle(n, 1);
    acc += middle(n, 2);
    return acc;
}

int f(int i)
{
    global_counter += i;
    return global_counter;
}

int main(int argc, char **argv)
{
    struct point p = { 3, 4 };
    struct shape *sp = &box;
    union word w;
    int total = 0;

    w.u = 0x3f800000u;
    for (int i = 0; i < (int)sizeof buffer; i++)
        buffer[i] = (unsigned char)(i * 17);
    for (int i = 0; i < 5; i++)
        total += f(i);
    total += outer(p.x + p.y);
    printf("total=%d area=%g b0=%u argc=%d\n", total, sp->area, w.b[3], argc);
    return 0;
}
