/* Syscall coverage (tests/reverse/syscall_cover.py): every syscall family
 * of ptrev's table that a user can call without privileges, made with
 * the raw syscall so that the number is the one named. What the kernel
 * wrote lands in the global R (directly or copied from the stack); after
 * each family the program prints FNV-1a of R's bytes ("done K HASH") and
 * calls done(K); at the end it prints R in hex ("R HEX"). A replay must
 * show the same bytes at every done(K) and at the end.
 *
 * usage: sys_cover DIR   (a directory of its own to make files in) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define N_FAMILIES 13

struct results {
	long rc[N_FAMILIES + 1][24];   /* every call's result, by family */
	/* 1: file systems */
	unsigned char statfs[120], fstatfs[120];
	/* 2: stat */
	unsigned char st[4][144], stx[256];
	/* 3: directories */
	unsigned char dents[2048];
	/* 4: links, cwd */
	char link[256], linkat[256], cwd[256];
	/* 5: ioctl */
	unsigned char termios[2][36], winsz[2][8];
	int nread, ptn, pgrp;
	/* 6: sockets */
	char msg[32], cmsg[64], peer[2][16], mmsg_data[2][8];
	int sockopt[4], optlen[4], passed_fd_ok, sv[2];
	unsigned char mmsghdr_len[2][4];
	/* 7: prctl, arch_prctl */
	char comm[16];
	int pdeath;
	unsigned long fsbase;
	/* 8: scheduling */
	unsigned char affinity[128];
	unsigned cpu, node;
	int sched_param;
	long long rr[2];
	/* 9: time, limits, system */
	unsigned char random[32], sysinfo[112], uts[390];
	long long rlim[2][2], ts[2][2], tv[2], itv[2][4], tms[4], now;
	unsigned char rusage[144];
	/* 10: xattrs, capabilities */
	char xattr[64], xlist[3][64];
	unsigned cap_header[2], cap_data[6];
	/* 11: fds: pipes, poll, epoll, eventfd, timerfd, signalfd, inotify, memfd */
	int pipe[2];
	short revents[2];
	unsigned long fdset[2];
	unsigned char epev[2][12], sfd_info[128], inotify[64], flock[32], owner[8];
	unsigned long long evcount, tfd[4], tfd_old[4];
	char memfd_data[16], memfd_iov[2][8];
	/* 12: ids, memory, IPC */
	unsigned ids[6], groups[64];
	unsigned long robust[2];
	unsigned char mincore[4], sigpend[8], oldact[32], oldmask[8], altstack[24];
	unsigned char msqid[120], semid[104], shmid[112], msgbuf[24];
	unsigned char handle[8 + 128];
	int mnt_id, mempolicy;
	unsigned long nodemask;
} R;

static char dir[200];

__attribute__((noinline)) void done(int k)
{
	__asm__ volatile("" ::"r"(k) : "memory");
}

static unsigned long long fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	unsigned long long h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* The families run in the order in which gdb's record full supports
 * their syscalls (it knows no statx), so that it is the oracle as far as
 * it can be. */
static int families;

static void family_done(void)
{
	int k = ++families;
	printf("done %d %016llx\n", k, fnv(&R, sizeof R));
	done(k);
}

static char *path(const char *name)
{
	static char p[300];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return p;
}

static void fs(void)
{
	long *rc = R.rc[1];
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	rc[0] = syscall(SYS_statfs, dir, R.statfs);
	rc[1] = syscall(SYS_fstatfs, fd, R.fstatfs);
	rc[2] = syscall(SYS_statfs, "/nonexistent", R.statfs + 60); /* ENOENT */
	close(fd);
	family_done();
}

static void stats(void)
{
	long *rc = R.rc[2];
	int fd = open(path("file"), O_RDWR);
	rc[0] = fd >= 0;
	rc[1] = syscall(SYS_stat, path("file"), R.st[0]);
	rc[2] = syscall(SYS_lstat, path("link"), R.st[1]);
	rc[3] = syscall(SYS_fstat, fd, R.st[2]);
	rc[4] = syscall(SYS_newfstatat, AT_FDCWD, path("file"), R.st[3], 0);
	rc[5] = syscall(SYS_statx, AT_FDCWD, path("file"), 0, 0x7ff, R.stx);
	close(fd);
	family_done();
}

static void dirs(void)
{
	long *rc = R.rc[3];
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	rc[0] = syscall(SYS_getdents64, fd, R.dents, sizeof R.dents);
	rc[1] = syscall(SYS_getdents64, fd, R.dents + 1024, 1024); /* 0: the end */
	close(fd);
	family_done();
}

static void links(void)
{
	long *rc = R.rc[4];
	rc[0] = syscall(SYS_readlink, path("link"), R.link, sizeof R.link);
	rc[1] = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", R.linkat, sizeof R.linkat);
	rc[2] = syscall(SYS_getcwd, R.cwd, sizeof R.cwd);
	family_done();
}

static void ioctls(void)
{
	long *rc = R.rc[5];
	int fd = open(path("file"), O_RDONLY);
	rc[0] = syscall(SYS_ioctl, fd, 0x5401 /* TCGETS */, R.termios[0]); /* ENOTTY */
	close(fd);
	int p[2];
	rc[1] = pipe(p);
	rc[2] = write(p[1], "abcdefg", 7);
	rc[3] = syscall(SYS_ioctl, p[0], 0x541b /* FIONREAD */, &R.nread);
	rc[4] = syscall(SYS_ioctl, p[0], 0x5451 /* FIOCLEX */, 0);
	close(p[0]);
	close(p[1]);
	int m = open("/dev/ptmx", O_RDWR | O_NOCTTY);
	rc[5] = m;
	if (m >= 0) {
		int unlock = 0;
		rc[6] = syscall(SYS_ioctl, m, 0x80045430 /* TIOCGPTN */, &R.ptn);
		rc[7] = syscall(SYS_ioctl, m, 0x40045431 /* TIOCSPTLCK */, &unlock);
		char name[64];
		snprintf(name, sizeof name, "/dev/pts/%d", R.ptn);
		int s = open(name, O_RDWR | O_NOCTTY);
		rc[8] = s >= 0;
		if (s >= 0) {
			unsigned short ws[4] = {24, 80, 0, 0};
			rc[9] = syscall(SYS_ioctl, s, 0x5414 /* TIOCSWINSZ */, ws);
			rc[10] = syscall(SYS_ioctl, s, 0x5401 /* TCGETS */, R.termios[1]);
			rc[11] = syscall(SYS_ioctl, s, 0x5413 /* TIOCGWINSZ */, R.winsz[1]);
			rc[12] = syscall(SYS_ioctl, s, 0x540f /* TIOCGPGRP */, &R.pgrp); /* ENOTTY */
			close(s);
		}
		close(m);
	}
	rc[13] = syscall(SYS_ioctl, 1, 0x5413 /* TIOCGWINSZ */, R.winsz[0]);
	family_done();
}

static void sockets(void)
{
	long *rc = R.rc[6];
	rc[0] = syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, R.sv);
	/* sendmsg with SCM_RIGHTS, recvmsg */
	int passed = open(path("file"), O_RDONLY);
	char data[] = "with a descriptor";
	struct iovec iov = {data, sizeof data};
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr mh = {0};
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.b;
	mh.msg_controllen = sizeof u.b;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &passed, sizeof passed);
	rc[1] = syscall(SYS_sendmsg, R.sv[0], &mh, 0);
	close(passed);
	struct iovec riov = {R.msg, sizeof R.msg};
	struct msghdr rh = {0};
	rh.msg_iov = &riov;
	rh.msg_iovlen = 1;
	rh.msg_control = R.cmsg;
	rh.msg_controllen = sizeof R.cmsg;
	rc[2] = syscall(SYS_recvmsg, R.sv[1], &rh, 0);
	rc[3] = (long)rh.msg_controllen;
	int got = -1;
	c = CMSG_FIRSTHDR(&rh);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&got, CMSG_DATA(c), sizeof got);
	char b[4];
	R.passed_fd_ok = got >= 0 && pread(got, b, 4, 0) == 4 && !memcmp(b, "hell", 4);
	if (got >= 0)
		close(got);
	/* getsockopt, getsockname, recvfrom */
	socklen_t l = sizeof(int);
	rc[4] = syscall(SYS_getsockopt, R.sv[0], SOL_SOCKET, SO_TYPE, &R.sockopt[0], &l);
	R.optlen[0] = (int)l;
	l = sizeof(int);
	rc[5] = syscall(SYS_getsockopt, R.sv[0], SOL_SOCKET, SO_RCVBUF, &R.sockopt[1], &l);
	R.optlen[1] = (int)l;
	l = sizeof R.peer[0];
	rc[6] = syscall(SYS_getsockname, R.sv[0], R.peer[0], &l);
	R.optlen[2] = (int)l;
	rc[7] = write(R.sv[0], "xyz", 3);
	l = sizeof R.peer[1];
	rc[8] = syscall(SYS_recvfrom, R.sv[1], R.mmsg_data[0], 3, 0, R.peer[1], &l);
	close(R.sv[0]);
	close(R.sv[1]);
	family_done();
}

/* Apart from the other sockets: record full knows neither. */
static void mmsgs(void)
{
	long *rc = R.rc[13];
	/* sendmmsg, recvmmsg on a datagram pair */
	int dg[2];
	rc[0] = socketpair(AF_UNIX, SOCK_DGRAM, 0, dg);
	struct iovec siov[2] = {{"one", 3}, {"three", 5}};
	struct mmsghdr smm[2];
	memset(smm, 0, sizeof smm);
	for (int i = 0; i < 2; i++) {
		smm[i].msg_hdr.msg_iov = &siov[i];
		smm[i].msg_hdr.msg_iovlen = 1;
	}
	rc[1] = syscall(SYS_sendmmsg, dg[0], smm, 2, 0);
	struct iovec rmiov[2] = {{R.mmsg_data[0] + 3, 5}, {R.mmsg_data[1], 8}};
	struct mmsghdr rmm[2];
	memset(rmm, 0, sizeof rmm);
	for (int i = 0; i < 2; i++) {
		rmm[i].msg_hdr.msg_iov = &rmiov[i];
		rmm[i].msg_hdr.msg_iovlen = 1;
	}
	rc[2] = syscall(SYS_recvmmsg, dg[1], rmm, 2, MSG_DONTWAIT, NULL);
	memcpy(R.mmsghdr_len[0], &rmm[0].msg_len, 4);
	memcpy(R.mmsghdr_len[1], &rmm[1].msg_len, 4);
	close(dg[0]);
	close(dg[1]);
	family_done();
}

static void prctls(void)
{
	long *rc = R.rc[7];
	rc[0] = syscall(SYS_prctl, PR_GET_NAME, R.comm, 0, 0, 0);
	rc[1] = syscall(SYS_prctl, PR_GET_PDEATHSIG, &R.pdeath, 0, 0, 0);
	rc[2] = syscall(SYS_prctl, PR_GET_DUMPABLE, 0, 0, 0, 0);
	rc[3] = syscall(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, &R.fsbase);
	family_done();
}

static void sched(void)
{
	long *rc = R.rc[8];
	rc[0] = syscall(SYS_sched_getaffinity, 0, sizeof R.affinity, R.affinity);
	rc[1] = syscall(SYS_getcpu, &R.cpu, &R.node, NULL);
	rc[2] = syscall(SYS_sched_getparam, 0, &R.sched_param);
	rc[3] = syscall(SYS_sched_getscheduler, 0);
	rc[4] = syscall(SYS_sched_rr_get_interval, 0, R.rr);
	family_done();
}

static void times_limits(void)
{
	long *rc = R.rc[9];
	rc[0] = syscall(SYS_getrandom, R.random, sizeof R.random, 0);
	rc[1] = syscall(SYS_sysinfo, R.sysinfo);
	rc[2] = syscall(SYS_uname, R.uts);
	rc[3] = syscall(SYS_getrlimit, RLIMIT_NOFILE, R.rlim[0]);
	rc[4] = syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, R.rlim[1]);
	rc[5] = syscall(SYS_getrusage, 0, R.rusage);
	rc[6] = syscall(SYS_times, R.tms);
	rc[7] = syscall(SYS_clock_gettime, CLOCK_MONOTONIC, R.ts[0]);
	rc[8] = syscall(SYS_clock_getres, CLOCK_REALTIME, R.ts[1]);
	rc[9] = syscall(SYS_gettimeofday, R.tv, NULL);
	rc[10] = syscall(SYS_time, &R.now);
	long long itv[4] = {0, 0, 100, 0};
	rc[11] = syscall(SYS_setitimer, 0 /* ITIMER_REAL */, itv, R.itv[0]);
	rc[12] = syscall(SYS_getitimer, 0, R.itv[1]);
	memset(itv, 0, sizeof itv);
	rc[13] = syscall(SYS_setitimer, 0, itv, NULL);
	family_done();
}

static void xattrs(void)
{
	long *rc = R.rc[10];
	int fd = open(path("file"), O_RDONLY);
	rc[0] = syscall(SYS_getxattr, path("file"), "user.nothing", R.xattr, sizeof R.xattr);
	rc[1] = syscall(SYS_lgetxattr, path("link"), "user.nothing", R.xattr, sizeof R.xattr);
	rc[2] = syscall(SYS_fgetxattr, fd, "user.nothing", R.xattr, sizeof R.xattr);
	rc[3] = syscall(SYS_listxattr, path("file"), R.xlist[0], sizeof R.xlist[0]);
	rc[4] = syscall(SYS_llistxattr, path("link"), R.xlist[1], sizeof R.xlist[1]);
	rc[5] = syscall(SYS_flistxattr, fd, R.xlist[2], sizeof R.xlist[2]);
	close(fd);
	R.cap_header[0] = 0x20080522; /* _LINUX_CAPABILITY_VERSION_3 */
	rc[6] = syscall(SYS_capget, R.cap_header, R.cap_data);
	family_done();
}

static void fds(void)
{
	long *rc = R.rc[11];
	rc[0] = syscall(SYS_pipe2, R.pipe, O_CLOEXEC);
	rc[1] = write(R.pipe[1], "p", 1);
	struct pollfd pf[2] = {{R.pipe[0], POLLIN, 0}, {R.pipe[1], POLLOUT, 0}};
	rc[2] = syscall(SYS_poll, pf, 2, 0);
	R.revents[0] = pf[0].revents;
	R.revents[1] = pf[1].revents;
	R.fdset[0] = 1ul << R.pipe[0];
	struct timeval tv = {0, 1000};
	rc[3] = syscall(SYS_select, R.pipe[0] + 1, &R.fdset[0], NULL, NULL, &tv);
	struct timespec ts = {0, 1000};
	R.fdset[1] = 1ul << R.pipe[0];
	rc[4] = syscall(SYS_pselect6, R.pipe[0] + 1, &R.fdset[1], NULL, NULL, &ts, NULL);
	rc[5] = syscall(SYS_ppoll, pf, 2, &ts, NULL, 8);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {EPOLLIN, {.u64 = 0x1122334455667788ull}};
	rc[6] = syscall(SYS_epoll_ctl, ep, EPOLL_CTL_ADD, R.pipe[0], &ev);
	rc[7] = syscall(SYS_epoll_wait, ep, R.epev[0], 1, 0);
	rc[8] = syscall(SYS_epoll_pwait, ep, R.epev[1], 1, 0, NULL, 8);
	close(ep);
	int efd = eventfd(3, EFD_CLOEXEC);
	rc[9] = read(efd, &R.evcount, 8);
	close(efd);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	long long its[4] = {0, 0, 100, 0};
	rc[10] = syscall(SYS_timerfd_settime, tfd, 0, its, R.tfd_old);
	rc[11] = syscall(SYS_timerfd_gettime, tfd, R.tfd);
	close(tfd);
	sigset_t ss;
	sigemptyset(&ss);
	sigaddset(&ss, SIGUSR1);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	int sfd = signalfd(-1, &ss, SFD_CLOEXEC);
	raise(SIGUSR1);
	rc[12] = read(sfd, R.sfd_info, sizeof R.sfd_info);
	close(sfd);
	sigprocmask(SIG_UNBLOCK, &ss, NULL);
	int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	rc[13] = syscall(SYS_inotify_add_watch, in, dir, IN_CREATE);
	close(open(path("created"), O_CREAT | O_WRONLY, 0644));
	rc[14] = read(in, R.inotify, sizeof R.inotify);
	close(in);
	int mfd = (int)syscall(SYS_memfd_create, "sys_cover", 1 /* MFD_CLOEXEC */);
	rc[15] = write(mfd, "memfd contents!", 16);
	rc[16] = syscall(SYS_pread64, mfd, R.memfd_data, 16, 0);
	struct iovec iov[2] = {{R.memfd_iov[0], 8}, {R.memfd_iov[1], 8}};
	rc[17] = syscall(SYS_preadv, mfd, iov, 2, 2, 0);
	close(mfd);
	int f = open(path("file"), O_RDWR);
	struct flock fl = {F_WRLCK, SEEK_SET, 0, 0, 0};
	rc[18] = syscall(SYS_fcntl, f, F_GETLK, &fl);
	memcpy(R.flock, &fl, sizeof R.flock);
	rc[19] = syscall(SYS_fcntl, f, 16 /* F_GETOWN_EX */, R.owner);
	rc[20] = syscall(SYS_fcntl, f, F_GETFL);
	close(f);
	close(R.pipe[0]);
	close(R.pipe[1]);
	family_done();
}

static void ids_ipc(void)
{
	long *rc = R.rc[12];
	rc[0] = syscall(SYS_getresuid, &R.ids[0], &R.ids[1], &R.ids[2]);
	rc[1] = syscall(SYS_getresgid, &R.ids[3], &R.ids[4], &R.ids[5]);
	rc[2] = syscall(SYS_getgroups, 64, R.groups);
	size_t len;
	rc[3] = syscall(SYS_get_robust_list, 0, &R.robust[0], &len);
	R.robust[1] = len;
	rc[4] = syscall(SYS_mincore, (uintptr_t)&R & ~4095ul, 4 * 4096, R.mincore);
	rc[5] = syscall(SYS_rt_sigpending, R.sigpend, 8);
	rc[6] = syscall(SYS_rt_sigaction, SIGUSR2, NULL, R.oldact, 8);
	rc[7] = syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, R.oldmask, 8);
	rc[8] = syscall(SYS_sigaltstack, NULL, R.altstack);
	rc[9] = syscall(SYS_get_mempolicy, &R.mempolicy, &R.nodemask, 64, NULL, 0);
	unsigned *h = (unsigned *)R.handle;
	h[0] = 128;
	rc[10] = syscall(SYS_name_to_handle_at, AT_FDCWD, path("file"), R.handle, &R.mnt_id, 0);
	int q = msgget(IPC_PRIVATE, 0600);
	if (q >= 0) {
		struct {
			long type;
			char text[16];
		} m = {7, "a message"};
		rc[11] = syscall(SYS_msgsnd, q, &m, 10, 0);
		rc[12] = syscall(SYS_msgrcv, q, R.msgbuf, 16, 0, IPC_NOWAIT);
		rc[13] = syscall(SYS_msgctl, q, IPC_STAT, R.msqid);
		msgctl(q, IPC_RMID, NULL);
	}
	int s = semget(IPC_PRIVATE, 1, 0600);
	if (s >= 0) {
		rc[14] = syscall(SYS_semctl, s, 0, IPC_STAT, R.semid);
		semctl(s, 0, IPC_RMID);
	}
	int shm = shmget(IPC_PRIVATE, 4096, 0600);
	if (shm >= 0) {
		rc[15] = syscall(SYS_shmctl, shm, IPC_STAT, R.shmid);
		shmctl(shm, IPC_RMID, NULL);
	}
	family_done();
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	snprintf(dir, sizeof dir, "%s", argv[1]);
	unlink(path("link"));
	unlink(path("created"));
	int fd = open(path("file"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "hello, world\n", 13) != 13 || symlink("file", path("link")) < 0)
		return 3;
	close(fd);
	fs();
	dirs();
	links();
	ioctls();
	sockets();
	prctls();
	sched();
	times_limits();
	xattrs();
	fds();
	ids_ipc();
	mmsgs();
	stats();
	printf("R ");
	for (size_t i = 0; i < sizeof R; i++)
		printf("%02x", ((unsigned char *)&R)[i]);
	printf("\n");
	return 0;
}
