/* The SYSCALL and SIGFRAME records as every recorder writes them
 * (include/ptrev/record_events.h). */
#include "ptrev/record_events.h"
#include "ptrev/mapped_data.h"
#include "ptrev/proc_maps.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>

#define MAX_WRITES 64

/* A program's writable memory copied at most this big. */
#define WATCH_LIMIT (512ull << 20)

/* Does the call make a child that runs in the caller's memory while the
 * caller waits (vfork, clone or clone3 with CLONE_VFORK: posix_spawn)?
 * What the child writes there (its stack in the caller's memory, the
 * caller's variables) is the call's doing as far as the caller sees it,
 * and no replay runs the child. */
/* clone's or clone3's flags (struct clone_args begins with them); false
 * for another call, or clone_args that cannot be read. */
static bool clone_flags(uint64_t nr, const uint64_t args[6], sc_read_fn read_mem, void *ctx,
			uint64_t *flags)
{
	if (nr == SYS_clone) {
		*flags = args[0];
		return true;
	}
	return nr == SYS_clone3 &&
	       read_mem(ctx, args[0], flags, sizeof *flags) == (long)sizeof *flags;
}

static bool vfork_like(uint64_t nr, const uint64_t args[6], sc_read_fn read_mem, void *ctx)
{
	uint64_t flags = 0;
	return nr == SYS_vfork || (clone_flags(nr, args, read_mem, ctx, &flags) &&
				   (flags & CLONE_VFORK));
}

struct mem_diff *record_syscall_watch(pid_t pid, uint64_t nr, const struct user_regs_struct *entry,
				      bool one_thread, sc_read_fn read_mem, void *ctx)
{
	struct sc_range rg[MAX_WRITES];
	uint64_t args[6];
	syscall_args(entry, args);
	if (one_thread && vfork_like(nr, args, read_mem, ctx))
		return mem_diff_take(pid, read_mem, ctx, WATCH_LIMIT);
	/* At every syscall's entry: only a call described case by case is
	 * described here. The cases depend on the arguments; the sizes on
	 * the result, which any success stands for. */
	if (!one_thread || !syscall_may_be_unknown(nr) ||
	    syscall_writes(nr, args, 0, read_mem, ctx, rg, MAX_WRITES) >= 0)
		return NULL;
	return mem_diff_take(pid, read_mem, ctx, WATCH_LIMIT);
}

/* What the watched syscall changed, in *found (malloc'd), said once per
 * call on stderr: its number, or -1. */
static int watched(struct mem_diff *watch, const struct trace_syscall *s, sc_read_fn read_mem,
		   void *ctx, struct sc_range **found)
{
	static unsigned said;
	int n = mem_diff_changes(watch, read_mem, ctx, found);
	if (n >= 0 && said++ < 5) {
		char name[96];
		syscall_label(s->nr, s->args, name, sizeof name);
		fprintf(stderr, "ptrev: %s at position %llu of thread %d is not in ptrev's syscall "
			"table: what it wrote (%d place%s) was found by comparing the program's "
			"writable memory before and after it%s\n", name, (unsigned long long)s->pos,
			(int)s->tid, n, n == 1 ? "" : "s",
			said == 5 ? " (further ones are not shown)" : "");
	}
	return n;
}

/* A System V segment's bytes are recorded as the attach found them (the
 * syscall table's shmat); what another process writes there afterwards is
 * not (nor does rr record it), so a replay would show the segment without
 * those writes. Where other processes have it attached at the program's
 * attach, say so, once per segment id. */
static void shm_shared_note(const struct trace_syscall *s)
{
	static int said[8], nsaid;
	struct shmid_ds ds;
	int id = (int)s->args[0];
	if (s->nr != SYS_shmat || s->result < 0 || shmctl(id, IPC_STAT, &ds) < 0 ||
	    ds.shm_nattch <= 1)
		return;
	for (int i = 0; i < nsaid; i++)
		if (said[i] == id)
			return;
	if (nsaid < 8)
		said[nsaid++] = id;
	fprintf(stderr, "ptrev: the System V shared memory segment %d that thread %d attached "
		"is attached by %lu other process%s: what %s there after the attach is not "
		"recorded, and a replay shows the segment without it\n", id, (int)s->tid,
		(unsigned long)ds.shm_nattch - 1, ds.shm_nattch == 2 ? "" : "es",
		ds.shm_nattch == 2 ? "it writes" : "they write");
}

/* A call no replay can reproduce (syscall_table.h: io_uring, Linux AIO,
 * userfaultfd ...), made: every replay of the recording ends at its
 * entry (event_cut.h), and a live session, whose history must reach the
 * present, cannot go back from here on. Said when it happens, once, not
 * first when gdb goes back. */
static void unsupported_note(const struct trace_syscall *s)
{
	static bool said;
	const char *why = s->result >= 0 ? syscall_unsupported_why(s->nr) : NULL;
	if (said || !why || s->nr == SYS_execve || s->nr == SYS_execveat ||
	    s->nr == SYS_clone || s->nr == SYS_clone3)
		return; /* (exec, threads: the recorders handle them themselves) */
	said = true;
	char name[96];
	syscall_label(s->nr, NULL, name, sizeof name);
	fprintf(stderr, "ptrev: thread %d made %s, which no replay can reproduce (%s): a replay "
		"of this recording ends at its entry, with full state before it, and a live "
		"session cannot go back from here on (save the recording, -o or monitor save, "
		"and replay it)\n", (int)s->tid, name, why);
}

/* Does s make a process that is not a thread (fork, clone or clone3
 * without CLONE_THREAD), which the recording does not follow? */
static bool forks(const struct trace_syscall *s, sc_read_fn read_mem, void *ctx)
{
	uint64_t flags = 0;
	if (s->result <= 0)
		return false;
	return s->nr == SYS_fork || s->nr == SYS_vfork ||
	       (clone_flags(s->nr, s->args, read_mem, ctx, &flags) && !(flags & CLONE_THREAD));
}

/* A child shares the writable shared mappings (mmap MAP_SHARED, System V
 * segments) its parent has: what it writes there is not recorded (the
 * recording follows one process), so a replay shows that memory without
 * it. Said once, where there are such mappings at a fork. */
static void fork_shared_note(const struct trace_syscall *s, sc_read_fn read_mem, void *ctx)
{
	static bool said;
	if (said || !forks(s, read_mem, ctx))
		return;
	struct proc_mapping m;
	unsigned n = 0;
	uint64_t first = 0;
	FILE *f = proc_maps_open(s->tid);
	while (f && proc_maps_next(f, &m))
		if (m.perms[1] == 'w' && m.perms[3] == 's' && n++ == 0)
			first = m.start;
	if (f)
		fclose(f);
	if (!n)
		return;
	said = true;
	fprintf(stderr, "ptrev: thread %d made process %lld while %u writable shared mapping%s "
		"(the first at %#llx) were mapped, which it shares: what that process writes "
		"there is not recorded, and a replay shows the memory without it\n", (int)s->tid,
		(long long)s->result, n, n == 1 ? "" : "s", (unsigned long long)first);
}

/* Is s an mmap that mapped a file whose bytes are recorded (a writable
 * shared mapping's are, by the syscall table)? *len: how many, from the
 * mapping's start (up to the file's end, in whole pages: past it the
 * mapping cannot be read). */
static bool mapped_data(pid_t tid, const struct trace_syscall *s, uint64_t *len)
{
	uint64_t size;
	if (s->nr != SYS_mmap || s->result <= 0 || (s->args[3] & MAP_ANONYMOUS) ||
	    (int32_t)s->args[4] < 0 || s->args[1] == 0 ||
	    !mapped_file_is_data(tid, (int)s->args[4], &size))
		return false;
	*len = s->args[1];
	if (size != UINT64_MAX && size > s->args[5] && (size - s->args[5] + 4095) / 4096 * 4096 < *len)
		*len = (size - s->args[5] + 4095) / 4096 * 4096;
	if (*len <= MAPPED_DATA_MAX)
		return true;
	static bool said;
	if (!said) {
		said = true;
		fprintf(stderr, "ptrev: thread %d mapped %llu MiB of a file: its bytes are not "
			"recorded (more than %llu MiB), and a replay maps the file again, which "
			"shows what it holds then\n", (int)tid, (unsigned long long)(*len >> 20),
			(unsigned long long)(MAPPED_DATA_MAX >> 20));
	}
	return false;
}

int record_syscall(struct trace_writer *w, pid_t tid, uint64_t pos, uint64_t nr,
		   const struct user_regs_struct *entry, int64_t result, sc_read_fn read_mem,
		   void *ctx, struct mem_diff *watch, bool kept_cpu)
{
	struct sc_range *found = NULL;
	struct sc_range rg_table[MAX_WRITES], *rg = rg_table;
	struct trace_mem_write wr_table[MAX_WRITES], *wr = wr_table;
	struct trace_syscall s = {0};
	uint8_t *buf = NULL;
	size_t total = 0, at = 0;
	int n, rc;

	s.tid = tid;
	s.pos = pos;
	s.nr = nr;
	syscall_args(entry, s.args);
	s.result = result;
	s.kept_cpu = kept_cpu;
	n = syscall_writes(s.nr, s.args, result, read_mem, ctx, rg, MAX_WRITES);
	uint64_t data_len;
	if (n == 0 && mapped_data(tid, &s, &data_len))
		/* The mapping's bytes, as the file showed them (mapped_data.h). */
		rg[n++] = (struct sc_range){(uint64_t)s.result, data_len};
	if (watch && vfork_like(s.nr, s.args, read_mem, ctx) &&
	    (n = mem_diff_changes(watch, read_mem, ctx, &found)) >= 0) {
		/* The child's writes (the table says the call writes none). */
		rg = found;
		if (n > MAX_WRITES && !(wr = malloc((size_t)n * sizeof *wr))) {
			free(found);
			return -1;
		}
	} else if (n < 0 && watch && (n = watched(watch, &s, read_mem, ctx, &found)) >= 0) {
		/* What it wrote, seen in the memory itself. */
		rg = found;
		if (n > MAX_WRITES && !(wr = malloc((size_t)n * sizeof *wr))) {
			free(found);
			return -1;
		}
	}
	s.unknown = n < 0;
	for (int i = 0; i < n; i++)
		total += rg[i].len;
	if (total && !(buf = malloc(total)))
		n = 0;
	for (int i = 0; i < n; i++) {
		/* What cannot be read (a bad pointer the kernel refused to
		 * write through, EFAULT) was not written either. */
		long got = read_mem(ctx, rg[i].addr, buf + at, rg[i].len);
		if (got <= 0)
			continue;
		wr[s.nwrites].addr = rg[i].addr;
		wr[s.nwrites].bytes = buf + at;
		wr[s.nwrites].len = (size_t)got;
		s.nwrites++;
		at += (size_t)got;
	}
	s.writes = wr;
	shm_shared_note(&s);
	fork_shared_note(&s, read_mem, ctx);
	unsupported_note(&s);
	rc = trace_write_syscall(w, &s);
	free(buf);
	if (wr != wr_table)
		free(wr);
	free(found);
	return rc;
}

/* The x86-64 kernel's rt_sigframe at the handler's rsp: return address
 * (8), its ucontext (flags 8, link 8, stack 24, sigcontext 256, mask 8)
 * and the siginfo (128); the sigcontext's fpstate pointer (at 184 in it)
 * leads to the FPU area above, whose fxsave software bytes (at 464) give
 * the XSAVE area's size. */
#define SIGFRAME_LEN 440
#define SIGFRAME_FPSTATE (8 + 40 + 184)
#define FPX_SW_BYTES 464

int record_sigframe(struct trace_writer *w, pid_t tid, uint64_t pos, uint64_t rsp,
		    sc_read_fn read_mem, void *ctx)
{
	uint8_t head[SIGFRAME_LEN];
	uint64_t fp, end = rsp + SIGFRAME_LEN;
	struct trace_sigframe f = {0};
	uint8_t *buf;
	int rc;

	if (read_mem(ctx, rsp, head, sizeof head) != (long)sizeof head)
		return 0; /* unreadable: the replay makes its own */
	memcpy(&fp, head + SIGFRAME_FPSTATE, sizeof fp);
	if (fp >= end && fp - rsp < TRACE_SIGFRAME_MAX) {
		uint32_t sw[2] = {0, 0};
		uint64_t fp_end = fp + 512; /* fxsave only */
		if (read_mem(ctx, fp + FPX_SW_BYTES, sw, sizeof sw) == (long)sizeof sw &&
		    sw[0] == FP_XSTATE_MAGIC1 && sw[1] > 512) /* <signal.h> */
			fp_end = fp + sw[1];
		if (fp_end - rsp <= TRACE_SIGFRAME_MAX)
			end = fp_end;
	}
	buf = malloc(end - rsp);
	if (!buf || read_mem(ctx, rsp, buf, end - rsp) != (long)(end - rsp)) {
		free(buf);
		return 0;
	}
	f.tid = tid;
	f.pos = pos;
	f.addr = rsp;
	f.bytes = buf;
	f.len = end - rsp;
	rc = trace_write_sigframe(w, &f);
	free(buf);
	return rc;
}
