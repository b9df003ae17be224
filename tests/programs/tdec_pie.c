/* Inferior for test_trace_decode: a static position-independent program
 * without libc, so the kernel loads it at a random address and its symbols
 * are found only through the mapping's load bias. A few dozen instructions:
 * a loop, direct calls, an exit_group.
 *
 * Built with -static-pie -nostdlib: no relocations are needed because the
 * code uses only RIP-relative addressing. */

__asm__(".text\n"
	".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	call tdec_main\n"
	"	mov %eax, %edi\n"
	"	mov $231, %eax\n"
	"	syscall\n"
	"	hlt\n");

int tdec_main(void);

__attribute__((noinline)) static int twice(int x)
{
	return 2 * x;
}

int tdec_main(void)
{
	int sum = 0;

	for (int i = 0; i < 5; i++)
		sum += twice(i);
	return sum == 20 ? 0 : 1;
}
