/* The .ptrev recording: one file, versioned, a sequence of records each
 * with its own checksum, appended as the recording goes so that a killed
 * recorder leaves a readable prefix. Format: docs/trace-format.md.
 *
 * Positions: an event's `pos` is the number of instructions its thread had
 * completed when the event happened (so pos N means "before instruction N
 * of that thread", counting from 0). */
#ifndef PTREV_TRACE_FILE_H
#define PTREV_TRACE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TRACE_FORMAT_VERSION 1

enum trace_record_type {
	TRACE_REC_META = 1,     /* key=value text (backend, program, argv...) */
	TRACE_REC_PT = 2,       /* a chunk of one thread's PT stream */
	TRACE_REC_MMAP = 3,     /* a mapping appeared (or the initial map) */
	TRACE_REC_MUNMAP = 4,   /* a range stopped being mapped */
	TRACE_REC_CODE = 5,     /* code bytes not backed by an unchanged file */
	TRACE_REC_SYSCALL = 6,  /* a syscall, its result and the memory it wrote */
	TRACE_REC_SIGNAL = 7,   /* a signal delivered at an exact position */
	TRACE_REC_RDTSC = 8,    /* the value an rdtsc/rdtscp returned */
	TRACE_REC_THREAD = 9,   /* a thread started or exited */
	TRACE_REC_END = 10,     /* summary; last record of a complete file */
	TRACE_REC_FILE = 11,    /* a copy of a mapped binary (chunk of it) */
	TRACE_REC_SCHED = 12,   /* the global order of the threads' instructions */
	TRACE_REC_SIGFRAME = 13, /* the frame the kernel wrote for a signal handler */
	TRACE_REC_STATE = 14,   /* where a thread stood at a point no event marks */
	TRACE_REC_STATE_STACK = 15, /* a STATE point's stack around rsp, in full */
	TRACE_REC_GDB_MEM = 16, /* memory gdb wrote into the program (set var) */
	TRACE_REC_GDB_REGS = 17, /* registers gdb wrote (jump, call, set $reg) */
	TRACE_REC_STATE_MEM = 18, /* memory a STATE point's replay puts in place */
};

struct trace_mmap {
	pid_t tid;            /* thread whose syscall made it (0 = initial) */
	uint64_t pos;
	uint64_t start, end;  /* [start, end) */
	uint64_t offset;      /* file offset of start */
	uint32_t prot;        /* PROT_* */
	uint32_t flags;       /* MAP_* as far as known (MAP_SHARED/PRIVATE) */
	uint8_t build_id[20]; /* GNU build-id of the file, if any */
	uint32_t build_id_len;
	char path[4096];      /* "" for anonymous; "[vdso]" etc. as in maps */
};

struct trace_munmap {
	pid_t tid;
	uint64_t pos;
	uint64_t start, end;
};

struct trace_code {
	uint64_t addr;
	const uint8_t *bytes; /* owned by the reader / caller */
	size_t len;
};

/* A copy of a file the program mapped executable (program, ld.so,
 * libraries), so the recording decodes after the file is gone or changed.
 * One per distinct path + build-id. */
struct trace_file_copy {
	const char *path;     /* as in the MMAP records */
	uint8_t build_id[20];
	uint32_t build_id_len;
	uint64_t size;        /* the file's size */
	const uint8_t *bytes; /* size bytes, owned by the reader / caller */
	uint64_t len;         /* bytes present: < size only when the recorder
			       * was killed while writing the copy */
};

struct trace_mem_write {
	uint64_t addr;
	const uint8_t *bytes;
	size_t len;
};

struct trace_syscall {
	pid_t tid;
	uint64_t pos;         /* position of the syscall instruction */
	uint64_t nr;
	uint64_t args[6];
	int64_t result;       /* rax after the syscall */
	bool unknown;         /* not in our table: memory it wrote not recorded */
	bool kept_cpu;        /* no other thread ran from its entry to its
	                         return (event recordings): a replay completes
	                         it as soon as its thread's run ends there */
	size_t nwrites;
	const struct trace_mem_write *writes;
};

/* Where a signal was delivered. In sw and pt recordings every signal is
 * at an instruction position (pos). In event recordings pos is the
 * thread's event number of the SIGNAL (see "Event recordings" below) and
 * `where` says which point of the thread's execution that is. */
enum trace_signal_where {
	TRACE_SIG_AT_POS = 0,        /* before instruction pos (sw, pt) */
	TRACE_SIG_SYNC = 1,          /* raised by the thread's own next
				      * instruction (a fault, int3, ud2): it
				      * recurs by itself in a replay */
	TRACE_SIG_AFTER_EVENT = 2,   /* right after the thread's previous event
				      * (a syscall's return, a STATE point),
				      * before any further instruction */
	TRACE_SIG_BEFORE_SYSCALL = 3, /* the thread ran on to its next syscall,
				      * whose entry was undone (the PC back on
				      * the syscall instruction, rax its
				      * number) and the signal delivered
				      * there; the syscall runs again after */
};

struct trace_signal {
	pid_t tid;
	uint64_t pos;         /* delivered before instruction pos */
	int signo;            /* host number */
	uint8_t siginfo[128];
	uint64_t handler_ip;  /* where execution continued (0 = default action) */
	enum trace_signal_where where;
};

/* The signal frame the kernel wrote on the stack when it entered a
 * handler (siginfo, ucontext, the FPU/XSAVE area), byte for byte: parts of
 * the XSAVE area are left unwritten or written depending on the CPU's state
 * tracking, so a replay puts these bytes in place rather than trusting its
 * own delivery. At most one per SIGNAL record with a handler (same tid and
 * pos); none where the recorder could not read it. */
#define TRACE_SIGFRAME_MAX 65536
struct trace_sigframe {
	pid_t tid;
	uint64_t pos;         /* the SIGNAL's position */
	uint64_t addr;        /* lowest address: the handler's rsp at entry */
	const uint8_t *bytes; /* owned by the reader / caller */
	size_t len;           /* 1..TRACE_SIGFRAME_MAX */
};

/* Event recordings: a point in a thread's execution that no event marks,
 * told by the thread's state there: all its registers, and digests of its
 * vector registers, its stack around rsp and all writable memory. The
 * event recorder stops a thread where it happens to be when it must (to
 * deliver a signal to a thread that makes no syscall, or to let another
 * thread run), and a replay finds the point again as the first time after
 * the thread's previous event that it stands at regs.rip with this state
 * (state_digest.h: what is hashed, and why that is sound). */
struct trace_state {
	pid_t tid;
	uint64_t pos;         /* the thread's event number of this point */
	uint64_t regs[27];    /* struct user_regs_struct, in its order */
	uint64_t vec_hash;    /* FNV-1a 64 of XMM0-15 and MXCSR */
	uint64_t stack_lo, stack_hi; /* the stack range hashed, [lo, hi) */
	uint64_t stack_hash;
	uint64_t mem_bytes;   /* bytes of writable memory hashed */
	uint64_t mem_hash;
	uint64_t flags;       /* TRACE_STATE_*; 0 in recordings made before */
	uint64_t ran_ns;      /* at most this long (wall time) since the
	                         thread's previous event; 0: not known */
	/* Ranges the digests leave out: nskip (address, length) pairs, what
	 * the syscalls other threads were in could write (state_digest.h).
	 * Reader-owned (or the writer's caller's). */
	size_t nskip;
	const uint64_t *skip;
	/* The stack around rsp as it was (sp_len bytes at sp_addr, 0 where
	 * not recorded; its own record, STATE_STACK, after the STATE): the
	 * locals of code that keeps them in memory, which a replay reads to
	 * tell how far a loop is from the point (pass_model.h).
	 * Reader-owned (or the writer's caller's). */
	uint64_t sp_addr;
	size_t sp_len;
	const uint8_t *sp_bytes;
	/* Memory as it was at the point that no replay can make the same (one
	 * STATE_MEM record each, after the STATE): where rdtsc does not trap,
	 * the TSC values the dynamic loader left in its data and on the
	 * stack, which a replay reads afresh. A replay that stands at the
	 * point's registers writes them before it compares the digests,
	 * which describe the memory with them. Only the point at the
	 * program's entry has any (its thread passes there once).
	 * Reader-owned (or the writer's caller's). */
	size_t nmem;
	const struct trace_mem_write *mem;
};
/* At most this many bytes of stack with a STATE record. */
#define TRACE_STATE_SP_MAX 4096
/* At most this many STATE_MEM records with one STATE, and bytes in each. */
#define TRACE_STATE_MEM_RANGES 8
#define TRACE_STATE_MEM_MAX (4u << 20)
/* At most this many ranges in one STATE record. */
#define TRACE_STATE_MAX_SKIP 4096
/* The memory digest leaves out each thread's dead stack, below its red
 * zone (state_digest.h, STATE_DIGEST_LIVE_STACKS). */
#define TRACE_STATE_LIVE_STACKS 1u
/* The thread stands on a syscall instruction it entered once already (its
 * entry undone to stop there): rcx and r11 are what that instruction put
 * there, not the program's, and are not compared. */
#define TRACE_STATE_AT_SYSCALL 2u
/* The memory digest leaves out the dynamic loader's writable mapping
 * (state_digest.h, STATE_DIGEST_NO_LOADER_DATA). */
#define TRACE_STATE_NO_LOADER_DATA 4u
/* ...and glibc's copy of CPUID's answers (STATE_DIGEST_NO_CPUID_COPY). */
#define TRACE_STATE_NO_CPUID_COPY 8u

/* A change gdb made to the program while it was recorded (set var, print
 * x = 1, call, jump, set $pc): the program ran on from the changed state,
 * so a replay makes the same change at the same place. pos: in sw and pt
 * recordings (and made histories) the thread's instruction position, the
 * change made when the thread stands before instruction pos (before a
 * signal delivered there); in event recordings the number of the
 * thread's events done, the change made right after its event pos - 1,
 * before it runs on (pos >= 1). GDB_MEM: len bytes at addr; GDB_REGS:
 * the thread's struct user_regs_struct followed by its XSAVE area (addr
 * 0). Both kinds, in file order, form one array. */
#define TRACE_GDB_MEM_MAX (1u << 24)
#define TRACE_GDB_REGS_MIN 216 /* sizeof (struct user_regs_struct) */
#define TRACE_GDB_REGS_MAX (216 + 65536)
struct trace_gdb_write {
	pid_t tid;
	uint64_t pos;
	bool regs;            /* GDB_REGS, else GDB_MEM */
	uint64_t addr;        /* GDB_MEM: where */
	const uint8_t *bytes; /* owned by the reader / caller */
	size_t len;
};

struct trace_rdtsc {
	pid_t tid;
	uint64_t pos;         /* position of the rdtsc/rdtscp instruction */
	uint64_t value;       /* edx:eax */
	uint32_t aux;         /* ecx for rdtscp */
	bool is_rdtscp;
};

struct trace_thread {
	pid_t tid;
	pid_t parent;         /* creator, 0 for the first thread */
	uint64_t pos;         /* parent's position at the clone, or own at exit */
	bool exited;
	int exit_code;
};

/* Thread switches: the recorder runs one thread's user-space instructions
 * at a time, so all threads' instructions form one global order. A run is
 * `count` consecutive instructions of thread tid, starting at its
 * instruction pos; the runs in file order are that global order. A thread's
 * runs are contiguous (each starts where its previous one ended); a run
 * that continues the previous run of the same thread is merged into it.
 * Recordings without SCHED records (the pt backend, older files) carry no
 * global order: each thread's history stands alone. */
struct trace_sched_run {
	pid_t tid;
	uint64_t pos;
	uint64_t count;
};

struct trace_end {
	int status_kind;      /* 0 exited, 1 killed by signal, 2 recorder stopped */
	int status;           /* exit code or signal number */
	uint64_t instructions;/* all threads */
	uint64_t psb_count;
	uint64_t duration_ns;
	uint64_t syscalls, signals;
};

/* ---- writing ---- */
struct trace_writer;
struct trace_data;
/* Create (truncate) path and write the file header. */
struct trace_writer *trace_writer_open(const char *path, char *err, size_t errlen);
/* A writer without a file: records are checked and encoded as for a file
 * and go only where trace_writer_keep says (nowhere without it). */
struct trace_writer *trace_writer_open_memory(char *err, size_t errlen);
/* From now on, also decode every record written into td with the
 * reader's own parser, so td is what trace_read_file would return for a
 * file holding those records (file_size included; complete once END is
 * written). td is zeroed (a new recording) or one trace_read_file or an
 * earlier keep built, which then grows. The caller owns td (free it with
 * trace_data_free, after the writer stops keeping into it); td = NULL
 * stops keeping. A write that fails leaves td as it was. Returns 0, or
 * -1 when out of memory. */
int trace_writer_keep(struct trace_writer *w, struct trace_data *td);
/* Begin again: the file cut back to its header, as just opened (the event
 * recorder when the program execs). Refused for a kept recording. 0/-1. */
int trace_writer_restart(struct trace_writer *w);
/* Each call appends one whole record with one write(2): after it returns
 * the record is in the file even if the recorder is killed. Return 0/-1. */
int trace_write_meta(struct trace_writer *w, const char *key, const char *value);
int trace_write_pt(struct trace_writer *w, pid_t tid, const void *data, size_t len);
int trace_write_mmap(struct trace_writer *w, const struct trace_mmap *m);
int trace_write_munmap(struct trace_writer *w, const struct trace_munmap *m);
int trace_write_code(struct trace_writer *w, const struct trace_code *c);
int trace_write_syscall(struct trace_writer *w, const struct trace_syscall *s);
int trace_write_signal(struct trace_writer *w, const struct trace_signal *s);
int trace_write_sigframe(struct trace_writer *w, const struct trace_sigframe *f);
int trace_write_gdb_write(struct trace_writer *w, const struct trace_gdb_write *g);
int trace_write_state(struct trace_writer *w, const struct trace_state *st);
int trace_write_rdtsc(struct trace_writer *w, const struct trace_rdtsc *r);
int trace_write_thread(struct trace_writer *w, const struct trace_thread *t);
int trace_write_end(struct trace_writer *w, const struct trace_end *e);
/* n runs in one SCHED record (n >= 1; at most TRACE_SCHED_MAX_RUNS). */
#define TRACE_SCHED_MAX_RUNS 4096
int trace_write_sched(struct trace_writer *w, const struct trace_sched_run *runs, size_t n);
/* Any number of runs, as as many SCHED records as it takes (n == 0:
 * none). */
int trace_write_schedule(struct trace_writer *w, const struct trace_sched_run *runs, size_t n);
/* A file's copy (f->len ignored, f->size bytes written), split into
 * FILE records of bounded size that follow each other. */
int trace_write_file(struct trace_writer *w, const struct trace_file_copy *f);
/* After an I/O failure (a full disk, the file size limit), drop every
 * later record and report success instead of failing: a recorder goes on
 * (the program is not killed, a recording kept in memory stays whole) and
 * the file keeps the whole records written before it. */
void trace_writer_keep_going(struct trace_writer *w);
/* Did a write to the file fail (its reason: trace_writer_error)? kept (if
 * not NULL): the file's size then, all of it whole records. */
bool trace_writer_io_failed(const struct trace_writer *w, uint64_t *kept);
/* Closes the file; returns -1 if any write failed (with the reason). */
int trace_writer_close(struct trace_writer *w, char *err, size_t errlen);
/* Additions by the trace-file owner: */
/* The first failure's reason, or NULL while every write has succeeded.
 * After an I/O failure the file is cut back to its last whole record and
 * every later write fails at once. */
const char *trace_writer_error(const struct trace_writer *w);
/* Appends a record of any type with the payload as given, unchecked:
 * lets tests and tools write record types this version does not know
 * (or deliberately malformed ones). */
int trace_write_raw(struct trace_writer *w, uint32_t type, const void *payload, size_t len);
/* CRC-32C (Castagnoli) as used by the format; crc = 0 to start. */
uint32_t trace_crc32c(uint32_t crc, const void *data, size_t len);

/* Write a whole recording held in memory to a new file (`monitor save`),
 * ending with end (NULL: no END record). Returns 0, or -1 with err. */
int trace_save(const struct trace_data *td, const char *path, const struct trace_end *end,
	       char *err, size_t errlen);

/* Append one run to td->sched (capacity in *cap, kept between calls),
 * merged into the last run when it continues it (same thread, pos right
 * after it). */
void trace_append_sched(struct trace_data *td, size_t *cap, const struct trace_sched_run *run);

/* ---- reading ---- */
struct trace_thread_stream {
	pid_t tid;
	uint8_t *pt;          /* the thread's PT stream, chunks concatenated */
	size_t pt_len;
};

struct trace_data {
	/* META pairs in file order */
	size_t nmeta;
	char **meta_keys, **meta_values;
	size_t nstreams;
	struct trace_thread_stream *streams;
	size_t nmmaps;
	struct trace_mmap *mmaps;
	size_t nmunmaps;
	struct trace_munmap *munmaps;
	size_t ncode;
	struct trace_code *code;
	size_t nsyscalls;
	struct trace_syscall *syscalls;
	size_t nsignals;
	struct trace_signal *signals;
	size_t nrdtsc;
	struct trace_rdtsc *rdtsc;
	size_t nthreads;
	struct trace_thread *threads;
	bool complete;        /* an END record was read */
	struct trace_end end;
	uint64_t file_size;
	void *priv;           /* reader-owned storage */
	size_t nskipped;      /* records of unknown type, skipped (valid CRC) */
	/* The file ends inside its last record (copied or cut short: the
	 * writer never leaves one half written): where and what is missing;
	 * every record before it was read. Empty for a whole file. */
	char torn[200];
	size_t nfiles;        /* copies of mapped binaries (FILE records) */
	struct trace_file_copy *files;
	size_t nsched;        /* the global order of instructions (SCHED */
	struct trace_sched_run *sched; /* records), merged; 0 if none */
	size_t nsigframes;    /* SIGFRAME records, in file order */
	struct trace_sigframe *sigframes;
	size_t nstates;       /* STATE records (event recordings), in file order */
	struct trace_state *states;
	size_t ngdb_writes;   /* GDB_MEM and GDB_REGS records, in file order */
	struct trace_gdb_write *gdb_writes;
};

/* Read and validate the whole file. On error returns -1 with a message
 * naming what is wrong (not a recording, unsupported version N, truncated
 * at offset X, checksum mismatch in record N at offset X, ...). A file
 * whose records are all whole but that lacks END (recorder killed) reads
 * fine with complete = false. */
int trace_read_file(const char *path, struct trace_data *td, char *err, size_t errlen);
/* Does path begin as a ptrev recording does (its magic)? Whether it is
 * whole is trace_read_file's to say. */
bool trace_file_looks_like_recording(const char *path);
void trace_data_free(struct trace_data *td);
/* META value for key, or NULL. */
const char *trace_meta(const struct trace_data *td, const char *key);
/* The whole copy of the file path with this build-id (build_id_len 0: a
 * file without one), or NULL when the recording holds none. */
const struct trace_file_copy *trace_file_copy_find(const struct trace_data *td,
						   const char *path,
						   const uint8_t *build_id,
						   uint32_t build_id_len);

#endif
