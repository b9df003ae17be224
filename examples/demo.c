/* The example `scripts/demo` debugs: a linked list summed recursively. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	int value;
	struct node *next;
};

static struct node *push(struct node *head, int value)
{
	struct node *n = malloc(sizeof *n);
	n->value = value;
	n->next = head;
	return n;
}

static int sum(const struct node *n)
{
	if (!n)
		return 0;
	return n->value + sum(n->next);
}

int main(void)
{
	struct node *list = NULL;
	for (int i = 1; i <= 4; i++)
		list = push(list, i * 10);
	int total = sum(list);
	printf("total = %d\n", total);
	return total == 100 ? 0 : 1;
}
