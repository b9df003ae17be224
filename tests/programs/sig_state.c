/* Reads the signal state it was started with (which signals are ignored,
 * which blocked: inherited across exec from whoever started it) and makes
 * a number of syscalls that depends on it, so that a replay started with
 * another state goes another way. Prints the state it saw. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

volatile int state;

void done(void)
{
}

int main(void)
{
    static const int sigs[] = {SIGUSR2, SIGPIPE, SIGXFSZ};
    for (int i = 0; i < 3; i++) {
        struct sigaction old;
        sigaction(sigs[i], NULL, &old);
        if (old.sa_handler == SIG_IGN)
            state |= 1 << i;
    }
    sigset_t blocked;
    sigprocmask(SIG_BLOCK, NULL, &blocked);
    if (sigismember(&blocked, SIGUSR1))
        state |= 8;
    for (int i = 0; i < state; i++)
        getppid();
    printf("state=%d\n", state);
    fflush(stdout);
    done();
    return 0;
}
