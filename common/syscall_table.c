/* The one table of x86-64 system calls (include/ptrev/syscall_table.h):
 * one entry per number of the kernel's x86-64 table, what user memory each
 * writes, whether it changes the address space and how a replay treats it.
 * The recorders (server/record) and the replays (replay/) both read it.
 *
 * Sizes are those of the kernel's x86-64 structures (not glibc's where
 * they differ: sigaction, termios, sigset_t), checked by
 * tests/unit/test_syscall_table.c against the uapi headers. Recording a
 * little more than the kernel wrote is harmless (a replay puts back bytes
 * that held the same values at that point); recording less is not. */
#include "ptrev/syscall_table.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>

#define KSIGSET 8          /* the kernel's sigset_t */
#define KSIGACTION 32      /* handler, flags, restorer, mask */
#define STAT_SIZE 144      /* struct stat */
#define STATFS 120         /* struct statfs */
#define STATX_SIZE 256
#define USTAT 32
#define TIMESPEC 16
#define TIMEVAL 16
#define ITIMERSPEC 32
#define ITIMERVAL 32
#define RUSAGE 144
#define RLIMIT 16
#define UTSNAME 390        /* struct new_utsname */
#define SYSINFO 112
#define TMS 32
#define TIMEX 208          /* struct __kernel_timex */
#define KTERMIOS 36        /* struct termios as TCGETS copies it */
#define KTERMIO 18
#define WINSIZE 8
#define SIGINFO 128
#define MSGHDR 56
#define MMSGHDR 64
#define STACK_T 24
#define FLOCK 32
#define F_OWNER_EX 8
#define EPOLL_EVENT 12
#define POLLFD 8
#define IO_EVENT 32
#define MQ_ATTR 64
#define SEMID_DS 104       /* struct semid64_ds */
#define SEMINFO 40
#define SHMID_DS 112       /* struct shmid64_ds */
#define SHMINFO 72         /* struct shminfo64 */
#define SHM_INFO_SIZE 48  /* struct shm_info */
#define MSQID_DS 120       /* struct msqid64_ds */
#define MSGINFO 32
#define CAP_DATA 12        /* struct __user_cap_data_struct */
#define USER_DESC 16
#define SCHED_PARAM 4
#define IFREQ 40
#define USER_REGS 216      /* struct user_regs_struct */
#define USER_FPREGS 512
#define CACHESTAT 40

#define A0 0
#define A1 1
#define A2 2
#define A3 3
#define A4 4
#define A5 5

/* The description language (syscall_table.h). */
#define FIX(a, s)      { SC_FIXED, a, 0, SC_OK, s }
#define FIXA(a, s)     { SC_FIXED, a, 0, SC_ALWAYS, s }
#define FIXP(a, s)     { SC_FIXED, a, 0, SC_POS, s }
#define RESMAX(a, m)   { SC_RESULT, a, m, SC_OK, 0 }
#define RESN(a, m, s)  { SC_RESULT_N, a, m, SC_OK, s }
#define ARGN(a, m, s)  { SC_ARG_N, a, m, SC_OK, s }
#define ARGNA(a, m, s) { SC_ARG_N, a, m, SC_ALWAYS, s }
#define PTRLEN(a, m)   { SC_PTR_U32, a, m, SC_OK, 0 }
#define IOV(a, m)      { SC_IOV, a, m, SC_OK, 0 }
#define BITSA(a, m)    { SC_BITS, a, m, SC_ALWAYS, 0 }
#define BITS(a, m)     { SC_BITS, a, m, SC_OK, 0 }
#define PAGES(a, m)    { SC_PAGES, a, m, SC_OK, 0 }

#define SYS(nr, nm, ...) [nr] = { .name = nm, __VA_ARGS__ }
/* Writes nothing a program could read back. */
#define NONE(nr, nm) SYS(nr, nm)
/* Not implemented on x86-64 (any more): ENOSYS. */
#define NOSYS(nr, nm) SYS(nr, nm, .nosys = true)
#define RUNOK .replay = SYSCALL_RUN_OK
#define UNSUP(reason) .replay = SYSCALL_UNSUPPORTED, .why = reason
#define SPECIAL(fn, what, arg) .special = fn, .sub = what, .sub_arg = arg

/* ---- the output ---- */

static void add(struct sc_call *c, uint64_t addr, int64_t len)
{
	if (!addr || len <= 0 || c->n >= c->max)
		return;
	c->r[c->n].addr = addr;
	c->r[c->n].len = (uint64_t)len;
	c->n++;
}

static bool ok(const struct sc_call *c)
{
	return c->result >= 0;
}

static uint32_t read_u32(const struct sc_call *c, uint64_t addr)
{
	uint32_t v = 0;
	if (!addr || c->read_mem(c->ctx, addr, &v, sizeof v) != (long)sizeof v)
		return 0;
	return v;
}

static uint64_t read_u64(const struct sc_call *c, uint64_t addr)
{
	uint64_t v = 0;
	if (!addr || c->read_mem(c->ctx, addr, &v, sizeof v) != (long)sizeof v)
		return 0;
	return v;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* `total` bytes scattered over the iovec array at iov (cnt entries). */
static void add_iov(struct sc_call *c, uint64_t iov, uint64_t cnt, int64_t total)
{
	for (uint64_t i = 0; i < cnt && i < 1024 && total > 0; i++) {
		uint64_t v[2];
		if (c->read_mem(c->ctx, iov + 16 * i, v, sizeof v) != (long)sizeof v)
			return;
		int64_t n = (int64_t)v[1] < total ? (int64_t)v[1] : total;
		add(c, v[0], n);
		total -= n;
	}
}

/* A received msghdr (recvmsg, recvmmsg): the header (namelen, controllen
 * and flags are written), the peer address, `data` bytes of data and the
 * control messages. */
static void add_msghdr(struct sc_call *c, uint64_t msg, int64_t data)
{
	uint64_t h[7]; /* name, namelen, iov, iovlen, control, controllen, flags */
	if (!msg || c->read_mem(c->ctx, msg, h, sizeof h) != (long)sizeof h)
		return;
	add(c, msg, MSGHDR);
	add(c, h[0], (int64_t)(uint32_t)h[1]);
	add_iov(c, h[2], h[3], data);
	add(c, h[4], (int64_t)h[5]);
}

/* ---- sub-commands ---- */

static int w_recvmsg(struct sc_call *c)
{
	if (ok(c))
		add_msghdr(c, c->args[1], c->result);
	return 0;
}

static int w_recvmmsg(struct sc_call *c)
{
	for (int64_t i = 0; i < c->result && i < 1024; i++) {
		uint64_t m = c->args[1] + (uint64_t)i * MMSGHDR;
		add_msghdr(c, m, read_u32(c, m + MSGHDR));
		add(c, m + MSGHDR, 4); /* msg_len */
	}
	if (ok(c))
		add(c, c->args[4], TIMESPEC); /* the time left */
	return 0;
}

static int w_sendmmsg(struct sc_call *c)
{
	for (int64_t i = 0; i < c->result && i < 1024; i++)
		add(c, c->args[1] + (uint64_t)i * MMSGHDR + MSGHDR, 4); /* msg_len */
	return 0;
}

/* The ioctls of terminals, sockets, files and block devices that programs
 * commonly make whose numbers do not say what they write (the old 'T',
 * 0x89 and 0x12 ones); the others carry direction and size in the number
 * (_IOR: the kernel writes size bytes at the argument). */
static const struct {
	uint32_t req;
	int32_t size; /* bytes written at the argument; 0 none */
} legacy_ioctls[] = {
	{0x5401, KTERMIOS}, /* TCGETS */
	{0x5402, 0}, {0x5403, 0}, {0x5404, 0}, /* TCSETS, TCSETSW, TCSETSF */
	{0x5405, KTERMIO},  /* TCGETA */
	{0x5406, 0}, {0x5407, 0}, {0x5408, 0}, /* TCSETA* */
	{0x5409, 0}, {0x540a, 0}, {0x540b, 0}, /* TCSBRK, TCXONC, TCFLSH */
	{0x540c, 0}, {0x540d, 0}, {0x540e, 0}, /* TIOCEXCL, TIOCNXCL, TIOCSCTTY */
	{0x540f, 4},        /* TIOCGPGRP */
	{0x5410, 0},        /* TIOCSPGRP */
	{0x5411, 4},        /* TIOCOUTQ */
	{0x5412, 0},        /* TIOCSTI */
	{0x5413, WINSIZE},  /* TIOCGWINSZ */
	{0x5414, 0},        /* TIOCSWINSZ */
	{0x5415, 4},        /* TIOCMGET */
	{0x5416, 0}, {0x5417, 0}, {0x5418, 0}, /* TIOCMBIS, TIOCMBIC, TIOCMSET */
	{0x5419, 4},        /* TIOCGSOFTCAR */
	{0x541a, 0},        /* TIOCSSOFTCAR */
	{0x541b, 4},        /* FIONREAD */
	{0x541d, 0},        /* TIOCCONS */
	{0x5420, 0},        /* TIOCPKT */
	{0x5421, 0},        /* FIONBIO */
	{0x5422, 0},        /* TIOCNOTTY */
	{0x5423, 0},        /* TIOCSETD */
	{0x5424, 4},        /* TIOCGETD */
	{0x5425, 0},        /* TCSBRKP */
	{0x5427, 0}, {0x5428, 0}, /* TIOCSBRK, TIOCCBRK */
	{0x5429, 4},        /* TIOCGSID */
	{0x5441, 0},        /* TIOCGPTPEER (returns an fd) */
	{0x5450, 0}, {0x5451, 0}, {0x5452, 0}, /* FIONCLEX, FIOCLEX, FIOASYNC */
	{0x5459, 4},        /* TIOCSERGETLSR */
	{0x5460, 8},        /* FIOQSIZE */
	{0x8901, 0}, {0x8902, 0}, /* FIOSETOWN, SIOCSPGRP */
	{0x8903, 4}, {0x8904, 4}, /* FIOGETOWN, SIOCGPGRP */
	{0x8905, 4},        /* SIOCATMARK */
	{0x8906, TIMEVAL},  /* SIOCGSTAMP */
	{0x8907, TIMESPEC}, /* SIOCGSTAMPNS */
	{0x8910, IFREQ}, {0x8913, IFREQ}, {0x8915, IFREQ}, {0x8917, IFREQ}, /* SIOCGIF* */
	{0x8919, IFREQ}, {0x891b, IFREQ}, {0x891d, IFREQ}, {0x8921, IFREQ},
	{0x8927, IFREQ}, {0x8933, IFREQ}, {0x8942, IFREQ},
	{0x1260, 8},        /* BLKGETSIZE */
	{0x125e, 4},        /* BLKROGET */
	{0x1268, 4},        /* BLKSSZGET */
	{0x1278, 4}, {0x1279, 4}, {0x127a, 4}, {0x127b, 4}, /* BLKIOMIN, IOOPT, ALIGNOFF, PBSZGET */
};

static int w_ioctl(struct sc_call *c)
{
	uint32_t req = (uint32_t)c->args[1];
	if (!ok(c))
		return 0;
	for (size_t i = 0; i < sizeof legacy_ioctls / sizeof legacy_ioctls[0]; i++)
		if (legacy_ioctls[i].req == req) {
			add(c, c->args[2], legacy_ioctls[i].size);
			return 0;
		}
	if (req == 0x8912) { /* SIOCGIFCONF: struct ifconf {len, buf} */
		add(c, c->args[2], 16);
		add(c, read_u64(c, c->args[2] + 8), (int32_t)read_u32(c, c->args[2]));
		return 0;
	}
	uint32_t dir = req >> 30, size = (req >> 16) & 0x3fff;
	if (dir & 2) { /* _IOC_READ */
		add(c, c->args[2], size);
		return 0;
	}
	if (dir == 1) /* _IOC_WRITE only */
		return 0;
	return -1;
}

static int w_fcntl(struct sc_call *c)
{
	uint64_t cmd = c->args[1];
	if (!ok(c))
		return 0;
	switch (cmd) {
	case 5: case 36:  /* F_GETLK, F_OFD_GETLK */
		add(c, c->args[2], FLOCK);
		return 0;
	case 16:          /* F_GETOWN_EX */
		add(c, c->args[2], F_OWNER_EX);
		return 0;
	case 17:          /* F_GETOWNER_UIDS: two uids */
		add(c, c->args[2], 8);
		return 0;
	case 1035: case 1037: /* F_GET_RW_HINT, F_GET_FILE_RW_HINT */
		add(c, c->args[2], 8);
		return 0;
	default:
		/* The rest write nothing: F_DUPFD .. F_SETSIG, F_SETOWN_EX,
		 * F_OFD_SETLK(W), the 1024 ones (leases, notify, pipe sizes,
		 * seals, dup queries), F_SET_*RW_HINT. */
		if (cmd <= 15 || cmd == 37 || cmd == 38 || (cmd >= 1024 && cmd <= 1038))
			return 0;
		return -1;
	}
}

static int w_prctl(struct sc_call *c)
{
	uint64_t opt = c->args[0];
	if (!ok(c))
		return 0;
	switch (opt) {
	case 2: case 5: case 9: case 11: case 19: case 25: case 37:
		/* PR_GET_PDEATHSIG, _UNALIGN, _FPEMU, _FPEXC, _ENDIAN, _TSC,
		 * _CHILD_SUBREAPER: an int */
		add(c, c->args[1], 4);
		return 0;
	case 16: /* PR_GET_NAME */
		add(c, c->args[1], 16);
		return 0;
	case 40: case 74: /* PR_GET_TID_ADDRESS, PR_GET_SHADOW_STACK_STATUS */
		add(c, c->args[1], 8);
		return 0;
	case 35: /* PR_SET_MM: PR_SET_MM_MAP_SIZE writes the size */
		if (c->args[1] == 14)
			add(c, c->args[2], 4);
		return 0;
	case 62: /* PR_SCHED_CORE: PR_SCHED_CORE_GET writes the cookie */
		if (c->args[1] == 0)
			add(c, c->args[4], 8);
		return 0;
	case 0x41555856: /* PR_GET_AUXV */
		add(c, c->args[1], min64(c->result, (int64_t)c->args[2]));
		return 0;
	case 0x59616d61: /* PR_SET_PTRACER */
	case 0x53564d41: /* PR_SET_VMA */
		return 0;
	default:
		/* The other options of Linux 6.17 (1 .. 79) return their value
		 * or set state; none writes memory. */
		return opt >= 1 && opt <= 79 ? 0 : -1;
	}
}

static int w_arch_prctl(struct sc_call *c)
{
	if (!ok(c))
		return 0;
	switch (c->args[0]) {
	case 0x1003: case 0x1004: /* ARCH_GET_FS, ARCH_GET_GS */
	case 0x1021: case 0x1022: case 0x1024: /* ARCH_GET_XCOMP_SUPP, _PERM, _GUEST_PERM */
	case 0x4001: case 0x4003: /* ARCH_GET_UNTAG_MASK, ARCH_GET_MAX_TAG_BITS */
	case 0x5005: /* ARCH_SHSTK_STATUS */
		add(c, c->args[1], 8);
		return 0;
	default:
		return 0; /* the SET ones, ARCH_GET_CPUID (its result) */
	}
}

static int w_getsockopt(struct sc_call *c)
{
	if (ok(c)) {
		add(c, c->args[3], read_u32(c, c->args[4]));
		add(c, c->args[4], 4);
	}
	return 0;
}

/* clone: where the kernel writes the child's tid (CLONE_PARENT_SETTID)
 * or a pidfd (CLONE_PIDFD), both through parent_tid. */
static int w_clone(struct sc_call *c)
{
	if (ok(c) && (c->args[0] & (0x00100000 | 0x00001000)))
		add(c, c->args[2], 4);
	return 0;
}

/* clone3: struct clone_args {flags, pidfd, child_tid, parent_tid, ...}. */
static int w_clone3(struct sc_call *c)
{
	uint64_t ca[4];
	if (!ok(c) || c->read_mem(c->ctx, c->args[0], ca, sizeof ca) != (long)sizeof ca)
		return 0;
	if (ca[0] & 0x00001000) /* CLONE_PIDFD */
		add(c, ca[1], 4);
	if (ca[0] & 0x00100000) /* CLONE_PARENT_SETTID */
		add(c, ca[3], 4);
	return 0;
}

/* capget(header, data): the header's version is written back (also on
 * failure, for a version it does not know); one data struct for version 1,
 * two for 2 and 3. */
static int w_capget(struct sc_call *c)
{
	uint32_t v = read_u32(c, c->args[0]);
	add(c, c->args[0], 8);
	if (ok(c))
		add(c, c->args[1], v == 0x19980330 ? CAP_DATA : 2 * CAP_DATA);
	return 0;
}

/* name_to_handle_at(dfd, name, handle, mnt_id, flags): struct
 * file_handle {u32 handle_bytes; int type; bytes}; with EOVERFLOW only the
 * size needed is written. */
static int w_name_to_handle_at(struct sc_call *c)
{
	if (c->result == -75 /* EOVERFLOW */)
		add(c, c->args[2], 4);
	if (ok(c)) {
		add(c, c->args[2], 8 + (int64_t)read_u32(c, c->args[2]));
		add(c, c->args[3], c->args[4] & 0x001 /* AT_HANDLE_MNT_ID_UNIQUE */ ? 8 : 4);
	}
	return 0;
}

/* System V IPC: cmd & ~IPC_64. */
static int w_semctl(struct sc_call *c)
{
	if (!ok(c))
		return 0;
	switch (c->args[2] & ~0x100ull) {
	case 2: case 18: case 20: /* IPC_STAT, SEM_STAT, SEM_STAT_ANY */
		add(c, c->args[3], SEMID_DS);
		return 0;
	case 3: case 19: /* IPC_INFO, SEM_INFO */
		add(c, c->args[3], SEMINFO);
		return 0;
	case 13: /* GETALL: one u16 per semaphore, sem_nsems of IPC_STAT */
		return -1;
	default:
		return 0;
	}
}

static int w_shmctl(struct sc_call *c)
{
	if (!ok(c))
		return 0;
	switch (c->args[1] & ~0x100ull) {
	case 2: case 13: case 15: /* IPC_STAT, SHM_STAT, SHM_STAT_ANY */
		add(c, c->args[2], SHMID_DS);
		return 0;
	case 3: /* IPC_INFO */
		add(c, c->args[2], SHMINFO);
		return 0;
	case 14: /* SHM_INFO */
		add(c, c->args[2], SHM_INFO_SIZE);
		return 0;
	default:
		return 0;
	}
}

/* shmat: the segment's bytes as the attach found them (what the program
 * or another process wrote there before), which a replay, having no
 * segment, maps (SYSCALL_SHM). Its size is asked of the kernel by the
 * segment's id (IPC_STAT, in ptrev's IPC namespace: the program's unless
 * it made one of its own; then the call is unknown). Nothing at the
 * entry (result 0) or in progress (SYSCALL_MAX_RESULT: nothing mapped is
 * written before the call returns). What another process writes there
 * after the attach is not recorded, as rr does not. */
static int w_shmat(struct sc_call *c)
{
	struct shmid_ds ds;
	if (!ok(c) || c->result == 0 || c->result == SYSCALL_MAX_RESULT)
		return 0;
	if (shmctl((int)c->args[0], IPC_STAT, &ds) < 0)
		return -1;
	add(c, (uint64_t)c->result, (int64_t)((ds.shm_segsz + 4095) & ~(size_t)4095));
	return 0;
}

/* mmap, where it made a writable shared mapping of a file (POSIX shared
 * memory, a memfd, a file the program changes through memory): the bytes
 * the mapping shows, which a replay maps in place of the file (sys_replay.c),
 * since the file then holds what was written later, or is gone. The pages
 * past the file's end cannot be read: the recorder's read ends there.
 * Nothing at the entry (result 0) or in progress. */
static int w_mmap(struct sc_call *c)
{
	if (!ok(c) || c->result == 0 || c->result == SYSCALL_MAX_RESULT ||
	    !(c->args[3] & MAP_SHARED) || (c->args[3] & MAP_ANONYMOUS) ||
	    !(c->args[2] & PROT_WRITE))
		return 0;
	add(c, (uint64_t)c->result, (int64_t)c->args[1]);
	return 0;
}

static int w_msgctl(struct sc_call *c)
{
	if (!ok(c))
		return 0;
	switch (c->args[1] & ~0x100ull) {
	case 2: case 11: case 13: /* IPC_STAT, MSG_STAT, MSG_STAT_ANY */
		add(c, c->args[2], MSQID_DS);
		return 0;
	case 3: case 12: /* IPC_INFO, MSG_INFO */
		add(c, c->args[2], MSGINFO);
		return 0;
	default:
		return 0;
	}
}

/* msgrcv(id, msgp, size, type, flags): the long mtype and the text. */
static int w_msgrcv(struct sc_call *c)
{
	if (ok(c))
		add(c, c->args[1], 8 + c->result);
	return 0;
}

/* futex: the operations whose kernel side writes a futex word. */
static int w_futex(struct sc_call *c)
{
	if (!ok(c))
		return 0;
	switch (c->args[1] & 127) {
	case 5: /* FUTEX_WAKE_OP: *uaddr2 */
	case 12: /* FUTEX_CMP_REQUEUE_PI */
		add(c, c->args[4], 4);
		return 0;
	case 6: case 7: case 8: case 11: case 13:
		/* FUTEX_LOCK_PI, _UNLOCK_PI, _TRYLOCK_PI, _WAIT_REQUEUE_PI, _LOCK_PI2 */
		add(c, c->args[0], 4);
		return 0;
	default:
		return 0;
	}
}

static int w_ptrace(struct sc_call *c)
{
	uint64_t data = c->args[3];
	if (!ok(c))
		return 0;
	switch (c->args[0]) {
	case 1: case 2: case 3: /* PTRACE_PEEKTEXT, _PEEKDATA, _PEEKUSER */
	case 0x4201:            /* PTRACE_GETEVENTMSG */
		add(c, data, 8);
		return 0;
	case 12: /* PTRACE_GETREGS */
		add(c, data, USER_REGS);
		return 0;
	case 14: /* PTRACE_GETFPREGS */
		add(c, data, USER_FPREGS);
		return 0;
	case 0x4202: /* PTRACE_GETSIGINFO */
		add(c, data, SIGINFO);
		return 0;
	case 0x4204: /* PTRACE_GETREGSET: the iovec's base, its length updated */
		add(c, read_u64(c, data), (int64_t)read_u64(c, data + 8));
		add(c, data + 8, 8);
		return 0;
	case 0x4209: /* PTRACE_PEEKSIGINFO */
		add(c, data, c->result * SIGINFO);
		return 0;
	case 0x420a: case 0x4210: case 0x4212:
		/* PTRACE_GETSIGMASK, _GET_RSEQ_CONFIGURATION,
		 * _GET_SYSCALL_USER_DISPATCH_CONFIG: addr bytes */
		add(c, data, (int64_t)c->args[2]);
		return 0;
	case 0x420c: /* PTRACE_SECCOMP_GET_FILTER: result sock_filters */
		add(c, data, c->result * 8);
		return 0;
	case 0x420e: /* PTRACE_GET_SYSCALL_INFO */
		add(c, data, min64(c->result, (int64_t)c->args[2]));
		return 0;
	case 0: case 4: case 5: case 6: case 7: case 8: case 9: case 13: case 15:
	case 16: case 17: case 24: case 31: case 32: case 33: case 0x4200:
	case 0x4203: case 0x4205: case 0x4206: case 0x4207: case 0x4208: case 0x420b:
		/* TRACEME, POKE*, CONT, KILL, SINGLESTEP, SETREGS, SETFPREGS,
		 * ATTACH, DETACH, SYSCALL, SYSEMU*, SINGLEBLOCK, SETOPTIONS,
		 * SETSIGINFO, SETREGSET, SEIZE, INTERRUPT, LISTEN, SETSIGMASK */
		return 0;
	default:
		return -1;
	}
}

static int w_keyctl(struct sc_call *c)
{
	if (!ok(c))
		return 0;
	switch (c->args[0]) {
	case 6: case 11: case 17: case 23:
		/* KEYCTL_DESCRIBE, _READ, _GET_SECURITY, _DH_COMPUTE: the
		 * result is the whole length, at most buflen is written */
		add(c, c->args[2], min64(c->result, (int64_t)c->args[3]));
		return 0;
	case 31: /* KEYCTL_CAPABILITIES */
		add(c, c->args[1], min64(c->result, (int64_t)c->args[2]));
		return 0;
	case 24: case 25: case 26: case 27: case 28:
		/* KEYCTL_PKEY_*: structures and buffers through params */
		return -1;
	default:
		return 0;
	}
}

/* quotactl(cmd, special, id, addr) and quotactl_fd(fd, cmd, id, addr):
 * the command is QCMD(subcmd, type). */
static int quota(struct sc_call *c, uint64_t cmd, uint64_t addr)
{
	if (!ok(c))
		return 0;
	switch ((uint32_t)cmd >> 8) {
	case 0x800004: /* Q_GETFMT */
		add(c, addr, 4);
		return 0;
	case 0x800005: /* Q_GETINFO */
		add(c, addr, 24);
		return 0;
	case 0x800007: case 0x800009: /* Q_GETQUOTA, Q_GETNEXTQUOTA */
		add(c, addr, 72);
		return 0;
	case 0x800001: case 0x800002: case 0x800006: case 0x800008:
		/* Q_QUOTAON, _QUOTAOFF, _SETINFO, _SETQUOTA */
		return 0;
	default:
		return -1; /* the XFS ones */
	}
}

static int w_quotactl(struct sc_call *c)
{
	return quota(c, c->args[0], c->args[3]);
}

static int w_quotactl_fd(struct sc_call *c)
{
	return quota(c, c->args[1], c->args[3]);
}

static int w_syslog(struct sc_call *c)
{
	if (ok(c) && c->args[0] >= 2 && c->args[0] <= 4) /* READ, READ_ALL, READ_CLEAR */
		add(c, c->args[1], c->result);
	return 0;
}

/* sysfs(2, index, buf): a file system's name, NUL-terminated. */
static int w_sysfs(struct sc_call *c)
{
	if (ok(c) && c->args[0] == 2)
		add(c, c->args[2], 256);
	return 0;
}

/* modify_ldt(0 or 2, ptr, count): the LDT read. */
static int w_modify_ldt(struct sc_call *c)
{
	if (ok(c) && (c->args[0] == 0 || c->args[0] == 2))
		add(c, c->args[1], c->result);
	return 0;
}

static int w_seccomp(struct sc_call *c)
{
	if (ok(c) && c->args[0] == 3) /* SECCOMP_GET_NOTIF_SIZES */
		add(c, c->args[2], 6);
	return 0;
}

/* bpf writes through pointers inside its attribute union, which depend
 * on the command. */
static int w_bpf(struct sc_call *c)
{
	return ok(c) ? -1 : 0;
}

/* restart_syscall finishes the syscall a signal interrupted, whose
 * writes the call alone does not say. */
static int w_restart(struct sc_call *c)
{
	return ok(c) ? -1 : 0;
}

/* getxattrat(dfd, path, at_flags, name, struct xattr_args *, size):
 * {u64 value; u32 size; u32 flags}. */
static int w_getxattrat(struct sc_call *c)
{
	if (ok(c))
		add(c, read_u64(c, c->args[4]),
		    min64(c->result, (int64_t)read_u32(c, c->args[4] + 8)));
	return 0;
}

/* ---- the table ---- */

#define WHY_CLONE "a new thread (a replay of this recording runs one thread)"
#define WHY_EXEC "exec (only the event backend records across exec: `ptrev record " \
	"--backend event`)"
#define WHY_URING "io_uring (the kernel writes its rings and buffers asynchronously, " \
	"which is not recorded)"
#define WHY_AIO "Linux AIO (the kernel writes its ring and buffers asynchronously, " \
	"which is not recorded)"
#define WHY_UFFD "userfaultfd (page faults served by the program's own code)"

static const struct syscall_desc table[SYSCALL_TABLE_LEN] = {
	SYS(0, "read", .w = {RESMAX(A1, A2)}),
	NONE(1, "write"),
	NONE(2, "open"),
	NONE(3, "close"),
	SYS(4, "stat", .w = {FIX(A1, STAT_SIZE)}),
	SYS(5, "fstat", .w = {FIX(A1, STAT_SIZE)}),
	SYS(6, "lstat", .w = {FIX(A1, STAT_SIZE)}),
	SYS(7, "poll", .w = {ARGNA(A0, A1, POLLFD)}),
	NONE(8, "lseek"),
	SYS(9, "mmap", RUNOK, .maps = true, .special = w_mmap, .never_unknown = true),
	SYS(10, "mprotect", RUNOK, .maps = true),
	SYS(11, "munmap", RUNOK, .maps = true),
	SYS(12, "brk", .replay = SYSCALL_RUN, .maps = true),
	SYS(13, "rt_sigaction", RUNOK, .w = {FIX(A2, KSIGACTION)}),
	SYS(14, "rt_sigprocmask", RUNOK, .w = {FIX(A2, KSIGSET)}),
	SYS(15, "rt_sigreturn", .replay = SYSCALL_RUN), /* its "result" is the restored rax */
	SYS(16, "ioctl", SPECIAL(w_ioctl, "request", A1)),
	SYS(17, "pread64", .w = {RESMAX(A1, A2)}),
	NONE(18, "pwrite64"),
	SYS(19, "readv", .w = {IOV(A1, A2)}),
	NONE(20, "writev"),
	NONE(21, "access"),
	SYS(22, "pipe", .w = {FIX(A0, 8)}),
	SYS(23, "select", .w = {BITSA(A1, A0), BITSA(A2, A0), BITSA(A3, A0), FIXA(A4, TIMEVAL)}),
	NONE(24, "sched_yield"),
	SYS(25, "mremap", RUNOK, .maps = true),
	NONE(26, "msync"),
	SYS(27, "mincore", .w = {PAGES(A2, A1)}),
	SYS(28, "madvise", RUNOK), /* MADV_DONTNEED empties memory */
	NONE(29, "shmget"),
	SYS(30, "shmat", .maps = true, .replay = SYSCALL_SHM, .special = w_shmat),
	SYS(31, "shmctl", SPECIAL(w_shmctl, "command", A1)),
	NONE(32, "dup"),
	NONE(33, "dup2"),
	NONE(34, "pause"),
	SYS(35, "nanosleep", .w = {FIXA(A1, TIMESPEC)}),
	SYS(36, "getitimer", .w = {FIX(A1, ITIMERVAL)}),
	NONE(37, "alarm"),
	SYS(38, "setitimer", .w = {FIX(A2, ITIMERVAL)}),
	NONE(39, "getpid"),
	SYS(40, "sendfile", .w = {FIX(A2, 8)}),
	NONE(41, "socket"),
	NONE(42, "connect"),
	SYS(43, "accept", .w = {PTRLEN(A1, A2), FIX(A2, 4)}),
	NONE(44, "sendto"),
	SYS(45, "recvfrom", .w = {RESMAX(A1, A2), PTRLEN(A4, A5), FIX(A5, 4)}),
	NONE(46, "sendmsg"),
	SYS(47, "recvmsg", SPECIAL(w_recvmsg, NULL, 0)),
	NONE(48, "shutdown"),
	NONE(49, "bind"),
	NONE(50, "listen"),
	SYS(51, "getsockname", .w = {PTRLEN(A1, A2), FIX(A2, 4)}),
	SYS(52, "getpeername", .w = {PTRLEN(A1, A2), FIX(A2, 4)}),
	SYS(53, "socketpair", .w = {FIX(A3, 8)}),
	NONE(54, "setsockopt"),
	SYS(55, "getsockopt", SPECIAL(w_getsockopt, NULL, 0)),
	SYS(56, "clone", .replay = SYSCALL_CLONE, .why = WHY_CLONE, SPECIAL(w_clone, NULL, 0)),
	SYS(57, "fork", .replay = SYSCALL_FORK),
	SYS(58, "vfork", .replay = SYSCALL_FORK),
	SYS(59, "execve", .maps = true, UNSUP(WHY_EXEC)),
	NONE(60, "exit"),
	SYS(61, "wait4", .w = {FIX(A1, 4), FIX(A3, RUSAGE)}),
	NONE(62, "kill"),
	SYS(63, "uname", .w = {FIX(A0, UTSNAME)}),
	NONE(64, "semget"),
	NONE(65, "semop"),
	SYS(66, "semctl", SPECIAL(w_semctl, "command", A2)),
	SYS(67, "shmdt", .maps = true, .replay = SYSCALL_SHM),
	NONE(68, "msgget"),
	NONE(69, "msgsnd"),
	SYS(70, "msgrcv", SPECIAL(w_msgrcv, NULL, 0)),
	SYS(71, "msgctl", SPECIAL(w_msgctl, "command", A1)),
	SYS(72, "fcntl", SPECIAL(w_fcntl, "command", A1)),
	NONE(73, "flock"),
	NONE(74, "fsync"),
	NONE(75, "fdatasync"),
	NONE(76, "truncate"),
	NONE(77, "ftruncate"),
	SYS(78, "getdents", .w = {RESMAX(A1, A2)}),
	SYS(79, "getcwd", .w = {RESMAX(A0, A1)}),
	NONE(80, "chdir"),
	NONE(81, "fchdir"),
	NONE(82, "rename"),
	NONE(83, "mkdir"),
	NONE(84, "rmdir"),
	NONE(85, "creat"),
	NONE(86, "link"),
	NONE(87, "unlink"),
	NONE(88, "symlink"),
	SYS(89, "readlink", .w = {RESMAX(A1, A2)}),
	NONE(90, "chmod"),
	NONE(91, "fchmod"),
	NONE(92, "chown"),
	NONE(93, "fchown"),
	NONE(94, "lchown"),
	NONE(95, "umask"),
	SYS(96, "gettimeofday", .w = {FIX(A0, TIMEVAL), FIX(A1, 8)}),
	SYS(97, "getrlimit", .w = {FIX(A1, RLIMIT)}),
	SYS(98, "getrusage", .w = {FIX(A1, RUSAGE)}),
	SYS(99, "sysinfo", .w = {FIX(A0, SYSINFO)}),
	SYS(100, "times", .w = {FIXA(A0, TMS)}),
	SYS(101, "ptrace", SPECIAL(w_ptrace, "request", A0)),
	NONE(102, "getuid"),
	SYS(103, "syslog", SPECIAL(w_syslog, NULL, 0)),
	NONE(104, "getgid"),
	NONE(105, "setuid"),
	NONE(106, "setgid"),
	NONE(107, "geteuid"),
	NONE(108, "getegid"),
	NONE(109, "setpgid"),
	NONE(110, "getppid"),
	NONE(111, "getpgrp"),
	NONE(112, "setsid"),
	NONE(113, "setreuid"),
	NONE(114, "setregid"),
	SYS(115, "getgroups", .w = {RESN(A1, A0, 4)}),
	NONE(116, "setgroups"),
	NONE(117, "setresuid"),
	SYS(118, "getresuid", .w = {FIX(A0, 4), FIX(A1, 4), FIX(A2, 4)}),
	NONE(119, "setresgid"),
	SYS(120, "getresgid", .w = {FIX(A0, 4), FIX(A1, 4), FIX(A2, 4)}),
	NONE(121, "getpgid"),
	NONE(122, "setfsuid"),
	NONE(123, "setfsgid"),
	NONE(124, "getsid"),
	SYS(125, "capget", SPECIAL(w_capget, NULL, 0)),
	NONE(126, "capset"),
	SYS(127, "rt_sigpending", .w = {FIX(A0, KSIGSET)}),
	SYS(128, "rt_sigtimedwait", .w = {FIXP(A1, SIGINFO)}),
	NONE(129, "rt_sigqueueinfo"),
	NONE(130, "rt_sigsuspend"),
	SYS(131, "sigaltstack", RUNOK, .w = {FIX(A1, STACK_T)}),
	NONE(132, "utime"),
	NONE(133, "mknod"),
	NOSYS(134, "uselib"),
	NONE(135, "personality"),
	SYS(136, "ustat", .w = {FIX(A1, USTAT)}),
	SYS(137, "statfs", .w = {FIX(A1, STATFS)}),
	SYS(138, "fstatfs", .w = {FIX(A1, STATFS)}),
	SYS(139, "sysfs", SPECIAL(w_sysfs, NULL, 0)),
	NONE(140, "getpriority"),
	NONE(141, "setpriority"),
	NONE(142, "sched_setparam"),
	SYS(143, "sched_getparam", .w = {FIX(A1, SCHED_PARAM)}),
	NONE(144, "sched_setscheduler"),
	NONE(145, "sched_getscheduler"),
	NONE(146, "sched_get_priority_max"),
	NONE(147, "sched_get_priority_min"),
	SYS(148, "sched_rr_get_interval", .w = {FIX(A1, TIMESPEC)}),
	NONE(149, "mlock"),
	NONE(150, "munlock"),
	NONE(151, "mlockall"),
	NONE(152, "munlockall"),
	NONE(153, "vhangup"),
	SYS(154, "modify_ldt", RUNOK, SPECIAL(w_modify_ldt, NULL, 0)),
	NONE(155, "pivot_root"),
	NOSYS(156, "_sysctl"),
	SYS(157, "prctl", SPECIAL(w_prctl, "option", A0)),
	SYS(158, "arch_prctl", RUNOK, SPECIAL(w_arch_prctl, NULL, 0)),
	SYS(159, "adjtimex", .w = {FIX(A0, TIMEX)}),
	NONE(160, "setrlimit"),
	NONE(161, "chroot"),
	NONE(162, "sync"),
	NONE(163, "acct"),
	NONE(164, "settimeofday"),
	NONE(165, "mount"),
	NONE(166, "umount2"),
	NONE(167, "swapon"),
	NONE(168, "swapoff"),
	NONE(169, "reboot"),
	NONE(170, "sethostname"),
	NONE(171, "setdomainname"),
	NONE(172, "iopl"),
	NONE(173, "ioperm"),
	NOSYS(174, "create_module"),
	NONE(175, "init_module"),
	NONE(176, "delete_module"),
	NOSYS(177, "get_kernel_syms"),
	NOSYS(178, "query_module"),
	SYS(179, "quotactl", SPECIAL(w_quotactl, "command", A0)),
	NOSYS(180, "nfsservctl"),
	NOSYS(181, "getpmsg"),
	NOSYS(182, "putpmsg"),
	NOSYS(183, "afs_syscall"),
	NOSYS(184, "tuxcall"),
	NOSYS(185, "security"),
	NONE(186, "gettid"),
	NONE(187, "readahead"),
	NONE(188, "setxattr"),
	NONE(189, "lsetxattr"),
	NONE(190, "fsetxattr"),
	SYS(191, "getxattr", .w = {RESMAX(A2, A3)}),
	SYS(192, "lgetxattr", .w = {RESMAX(A2, A3)}),
	SYS(193, "fgetxattr", .w = {RESMAX(A2, A3)}),
	SYS(194, "listxattr", .w = {RESMAX(A1, A2)}),
	SYS(195, "llistxattr", .w = {RESMAX(A1, A2)}),
	SYS(196, "flistxattr", .w = {RESMAX(A1, A2)}),
	NONE(197, "removexattr"),
	NONE(198, "lremovexattr"),
	NONE(199, "fremovexattr"),
	NONE(200, "tkill"),
	SYS(201, "time", .w = {FIXA(A0, 8)}),
	SYS(202, "futex", SPECIAL(w_futex, NULL, 0)),
	NONE(203, "sched_setaffinity"),
	SYS(204, "sched_getaffinity", .w = {RESMAX(A2, A1)}),
	SYS(205, "set_thread_area", RUNOK, .w = {FIX(A0, USER_DESC)}),
	SYS(206, "io_setup", .maps = true, .w = {FIX(A1, 8)}, UNSUP(WHY_AIO)),
	SYS(207, "io_destroy", .maps = true),
	SYS(208, "io_getevents", .w = {RESN(A3, A2, IO_EVENT), FIX(A4, TIMESPEC)}),
	NONE(209, "io_submit"),
	SYS(210, "io_cancel", .w = {FIX(A2, IO_EVENT)}),
	SYS(211, "get_thread_area", .w = {FIX(A0, USER_DESC)}),
	SYS(212, "lookup_dcookie", .nosys = true, .w = {RESMAX(A1, A2)}),
	NONE(213, "epoll_create"),
	NOSYS(214, "epoll_ctl_old"),
	NOSYS(215, "epoll_wait_old"),
	SYS(216, "remap_file_pages", .maps = true,
	    UNSUP("remap_file_pages (a non-linear file mapping)")),
	SYS(217, "getdents64", .w = {RESMAX(A1, A2)}),
	SYS(218, "set_tid_address", RUNOK),
	SYS(219, "restart_syscall", SPECIAL(w_restart, NULL, 0)),
	NONE(220, "semtimedop"),
	NONE(221, "fadvise64"),
	SYS(222, "timer_create", .w = {FIX(A2, 4)}),
	SYS(223, "timer_settime", .w = {FIX(A3, ITIMERSPEC)}),
	SYS(224, "timer_gettime", .w = {FIX(A1, ITIMERSPEC)}),
	NONE(225, "timer_getoverrun"),
	NONE(226, "timer_delete"),
	NONE(227, "clock_settime"),
	SYS(228, "clock_gettime", .w = {FIX(A1, TIMESPEC)}),
	SYS(229, "clock_getres", .w = {FIX(A1, TIMESPEC)}),
	SYS(230, "clock_nanosleep", .w = {FIXA(A3, TIMESPEC)}),
	NONE(231, "exit_group"),
	SYS(232, "epoll_wait", .w = {RESN(A1, A2, EPOLL_EVENT)}),
	NONE(233, "epoll_ctl"),
	NONE(234, "tgkill"),
	NONE(235, "utimes"),
	NOSYS(236, "vserver"),
	NONE(237, "mbind"),
	NONE(238, "set_mempolicy"),
	SYS(239, "get_mempolicy", .w = {FIX(A0, 4), BITS(A1, A2)}),
	NONE(240, "mq_open"),
	NONE(241, "mq_unlink"),
	NONE(242, "mq_timedsend"),
	SYS(243, "mq_timedreceive", .w = {RESMAX(A1, A2), FIX(A3, 4)}),
	NONE(244, "mq_notify"),
	SYS(245, "mq_getsetattr", .w = {FIX(A2, MQ_ATTR)}),
	NONE(246, "kexec_load"),
	SYS(247, "waitid", .w = {FIX(A2, SIGINFO), FIX(A4, RUSAGE)}),
	NONE(248, "add_key"),
	NONE(249, "request_key"),
	SYS(250, "keyctl", SPECIAL(w_keyctl, "operation", A0)),
	NONE(251, "ioprio_set"),
	NONE(252, "ioprio_get"),
	NONE(253, "inotify_init"),
	NONE(254, "inotify_add_watch"),
	NONE(255, "inotify_rm_watch"),
	NONE(256, "migrate_pages"),
	NONE(257, "openat"),
	NONE(258, "mkdirat"),
	NONE(259, "mknodat"),
	NONE(260, "fchownat"),
	NONE(261, "futimesat"),
	SYS(262, "newfstatat", .w = {FIX(A2, STAT_SIZE)}),
	NONE(263, "unlinkat"),
	NONE(264, "renameat"),
	NONE(265, "linkat"),
	NONE(266, "symlinkat"),
	SYS(267, "readlinkat", .w = {RESMAX(A2, A3)}),
	NONE(268, "fchmodat"),
	NONE(269, "faccessat"),
	SYS(270, "pselect6", .w = {BITSA(A1, A0), BITSA(A2, A0), BITSA(A3, A0),
				   FIXA(A4, TIMESPEC)}),
	SYS(271, "ppoll", .w = {ARGNA(A0, A1, POLLFD), FIXA(A2, TIMESPEC)}),
	NONE(272, "unshare"),
	SYS(273, "set_robust_list", RUNOK),
	SYS(274, "get_robust_list", .w = {FIX(A1, 8), FIX(A2, 8)}),
	SYS(275, "splice", .w = {FIX(A1, 8), FIX(A3, 8)}),
	NONE(276, "tee"),
	NONE(277, "sync_file_range"),
	/* From a pipe's read end it fills the iovecs; from the write end
	 * the bytes recorded are those already there. */
	SYS(278, "vmsplice", .w = {IOV(A1, A2)}),
	SYS(279, "move_pages", .w = {ARGN(A4, A1, 4)}),
	NONE(280, "utimensat"),
	SYS(281, "epoll_pwait", .w = {RESN(A1, A2, EPOLL_EVENT)}),
	NONE(282, "signalfd"),
	NONE(283, "timerfd_create"),
	NONE(284, "eventfd"),
	NONE(285, "fallocate"),
	SYS(286, "timerfd_settime", .w = {FIX(A3, ITIMERSPEC)}),
	SYS(287, "timerfd_gettime", .w = {FIX(A1, ITIMERSPEC)}),
	SYS(288, "accept4", .w = {PTRLEN(A1, A2), FIX(A2, 4)}),
	NONE(289, "signalfd4"),
	NONE(290, "eventfd2"),
	NONE(291, "epoll_create1"),
	NONE(292, "dup3"),
	SYS(293, "pipe2", .w = {FIX(A0, 8)}),
	NONE(294, "inotify_init1"),
	SYS(295, "preadv", .w = {IOV(A1, A2)}),
	NONE(296, "pwritev"),
	NONE(297, "rt_tgsigqueueinfo"),
	NONE(298, "perf_event_open"),
	SYS(299, "recvmmsg", SPECIAL(w_recvmmsg, NULL, 0)),
	NONE(300, "fanotify_init"),
	NONE(301, "fanotify_mark"),
	SYS(302, "prlimit64", .w = {FIX(A3, RLIMIT)}),
	SYS(303, "name_to_handle_at", SPECIAL(w_name_to_handle_at, NULL, 0)),
	NONE(304, "open_by_handle_at"),
	SYS(305, "clock_adjtime", .w = {FIX(A1, TIMEX)}),
	NONE(306, "syncfs"),
	SYS(307, "sendmmsg", SPECIAL(w_sendmmsg, NULL, 0)),
	NONE(308, "setns"),
	SYS(309, "getcpu", .w = {FIX(A0, 4), FIX(A1, 4)}),
	SYS(310, "process_vm_readv", .w = {IOV(A1, A2)}),
	/* Writes another process's memory (this one's only where it names
	 * itself, which is not recorded). */
	NONE(311, "process_vm_writev"),
	NONE(312, "kcmp"),
	NONE(313, "finit_module"),
	NONE(314, "sched_setattr"),
	SYS(315, "sched_getattr", .w = {ARGN(A1, A2, 1)}),
	NONE(316, "renameat2"),
	SYS(317, "seccomp", SPECIAL(w_seccomp, NULL, 0)),
	SYS(318, "getrandom", .w = {RESMAX(A0, A1)}),
	NONE(319, "memfd_create"),
	NONE(320, "kexec_file_load"),
	SYS(321, "bpf", SPECIAL(w_bpf, "command", A0)),
	SYS(322, "execveat", .maps = true, UNSUP(WHY_EXEC)),
	SYS(323, "userfaultfd", UNSUP(WHY_UFFD)),
	NONE(324, "membarrier"),
	NONE(325, "mlock2"),
	SYS(326, "copy_file_range", .w = {FIX(A1, 8), FIX(A3, 8)}),
	SYS(327, "preadv2", .w = {IOV(A1, A2)}),
	NONE(328, "pwritev2"),
	SYS(329, "pkey_mprotect", RUNOK, .maps = true),
	NONE(330, "pkey_alloc"),
	NONE(331, "pkey_free"),
	SYS(332, "statx", .w = {FIX(A4, STATX_SIZE)}),
	SYS(333, "io_pgetevents", .w = {RESN(A3, A2, IO_EVENT), FIX(A4, TIMESPEC)}),
	SYS(334, "rseq", RUNOK),
	/* 335 .. 423: not used on x86-64 (the common numbers start at 424). */
	NONE(424, "pidfd_send_signal"),
	SYS(425, "io_uring_setup", UNSUP(WHY_URING)),
	SYS(426, "io_uring_enter", UNSUP(WHY_URING)),
	SYS(427, "io_uring_register", UNSUP(WHY_URING)),
	NONE(428, "open_tree"),
	NONE(429, "move_mount"),
	NONE(430, "fsopen"),
	NONE(431, "fsconfig"),
	NONE(432, "fsmount"),
	NONE(433, "fspick"),
	NONE(434, "pidfd_open"),
	SYS(435, "clone3", .replay = SYSCALL_CLONE, .why = WHY_CLONE, SPECIAL(w_clone3, NULL, 0)),
	NONE(436, "close_range"),
	NONE(437, "openat2"),
	NONE(438, "pidfd_getfd"),
	NONE(439, "faccessat2"),
	NONE(440, "process_madvise"),
	SYS(441, "epoll_pwait2", .w = {RESN(A1, A2, EPOLL_EVENT)}),
	NONE(442, "mount_setattr"),
	SYS(443, "quotactl_fd", SPECIAL(w_quotactl_fd, "command", A1)),
	NONE(444, "landlock_create_ruleset"),
	NONE(445, "landlock_add_rule"),
	NONE(446, "landlock_restrict_self"),
	NONE(447, "memfd_secret"),
	NONE(448, "process_mrelease"),
	NONE(449, "futex_waitv"),
	NONE(450, "set_mempolicy_home_node"),
	SYS(451, "cachestat", .w = {FIX(A2, CACHESTAT)}),
	NONE(452, "fchmodat2"),
	SYS(453, "map_shadow_stack", RUNOK, .maps = true),
	NONE(454, "futex_wake"),
	NONE(455, "futex_wait"),
	NONE(456, "futex_requeue"),
	SYS(457, "statmount", .w = {ARGN(A1, A2, 1)}),
	SYS(458, "listmount", .w = {RESN(A1, A2, 8)}),
	SYS(459, "lsm_get_self_attr", .w = {PTRLEN(A1, A2), FIX(A2, 4)}),
	NONE(460, "lsm_set_self_attr"),
	SYS(461, "lsm_list_modules", .w = {PTRLEN(A0, A1), FIX(A1, 4)}),
	NONE(462, "mseal"),
	NONE(463, "setxattrat"),
	SYS(464, "getxattrat", SPECIAL(w_getxattrat, NULL, 0)),
	SYS(465, "listxattrat", .w = {RESMAX(A3, A4)}),
	NONE(466, "removexattrat"),
	NONE(467, "open_tree_attr"),
	SYS(468, "file_getattr", .w = {ARGN(A2, A3, 1)}),
	NONE(469, "file_setattr"),
};

/* ---- the interface ---- */

const struct syscall_desc *syscall_desc(uint64_t nr)
{
	if (nr >= SYSCALL_TABLE_LEN || !table[nr].name)
		return NULL;
	return &table[nr];
}

const char *syscall_name(uint64_t nr)
{
	const struct syscall_desc *d = syscall_desc(nr);
	return d ? d->name : NULL;
}

void syscall_label(uint64_t nr, const uint64_t *args, char *buf, size_t len)
{
	const struct syscall_desc *d = syscall_desc(nr);
	if (!d)
		snprintf(buf, len, "syscall %llu", (unsigned long long)nr);
	else if (args && d->sub)
		snprintf(buf, len, "%s (%llu, %s %#llx)", d->name, (unsigned long long)nr, d->sub,
			 (unsigned long long)args[d->sub_arg]);
	else
		snprintf(buf, len, "%s (%llu)", d->name, (unsigned long long)nr);
}

static void describe(struct sc_call *c, const struct sc_write *w)
{
	const uint64_t *a = c->args;
	int64_t res = c->result;
	if ((w->when == SC_OK && res < 0) || (w->when == SC_POS && res <= 0))
		return;
	uint64_t addr = a[w->arg];
	switch (w->len) {
	case SC_FIXED:
		add(c, addr, w->size);
		break;
	case SC_RESULT:
		add(c, addr, w->arg2 == SC_NOARG ? res : min64(res, (int64_t)a[w->arg2]));
		break;
	case SC_RESULT_N:
		res = min64(res, (int64_t)a[w->arg2]);
		if (res > 0 && res <= (int64_t)(UINT32_MAX / w->size))
			add(c, addr, res * w->size);
		break;
	case SC_ARG_N:
		if (a[w->arg2] <= UINT32_MAX / w->size)
			add(c, addr, (int64_t)(a[w->arg2] * w->size));
		break;
	case SC_PTR_U32:
		add(c, addr, read_u32(c, a[w->arg2]));
		break;
	case SC_IOV:
		add_iov(c, addr, a[w->arg2], res);
		break;
	case SC_BITS:
		if (a[w->arg2] <= UINT32_MAX)
			add(c, addr, (int64_t)((a[w->arg2] + 63) / 64 * 8));
		break;
	case SC_PAGES:
		if (a[w->arg2] <= UINT64_MAX - 4095)
			add(c, addr, (int64_t)((a[w->arg2] + 4095) / 4096));
		break;
	default:
		break;
	}
}

int syscall_writes(uint64_t nr, const uint64_t args[6], int64_t result, sc_read_fn read_mem,
		   void *ctx, struct sc_range *out, int max)
{
	const struct syscall_desc *d = syscall_desc(nr);
	struct sc_call c = {nr, args, result, read_mem, ctx, out, 0, max};
	if (!d)
		return -1;
	if (d->special && d->special(&c) < 0)
		return -1;
	for (size_t i = 0; i < sizeof d->w / sizeof d->w[0] && d->w[i].len != SC_NONE; i++)
		describe(&c, &d->w[i]);
	return c.n;
}

int syscall_may_write(uint64_t nr, const uint64_t args[6], sc_read_fn read_mem, void *ctx,
		      struct sc_range *out, int max)
{
	return syscall_writes(nr, args, SYSCALL_MAX_RESULT, read_mem, ctx, out, max);
}

bool syscall_may_be_unknown(uint64_t nr)
{
	const struct syscall_desc *d = syscall_desc(nr);
	return !d || (d->special && !d->never_unknown);
}

bool syscall_changes_maps(uint64_t nr)
{
	const struct syscall_desc *d = syscall_desc(nr);
	return d && d->maps;
}

bool syscall_keeps_cpu(uint64_t nr)
{
	const struct syscall_desc *d = syscall_desc(nr);
	return d && d->maps &&
	       (d->replay == SYSCALL_RUN || d->replay == SYSCALL_RUN_OK || d->replay == SYSCALL_SHM);
}

enum syscall_replay syscall_replay_kind(uint64_t nr)
{
	const struct syscall_desc *d = syscall_desc(nr);
	return d ? (enum syscall_replay)d->replay : SYSCALL_EMULATE;
}

const char *syscall_unsupported_why(uint64_t nr)
{
	const struct syscall_desc *d = syscall_desc(nr);
	if (!d || (d->replay != SYSCALL_UNSUPPORTED && d->replay != SYSCALL_CLONE))
		return NULL;
	return d->why;
}
