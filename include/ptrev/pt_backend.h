/* The `pt` recorder backend: hardware Intel Processor Trace through
 * perf_event_open(2) on the intel_pt PMU, user space only, one event per
 * thread, each with its own perf data ring (sideband) and AUX area (PT).
 *
 * The first two functions are what `ptrev record` uses. The rest are the
 * pieces underneath, declared here so that the unit tests exercise exactly
 * the code the real recording runs, on fake sysfs trees and synthetic
 * rings, on machines without Processor Trace. */
#ifndef PTREV_PT_BACKEND_H
#define PTREV_PT_BACKEND_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrev/inferior.h"
#include "ptrev/trace_file.h"

/* Defaults when an option is 0. Unprivileged users may lock only
 * perf_event_mlock_kb (516 KiB by default) of rings in all, so they get
 * small ones; root (or CAP_IPC_LOCK) gets room for long bursts. */
#define PT_BACKEND_DEFAULT_AUX_BYTES       (4u << 20)
#define PT_BACKEND_DEFAULT_AUX_BYTES_USER  (128u << 10)
#define PT_BACKEND_DEFAULT_DATA_BYTES      (32u << 10)

struct pt_backend_opts {
	size_t aux_bytes;   /* AUX (PT) area per thread: a power of two pages; 0 = default
			     * (4 MiB as root, 128 KiB otherwise) */
	size_t data_bytes;  /* perf data ring per thread: a power of two pages; 0 = default */
	int psb_period;     /* -1 or 0: hardware default; N > 0: a PSB every 2^(N+11) bytes,
			     * needs caps/psb_cyc and bit N of caps/psb_periods */
	bool verbose;       /* notes (lost data, threads) on stderr */
	/* Set asynchronously (a SIGINT/SIGTERM handler) to stop recording:
	 * the program is killed, *end says status_kind 2. May be NULL. */
	volatile sig_atomic_t *stop;
};

/* Can this machine record with Intel PT? 0 = yes; -1 with the reason in
 * why (no intel_pt PMU, in a VM, perf_event_paranoid, errno names). */
int pt_backend_probe(char *why, size_t whylen);

/* Record a launched inferior, stopped at its first instruction, until the
 * whole process exits or is killed (or *o->stop is set): PT chunks
 * (trace_write_pt), mappings (from perf's MMAP2 records, and /proc/PID/maps
 * through sideband.h at the start, after execve and after lost records),
 * code bytes not backed by files, THREAD records and pt_* META pairs
 * (pt_cpu "F/M/S", pt_pmu_type, pt_config, pt_aux_bytes, pt_bytes,
 * pt_truncated, pt_lost_records). No syscall/signal/rdtsc log: hardware PT
 * records control flow only. Fills *end (status, duration, signals;
 * instruction and PSB counts are 0: known only after decoding) but does not
 * write END: the caller does. Event positions (`pos`) are 0: hardware PT
 * gives no instruction count while recording. The inferior is gone on
 * return. Returns 0, or -1 with err (the program is killed, status_kind 2). */
int pt_backend_record(struct inferior *inf, struct trace_writer *w,
		      const struct pt_backend_opts *o, struct trace_end *end,
		      char *err, size_t errlen);

/* The recording itself with a given event (pt_backend_record.c):
 * pt_backend_record passes the intel_pt attributes. aux_bytes 0 maps no
 * AUX area: the tests use that with a software dummy event (sideband
 * only) to run the same ptrace loop and ring code without PT hardware. */
int pt_backend_record_with(struct inferior *inf, struct trace_writer *w,
			   const struct pt_backend_opts *o, const struct perf_event_attr *attr,
			   size_t aux_bytes, struct trace_end *end, char *err, size_t errlen);

/* ---- probing (pt_backend_probe.c) ---- */

/* Where the probe looks; the real one uses "/sys", "/proc", the CPU and
 * perf_event_open on ourselves. */
struct pt_probe_env {
	const char *sysfs_root;     /* "/sys" */
	const char *procfs_root;    /* "/proc" */
	int cpuid_hypervisor;       /* -1: ask the CPU (leaf 1 ECX bit 31); 0/1: pretend */
	/* Open the test event: an fd, or -errno. NULL: perf_event_open(pid 0, cpu -1). */
	int (*open_event)(struct perf_event_attr *attr, void *ctx);
	void *open_ctx;
};
int pt_backend_probe_env(const struct pt_probe_env *env, char *why, size_t whylen);
/* Does this look like a virtual machine? true with a short description
 * ("cpuid hypervisor bit (KVMKVMKVM)", "/sys/hypervisor/type: xen", ...). */
bool pt_detect_hypervisor(const struct pt_probe_env *env, char *what, size_t len);

/* ---- the PMU's sysfs description and the event attributes (pt_backend_attr.c) ---- */

/* One file of .../intel_pt/format/: NAME holds "config:10", "config:14-17",
 * "config1:0-7" (bits lo..hi of attr.config, config1 or config2). */
struct pt_format_field {
	char name[32];
	int word;           /* 0 config, 1 config1, 2 config2 */
	unsigned lo, hi;
};

#define PT_PMU_MAX_FIELDS 48

struct pt_pmu {
	uint32_t type;                  /* .../intel_pt/type */
	size_t nfields;
	struct pt_format_field fields[PT_PMU_MAX_FIELDS];
	uint32_t cap_psb_cyc;           /* caps/psb_cyc (0 when absent) */
	uint32_t cap_psb_periods;       /* caps/psb_periods: bit N = period N allowed */
};

/* Parse one format file's text. 0, or -1 when it is not "configN:lo[-hi]". */
int pt_format_parse(const char *name, const char *text, struct pt_format_field *f);
/* Read type, format/ and caps/ under sysfs_root (e.g. "/sys"). 0, or -1
 * with why (PMU missing, unreadable or malformed file). */
int pt_pmu_load(const char *sysfs_root, struct pt_pmu *pmu, char *why, size_t whylen);
const struct pt_format_field *pt_pmu_field(const struct pt_pmu *pmu, const char *name);
/* Put value into the bits the named field describes. 0, or -1 with err
 * (no such field, value too wide). */
int pt_pmu_set(const struct pt_pmu *pmu, struct perf_event_attr *attr, const char *name,
	       uint64_t value, char *err, size_t errlen);
/* The attributes ptrev records with: the PMU's type; pt (pass-through) and
 * branch on, tsc on, noretcomp off (RET compression, as our decoder and
 * the sw backend expect), optional psb_period; user space only, disabled
 * until enabled, sideband (mmap2, comm, task) with TID and TIME on every
 * record, AUX wakeups at a quarter of the AUX area. */
int pt_backend_make_attr(const struct pt_pmu *pmu, const struct pt_backend_opts *o,
			 struct perf_event_attr *attr, char *err, size_t errlen);
/* The option values with defaults applied and checked (power of two pages). */
int pt_backend_sizes(const struct pt_backend_opts *o, size_t *aux_bytes, size_t *data_bytes,
		     char *err, size_t errlen);

/* ---- the rings (pt_backend_aux.c) ---- */

/* One event's mapping: control page, data ring and AUX area. Works the
 * same on a real mmap and on a synthetic buffer in memory. */
struct pt_ring {
	struct perf_event_mmap_page *pc;
	uint8_t *data;              /* data ring, data_size bytes (power of two) */
	uint64_t data_size;
	uint8_t *aux;               /* AUX area, aux_size bytes (power of two) */
	uint64_t aux_size;
	bool aux_overwrite;         /* AUX mapped read-only: the kernel overwrites */
	uint64_t aux_seen;          /* overwrite mode: aux_head at the last read */
};

/* Receives copied bytes (AUX) in order; returns 0, or -1 to stop. */
typedef int (*pt_sink_fn)(void *ctx, const void *buf, size_t len);
/* Copy the AUX bytes that are new since the last call to sink, oldest
 * first (two pieces when they wrap), then release them (aux_tail).
 * Non-overwrite mode: [aux_tail, aux_head), both free-running counters.
 * Overwrite mode: [aux_seen, aux_head), of which only the last aux_size
 * bytes still exist; *lost (may be NULL) gets how many were overwritten.
 * Returns the number of bytes given to sink, or -1 (sink failed, or head
 * behind tail: a corrupt control page). */
int64_t pt_aux_drain(struct pt_ring *r, pt_sink_fn sink, void *ctx, uint64_t *lost);

/* Receives each whole perf record (a wrapped record is reassembled). */
typedef int (*pt_record_fn)(void *ctx, const struct perf_event_header *h);
/* Hand every record in [data_tail, data_head) to fn and release them.
 * Returns the record count, or -1 (fn failed, or a malformed record:
 * size < 8 or past head). */
int pt_data_drain(struct pt_ring *r, pt_record_fn fn, void *ctx);

/* ---- sideband records (pt_backend_sideband.c) ---- */

enum pt_sb_kind {
	PT_SB_OTHER = 0,
	PT_SB_MMAP,         /* PERF_RECORD_MMAP or MMAP2 */
	PT_SB_COMM,
	PT_SB_EXIT,
	PT_SB_FORK,
	PT_SB_AUX,
	PT_SB_ITRACE_START,
	PT_SB_LOST,
};

struct pt_sb_event {
	enum pt_sb_kind kind;
	uint32_t type;              /* PERF_RECORD_* */
	uint16_t misc;
	uint32_t pid, tid;          /* MMAP, COMM, EXIT/FORK, ITRACE_START */
	uint32_t ppid, ptid;        /* EXIT/FORK */
	uint64_t addr, len, pgoff;  /* MMAP */
	uint32_t prot, flags;       /* MMAP2 */
	uint32_t maj, min;          /* MMAP2 without build-id */
	uint64_t ino;
	uint8_t build_id[20];       /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint8_t build_id_len;
	const char *name;           /* MMAP file name, COMM name: points into the record */
	bool comm_exec;             /* COMM caused by execve */
	uint64_t aux_offset, aux_size, aux_flags;
	bool truncated, overwrite, partial, collision; /* from aux_flags */
	uint64_t lost;              /* PERF_RECORD_LOST */
	bool has_sample_id;         /* the trailer was present and read */
	uint32_t sid_pid, sid_tid;
	uint64_t sid_time;
};

/* Size of the sample_id trailer for sample_type (TID, TIME, ID,
 * STREAM_ID, CPU, IDENTIFIER), as appended when sample_id_all is set. */
size_t pt_sb_trailer_size(uint64_t sample_type);
/* Decode one record. sample_id_all/sample_type: how the event was opened.
 * 0, or -1 for a record too short for its type or a name that is not
 * NUL-terminated inside the record. */
int pt_sb_parse(const struct perf_event_header *h, bool sample_id_all, uint64_t sample_type,
		struct pt_sb_event *ev);

#endif
