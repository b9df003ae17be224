/* A thread's state described by its registers and digests of its vector
 * registers, its stack and its writable memory (include/ptrev/state_digest.h:
 * what is covered and why it tells points apart). */
#include "ptrev/state_digest.h"
#include "ptrev/cpuid_copy.h"
#include "ptrev/proc_maps.h"
#include "ptrev/tsc_trap.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#define FNV64_PRIME 0x100000001b3ull
/* The red zone below rsp, and how far above it the stack is hashed. */
#define RED_ZONE 128
#define STACK_ABOVE 65536
/* fxsave layout: MXCSR at 24, XMM0-15 at 160..415. */
#define FX_MXCSR 24
#define FX_XMM0 160
#define FX_XMM_END 416
/* Mappings larger than this are reservations far bigger than what the
 * program touches (sanitizer shadows, language runtimes' arenas): reading
 * them whole would take seconds to hours. They are left out. */
#define MAX_MAPPING (256ull << 20)

uint64_t fnv1a64(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= FNV64_PRIME;
	}
	return h;
}

static int fail(char *err, size_t errlen, const char *fmt, const char *what)
{
	snprintf(err, errlen, fmt, what, strerror(errno));
	return -1;
}

/* XMM0-15 and MXCSR from the thread's FXSAVE image (NT_PRFPREG: the kernel
 * fills components in their initial state with their initial values). */
static int vec_hash(pid_t tid, uint64_t *out, char *err, size_t errlen)
{
	struct user_fpregs_struct fp;
	struct iovec iov = {&fp, sizeof fp};
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &iov) < 0)
		return fail(err, errlen, "%s: %s", "vector registers");
	const uint8_t *b = (const uint8_t *)&fp;
	uint64_t h = fnv1a64(FNV64_INIT, b + FX_MXCSR, 4);
	*out = fnv1a64(h, b + FX_XMM0, FX_XMM_END - FX_XMM0);
	return 0;
}

/* Hash [lo, hi) of the process's memory into *h. 0, or -1 when a byte of
 * it cannot be read. */
static int hash_bytes(int memfd, uint64_t lo, uint64_t hi, uint64_t *h)
{
	enum { CHUNK = 1 << 16 };
	uint8_t *buf = malloc(CHUNK);
	if (!buf)
		return -1;
	while (lo < hi) {
		size_t n = hi - lo < CHUNK ? (size_t)(hi - lo) : CHUNK;
		ssize_t got = pread(memfd, buf, n, (off_t)lo);
		if (got <= 0) {
			free(buf);
			return -1;
		}
		*h = fnv1a64(*h, buf, (size_t)got);
		lo += (uint64_t)got;
	}
	free(buf);
	return 0;
}

static uint64_t skip_end(const struct state_digest *d, size_t i)
{
	uint64_t a = d->skip[2 * i], e = a + d->skip[2 * i + 1];
	return e < a ? UINT64_MAX : e;
}

/* Hash [lo, hi) but d's skip ranges into *h, adding the bytes hashed to
 * *n (when n is given). */
static int hash_range(int memfd, const struct state_digest *d, uint64_t lo, uint64_t hi,
		      uint64_t *h, uint64_t *n)
{
	while (lo < hi) {
		uint64_t next = hi;
		bool skipped = false;
		for (size_t i = 0; i < d->nskip; i++) {
			uint64_t a = d->skip[2 * i], e = skip_end(d, i);
			if (a <= lo && lo < e) {
				lo = e < hi ? e : hi;
				skipped = true;
			} else if (a > lo && a < next) {
				next = a;
			}
		}
		if (skipped)
			continue;
		if (hash_bytes(memfd, lo, next, h) < 0)
			return -1;
		if (n)
			*n += next - lo;
		lo = next;
	}
	return 0;
}

/* The stack around rsp: from the red zone below it up to STACK_ABOVE
 * above, within the mapping that holds rsp. */
static int stack_range(pid_t pid, uint64_t rsp, uint64_t *lo, uint64_t *hi)
{
	FILE *f = proc_maps_open(pid);
	struct proc_mapping m;
	bool found = false;
	while (f && !found && proc_maps_next(f, &m))
		found = m.start <= rsp && rsp < m.end;
	if (f)
		fclose(f);
	if (!found)
		return -1;
	*lo = rsp - RED_ZONE >= m.start ? rsp - RED_ZONE : m.start;
	*hi = m.end - rsp > STACK_ABOVE ? rsp + STACK_ABOVE : m.end;
	return 0;
}

/* A thread's rsp as view tells it, or from ptrace where it is stopped. */
static bool other_rsp(pid_t other, const struct state_view *view, uint64_t *rsp)
{
	for (size_t i = 0; view && i < view->n; i++)
		if (view->tids[i] == other) {
			*rsp = view->rsps[i];
			return true;
		}
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, other, NULL, &r) < 0)
		return false;
	*rsp = r.rsp;
	return true;
}

/* The stack pointers of pid's threads: tid's is rsp; the others' as view
 * tells or as far as they are stopped under ptrace (a thread that is
 * neither has none here). A malloc'd array of *n, or NULL (then *n is 0)
 * when nothing could be listed. */
static uint64_t *thread_rsps(pid_t pid, pid_t tid, uint64_t rsp, const struct state_view *view,
			     size_t *n)
{
	char path[64];
	size_t cap = 16;
	uint64_t *v = malloc(cap * sizeof *v);
	*n = 0;
	if (!v)
		return NULL;
	v[(*n)++] = rsp;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		pid_t other = (pid_t)atoi(de->d_name);
		uint64_t r;
		if (other <= 0 || other == tid || !other_rsp(other, view, &r))
			continue;
		if (*n == cap) {
			uint64_t *w = realloc(v, 2 * cap * sizeof *v);
			if (!w)
				break;
			v = w;
			cap *= 2;
		}
		v[(*n)++] = r;
	}
	if (d)
		closedir(d);
	return v;
}

/* Where m's hashed bytes start: past the dead stack when exactly one of
 * the stack pointers is inside it (with more, whose stack is where is not
 * known: all of it). */
static uint64_t live_start(const struct proc_mapping *m, const uint64_t *rsps, size_t n)
{
	uint64_t lo = m->start;
	size_t inside = 0;
	for (size_t i = 0; i < n; i++)
		if (m->start <= rsps[i] && rsps[i] < m->end) {
			inside++;
			lo = rsps[i] - m->start > RED_ZONE ? rsps[i] - RED_ZONE : m->start;
		}
	return inside == 1 ? lo : m->start;
}

static int memory_hash(pid_t pid, int memfd, const uint64_t *rsps, size_t nrsps,
		       const struct state_digest *given, uint64_t *bytes, uint64_t *out)
{
	/* glibc's copy of CPUID's answers too, where the flag says
	 * (ptrev/cpuid_copy.h): d is given with those ranges added. */
	struct state_digest with = *given;
	const struct state_digest *d = given;
	uint64_t *skip = NULL;
	if (given->flags & STATE_DIGEST_NO_CPUID_COPY) {
		uint64_t r[2];
		int k = cpuid_copy_ranges(pid, r);
		skip = k ? malloc((given->nskip + (size_t)k) * 2 * sizeof *skip) : NULL;
		if (skip) {
			if (given->nskip)
				memcpy(skip, given->skip, given->nskip * 2 * sizeof *skip);
			memcpy(skip + 2 * given->nskip, r, (size_t)k * 2 * sizeof *skip);
			with.skip = skip;
			with.nskip = given->nskip + (size_t)k;
			d = &with;
		} else if (k) {
			return -1;
		}
	}
	FILE *f = proc_maps_open(pid);
	struct proc_mapping m;
	uint64_t h = FNV64_INIT, n = 0;
	if (!f) {
		free(skip);
		return -1;
	}
	while (proc_maps_next(f, &m)) {
		if (m.perms[1] != 'w' || m.perms[3] != 'p' || !strcmp(m.name, "[vvar]") ||
		    !strcmp(m.name, "[vsyscall]") || m.end - m.start > MAX_MAPPING ||
		    ((d->flags & STATE_DIGEST_NO_LOADER_DATA) && proc_maps_is_loader(&m)))
			continue;
		uint64_t lo = live_start(&m, rsps, nrsps);
		if (hash_range(memfd, d, lo, m.end, &h, &n) < 0) {
			fclose(f);
			free(skip);
			return -1;
		}
	}
	fclose(f);
	free(skip);
	*bytes = n;
	*out = h;
	return 0;
}

/* The memory digest as flags says: the dead stacks left out or not. */
static int memory_digest(pid_t pid, pid_t tid, int memfd, uint64_t rsp,
			 const struct state_view *view, struct state_digest *d)
{
	size_t n = 0;
	uint64_t *rsps = NULL;
	if (d->flags & STATE_DIGEST_LIVE_STACKS) {
		rsps = thread_rsps(pid, tid, rsp, view, &n);
		if (!rsps)
			return -1;
	}
	int rc = memory_hash(pid, memfd, rsps, n, d, &d->mem_bytes, &d->mem_hash);
	free(rsps);
	return rc;
}

static int stack_hash(pid_t pid, int memfd, uint64_t rsp, struct state_digest *d)
{
	d->stack_hash = FNV64_INIT;
	if (stack_range(pid, rsp, &d->stack_lo, &d->stack_hi) < 0) {
		/* rsp outside any mapping (a program that uses rsp for
		 * something else): nothing to hash there. */
		d->stack_lo = d->stack_hi = rsp;
		return 0;
	}
	return hash_range(memfd, d, d->stack_lo, d->stack_hi, &d->stack_hash, NULL);
}

int state_digest_take(pid_t pid, pid_t tid, int memfd, const struct user_regs_struct *regs,
		      const struct state_view *view, struct state_digest *out, char *err,
		      size_t errlen)
{
	memset(out, 0, sizeof *out);
	out->flags = STATE_DIGEST_LIVE_STACKS | STATE_DIGEST_NO_CPUID_COPY |
		     (tsc_traps() ? 0 : STATE_DIGEST_NO_LOADER_DATA);
	if (view) {
		out->skip = view->skip;
		out->nskip = view->nskip;
	}
	if (vec_hash(tid, &out->vec_hash, err, errlen) < 0)
		return -1;
	if (stack_hash(pid, memfd, regs->rsp, out) < 0)
		return fail(err, errlen, "%s: %s", "the stack cannot be read");
	if (memory_digest(pid, tid, memfd, regs->rsp, view, out) < 0)
		return fail(err, errlen, "%s: %s", "the memory cannot be read");
	return 0;
}

/* The registers as compared: RF and TF left out of eflags, orig_rax out. */
static bool same_regs(const struct user_regs_struct *a, const struct user_regs_struct *b)
{
	struct user_regs_struct x = *a, y = *b;
	x.eflags &= ~0x10100ull;
	y.eflags &= ~0x10100ull;
	x.orig_rax = y.orig_rax = 0;
	return memcmp(&x, &y, sizeof x) == 0;
}

int state_digest_matches(pid_t pid, pid_t tid, int memfd, const struct user_regs_struct *regs,
			 const struct user_regs_struct *want_regs, const struct state_digest *want,
			 char *err, size_t errlen)
{
	struct state_digest d = {.skip = want->skip, .nskip = want->nskip};
	if (!same_regs(regs, want_regs))
		return 0;
	if (vec_hash(tid, &d.vec_hash, err, errlen) < 0)
		return -1;
	if (d.vec_hash != want->vec_hash)
		return 0;
	if (stack_hash(pid, memfd, regs->rsp, &d) < 0)
		return fail(err, errlen, "%s: %s", "the stack cannot be read");
	if (d.stack_lo != want->stack_lo || d.stack_hi != want->stack_hi ||
	    d.stack_hash != want->stack_hash)
		return 0;
	d.flags = want->flags;
	if (memory_digest(pid, tid, memfd, regs->rsp, NULL, &d) < 0)
		return fail(err, errlen, "%s: %s", "the memory cannot be read");
	return d.mem_bytes == want->mem_bytes && d.mem_hash == want->mem_hash;
}
