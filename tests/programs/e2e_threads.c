/* Threads started one at a time and each joined before the next starts.  A
 * worker waits until the main thread is asleep in read() on a pipe before
 * doing its work, so at a breakpoint in work() every thread's position (and
 * so `info threads` and each backtrace) is the same on every run.  (Not
 * pthread_join: its futex wait shows the thread id as an argument.) */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int results[3];
int wake[2];

/* The main thread's state letter from /proc (its tid is the pid). */
static char main_thread_state(void)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)getpid());
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *close_paren = strrchr(buf, ')');
    return close_paren && close_paren[1] ? close_paren[2] : '?';
}

int work(int id)
{
    int value = id * 10 + 1;
    results[id] = value;
    return value;
}

void *worker(void *arg)
{
    while (main_thread_state() != 'S')
        usleep(1000);
    work((int)(long)arg);
    if (write(wake[1], "x", 1) != 1)
        return arg;
    return NULL;
}

int main(void)
{
    if (pipe(wake) != 0)
        return 2;
    for (long i = 0; i < 3; i++) {
        pthread_t t;
        char c;
        pthread_create(&t, NULL, worker, (void *)i);
        if (read(wake[0], &c, 1) != 1)
            return 3;
        pthread_join(t, NULL);
    }
    printf("%d %d %d\n", results[0], results[1], results[2]);
    return 0;
}
