/* Writing a whole recording held in memory (a live recording, or one read
 * back) to a new file: `monitor save FILE`. */
#include <stdio.h>

#include "ptrev/trace_file.h"

int trace_save(const struct trace_data *td, const char *path, const struct trace_end *end,
	       char *err, size_t errlen)
{
	struct trace_writer *w = trace_writer_open(path, err, errlen);
	if (!w)
		return -1;
	int r = 0;
	for (size_t i = 0; i < td->nmeta && r == 0; i++)
		r = trace_write_meta(w, td->meta_keys[i], td->meta_values[i]);
	for (size_t i = 0; i < td->nthreads && r == 0; i++)
		r = trace_write_thread(w, &td->threads[i]);
	for (size_t i = 0; i < td->nmmaps && r == 0; i++)
		r = trace_write_mmap(w, &td->mmaps[i]);
	for (size_t i = 0; i < td->nmunmaps && r == 0; i++)
		r = trace_write_munmap(w, &td->munmaps[i]);
	for (size_t i = 0; i < td->ncode && r == 0; i++)
		r = trace_write_code(w, &td->code[i]);
	/* Copies of binaries; one cut short by a killed recorder is useless. */
	for (size_t i = 0; i < td->nfiles && r == 0; i++)
		if (td->files[i].len == td->files[i].size)
			r = trace_write_file(w, &td->files[i]);
	for (size_t i = 0; i < td->nsyscalls && r == 0; i++)
		r = trace_write_syscall(w, &td->syscalls[i]);
	for (size_t i = 0; i < td->nsignals && r == 0; i++)
		r = trace_write_signal(w, &td->signals[i]);
	for (size_t i = 0; i < td->nsigframes && r == 0; i++)
		r = trace_write_sigframe(w, &td->sigframes[i]);
	for (size_t i = 0; i < td->nstates && r == 0; i++)
		r = trace_write_state(w, &td->states[i]);
	for (size_t i = 0; i < td->ngdb_writes && r == 0; i++)
		r = trace_write_gdb_write(w, &td->gdb_writes[i]);
	for (size_t i = 0; i < td->nrdtsc && r == 0; i++)
		r = trace_write_rdtsc(w, &td->rdtsc[i]);
	/* PT in bounded chunks: a record's payload has a size limit. */
	for (size_t i = 0; i < td->nstreams && r == 0; i++) {
		const struct trace_thread_stream *st = &td->streams[i];
		for (size_t off = 0; off < st->pt_len && r == 0; off += 65536) {
			size_t n = st->pt_len - off < 65536 ? st->pt_len - off : 65536;
			r = trace_write_pt(w, st->tid, st->pt + off, n);
		}
	}
	/* The reader merges runs across records, so it gets the same runs
	 * back. */
	if (r == 0)
		r = trace_write_schedule(w, td->sched, td->nsched);
	if (r == 0 && end)
		r = trace_write_end(w, end);
	char cerr[256];
	if (trace_writer_close(w, cerr, sizeof cerr) != 0 && r == 0) {
		snprintf(err, errlen, "%s", cerr);
		return -1;
	}
	if (r != 0)
		snprintf(err, errlen, "cannot write %s", path);
	return r == 0 ? 0 : -1;
}
