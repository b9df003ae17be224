/* Computes for about ten seconds without a syscall, so that a debugger
 * attaching to it finds it in user code (not inside a syscall) and can
 * record from there. */
volatile unsigned long acc;

int main(void)
{
    for (unsigned long i = 0; i < 4000000000ul; i++) {
        acc += i * 3;
        if (acc % 7 == 0)
            acc ^= i;
    }
    return 0;
}
