/* Reverse-execution test (watch_pieces.py): a watched byte written in
 * turn by the program's own store and by the kernel (a read() into it),
 * each round's write followed by a long computation, one stretch of the
 * recording, so that the writes lie far from the recording's end. A
 * second byte (cell[1]) is read by the program in the store's rounds and
 * written by the kernel's read() in the others: for rwatch and awatch.
 * argv[1]: rounds (6), argv[2]: passes of each computation (100000). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

char cell[16];
unsigned long sum;

__attribute__((noinline)) unsigned long compute(unsigned long acc, unsigned long passes)
{
	for (unsigned long i = 0; i < passes; i++)
		acc = (acc << 7) + (acc >> 3) + i;
	return acc;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 6;
	unsigned long passes = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000;
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0)
		return 2;
	for (int round = 0; round < rounds; round++) {
		if (round % 2 == 0) {
			cell[0] = (char)('A' + round); /* the program's store */
			sum += (unsigned char)cell[1]; /* the program's read */
		} else if (read(fd, cell, 2) != 2) { /* the kernel's writes */
			return 3;
		}
		/* An address-space change elsewhere: no write to cell. */
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (p != MAP_FAILED)
			munmap(p, 4096);
		sum += compute((unsigned long)round, passes);
	}
	printf("%lu\n", sum);
	return 0;
}
