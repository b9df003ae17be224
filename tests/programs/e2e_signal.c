/* Raises SIGUSR1 with a handler installed, so gdb stops on the signal and
 * can backtrace inside the handler. */
#include <signal.h>
#include <stdio.h>

volatile sig_atomic_t handled = 0;

void on_usr1(int sig)
{
    handled = sig;
}

int main(void)
{
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    printf("handled=%d\n", (int)handled);
    return handled == SIGUSR1 ? 0 : 1;
}
