/* Writes to the file argv[1] what a run was started with: two
 * environment variables, the working directory and whether address-space
 * randomisation is off (personality's ADDR_NO_RANDOMIZE). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/personality.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char cwd[4096];
    FILE *f = argc > 1 ? fopen(argv[1], "w") : stdout;
    if (!f)
        return 2;
    const char *t = getenv("PTREV_T"), *gone = getenv("PTREV_GONE");
    fprintf(f, "PTREV_T=%s\nPTREV_GONE=%s\ncwd=%s\nno_randomize=%d\n", t ? t : "(unset)",
            gone ? gone : "(unset)", getcwd(cwd, sizeof cwd) ? cwd : "?",
            (personality(0xffffffff) & ADDR_NO_RANDOMIZE) != 0);
    return f == stdout ? 0 : fclose(f);
}
