/* vFile: gdb's host I/O packets, so gdb reads the program, its libraries
 * and their debug files through the connection (and can put/delete files).
 *
 * Behaviour follows gdbserver 13 (hostio.cc): replies are "F<result>" with
 * numbers in hex, "F-1,<errno>" with gdb's own errno numbering, and binary
 * data after a ';'. A malformed request, or a file descriptor gdb was not
 * given, is answered EINVAL as gdbserver does. The descriptors gdb sees are
 * our host descriptors; the table only records which ones are gdb's. */
#include "ptrev/vfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrev/hex.h"
#include "ptrev/rsp.h"

/* gdb's File-I/O protocol constants (GDB manual, "Open Flags",
 * "mode_t Values", "Errno Values"). */
#define FIO_O_WRONLY 0x1
#define FIO_O_RDWR 0x2
#define FIO_O_APPEND 0x8
#define FIO_O_CREAT 0x200
#define FIO_O_TRUNC 0x400
#define FIO_O_EXCL 0x800
#define FIO_O_ALL (FIO_O_WRONLY | FIO_O_RDWR | FIO_O_APPEND | FIO_O_CREAT | \
		   FIO_O_TRUNC | FIO_O_EXCL)

#define FIO_S_IFREG 0100000
#define FIO_S_IFDIR 040000
#define FIO_S_IFCHR 020000
/* Mode bits gdb may send to open: file types REG/DIR and rwx for all. */
#define FIO_S_OPEN_ALL (FIO_S_IFREG | FIO_S_IFDIR | 0777)

#define FIO_EINVAL 22
#define FIO_ENAMETOOLONG 91
#define FIO_EUNKNOWN 9999

/* Longest file name gdb can send hex-encoded in one packet, capped like
 * gdbserver's HOSTIO_PATH_MAX. */
#define VFILE_PATH_MAX (RSP_MAX_PACKET / 2 + 1 < PATH_MAX ? RSP_MAX_PACKET / 2 + 1 : PATH_MAX)

static int fileio_errno(int err)
{
	switch (err) {
	case EPERM: return 1;
	case ENOENT: return 2;
	case EINTR: return 4;
	case EIO: return 5;
	case EBADF: return 9;
	case EACCES: return 13;
	case EFAULT: return 14;
	case EBUSY: return 16;
	case EEXIST: return 17;
	case ENODEV: return 19;
	case ENOTDIR: return 20;
	case EISDIR: return 21;
	case EINVAL: return 22;
	case ENFILE: return 23;
	case EMFILE: return 24;
	case EFBIG: return 27;
	case ENOSPC: return 28;
	case ESPIPE: return 29;
	case EROFS: return 30;
	case ENOSYS: return 88;
	case ENAMETOOLONG: return 91;
	default: return FIO_EUNKNOWN;
	}
}

static void reply_errno(struct strbuf *reply, int host_err)
{
	strbuf_printf(reply, "F-1,%x", fileio_errno(host_err));
}

static void reply_bad_packet(struct strbuf *reply)
{
	strbuf_printf(reply, "F-1,%x", FIO_EINVAL);
}

/* Appends "F<n>;" and as many of the n bytes, escaped, as fit in one packet
 * together with what reply already held at reply_start. Returns how many
 * bytes went in; the count in the header is fixed up to match. */
static size_t reply_with_data(struct strbuf *reply, size_t reply_start,
			      const uint8_t *data, size_t n)
{
	size_t fit = 0;
	for (;;) {
		reply->len = reply_start;
		strbuf_printf(reply, "F%zx;", n);
		size_t room = RSP_MAX_PACKET > reply->len - reply_start
			? RSP_MAX_PACKET - (reply->len - reply_start) : 0;
		size_t used = 0;
		for (fit = 0; fit < n; fit++) {
			uint8_t b = data[fit];
			size_t w = (b == '#' || b == '$' || b == '}' || b == '*') ? 2 : 1;
			if (used + w > room)
				break;
			used += w;
		}
		if (fit == n)
			break;
		n = fit; /* shorter count: the header may shrink, retry */
	}
	rsp_escape_binary(reply, data, n);
	return n;
}

/* --- request parsing: each helper works on [*p, end) --- */

struct cursor {
	const char *p, *end;
};

/* A non-negative int in hex, as gdbserver's require_int (at most 8 digits,
 * below 2^31), ending at ',' or the end. An empty field reads as 0. */
static bool take_int(struct cursor *c, int *out)
{
	uint64_t v = 0;
	int digits = 0;
	while (c->p < c->end && *c->p != ',') {
		int d = hex_digit((unsigned char)*c->p);
		if (d < 0 || digits == 8)
			return false;
		v = v << 4 | (uint64_t)d;
		digits++;
		c->p++;
	}
	if (v > INT_MAX)
		return false;
	*out = (int)v;
	return true;
}

/* A file offset in hex, up to ',' or the end: at most 16 digits, below
 * 2^63 (gdbserver stops at 2^31; large debug files need more). */
static bool take_offset(struct cursor *c, off_t *out)
{
	uint64_t v = 0;
	int digits = 0;
	while (c->p < c->end && *c->p != ',') {
		int d = hex_digit((unsigned char)*c->p);
		if (d < 0 || digits == 16)
			return false;
		v = v << 4 | (uint64_t)d;
		digits++;
		c->p++;
	}
	if (v > INT64_MAX)
		return false;
	*out = (off_t)v;
	return true;
}

static bool take_comma(struct cursor *c)
{
	if (c->p < c->end && *c->p == ',') {
		c->p++;
		return true;
	}
	return false;
}

static bool at_end(const struct cursor *c)
{
	return c->p == c->end;
}

/* A hex-encoded file name up to ',' or the end, NUL-terminated into buf. */
static bool take_filename(struct cursor *c, char *buf, size_t cap)
{
	size_t n = 0;
	while (c->p < c->end && *c->p != ',') {
		if (c->end - c->p < 2 || n + 1 >= cap)
			return false;
		uint8_t byte;
		if (!hex_decode(c->p, 1, &byte) || byte == 0)
			return false;
		buf[n++] = (char)byte;
		c->p += 2;
	}
	buf[n] = '\0';
	return true;
}

/* --- file name resolution for vFile:setfs --- */

/* Where to find path in the filesystem gdb selected. gdbserver enters the
 * inferior's mount namespace when it differs from ours; reaching the same
 * files through /proc/PID/root avoids needing setns privileges. Returns
 * false with errno set if the process is gone. */
static bool resolve_path(const struct vfile_state *vs, const char *path,
			 char *buf, size_t cap)
{
	if (vs->fs_pid == 0) {
		snprintf(buf, cap, "%s", path);
		return true;
	}
	char link[64], theirs[64] = "", ours[64] = "";
	snprintf(link, sizeof link, "/proc/%d/ns/mnt", (int)vs->fs_pid);
	ssize_t n = readlink(link, theirs, sizeof theirs - 1);
	if (n < 0)
		return false;
	theirs[n] = '\0';
	n = readlink("/proc/self/ns/mnt", ours, sizeof ours - 1);
	if (n >= 0)
		ours[n] = '\0';
	char root[64] = "";
	snprintf(link, sizeof link, "/proc/%d/root", (int)vs->fs_pid);
	n = readlink(link, root, sizeof root - 1);
	if (n >= 0)
		root[n] = '\0';
	if (strcmp(theirs, ours) == 0 && strcmp(root, "/") == 0) {
		snprintf(buf, cap, "%s", path);
		return true;
	}
	int w = snprintf(buf, cap, "/proc/%d/root%s%s", (int)vs->fs_pid,
			 path[0] == '/' ? "" : "/", path);
	if (w < 0 || (size_t)w >= cap) {
		errno = ENAMETOOLONG;
		return false;
	}
	return true;
}

/* --- the fd table --- */

/* The table slot holding fd (-1 finds a free slot), or -1. */
static int slot_of(const struct vfile_state *vs, int fd)
{
	for (int i = 0; i < VFILE_MAX_FDS; i++)
		if (vs->fds[i] == fd)
			return i;
	return -1;
}

void vfile_init(struct vfile_state *vs)
{
	for (int i = 0; i < VFILE_MAX_FDS; i++)
		vs->fds[i] = -1;
	vs->fs_pid = 0;
}

void vfile_close_all(struct vfile_state *vs)
{
	for (int i = 0; i < VFILE_MAX_FDS; i++) {
		if (vs->fds[i] >= 0)
			close(vs->fds[i]);
		vs->fds[i] = -1;
	}
	vs->fs_pid = 0; /* a new connection starts in our own filesystem */
}

/* --- the operations --- */

static void do_setfs(struct vfile_state *vs, struct cursor *c, struct strbuf *reply)
{
	int pid;
	if (!take_int(c, &pid) || !at_end(c)) {
		reply_bad_packet(reply);
		return;
	}
	vs->fs_pid = pid;
	strbuf_puts(reply, "F0");
}

static bool open_flags(int fio, int *host)
{
	if (fio & ~FIO_O_ALL)
		return false;
	int f = O_RDONLY;
	if (fio & FIO_O_WRONLY)
		f |= O_WRONLY;
	if (fio & FIO_O_RDWR)
		f |= O_RDWR;
	if (fio & FIO_O_APPEND)
		f |= O_APPEND;
	if (fio & FIO_O_CREAT)
		f |= O_CREAT;
	if (fio & FIO_O_TRUNC)
		f |= O_TRUNC;
	if (fio & FIO_O_EXCL)
		f |= O_EXCL;
	/* Keep gdb's files out of the inferior we fork and exec. */
	*host = f | O_CLOEXEC;
	return true;
}

static bool open_mode(int fio, mode_t *host)
{
	if (fio & ~FIO_S_OPEN_ALL)
		return false;
	mode_t m = 0;
	if (fio & FIO_S_IFREG)
		m |= S_IFREG;
	if (fio & FIO_S_IFDIR)
		m |= S_IFDIR;
	/* The permission bits have the same values in the protocol and
	 * on Linux. */
	m |= (mode_t)(fio & 0777);
	*host = m;
	return true;
}

static void do_open(struct vfile_state *vs, struct cursor *c, struct strbuf *reply)
{
	char name[VFILE_PATH_MAX], path[VFILE_PATH_MAX + 64];
	int fio_flags, fio_mode, flags;
	mode_t mode;
	if (!take_filename(c, name, sizeof name) || !take_comma(c) ||
	    !take_int(c, &fio_flags) || !take_comma(c) ||
	    !take_int(c, &fio_mode) || !at_end(c) ||
	    !open_flags(fio_flags, &flags) || !open_mode(fio_mode, &mode)) {
		reply_bad_packet(reply);
		return;
	}
	int slot = slot_of(vs, -1);
	if (slot < 0) {
		reply_errno(reply, EMFILE);
		return;
	}
	if (!resolve_path(vs, name, path, sizeof path)) {
		reply_errno(reply, errno);
		return;
	}
	int fd = open(path, flags, mode);
	if (fd < 0) {
		reply_errno(reply, errno);
		return;
	}
	vs->fds[slot] = fd;
	strbuf_printf(reply, "F%x", fd);
}

static void do_close(struct vfile_state *vs, struct cursor *c, struct strbuf *reply)
{
	int fd, slot;
	if (!take_int(c, &fd) || (slot = slot_of(vs, fd)) < 0 || !at_end(c)) {
		reply_bad_packet(reply);
		return;
	}
	vs->fds[slot] = -1;
	/* On Linux the descriptor is released even when close fails. */
	if (close(fd) < 0) {
		reply_errno(reply, errno);
		return;
	}
	strbuf_puts(reply, "F0");
}

/* Largest count one reply can carry before escaping. */
static size_t max_read_count(void)
{
	char head[32];
	int n = snprintf(head, sizeof head, "F%x;", RSP_MAX_PACKET);
	return RSP_MAX_PACKET - (size_t)n;
}

static void do_pread(struct vfile_state *vs, struct cursor *c, struct strbuf *reply)
{
	int fd, count;
	off_t offset;
	if (!take_int(c, &fd) || !take_comma(c) || slot_of(vs, fd) < 0 ||
	    !take_int(c, &count) || !take_comma(c) ||
	    !take_offset(c, &offset) || !at_end(c)) {
		reply_bad_packet(reply);
		return;
	}
	size_t want = (size_t)count;
	if (want > max_read_count())
		want = max_read_count();
	uint8_t buf[RSP_MAX_PACKET];
	ssize_t got;
	do
		got = pread(fd, buf, want, offset);
	while (got < 0 && errno == EINTR);
	if (got < 0) {
		reply_errno(reply, errno);
		return;
	}
	reply_with_data(reply, reply->len, buf, (size_t)got);
}

static void do_pwrite(struct vfile_state *vs, struct cursor *c, char *pkt,
		      struct strbuf *reply)
{
	int fd;
	off_t offset;
	if (!take_int(c, &fd) || !take_comma(c) || slot_of(vs, fd) < 0 ||
	    !take_offset(c, &offset) || !take_comma(c)) {
		reply_bad_packet(reply);
		return;
	}
	/* The data is the rest of the packet, still '}'-escaped. */
	char *data = pkt + (c->p - pkt);
	size_t n = rsp_unescape_binary(data, (size_t)(c->end - c->p));
	if (n == (size_t)-1) {
		reply_bad_packet(reply);
		return;
	}
	ssize_t put;
	do
		put = pwrite(fd, data, n, offset);
	while (put < 0 && errno == EINTR);
	if (put < 0) {
		reply_errno(reply, errno);
		return;
	}
	strbuf_printf(reply, "F%zx", (size_t)put);
}

static void put_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

/* gdb's struct stat: fixed-size big-endian fields, 64 bytes in all
 * (GDB manual, "struct stat"). Wider host values are truncated as
 * gdbserver truncates them. */
static void pack_stat(const struct stat *st, uint8_t out[64])
{
	uint32_t mode = 0;
	if (S_ISREG(st->st_mode))
		mode |= FIO_S_IFREG;
	if (S_ISDIR(st->st_mode))
		mode |= FIO_S_IFDIR;
	if (S_ISCHR(st->st_mode))
		mode |= FIO_S_IFCHR;
	mode |= st->st_mode & 0777;

	put_be(out + 0, st->st_dev, 4);
	put_be(out + 4, st->st_ino, 4);
	put_be(out + 8, mode, 4);
	put_be(out + 12, st->st_nlink, 4);
	put_be(out + 16, st->st_uid, 4);
	put_be(out + 20, st->st_gid, 4);
	put_be(out + 24, st->st_rdev, 4);
	put_be(out + 28, (uint64_t)st->st_size, 8);
	put_be(out + 36, (uint64_t)st->st_blksize, 8);
	put_be(out + 44, (uint64_t)st->st_blocks, 8);
	put_be(out + 52, (uint64_t)st->st_atime, 4);
	put_be(out + 56, (uint64_t)st->st_mtime, 4);
	put_be(out + 60, (uint64_t)st->st_ctime, 4);
}

static void do_fstat(struct vfile_state *vs, struct cursor *c, struct strbuf *reply)
{
	int fd;
	if (!take_int(c, &fd) || slot_of(vs, fd) < 0 || !at_end(c)) {
		reply_bad_packet(reply);
		return;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		reply_errno(reply, errno);
		return;
	}
	uint8_t packed[64];
	pack_stat(&st, packed);
	reply_with_data(reply, reply->len, packed, sizeof packed);
}

static void do_unlink(struct vfile_state *vs, struct cursor *c, struct strbuf *reply)
{
	char name[VFILE_PATH_MAX], path[VFILE_PATH_MAX + 64];
	if (!take_filename(c, name, sizeof name) || !at_end(c)) {
		reply_bad_packet(reply);
		return;
	}
	if (!resolve_path(vs, name, path, sizeof path) || unlink(path) < 0) {
		reply_errno(reply, errno);
		return;
	}
	strbuf_puts(reply, "F0");
}

static void do_readlink(struct vfile_state *vs, struct cursor *c, struct strbuf *reply)
{
	char name[VFILE_PATH_MAX], path[VFILE_PATH_MAX + 64];
	char target[VFILE_PATH_MAX];
	if (!take_filename(c, name, sizeof name) || !at_end(c)) {
		reply_bad_packet(reply);
		return;
	}
	if (!resolve_path(vs, name, path, sizeof path)) {
		reply_errno(reply, errno);
		return;
	}
	ssize_t n = readlink(path, target, sizeof target - 1);
	if (n < 0) {
		reply_errno(reply, errno);
		return;
	}
	size_t start = reply->len;
	if (reply_with_data(reply, start, (const uint8_t *)target, (size_t)n) < (size_t)n) {
		/* A partial link name is useless: fail as gdbserver does. */
		reply->len = start;
		reply->data[start] = '\0';
		strbuf_printf(reply, "F-1,%x", FIO_ENAMETOOLONG);
	}
}

bool vfile_handle(struct vfile_state *vs, char *pkt, size_t len, struct strbuf *reply)
{
	static const struct {
		const char *name;
		int op;
	} ops[] = {
		{"vFile:open:", 0}, {"vFile:pread:", 1}, {"vFile:pwrite:", 2},
		{"vFile:fstat:", 3}, {"vFile:close:", 4}, {"vFile:unlink:", 5},
		{"vFile:readlink:", 6}, {"vFile:setfs:", 7},
	};
	/* vFile:stat and vFile:lstat came after gdb 13: like gdbserver 13 we
	 * do not know them, and gdb falls back to open + fstat. */
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		size_t n = strlen(ops[i].name);
		if (len < n || memcmp(pkt, ops[i].name, n) != 0)
			continue;
		struct cursor c = {pkt + n, pkt + len};
		switch (ops[i].op) {
		case 0: do_open(vs, &c, reply); break;
		case 1: do_pread(vs, &c, reply); break;
		case 2: do_pwrite(vs, &c, pkt, reply); break;
		case 3: do_fstat(vs, &c, reply); break;
		case 4: do_close(vs, &c, reply); break;
		case 5: do_unlink(vs, &c, reply); break;
		case 6: do_readlink(vs, &c, reply); break;
		case 7: do_setfs(vs, &c, reply); break;
		}
		return true;
	}
	return false;
}
