/* Postmortem test: a use after free whose stale pointer leads to a crash. */
#include <stdlib.h>
#include <string.h>

struct buffer {
	char *data;
	int len;
};

__attribute__((noinline)) static struct buffer *make(int len)
{
	struct buffer *b = malloc(sizeof *b);
	b->data = malloc((size_t)len);
	memset(b->data, 'x', (size_t)len);
	b->len = len;
	return b;
}

__attribute__((noinline)) static void release(struct buffer *b)
{
	free(b->data);
	free(b);
}

__attribute__((noinline)) static int use(struct buffer *b)
{
	return b->data[b->len - 1];
}

int main(void)
{
	struct buffer *b = make(64);
	release(b);
	/* The freed block is reused and its pointer field overwritten. */
	long *reuse = malloc(sizeof(struct buffer));
	reuse[0] = 0x10;
	return use(b);
}
