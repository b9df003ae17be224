/* Inferior for the agent-expression oracle: functions whose arguments and
 * globals gdb compiles into breakpoint-condition bytecode (locals through
 * the frame base, globals by address, a struct through a pointer, a signed
 * char, unsigned arithmetic). The bytecode gdb sent for each condition is
 * pasted into tests/unit/test_agent_expr.c. */
struct point {
	int x;
	short y;
	signed char tag;
	long long big;
};

int g_count;
unsigned int g_mask = 0xf0;
long long g_neg = -5;
struct point g_pt = {7, -3, -2, 0x123456789abcLL};

__attribute__((noinline)) int f(int x, int y)
{
	return x + y;
}

__attribute__((noinline)) int g(struct point *p, unsigned u, signed char c)
{
	return p->x + (int)u + c;
}

int main(void)
{
	int sum = 0;
	for (int i = 0; i < 5; i++) {
		g_count = i;
		sum += f(i, i * 2);
	}
	sum += g(&g_pt, 17, -4);
	return sum == 0;
}
