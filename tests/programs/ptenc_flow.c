/* Inferior for test_pt_encoder: every kind of control flow the PT encoder
 * must get right, in a static program without libc (one executable mapping,
 * no loader, about 15k instructions when single-stepped).
 *
 * Built with -nostdlib -static -no-pie -mno-red-zone (the inline asm calls
 * and pushes, which would clobber a red zone). */

typedef unsigned long u64;

#define SYS_write 1
#define SYS_rt_sigaction 13
#define SYS_rt_sigreturn 15
#define SYS_getpid 39
#define SYS_kill 62
#define SIGILL 4
#define SIGUSR1 10
#define SA_SIGINFO 0x4
#define SA_RESTORER 0x04000000
#define UC_RIP_OFFSET 168 /* ucontext.uc_mcontext.gregs[REG_RIP] */

struct ksigaction {
	void *handler;
	u64 flags;
	void *restorer;
	u64 mask;
};

/* Entry: call the C body, exit_group with its result. */
__asm__(".text\n"
	".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	call cmain\n"
	"	mov %eax, %edi\n"
	"	mov $231, %eax\n"
	"	syscall\n"
	"	hlt\n"
	/* Signal return trampoline (SA_RESTORER). */
	"restorer:\n"
	"	mov $15, %eax\n"
	"	syscall\n"
	"	hlt\n"
	/* ret imm16: pops the caller's pushed argument. */
	"retimm:\n"
	"	mov $7, %eax\n"
	"	ret $8\n");

void restorer(void);
int retimm(void);
int cmain(void);

static long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

static long sys4(long n, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return r;
}

static volatile long counter;
static char scratch[16];

static void on_usr1(int sig)
{
	counter += sig;
}

static void on_ill(int sig, void *info, void *uc)
{
	(void)info;
	counter += sig;
	*(u64 *)((char *)uc + UC_RIP_OFFSET) += 2; /* skip the ud2 */
}

static int leaf0(int x) { return x + 1; }
static int leaf1(int x) { return x * 3; }
static int leaf2(int x) { return x - 7; }
static int (*const table[3])(int) = {leaf0, leaf1, leaf2};

/* Recursion deeper than the 64-entry RET-compression stack. */
static int deep(int n)
{
	if (n == 0)
		return 0;
	return 1 + deep(n - 1);
}

/* A switch-like indirect jump through a table of code addresses. */
static int dispatch(int i)
{
	static void *const labels[4] = {&&l0, &&l1, &&l2, &&l3};
	int r;

	goto *labels[i & 3];
l0:
	r = 10;
	goto out;
l1:
	r = 20;
	goto out;
l2:
	r = 30;
	goto out;
l3:
	r = 40;
out:
	return r;
}

static void odd_branches(void)
{
	/* loop, jrcxz, a call to the next instruction (not pushed for RET
	 * compression), ret imm16, a RET that does not match its call (push
	 * + ret used as a jump), and a REP string instruction (one
	 * single-step per iteration). */
	__asm__ volatile("	mov $3, %%ecx\n"
			 "1:	loop 1b\n"
			 "	jrcxz 2f\n"
			 "	nop\n"
			 "2:	call 3f\n"
			 "3:	pop %%rax\n"
			 "	push $1\n"
			 "	call retimm\n"
			 "	lea 4f(%%rip), %%rax\n"
			 "	push %%rax\n"
			 "	ret\n"
			 "4:	mov %0, %%rdi\n"
			 "	mov $5, %%ecx\n"
			 "	xor %%eax, %%eax\n"
			 "	rep stosb\n"
			 :
			 : "r"(scratch)
			 : "rax", "rcx", "rdi", "memory", "cc");
}

int cmain(void)
{
	struct ksigaction sa_usr1 = {(void *)on_usr1, SA_RESTORER,
				     (void *)restorer, 0};
	struct ksigaction sa_ill = {(void *)on_ill, SA_RESTORER | SA_SIGINFO,
				    (void *)restorer, 0};
	long sum = 0;
	int i;

	sys4(SYS_rt_sigaction, SIGUSR1, (long)&sa_usr1, 0, 8);
	sys4(SYS_rt_sigaction, SIGILL, (long)&sa_ill, 0, 8);
	sys3(SYS_write, 1, (long)"ptenc_flow\n", 11);

	for (i = 0; i < 200; i++) {
		if (i % 3 == 0)
			sum += table[i % 3](i);
		else if (i & 1)
			sum += table[1](i) + dispatch(i);
		else
			sum -= table[2](i) - dispatch(i >> 1);
		if (i % 100 == 7)
			sum += deep(70 + i % 30);
	}
	odd_branches();

	/* A signal sent to ourselves: delivered on return from kill. */
	sys3(SYS_kill, sys3(SYS_getpid, 0, 0, 0), SIGUSR1, 0);
	/* A fault: SIGILL at the ud2, the handler skips it. */
	__asm__ volatile("ud2");
	counter += sum & 1;
	return counter == SIGUSR1 + SIGILL + (sum & 1) ? 0 : 1;
}
