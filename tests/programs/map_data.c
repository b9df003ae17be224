/* A program that maps data files (tests/reverse/mapped_files.py): FILE,
 * read-only and private, and COPY, private and writable, which it
 * changes in memory. look(i) reads both, so each mark has the files'
 * bytes as the run mapped them; the test changes FILE and deletes COPY
 * before replaying. BIG, where given, is mapped whole. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *data;
static char *copy;

static int look(int i)
{
	copy[i] = (char)('a' + i);
	return data[i] + copy[i];
}

static const void *map(const char *path, int prot, size_t len)
{
	int fd = open(path, prot & PROT_WRITE ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return MAP_FAILED;
	struct stat st;
	if (!len)
		len = fstat(fd, &st) == 0 ? (size_t)st.st_size : 0;
	void *p = mmap(NULL, len, prot, MAP_PRIVATE, fd, 0);
	close(fd);
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	data = map(argv[1], PROT_READ, 4096);
	copy = (char *)map(argv[2], PROT_READ | PROT_WRITE, 4096);
	if (data == MAP_FAILED || copy == MAP_FAILED)
		return 1;
	/* A third file is mapped whole (too big to record: the test makes
	 * it larger than MAPPED_DATA_MAX). */
	const char *big = argc > 3 ? map(argv[3], PROT_READ, 0) : NULL;
	if (big == MAP_FAILED || (big && big[0] != 0))
		return 1;
	int sum = 0;
	for (int i = 0; i < 8; i++)
		sum += look(i);
	printf("sum=%d %.8s %.8s\n", sum, data, copy);
	return 0;
}
