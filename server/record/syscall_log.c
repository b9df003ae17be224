/* The table of x86-64 system calls and the user memory each one writes.
 * Sizes are those of the kernel's x86-64 structures (not glibc's, where
 * they differ: sigaction, termios). A syscall known to write nothing
 * returns 0 ranges; one missing from the table is "unknown". */
#include "ptrev/syscall_log.h"

#include <stddef.h>
#include <sys/syscall.h>

#define KSIGSET 8          /* the kernel's sigset_t */
#define KSIGACTION 32      /* handler, flags, restorer, mask */
#define STAT_SIZE 144
#define STATX_SIZE 256
#define TIMESPEC 16
#define TIMEVAL 16
#define RUSAGE 144
#define RLIMIT 16
#define UTSNAME 390
#define SYSINFO 112
#define TMS 32
#define KTERMIOS 36        /* struct termios as TCGETS copies it */
#define SIGINFO 128
#define MSGHDR 56
#define ITIMERVAL 32
#define STACK_T 24
#define FLOCK 32
#define EPOLL_EVENT 12
#define POLLFD 8

struct out {
	struct sc_range *r;
	int n, max;
};

static void add(struct out *o, uint64_t addr, int64_t len)
{
	if (!addr || len <= 0 || o->n >= o->max)
		return;
	o->r[o->n].addr = addr;
	o->r[o->n].len = (uint64_t)len;
	o->n++;
}

static uint32_t read_u32(sc_read_fn rd, void *arg, uint64_t addr)
{
	uint32_t v = 0;
	if (!addr || rd(arg, addr, &v, sizeof v) != (long)sizeof v)
		return 0;
	return v;
}

/* `total` bytes scattered over the iovec array at iov (cnt entries). */
static void add_iov(struct out *o, sc_read_fn rd, void *arg, uint64_t iov,
		    uint64_t cnt, int64_t total)
{
	for (uint64_t i = 0; i < cnt && i < 1024 && total > 0; i++) {
		uint64_t v[2];
		if (rd(arg, iov + 16 * i, v, sizeof v) != (long)sizeof v)
			return;
		int64_t n = (int64_t)v[1] < total ? (int64_t)v[1] : total;
		add(o, v[0], n);
		total -= n;
	}
}

/* recvmsg: the msghdr (namelen, controllen and flags are written), the
 * peer address, the data and the control messages. */
static void add_msghdr(struct out *o, sc_read_fn rd, void *arg, uint64_t msg,
		       int64_t result)
{
	uint64_t h[7]; /* name, namelen, iov, iovlen, control, controllen, flags */
	if (!msg || rd(arg, msg, h, sizeof h) != (long)sizeof h)
		return;
	add(o, msg, MSGHDR);
	add(o, h[0], (int64_t)(uint32_t)h[1]);
	add_iov(o, rd, arg, h[2], h[3], result);
	add(o, h[4], (int64_t)h[5]);
}

/* The syscalls that write nothing the program could read back. */
static int writes_nothing(uint64_t nr)
{
	switch (nr) {
	case SYS_write: case SYS_open: case SYS_close: case SYS_lseek:
	case SYS_mmap: case SYS_mprotect: case SYS_munmap: case SYS_brk:
	case SYS_rt_sigreturn: case SYS_pwrite64: case SYS_writev:
	case SYS_pwritev: case SYS_access: case SYS_sched_yield:
	case SYS_mremap: case SYS_msync:
	case SYS_madvise: case SYS_dup: case SYS_dup2: case SYS_dup3:
	case SYS_pause: case SYS_alarm: case SYS_getpid: case SYS_socket:
	case SYS_connect: case SYS_sendto: case SYS_sendmsg: case SYS_shutdown:
	case SYS_bind: case SYS_listen: case SYS_setsockopt: case SYS_fork:
	case SYS_vfork: case SYS_execve: case SYS_exit: case SYS_kill:
	case SYS_flock: case SYS_fsync: case SYS_fdatasync: case SYS_truncate:
	case SYS_ftruncate: case SYS_chdir: case SYS_fchdir: case SYS_rename:
	case SYS_mkdir: case SYS_rmdir: case SYS_creat: case SYS_link:
	case SYS_unlink: case SYS_symlink: case SYS_chmod: case SYS_fchmod:
	case SYS_chown: case SYS_fchown: case SYS_lchown: case SYS_umask:
	case SYS_getuid: case SYS_getgid: case SYS_setuid: case SYS_setgid:
	case SYS_geteuid: case SYS_getegid: case SYS_setpgid: case SYS_getppid:
	case SYS_getpgrp: case SYS_setsid: case SYS_getpgid: case SYS_getsid:
	case SYS_rt_sigsuspend: case SYS_gettid: case SYS_tkill:
	case SYS_futex: case SYS_set_tid_address: case SYS_exit_group:
	case SYS_tgkill: case SYS_openat: case SYS_mkdirat: case SYS_unlinkat:
	case SYS_renameat: case SYS_renameat2: case SYS_fchmodat:
	case SYS_faccessat: case SYS_faccessat2: case SYS_set_robust_list:
	case SYS_eventfd2: case SYS_epoll_create1: case SYS_epoll_ctl:
	case SYS_rseq: case SYS_close_range: case SYS_sched_setaffinity:
	case SYS_membarrier: case SYS_mlock: case SYS_munlock:
	case SYS_fadvise64: case SYS_fallocate: case SYS_sync: case SYS_syncfs:
	case SYS_utimensat: case SYS_rt_sigqueueinfo: case SYS_rt_tgsigqueueinfo:
	case SYS_pkey_mprotect:
		return 1;
	default:
		return 0;
	}
}

int syscall_log_writes(uint64_t nr, const uint64_t a[6], int64_t res,
		       sc_read_fn rd, void *arg, struct sc_range *r, int max)
{
	struct out o = { r, 0, max };
	int64_t ok = res >= 0;

	switch (nr) {
	case SYS_read: case SYS_pread64: case SYS_readlink: case SYS_getcwd:
	case SYS_getdents64: case SYS_getdents:
		if (ok)
			add(&o, a[1 - (nr == SYS_getcwd)], res);
		break;
	case SYS_getrandom:
		if (ok)
			add(&o, a[0], res);
		break;
	case SYS_readlinkat:
		if (ok)
			add(&o, a[2], res);
		break;
	case SYS_readv: case SYS_preadv: case SYS_preadv2:
		if (ok)
			add_iov(&o, rd, arg, a[1], a[2], res);
		break;
	case SYS_recvfrom:
		if (ok) {
			add(&o, a[1], res);
			add(&o, a[4], read_u32(rd, arg, a[5]));
			add(&o, a[5], 4);
		}
		break;
	case SYS_recvmsg:
		if (ok)
			add_msghdr(&o, rd, arg, a[1], res);
		break;
	case SYS_accept: case SYS_accept4: case SYS_getsockname:
	case SYS_getpeername:
		if (ok) {
			add(&o, a[1], read_u32(rd, arg, a[2]));
			add(&o, a[2], 4);
		}
		break;
	case SYS_getsockopt:
		if (ok) {
			add(&o, a[3], read_u32(rd, arg, a[4]));
			add(&o, a[4], 4);
		}
		break;
	case SYS_socketpair:
		if (ok)
			add(&o, a[3], 8);
		break;
	case SYS_stat: case SYS_fstat: case SYS_lstat:
		if (ok)
			add(&o, a[1], STAT_SIZE);
		break;
	case SYS_newfstatat:
		if (ok)
			add(&o, a[2], STAT_SIZE);
		break;
	case SYS_statx:
		if (ok)
			add(&o, a[4], STATX_SIZE);
		break;
	case SYS_clock_gettime: case SYS_clock_getres:
		if (ok)
			add(&o, a[1], TIMESPEC);
		break;
	case SYS_gettimeofday:
		if (ok) {
			add(&o, a[0], TIMEVAL);
			add(&o, a[1], 8);
		}
		break;
	case SYS_time:
		add(&o, a[0], 8);
		break;
	case SYS_nanosleep:
		add(&o, a[1], TIMESPEC);
		break;
	case SYS_clock_nanosleep:
		add(&o, a[3], TIMESPEC);
		break;
	case SYS_uname:
		if (ok)
			add(&o, a[0], UTSNAME);
		break;
	case SYS_pipe: case SYS_pipe2:
		if (ok)
			add(&o, a[0], 8);
		break;
	case SYS_wait4:
		if (ok) {
			add(&o, a[1], 4);
			add(&o, a[3], RUSAGE);
		}
		break;
	case SYS_waitid:
		if (ok) {
			add(&o, a[2], SIGINFO);
			add(&o, a[4], RUSAGE);
		}
		break;
	case SYS_poll: case SYS_ppoll:
		add(&o, a[0], (int64_t)(a[1] * POLLFD));
		if (nr == SYS_ppoll)
			add(&o, a[2], TIMESPEC);
		break;
	case SYS_select: case SYS_pselect6: {
		int64_t setlen = (int64_t)((a[0] + 63) / 64 * 8);
		add(&o, a[1], setlen);
		add(&o, a[2], setlen);
		add(&o, a[3], setlen);
		add(&o, a[4], nr == SYS_select ? TIMEVAL : TIMESPEC);
		break;
	}
	case SYS_epoll_wait: case SYS_epoll_pwait:
		if (ok)
			add(&o, a[1], res * EPOLL_EVENT);
		break;
	case SYS_ioctl:
		switch (a[1]) {
		case 0x5401: /* TCGETS */
			if (ok)
				add(&o, a[2], KTERMIOS);
			break;
		case 0x5413: /* TIOCGWINSZ */
			if (ok)
				add(&o, a[2], 8);
			break;
		case 0x541b: /* FIONREAD */
		case 0x540f: /* TIOCGPGRP */
			if (ok)
				add(&o, a[2], 4);
			break;
		case 0x5402: case 0x5403: case 0x5404: /* TCSETS* */
		case 0x5410: case 0x5414: case 0x5421: /* TIOCSPGRP, SWINSZ, FIONBIO */
			break;
		default:
			return -1;
		}
		break;
	case SYS_fcntl:
		if (a[1] == 5 /* F_GETLK */ && ok)
			add(&o, a[2], FLOCK);
		break;
	case SYS_rt_sigaction:
		if (ok)
			add(&o, a[2], KSIGACTION);
		break;
	case SYS_rt_sigprocmask:
		if (ok)
			add(&o, a[2], KSIGSET);
		break;
	case SYS_rt_sigpending:
		if (ok)
			add(&o, a[0], KSIGSET);
		break;
	case SYS_sigaltstack:
		if (ok)
			add(&o, a[1], STACK_T);
		break;
	case SYS_prlimit64:
		if (ok)
			add(&o, a[3], RLIMIT);
		break;
	case SYS_getrlimit:
		if (ok)
			add(&o, a[1], RLIMIT);
		break;
	case SYS_getrusage:
		if (ok)
			add(&o, a[1], RUSAGE);
		break;
	case SYS_sysinfo:
		if (ok)
			add(&o, a[0], SYSINFO);
		break;
	case SYS_times:
		add(&o, a[0], TMS);
		break;
	case SYS_getitimer:
		if (ok)
			add(&o, a[1], ITIMERVAL);
		break;
	case SYS_setitimer:
		if (ok)
			add(&o, a[2], ITIMERVAL);
		break;
	case SYS_sched_getaffinity:
		if (ok)
			add(&o, a[2], res);
		break;
	case SYS_getresuid: case SYS_getresgid:
		if (ok) {
			add(&o, a[0], 4);
			add(&o, a[1], 4);
			add(&o, a[2], 4);
		}
		break;
	case SYS_arch_prctl:
		if (ok && (a[0] == 0x1003 || a[0] == 0x1004)) /* ARCH_GET_FS/GS */
			add(&o, a[1], 8);
		break;
	case SYS_prctl:
		if (ok && a[0] == 16)       /* PR_GET_NAME */
			add(&o, a[1], 16);
		else if (ok && a[0] == 25)  /* PR_GET_TSC */
			add(&o, a[1], 4);
		break;
	case SYS_clone:
		if (ok && (a[0] & 0x00100000)) /* CLONE_PARENT_SETTID */
			add(&o, a[2], 4);
		break;
	case SYS_sendfile:
		if (ok)
			add(&o, a[2], 8);
		break;
	case SYS_timer_create:
		if (ok)
			add(&o, a[2], 4);
		break;
	default:
		if (!writes_nothing(nr))
			return -1;
		break;
	}
	return o.n;
}

bool syscall_changes_maps(uint64_t nr)
{
	switch (nr) {
	case SYS_mmap: case SYS_mprotect: case SYS_munmap: case SYS_brk:
	case SYS_mremap: case SYS_execve: case SYS_shmat: case SYS_shmdt:
	case SYS_pkey_mprotect: case SYS_remap_file_pages: case SYS_execveat:
		return true;
	default:
		return false;
	}
}
