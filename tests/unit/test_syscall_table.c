/* Tests of the syscall table (common/syscall_table.c): every number of the
 * kernel's x86-64 table (read from the uapi header unistd_64.h) is
 * described under its own name, or is one of the holes; names are unique;
 * every entry's description is well formed; the sizes it writes are the
 * sizeof of the kernel's uapi structures (not glibc's); the ranges
 * computed for sample arguments are right, also through iovecs, msghdrs
 * and the sub-command handlers (ioctl, fcntl, prctl, sockopt, clone3 ...);
 * a syscall the table cannot describe is unknown only where it succeeded;
 * what changes the address space and how a replay treats each. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <asm/unistd_64.h>
#include <asm/stat.h>
#include <asm/statfs.h>
#include <asm/termios.h>
#include <asm/ioctls.h>
#include <asm/ldt.h>
#include <linux/stat.h>
#include <linux/sysinfo.h>
#include <linux/utsname.h>
#include <linux/time_types.h>
#include <linux/resource.h>
#include <linux/times.h>
#include <linux/capability.h>
#include <linux/timex.h>
#include <linux/mqueue.h>
#include <linux/sem.h>
#include <linux/shm.h>
#include <linux/msg.h>
#include <linux/eventpoll.h>
#include <linux/aio_abi.h>
#include <linux/fcntl.h>
#include <linux/sched.h>

#include "ptrev/syscall_table.h"
#include "../check.h"

/* The holes of the x86-64 table: 335 .. 423 (the numbers common to every
 * architecture start at 424). */
static int is_hole(uint64_t nr)
{
	return nr >= 335 && nr <= 423;
}

/* The test's own memory stands for the inferior's. */
static long read_self(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return (long)len;
}

static struct sc_range rg[64];

static int writes(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
		  uint64_t a5, int64_t result)
{
	const uint64_t args[6] = {a0, a1, a2, a3, a4, a5};
	memset(rg, 0, sizeof rg);
	return syscall_writes(nr, args, result, read_self, NULL, rg, 64);
}

/* One range, at addr, of len bytes. */
static int one(int n, uint64_t addr, uint64_t len)
{
	return n == 1 && rg[0].addr == addr && rg[0].len == len;
}

static void test_against_header(void)
{
	const char *paths[] = {"/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
			       "/usr/include/asm/unistd_64.h"};
	FILE *f = NULL;
	for (size_t i = 0; i < 2 && !f; i++)
		f = fopen(paths[i], "r");
	CHECK(f != NULL, "no unistd_64.h");
	if (!f)
		return;
	char line[256], name[128];
	unsigned long nr, max = 0, seen = 0;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "#define __NR_%127s %lu", name, &nr) != 2)
			continue;
		seen++;
		if (nr > max)
			max = nr;
		const char *mine = syscall_name(nr);
		CHECK(mine && !strcmp(mine, name), "%lu is %s in the header, %s in the table",
		      nr, name, mine ? mine : "(none)");
	}
	fclose(f);
	CHECK(seen > 300, "only %lu syscalls in the header", seen);
	CHECK(max < SYSCALL_TABLE_LEN, "the header goes to %lu", max);
	printf("header: %lu syscalls up to %lu\n", seen, max);
}

static void test_entries(void)
{
	unsigned described = 0, unsupported = 0, nosys = 0;
	for (uint64_t nr = 0; nr < SYSCALL_TABLE_LEN; nr++) {
		const struct syscall_desc *d = syscall_desc(nr);
		CHECK((d == NULL) == is_hole(nr), "%llu: %s", (unsigned long long)nr,
		      d ? "described, a hole expected" : "a hole, not described");
		if (!d)
			continue;
		described++;
		unsupported += d->replay == SYSCALL_UNSUPPORTED;
		nosys += d->nosys;
		CHECK(d->name[0] && strlen(d->name) < 32, "%llu: name", (unsigned long long)nr);
		for (uint64_t o = 0; o < nr; o++)
			CHECK(!syscall_name(o) || strcmp(syscall_name(o), d->name),
			      "%s is %llu and %llu", d->name, (unsigned long long)o,
			      (unsigned long long)nr);
		CHECK(d->replay <= SYSCALL_UNSUPPORTED, "%s: replay kind", d->name);
		CHECK((d->replay == SYSCALL_UNSUPPORTED || d->replay == SYSCALL_CLONE) ==
		      (d->why != NULL), "%s: a reason exactly where it is unsupported", d->name);
		CHECK(!d->sub || d->special, "%s: a sub-command without a handler", d->name);
		CHECK(d->sub_arg < 6, "%s: sub-command argument", d->name);
		for (size_t i = 0; i < 4; i++) {
			const struct sc_write *w = &d->w[i];
			if (w->len == SC_NONE) {
				for (size_t j = i; j < 4; j++)
					CHECK(d->w[j].len == SC_NONE, "%s: a gap in its writes",
					      d->name);
				break;
			}
			CHECK(w->len <= SC_PAGES && w->arg < 6 && w->when <= SC_POS,
			      "%s: write %zu malformed", d->name, i);
			CHECK(w->arg2 < 6 || (w->len == SC_RESULT && w->arg2 == SC_NOARG) ||
			      w->len == SC_FIXED || w->len == SC_RESULT_N,
			      "%s: write %zu's length argument", d->name, i);
			CHECK((w->len == SC_FIXED || w->len == SC_RESULT_N || w->len == SC_ARG_N) ==
			      (w->size > 0), "%s: write %zu's size", d->name, i);
		}
	}
	CHECK(syscall_desc(SYSCALL_TABLE_LEN) == NULL && syscall_desc(~0ull) == NULL &&
	      syscall_name(400) == NULL);
	printf("table: %u described, %u unsupported where they succeed, %u ENOSYS\n",
	       described, unsupported, nosys);
}

/* The fixed sizes, against the uapi structures. */
static void test_sizes(void)
{
	static char buf[4096];
	uint64_t b = (uint64_t)(uintptr_t)buf;
	struct {
		uint64_t nr;
		int arg;
		size_t size;
	} fixed[] = {
		{__NR_stat, 1, sizeof(struct stat)},
		{__NR_fstat, 1, sizeof(struct stat)},
		{__NR_lstat, 1, sizeof(struct stat)},
		{__NR_newfstatat, 2, sizeof(struct stat)},
		{__NR_statx, 4, sizeof(struct statx)},
		{__NR_statfs, 1, sizeof(struct statfs)},
		{__NR_fstatfs, 1, sizeof(struct statfs)},
		{__NR_sysinfo, 0, sizeof(struct sysinfo)},
		{__NR_uname, 0, sizeof(struct new_utsname)},
		{__NR_clock_gettime, 1, sizeof(struct __kernel_timespec)},
		{__NR_clock_getres, 1, sizeof(struct __kernel_timespec)},
		{__NR_nanosleep, 1, sizeof(struct __kernel_timespec)},
		{__NR_getrlimit, 1, sizeof(struct rlimit)},
		{__NR_prlimit64, 3, sizeof(struct rlimit64)},
		{__NR_getrusage, 1, sizeof(struct rusage)},
		{__NR_times, 0, sizeof(struct tms)},
		{__NR_adjtimex, 0, sizeof(struct __kernel_timex)},
		{__NR_clock_adjtime, 1, sizeof(struct __kernel_timex)},
		{__NR_mq_getsetattr, 2, sizeof(struct mq_attr)},
		{__NR_timerfd_gettime, 1, sizeof(struct __kernel_itimerspec)},
		{__NR_timerfd_settime, 3, sizeof(struct __kernel_itimerspec)},
		{__NR_timer_gettime, 1, sizeof(struct __kernel_itimerspec)},
		{__NR_get_thread_area, 0, sizeof(struct user_desc)},
		{__NR_io_cancel, 2, sizeof(struct io_event)},
		{__NR_sched_rr_get_interval, 1, sizeof(struct __kernel_timespec)},
		{__NR_getitimer, 1, 32}, /* struct __kernel_old_itimerval */
		{__NR_sigaltstack, 1, 24}, /* stack_t */
		{__NR_rt_sigaction, 2, 32}, /* the kernel's sigaction: sigset_t of 8 */
		{__NR_rt_sigprocmask, 2, 8},
		{__NR_waitid, 2, 128}, /* siginfo_t */
		{__NR_ustat, 1, 32}, /* struct ustat: int, ino_t, char[6], char[6] */
	};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		uint64_t a[6] = {0, 0, 0, 0, 0, 0};
		a[fixed[i].arg] = b;
		int n = writes(fixed[i].nr, a[0], a[1], a[2], a[3], a[4], a[5], 0);
		CHECK(n >= 1 && rg[0].addr == b && rg[0].len == fixed[i].size,
		      "%s: %d ranges, the first %llu bytes, sizeof %zu", syscall_name(fixed[i].nr), n,
		      (unsigned long long)rg[0].len, fixed[i].size);
	}
	/* Where the call failed, nothing (but nanosleep's rest and times). */
	CHECK(writes(__NR_statfs, 0, b, 0, 0, 0, 0, -2) == 0);
	CHECK(one(writes(__NR_nanosleep, 0, b, 0, 0, 0, 0, -4), b, 16));
	CHECK(writes(__NR_rt_sigtimedwait, 0, b, 0, 0, 0, 0, 0) == 0);
	CHECK(one(writes(__NR_rt_sigtimedwait, 0, b, 0, 0, 0, 0, 10), b, 128));
	/* IPC buffers. */
	CHECK(one(writes(__NR_semctl, 1, 0, 2 /* IPC_STAT */, b, 0, 0, 0), b,
		  sizeof(struct semid64_ds)));
	CHECK(one(writes(__NR_semctl, 1, 0, 19 /* SEM_INFO */, b, 0, 0, 0), b,
		  sizeof(struct seminfo)));
	CHECK(one(writes(__NR_shmctl, 1, 2 /* IPC_STAT */, b, 0, 0, 0, 0), b,
		  sizeof(struct shmid64_ds)));
	CHECK(one(writes(__NR_shmctl, 1, 3 /* IPC_INFO */, b, 0, 0, 0, 0), b,
		  sizeof(struct shminfo64)));
	CHECK(one(writes(__NR_shmctl, 1, 14 /* SHM_INFO */, b, 0, 0, 0, 0), b,
		  sizeof(struct shm_info)));
	CHECK(one(writes(__NR_msgctl, 1, 2 | 0x100 /* IPC_STAT|IPC_64 */, b, 0, 0, 0, 0), b,
		  sizeof(struct msqid64_ds)));
	CHECK(one(writes(__NR_msgctl, 1, 12 /* MSG_INFO */, b, 0, 0, 0, 0), b,
		  sizeof(struct msginfo)));
	CHECK(writes(__NR_semctl, 1, 0, 13 /* GETALL */, b, 0, 0, 0) < 0,
	      "GETALL's length is not in its arguments");
	CHECK(one(writes(__NR_msgrcv, 1, b, 100, 0, 0, 0, 10), b, 18));
	/* ioctl */
	CHECK(one(writes(__NR_ioctl, 0, 0x5401 /* TCGETS */, b, 0, 0, 0, 0), b,
		  sizeof(struct termios)));
	CHECK(one(writes(__NR_ioctl, 0, 0x5405 /* TCGETA */, b, 0, 0, 0, 0), b,
		  sizeof(struct termio)));
	CHECK(one(writes(__NR_ioctl, 0, 0x5413 /* TIOCGWINSZ */, b, 0, 0, 0, 0), b,
		  sizeof(struct winsize)));
	CHECK(one(writes(__NR_ioctl, 0, TCGETS2, b, 0, 0, 0, 0), b, sizeof(struct termios2)));
	CHECK(one(writes(__NR_ioctl, 0, 0x541b /* FIONREAD */, b, 0, 0, 0, 0), b, 4));
	CHECK(one(writes(__NR_ioctl, 0, 0x540f /* TIOCGPGRP */, b, 0, 0, 0, 0), b, 4));
	CHECK(one(writes(__NR_ioctl, 0, 0x80045430 /* TIOCGPTN */, b, 0, 0, 0, 0), b, 4));
	CHECK(one(writes(__NR_ioctl, 0, 0x80081272 /* BLKGETSIZE64 */, b, 0, 0, 0, 0), b, 8));
	CHECK(writes(__NR_ioctl, 0, 0x5402 /* TCSETS */, b, 0, 0, 0, 0) == 0);
	CHECK(writes(__NR_ioctl, 0, 0x5451 /* FIOCLEX */, 0, 0, 0, 0, 0) == 0);
	CHECK(writes(__NR_ioctl, 0, 0x40045431 /* TIOCSPTLCK */, b, 0, 0, 0, 0) == 0);
	CHECK(writes(__NR_ioctl, 0, 0x5401, b, 0, 0, 0, -25 /* ENOTTY */) == 0);
	CHECK(writes(__NR_ioctl, 0, 0x54ee, b, 0, 0, 0, 0) < 0, "an unknown old ioctl");
	CHECK(writes(__NR_ioctl, 0, 0x54ee, b, 0, 0, 0, -25) == 0,
	      "an unknown ioctl that failed wrote nothing");
	/* fcntl */
	CHECK(one(writes(__NR_fcntl, 0, 5 /* F_GETLK */, b, 0, 0, 0, 0), b, sizeof(struct flock)));
	CHECK(one(writes(__NR_fcntl, 0, 36 /* F_OFD_GETLK */, b, 0, 0, 0, 0), b,
		  sizeof(struct flock)));
	CHECK(one(writes(__NR_fcntl, 0, 16 /* F_GETOWN_EX */, b, 0, 0, 0, 0), b,
		  sizeof(struct f_owner_ex)));
	CHECK(writes(__NR_fcntl, 0, 3 /* F_GETFL */, 0, 0, 0, 0, 2) == 0);
	CHECK(writes(__NR_fcntl, 0, 1031 /* F_SETPIPE_SZ */, 4096, 0, 0, 0, 4096) == 0);
	/* prctl, arch_prctl */
	CHECK(one(writes(__NR_prctl, 16 /* PR_GET_NAME */, b, 0, 0, 0, 0, 0), b, 16));
	CHECK(one(writes(__NR_prctl, 2 /* PR_GET_PDEATHSIG */, b, 0, 0, 0, 0, 0), b, 4));
	CHECK(one(writes(__NR_prctl, 25 /* PR_GET_TSC */, b, 0, 0, 0, 0, 0), b, 4));
	CHECK(writes(__NR_prctl, 3 /* PR_GET_DUMPABLE */, 0, 0, 0, 0, 0, 1) == 0);
	CHECK(writes(__NR_prctl, 15 /* PR_SET_NAME */, b, 0, 0, 0, 0, 0) == 0);
	CHECK(writes(__NR_prctl, 1000, b, 0, 0, 0, 0, 0) < 0);
	CHECK(one(writes(__NR_arch_prctl, 0x1003 /* ARCH_GET_FS */, b, 0, 0, 0, 0, 0), b, 8));
	CHECK(writes(__NR_arch_prctl, 0x1002 /* ARCH_SET_FS */, b, 0, 0, 0, 0, 0) == 0);
	/* capget: the header, then one or two data structs by version */
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];
	int n = writes(__NR_capget, (uint64_t)(uintptr_t)&h, (uint64_t)(uintptr_t)data, 0, 0, 0, 0,
		       0);
	CHECK(n == 2 && rg[0].len == sizeof h && rg[1].addr == (uint64_t)(uintptr_t)data &&
	      rg[1].len == sizeof data);
	h.version = _LINUX_CAPABILITY_VERSION_1;
	n = writes(__NR_capget, (uint64_t)(uintptr_t)&h, (uint64_t)(uintptr_t)data, 0, 0, 0, 0, 0);
	CHECK(n == 2 && rg[1].len == sizeof data[0]);
}

static void test_lengths(void)
{
	static char buf[4096], buf2[4096];
	uint64_t b = (uint64_t)(uintptr_t)buf, b2 = (uint64_t)(uintptr_t)buf2;

	CHECK(one(writes(__NR_read, 3, b, 100, 0, 0, 0, 42), b, 42));
	CHECK(writes(__NR_read, 3, b, 100, 0, 0, 0, 0) == 0);
	CHECK(writes(__NR_read, 3, b, 100, 0, 0, 0, -11) == 0);
	CHECK(one(writes(__NR_getdents64, 3, b, 4096, 0, 0, 0, 600), b, 600));
	CHECK(one(writes(__NR_readlinkat, 3, 0, b, 100, 0, 0, 7), b, 7));
	CHECK(one(writes(__NR_getcwd, b, 100, 0, 0, 0, 0, 5), b, 5));
	CHECK(one(writes(__NR_getrandom, b, 16, 0, 0, 0, 0, 16), b, 16));
	CHECK(one(writes(__NR_sched_getaffinity, 0, 128, b, 0, 0, 0, 8), b, 8));
	/* xattrs: at most the buffer's size; none with a size of 0 */
	CHECK(one(writes(__NR_getxattr, 0, 0, b, 64, 0, 0, 10), b, 10));
	CHECK(one(writes(__NR_fgetxattr, 3, 0, b, 4, 0, 0, 10), b, 4));
	CHECK(writes(__NR_lgetxattr, 0, 0, b, 0, 0, 0, 10) == 0);
	CHECK(one(writes(__NR_listxattr, 0, b, 64, 0, 0, 0, 12), b, 12));
	CHECK(writes(__NR_getxattr, 0, 0, b, 64, 0, 0, -61 /* ENODATA */) == 0);
	/* counts times sizes */
	CHECK(one(writes(__NR_epoll_wait, 3, b, 10, 0, 0, 0, 3), b, 3 * sizeof(struct epoll_event)));
	CHECK(one(writes(__NR_epoll_pwait2, 3, b, 10, 0, 0, 0, 2), b,
		  2 * sizeof(struct epoll_event)));
	CHECK(one(writes(__NR_poll, b, 3, 0, 0, 0, 0, 1), b, 24));
	CHECK(one(writes(__NR_getgroups, 10, b, 0, 0, 0, 0, 3), b, 12));
	CHECK(one(writes(__NR_mincore, 0x10000, 3 * 4096 + 1, b, 0, 0, 0, 0), b, 4));
	CHECK(writes(__NR_get_mempolicy, b, b2, 65, 0, 0, 0, 0) == 2 && rg[0].len == 4 &&
	      rg[1].addr == b2 && rg[1].len == 16);
	/* select: three sets of nfds bits and the timeout, whatever the result */
	{
		int n = writes(__NR_select, 65, b, 0, b2, b + 512, 0, -4);
		CHECK(n == 3 && rg[0].len == 16 && rg[1].addr == b2 && rg[1].len == 16 &&
		      rg[2].len == 16);
	}
	/* *arg (u32) */
	uint32_t len = 12;
	int n = writes(__NR_getsockopt, 3, 1, 2, b, (uint64_t)(uintptr_t)&len, 0, 0);
	CHECK(n == 2 && rg[0].addr == b && rg[0].len == 12 &&
	      rg[1].addr == (uint64_t)(uintptr_t)&len && rg[1].len == 4);
	n = writes(__NR_accept4, 3, b, (uint64_t)(uintptr_t)&len, 0, 0, 0, 5);
	CHECK(n == 2 && rg[0].len == 12 && rg[1].len == 4);
	CHECK(writes(__NR_getsockopt, 3, 1, 2, b, (uint64_t)(uintptr_t)&len, 0, -22) == 0);
	/* iovecs, bounded by the result */
	uint64_t iov[3][2] = {{b, 10}, {b2, 20}, {b + 100, 30}};
	n = writes(__NR_readv, 3, (uint64_t)(uintptr_t)iov, 3, 0, 0, 0, 25);
	CHECK(n == 2 && rg[0].addr == b && rg[0].len == 10 && rg[1].addr == b2 &&
	      rg[1].len == 15);
	n = writes(__NR_preadv, 3, (uint64_t)(uintptr_t)iov, 3, 0, 0, 0, 60);
	CHECK(n == 3 && rg[2].len == 30);
	n = writes(__NR_process_vm_readv, 1, (uint64_t)(uintptr_t)iov, 3, 0, 0, 0, 5);
	CHECK(one(n, b, 5));
	/* recvmsg: the header, the name, the data, the control messages */
	char name[16], control[64];
	uint64_t msg[7] = {(uint64_t)(uintptr_t)name, 8, (uint64_t)(uintptr_t)iov, 2,
			   (uint64_t)(uintptr_t)control, 24, 0};
	n = writes(__NR_recvmsg, 3, (uint64_t)(uintptr_t)msg, 0, 0, 0, 0, 15);
	CHECK(n == 5 && rg[0].addr == (uint64_t)(uintptr_t)msg && rg[0].len == 56 &&
	      rg[1].len == 8 && rg[2].len == 10 && rg[3].len == 5 && rg[4].len == 24,
	      "recvmsg: %d ranges", n);
	/* recvmmsg: two messages received, msg_len 3 and 4 */
	static uint64_t mm[2][8];
	memcpy(mm[0], msg, sizeof msg);
	memcpy(mm[1], msg, sizeof msg);
	mm[0][7] = 3;
	mm[1][7] = 4;
	n = writes(__NR_recvmmsg, 3, (uint64_t)(uintptr_t)mm, 2, 0, 0, 0, 2);
	CHECK(n == 10 && rg[0].addr == (uint64_t)(uintptr_t)mm && rg[2].len == 3 &&
	      rg[4].addr == (uint64_t)(uintptr_t)&mm[0][7] && rg[4].len == 4 &&
	      rg[5].addr == (uint64_t)(uintptr_t)mm[1] && rg[7].len == 4,
	      "recvmmsg: %d ranges", n);
	n = writes(__NR_sendmmsg, 3, (uint64_t)(uintptr_t)mm, 2, 0, 0, 0, 1);
	CHECK(one(n, (uint64_t)(uintptr_t)&mm[0][7], 4));
	/* clone, clone3: the parent's tid or the pidfd */
	int ptid = 0, pidfd = 0;
	CHECK(one(writes(__NR_clone, CLONE_PARENT_SETTID, 0, (uint64_t)(uintptr_t)&ptid, 0, 0, 0,
			 123), (uint64_t)(uintptr_t)&ptid, 4));
	CHECK(writes(__NR_clone, 0x11, 0, 0, 0, 0, 0, 123) == 0);
	uint64_t ca[11] = {CLONE_PIDFD | CLONE_PARENT_SETTID, (uint64_t)(uintptr_t)&pidfd, 0,
			   (uint64_t)(uintptr_t)&ptid};
	n = writes(__NR_clone3, (uint64_t)(uintptr_t)ca, sizeof ca, 0, 0, 0, 0, 123);
	CHECK(n == 2 && rg[0].addr == (uint64_t)(uintptr_t)&pidfd &&
	      rg[1].addr == (uint64_t)(uintptr_t)&ptid);
	/* name_to_handle_at: 8 + handle_bytes, and the mount id */
	uint32_t fh[4] = {8, 1, 0, 0};
	int mnt;
	n = writes(__NR_name_to_handle_at, 3, 0, (uint64_t)(uintptr_t)fh,
		   (uint64_t)(uintptr_t)&mnt, 0, 0, 0);
	CHECK(n == 2 && rg[0].len == 16 && rg[1].len == 4);
	/* futex: only the PI and WAKE_OP operations write */
	CHECK(writes(__NR_futex, b, 0 /* FUTEX_WAIT */, 1, 0, 0, 0, 0) == 0);
	CHECK(one(writes(__NR_futex, b, 5 | 128 /* WAKE_OP, PRIVATE */, 1, 1, b2, 0, 1), b2, 4));
	/* restart_syscall: unknown where it succeeded */
	CHECK(writes(__NR_restart_syscall, 0, 0, 0, 0, 0, 0, 0) < 0);
	CHECK(writes(__NR_restart_syscall, 0, 0, 0, 0, 0, 0, -4) == 0);
	/* not in the table */
	CHECK(writes(400, 0, 0, 0, 0, 0, 0, -38) < 0 && writes(1000, 0, 0, 0, 0, 0, 0, 0) < 0);
	/* shmat: the whole segment it attached (its size asked of the kernel,
	 * rounded to pages), nothing at the entry or in progress, unknown for
	 * a segment that is not there. */
	/* (syscall(): the uapi headers above clash with glibc's sys/shm.h) */
	int id = (int)syscall(__NR_shmget, IPC_PRIVATE, 5000, IPC_CREAT | 0600);
	CHECK(id >= 0, "shmget: %s", strerror(errno));
	if (id >= 0) {
		void *at = (void *)syscall(__NR_shmat, id, NULL, 0);
		CHECK(at != (void *)-1, "shmat: %s", strerror(errno));
		CHECK(one(writes(__NR_shmat, (uint64_t)id, 0, 0, 0, 0, 0, (int64_t)(uintptr_t)at),
			  (uint64_t)(uintptr_t)at, 8192));
		CHECK(writes(__NR_shmat, (uint64_t)id, 0, 0, 0, 0, 0, 0) == 0);
		uint64_t a[6] = {(uint64_t)id, 0, 0, 0, 0, 0};
		CHECK(syscall_may_write(__NR_shmat, a, read_self, NULL, rg, 64) == 0);
		syscall(__NR_shmdt, at);
		syscall(__NR_shmctl, id, IPC_RMID, NULL);
		CHECK(writes(__NR_shmat, (uint64_t)id, 0, 0, 0, 0, 0, 0x7f0000000000) < 0,
		      "a removed segment's size is unknown");
	}
	/* mmap: a writable shared mapping of a file, the mapping's bytes;
	 * private, read-only or anonymous ones nothing (a replay maps the
	 * file, or nothing, again); nothing at the entry. 0x1: MAP_SHARED,
	 * 0x3: MAP_SHARED_VALIDATE, 0x2: MAP_PRIVATE, 0x20: MAP_ANONYMOUS. */
	CHECK(one(writes(__NR_mmap, 0, 8192, 3, 0x1, 5, 0, 0x7f0000000000), 0x7f0000000000, 8192));
	CHECK(one(writes(__NR_mmap, 0, 8192, 3, 0x3, 5, 0, 0x7f0000000000), 0x7f0000000000, 8192));
	CHECK(writes(__NR_mmap, 0, 8192, 3, 0x2, 5, 0, 0x7f0000000000) == 0);
	CHECK(writes(__NR_mmap, 0, 8192, 1, 0x1, 5, 0, 0x7f0000000000) == 0);
	CHECK(writes(__NR_mmap, 0, 8192, 3, 0x21, -1, 0, 0x7f0000000000) == 0);
	CHECK(writes(__NR_mmap, 0, 8192, 3, 0x1, 5, 0, 0) == 0);
	CHECK(writes(__NR_mmap, 0, 8192, 3, 0x1, 5, 0, -13) == 0);
	/* at most max ranges */
	struct sc_range two[2];
	uint64_t args[6] = {b, b, b, 0, 0, 0};
	CHECK(syscall_writes(__NR_getresuid, args, 0, read_self, NULL, two, 2) == 2);
}

static void test_kinds(void)
{
	uint64_t maps[] = {__NR_mmap, __NR_mprotect, __NR_munmap, __NR_brk, __NR_mremap,
			   __NR_execve, __NR_shmat, __NR_shmdt, __NR_pkey_mprotect,
			   __NR_remap_file_pages, __NR_execveat};
	for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
		CHECK(syscall_changes_maps(maps[i]), "%s changes the maps", syscall_name(maps[i]));
	CHECK(!syscall_changes_maps(__NR_read) && !syscall_changes_maps(__NR_madvise) &&
	      !syscall_changes_maps(9999));
	/* today's run-for-real set */
	uint64_t run_ok[] = {__NR_mmap, __NR_munmap, __NR_mprotect, __NR_mremap, __NR_madvise,
			     __NR_arch_prctl, __NR_set_tid_address, __NR_set_robust_list,
			     __NR_rseq, __NR_rt_sigaction, __NR_rt_sigprocmask, __NR_sigaltstack,
			     __NR_pkey_mprotect};
	for (size_t i = 0; i < sizeof run_ok / sizeof run_ok[0]; i++)
		CHECK(syscall_replay_kind(run_ok[i]) == SYSCALL_RUN_OK, "%s runs",
		      syscall_name(run_ok[i]));
	CHECK(syscall_replay_kind(__NR_brk) == SYSCALL_RUN &&
	      syscall_replay_kind(__NR_rt_sigreturn) == SYSCALL_RUN);
	CHECK(syscall_replay_kind(__NR_fork) == SYSCALL_FORK &&
	      syscall_replay_kind(__NR_vfork) == SYSCALL_FORK &&
	      syscall_replay_kind(__NR_clone) == SYSCALL_CLONE &&
	      syscall_replay_kind(__NR_clone3) == SYSCALL_CLONE);
	CHECK(syscall_replay_kind(__NR_statfs) == SYSCALL_EMULATE &&
	      syscall_replay_kind(9999) == SYSCALL_EMULATE);
	/* System V shared memory: mapped by the replay itself (sys_replay.c),
	 * keeping the CPU in the recorder as every call that maps does. */
	CHECK(syscall_replay_kind(__NR_shmat) == SYSCALL_SHM &&
	      syscall_replay_kind(__NR_shmdt) == SYSCALL_SHM &&
	      !syscall_unsupported_why(__NR_shmat) && !syscall_unsupported_why(__NR_shmdt));
	CHECK(syscall_keeps_cpu(__NR_shmat) && syscall_keeps_cpu(__NR_shmdt) &&
	      syscall_keeps_cpu(__NR_mmap) && !syscall_keeps_cpu(__NR_read));
	uint64_t unsup[] = {__NR_execve, __NR_execveat, __NR_remap_file_pages, __NR_io_uring_setup, __NR_io_uring_enter,
			    __NR_clone, __NR_clone3};
	for (size_t i = 0; i < sizeof unsup / sizeof unsup[0]; i++)
		CHECK(syscall_unsupported_why(unsup[i]) != NULL, "%s unsupported",
		      syscall_name(unsup[i]));
	CHECK(!syscall_unsupported_why(__NR_fork) && !syscall_unsupported_why(__NR_read) &&
	      !syscall_unsupported_why(9999));
}

static void test_labels(void)
{
	char buf[96];
	uint64_t args[6] = {3, 0x54ee, 0, 0, 0, 0};
	syscall_label(__NR_statfs, args, buf, sizeof buf);
	CHECK(!strcmp(buf, "statfs (137)"), "%s", buf);
	syscall_label(__NR_ioctl, args, buf, sizeof buf);
	CHECK(!strcmp(buf, "ioctl (16, request 0x54ee)"), "%s", buf);
	syscall_label(__NR_ioctl, NULL, buf, sizeof buf);
	CHECK(!strcmp(buf, "ioctl (16)"), "%s", buf);
	syscall_label(999, args, buf, sizeof buf);
	CHECK(!strcmp(buf, "syscall 999"), "%s", buf);
}

/* syscall_may_be_unknown is what recorders ask at every entry before
 * describing a call: wherever it says no, no arguments make the call
 * unknown; ioctl, fcntl and prctl, and numbers beyond the table, may be. */
static long read_nothing(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg, (void)addr, (void)buf, (void)len;
	return -1;
}

static void test_may_be_unknown(void)
{
	uint64_t patterns[3][6] = {{0}, {1, 2, 3, 4, 5, 6},
				   {~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull}};
	for (uint64_t nr = 0; nr < SYSCALL_TABLE_LEN + 8; nr++) {
		if (syscall_may_be_unknown(nr))
			continue;
		for (int p = 0; p < 3; p++) {
			struct sc_range out[64];
			CHECK(syscall_writes(nr, patterns[p], 0, read_nothing, NULL, out, 64) >= 0,
			      "%s (%llu) said known, found unknown", syscall_name(nr),
			      (unsigned long long)nr);
		}
	}
	CHECK(syscall_may_be_unknown(__NR_ioctl) && syscall_may_be_unknown(__NR_fcntl) &&
	      syscall_may_be_unknown(__NR_prctl) && syscall_may_be_unknown(9999));
	CHECK(!syscall_may_be_unknown(__NR_read) && !syscall_may_be_unknown(__NR_mmap));
}

/* What a call in progress may write: its largest result, bounded by the
 * count argument the table names; for every described call the ranges
 * are finite (no result-sized range without a bound). */
static void test_may_write(void)
{
	static char buf[4096];
	uint64_t b = (uint64_t)(uintptr_t)buf;
	const uint64_t rd[6] = {3, b, 1, 0, 0, 0};
	CHECK(syscall_may_write(__NR_read, rd, read_self, NULL, rg, 64) == 1 && rg[0].addr == b &&
	      rg[0].len == 1, "read of 1 byte in progress");
	const uint64_t ep[6] = {3, b, 10, 0, 0, 0};
	CHECK(syscall_may_write(__NR_epoll_wait, ep, read_self, NULL, rg, 64) == 1 &&
	      rg[0].len == 10 * sizeof(struct epoll_event), "epoll_wait of 10 in progress");
	const uint64_t gg[6] = {4, b, 0, 0, 0, 0};
	CHECK(syscall_may_write(__NR_getgroups, gg, read_self, NULL, rg, 64) == 1 &&
	      rg[0].len == 16, "getgroups of 4");
	const uint64_t fx[6] = {b, 0, 1, 0, 0, 0};
	CHECK(syscall_may_write(__NR_futex, fx, read_self, NULL, rg, 64) == 0, "a futex wait");
	/* Bounded everywhere the table describes in its own language: with
	 * every argument 4096, no range of more than 1 MiB. */
	const uint64_t small[6] = {4096, 4096, 4096, 4096, 4096, 4096};
	for (uint64_t nr = 0; nr < SYSCALL_TABLE_LEN; nr++) {
		const struct syscall_desc *d = syscall_desc(nr);
		if (!d || d->special)
			continue;
		struct sc_range out[64];
		int n = syscall_writes(nr, small, SYSCALL_MAX_RESULT, read_nothing, NULL, out, 64);
		for (int i = 0; i < n; i++)
			CHECK(out[i].len <= (1u << 20), "%s (%llu): %llu bytes with counts of 4096",
			      d->name, (unsigned long long)nr, (unsigned long long)out[i].len);
	}
}

int main(void)
{
	test_against_header();
	test_entries();
	test_sizes();
	test_lengths();
	test_kinds();
	test_labels();
	test_may_be_unknown();
	test_may_write();
	printf("%s\n", failures ? "FAIL" : "ok");
	return failures ? 1 : 0;
}
