/* Inferior of the block stepper's tests (test_block_step, test_sw_engine's
 * block cases): straight runs of instructions between global labels, so
 * that native runs, breakpoints and watchpoints can aim at exact addresses
 * inside a basic block (static, non-PIE: nm gives the addresses).
 *
 *   blk_a .. blk_e3  a straight run adding to rax; with argv[1] "fault" a
 *                    ud2 at blk_ud2 follows blk_f0 (the test steps over it)
 *   blk_loop         a loop whose block stores to blk_watched in its middle
 *                    (blk_after_store follows the store)
 *   blk_rdtsc        rdtsc in the middle of a block
 *   blk_rep          rep movsb in the middle of a block
 *   blk_never        never executed
 * With argv[1] "alarm" it only spins in a loop until SIGALRM from an
 * interval timer has interrupted it 3 times (signals in mid-block). */
#include <signal.h>
#include <string.h>
#include <sys/time.h>

volatile unsigned long blk_watched;
static char src[64] = "block stepper", dst[64];

__asm__(".text\n.globl blk_never\nblk_never: ret\n");

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	alarms += sig == SIGALRM;
}

static int spin(void)
{
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	volatile unsigned long x = 1;

	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	while (alarms < 3)
		x = x * 3 + (x >> 7);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long r;
	long fault = argc > 1 && !strcmp(argv[1], "fault");

	if (argc > 1 && !strcmp(argv[1], "alarm"))
		return spin();
	__asm__ volatile(
		".globl blk_a\nblk_a: mov $1, %%eax\n"
		"add $2, %%rax\n"
		".globl blk_b\nblk_b: add $4, %%rax\n"
		"add $8, %%rax\n"
		".globl blk_c\nblk_c: add $16, %%rax\n"
		".globl blk_d\nblk_d: add $32, %%rax\n"
		"test %[fault], %[fault]\n"
		"jz 1f\n"
		".globl blk_f0\nblk_f0: add $1, %%rax\n"
		".globl blk_ud2\nblk_ud2: ud2\n"
		"1:\n"
		".globl blk_e\nblk_e: add $64, %%rax\n"
		".globl blk_e2\nblk_e2: add $128, %%rax\n"
		".globl blk_e3\nblk_e3: nop\n"
		/* A loop of 50 whose block stores in its middle. */
		"mov $50, %%ecx\n"
		".globl blk_loop\nblk_loop: add %%rcx, %%rax\n"
		"mov %%rax, blk_watched(%%rip)\n"
		".globl blk_after_store\nblk_after_store: xor $5, %%rax\n"
		"dec %%ecx\n"
		"jnz blk_loop\n"
		/* rdtsc and a REP string instruction inside blocks. */
		"mov %%rax, %%r8\n"
		".globl blk_rdtsc\nblk_rdtsc: rdtsc\n"
		"add $1, %%r8\n"
		"lea %[src], %%rsi\n"
		"lea %[dst], %%rdi\n"
		"mov $13, %%ecx\n"
		".globl blk_rep\nblk_rep: rep movsb\n"
		"add $1, %%r8\n"
		"mov %%r8, %%rax\n"
		: "=&a"(r), [dst] "=m"(dst)
		: [fault] "r"(fault), [src] "m"(src)
		: "rcx", "rdx", "rsi", "rdi", "r8", "cc", "memory");
	return r == 0 || memcmp(src, dst, 13) != 0;
}
