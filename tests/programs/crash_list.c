/* Postmortem test: a linked list whose links get corrupted, then walked
 * until the walk dereferences garbage. Static, non-PIE, no stack
 * protector, as the other differential inferiors. */
#include <stdlib.h>
#include <string.h>

struct node {
	int value;
	struct node *next;
};

__attribute__((noinline)) static struct node *build(int n)
{
	struct node *head = NULL;
	for (int i = 0; i < n; i++) {
		struct node *nd = malloc(sizeof *nd);
		nd->value = i * 3;
		nd->next = head;
		head = nd;
	}
	return head;
}

__attribute__((noinline)) static void scribble(struct node *head)
{
	/* An off-by-one "clear" that overwrites the next link. */
	memset(&head->next->value, 0x41, sizeof(int) + sizeof(void *) + 4);
}

__attribute__((noinline)) static int walk(const struct node *n)
{
	int sum = 0;
	while (n) {
		sum += n->value;
		n = n->next;
	}
	return sum;
}

int main(void)
{
	struct node *list = build(5);
	scribble(list);
	return walk(list) == 42;
}
