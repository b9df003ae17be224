/* Two threads map and unmap memory at the same time, again and again: the
 * kernel places each mapping where the other thread's left room, so a
 * replay that runs these syscalls in another order than the kernel did
 * gets other addresses (tests/reverse/thread_maps.py). Each thread also
 * writes into its mappings and sums what it read back; the program
 * prints the sums and the last addresses. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#define ROUNDS 300

static uintptr_t last[2];
static unsigned long sums[2];

static void *churn(void *arg)
{
	int me = (int)(intptr_t)arg;
	for (int i = 0; i < ROUNDS; i++) {
		size_t len = (size_t)(1 + (i + me) % 7) * 4096;
		unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		p[0] = (unsigned char)i;
		p[len - 1] = (unsigned char)me;
		sums[me] += p[0] + p[len - 1] + ((uintptr_t)p >> 12 & 0xff);
		last[me] = (uintptr_t)p;
		if (i % 3 != 2)
			munmap(p, len);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, churn, (void *)(intptr_t)1);
	churn((void *)(intptr_t)0);
	pthread_join(t, NULL);
	printf("%lu %lu %#lx %#lx\n", sums[0], sums[1], (unsigned long)last[0],
	       (unsigned long)last[1]);
	return 0;
}
