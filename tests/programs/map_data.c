/* A program that maps data files (tests/reverse/mapped_files.py): FILE,
 * read-only and private, and COPY, private and writable, which it
 * changes in memory. look(i) reads both, so each mark has the files'
 * bytes as the run mapped them; the test changes FILE and deletes COPY
 * before replaying. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *data;
static char *copy;

static int look(int i)
{
	copy[i] = (char)('a' + i);
	return data[i] + copy[i];
}

static const void *map(const char *path, int prot)
{
	int fd = open(path, prot & PROT_WRITE ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return MAP_FAILED;
	void *p = mmap(NULL, 4096, prot, MAP_PRIVATE, fd, 0);
	close(fd);
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	data = map(argv[1], PROT_READ);
	copy = (char *)map(argv[2], PROT_READ | PROT_WRITE);
	if (data == MAP_FAILED || copy == MAP_FAILED)
		return 1;
	int sum = 0;
	for (int i = 0; i < 8; i++)
		sum += look(i);
	printf("sum=%d %.8s %.8s\n", sum, data, copy);
	return 0;
}
