/* Postmortem test: reads its input file, then crashes on its content. */
#include <fcntl.h>
#include <unistd.h>

char input[64];

__attribute__((noinline)) static int parse(const char *s)
{
	int *p = (int *)0;
	if (s[0] == 'c')
		return *p; /* "crash" as the first word: crash */
	return 0;
}

int main(int argc, char **argv)
{
	int fd = open(argc > 1 ? argv[1] : "input.txt", O_RDONLY);
	if (fd < 0)
		return 2;
	ssize_t n = read(fd, input, sizeof input - 1);
	close(fd);
	return n > 0 ? parse(input) : 3;
}
