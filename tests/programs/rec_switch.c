/* Recorder test: a dense switch that -O2 compiles to a jump table (an
 * indirect jmp per dispatch). */
#include <stdio.h>

static volatile int input[] = { 0, 3, 7, 1, 9, 4, 2, 8, 5, 6, 11, 10, 3, 0 };

static volatile int acc;

/* Each case has its own side effect, so gcc cannot turn the switch into a
 * table of values: it stays a table of jump targets. */
__attribute__((noinline)) static int dispatch(int v)
{
	switch (v) {
	case 0: acc += 17; break;
	case 1: acc *= 3; break;
	case 2: acc ^= 42; break;
	case 3: acc -= v; break;
	case 4: acc <<= 1; break;
	case 5: acc >>= 2; break;
	case 6: acc |= 0x100; break;
	case 7: acc &= 0xffff; break;
	case 8: acc += 1234; break;
	case 9: acc = acc * acc; break;
	case 10: acc = -acc; break;
	case 11: acc += 3; break;
	default: return 0;
	}
	return acc & 0xff;
}

int main(void)
{
	int sum = 0;
	for (unsigned i = 0; i < sizeof input / sizeof input[0]; i++)
		sum += dispatch(input[i]);
	printf("%d\n", sum);
	return 0;
}
