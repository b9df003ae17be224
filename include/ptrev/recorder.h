/* The sw recorder backend (server/record/sw) as `ptrev record` uses it.
 *
 * `ptrev record` (record_main, cli.h) launches the program under ptrace and
 * hands it to a backend: `pt` (hardware Intel PT, pt_backend.h) or `sw`,
 * which single-steps every thread and emits the PT a CPU would, with
 * libipt's encoder (pt_encoder.h). Both backends also write the sideband
 * (mappings, code bytes not backed by files) and the event log (syscalls
 * and the memory they wrote, signals, rdtsc values, threads) that replay
 * needs. The META records every recording starts with: record_meta.h. The
 * sw backend driven step by step (the live server): sw_engine.h. */
#ifndef PTREV_RECORDER_H
#define PTREV_RECORDER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrev/inferior.h"
#include "ptrev/trace_file.h"

struct sw_record_opts {
	uint32_t psb_period;   /* bytes of trace between PSB+; 0: 4096 */
	/* Set asynchronously (e.g. by a SIGINT/SIGTERM handler) to stop the
	 * recording: the file is finished with status_kind 2 and the program
	 * is killed. May be NULL. */
	volatile sig_atomic_t *stop;
	/* sw engine (sw_engine.h): write the file only, keep no copy of the
	 * recording in memory (sw_engine_data returns NULL). */
	bool file_only;
	/* Do not copy the mapped binaries into the recording (--no-copy):
	 * only their paths and build-ids are kept. */
	bool no_copy;
	/* Let rseq through instead of refusing it (a recording that starts
	 * mid-run: the program registered rseq before, and glibc then aborts
	 * a new thread whose registration fails; such a recording has no
	 * full state that the kernel's rseq writes could spoil). */
	bool allow_rseq;
};

/* Record the launched, stopped inferior (inferior_launch) with the sw
 * backend until the program exits, dies by a signal, or *opts->stop is set.
 * Writes THREAD, PT, MMAP/MUNMAP/CODE, SYSCALL, SIGNAL and RDTSC records and
 * fills *end (the caller writes END, after META it may add). The inferior
 * is gone on return. Returns 0, or -1 with a message in err (the program is
 * killed; *end still describes what was recorded, status_kind 2). */
int sw_backend_record(struct inferior *inf, struct trace_writer *w,
		      const struct sw_record_opts *opts, struct trace_end *end,
		      char *err, size_t errlen);

#endif
