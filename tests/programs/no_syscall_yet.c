/* A program that runs its own code for a long time before its first
 * syscall: static and libc-free, so not even a loader makes one. Recorded
 * by the sw backend (some 10^5 instructions a second) it is still in its
 * loop seconds later, and a recorder killed then leaves PT with no disable
 * in it, which is how a program looks in ld.so on a loaded machine. The
 * loop's count is in `done` at every point. */

typedef unsigned long u64;

volatile u64 done;

__asm__(".text\n"
	".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	and $-16, %rsp\n"
	"	call cmain\n"
	"	mov %eax, %edi\n"
	"	mov $231, %eax\n" /* exit_group */
	"	syscall\n"
	"	hlt\n");

int cmain(void);

int cmain(void)
{
	u64 x = 1;
	for (done = 0; done < 100000000; done++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return (int)(x & 1);
}
