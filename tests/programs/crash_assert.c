/* Postmortem test: a failed assert (SIGABRT). */
#include <assert.h>

__attribute__((noinline)) static int average(const int *v, int n)
{
	int sum = 0;
	for (int i = 0; i < n; i++)
		sum += v[i];
	assert(n > 0 && "average of nothing");
	return sum / n;
}

int main(void)
{
	int values[4] = {4, 8, 15, 16};
	int a = average(values, 4);
	int b = average(values, 0);
	return a + b;
}
