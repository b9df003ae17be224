/* The sw recorder's record sink: every record goes to the writer (when
 * there is one) and, when asked, into an in-memory trace_data built the way
 * replay/trace_records.c builds it from a file (streams in order of their
 * first PT bytes, records in order, code and syscall payloads copied). */
#include "sw_trace_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(void)
{
	fputs("ptrev: out of memory\n", stderr);
	abort();
}

static void *grow(void *arr, size_t n, size_t *cap, size_t elem)
{
	if (n < *cap)
		return arr;
	size_t c = *cap ? *cap * 2 : 16;
	void *p = realloc(arr, c * elem);
	if (!p)
		oom();
	*cap = c;
	return p;
}

#define PUSH(o, field, count, capf) \
	((o)->td.field = grow((o)->td.field, (o)->td.count, &(o)->capf, \
			      sizeof *(o)->td.field), \
	 &(o)->td.field[(o)->td.count++])

static void *dup_bytes(const void *p, size_t n)
{
	void *q = malloc(n ? n : 1);
	if (!q)
		oom();
	if (n)
		memcpy(q, p, n);
	return q;
}

int sw_out_meta(struct sw_out *o, const char *key, const char *value)
{
	if (o->w && trace_write_meta(o->w, key, value) < 0)
		return -1;
	if (!o->keep)
		return 0;
	size_t cap = o->meta_cap;
	o->td.meta_keys = grow(o->td.meta_keys, o->td.nmeta, &o->meta_cap,
			       sizeof *o->td.meta_keys);
	if (cap != o->meta_cap) {
		o->td.meta_values = realloc(o->td.meta_values,
					    o->meta_cap * sizeof *o->td.meta_values);
		if (!o->td.meta_values)
			oom();
	}
	o->td.meta_keys[o->td.nmeta] = dup_bytes(key, strlen(key) + 1);
	o->td.meta_values[o->td.nmeta] = dup_bytes(value, strlen(value) + 1);
	o->td.nmeta++;
	return 0;
}

int sw_out_pt(struct sw_out *o, pid_t tid, const void *data, size_t len)
{
	if (o->w && trace_write_pt(o->w, tid, data, len) < 0)
		return -1;
	if (!o->keep || !len)
		return 0;
	struct trace_data *td = &o->td;
	trace_append_pt(td, &o->pt, tid, data, len);
	return 0;
}

int sw_out_mmap(struct sw_out *o, const struct trace_mmap *m)
{
	if (o->w && trace_write_mmap(o->w, m) < 0)
		return -1;
	if (o->keep)
		*PUSH(o, mmaps, nmmaps, mmaps_cap) = *m;
	return 0;
}

int sw_out_munmap(struct sw_out *o, const struct trace_munmap *m)
{
	if (o->w && trace_write_munmap(o->w, m) < 0)
		return -1;
	if (o->keep)
		*PUSH(o, munmaps, nmunmaps, munmaps_cap) = *m;
	return 0;
}

int sw_out_code(struct sw_out *o, const struct trace_code *c)
{
	if (o->w && trace_write_code(o->w, c) < 0)
		return -1;
	if (o->keep) {
		struct trace_code *k = PUSH(o, code, ncode, code_cap);
		k->addr = c->addr;
		k->len = c->len;
		k->bytes = dup_bytes(c->bytes, c->len);
	}
	return 0;
}

int sw_out_syscall(struct sw_out *o, const struct trace_syscall *s)
{
	if (o->w && trace_write_syscall(o->w, s) < 0)
		return -1;
	if (!o->keep)
		return 0;
	struct trace_syscall *k = PUSH(o, syscalls, nsyscalls, syscalls_cap);
	*k = *s;
	k->writes = NULL;
	k->nwrites = 0;
	if (s->nwrites) {
		struct trace_mem_write *ws = malloc(s->nwrites * sizeof *ws);
		if (!ws)
			oom();
		for (size_t i = 0; i < s->nwrites; i++) {
			ws[i] = s->writes[i];
			ws[i].bytes = dup_bytes(s->writes[i].bytes, s->writes[i].len);
		}
		k->writes = ws;
		k->nwrites = s->nwrites;
	}
	return 0;
}

int sw_out_signal(struct sw_out *o, const struct trace_signal *s)
{
	if (o->w && trace_write_signal(o->w, s) < 0)
		return -1;
	if (o->keep)
		*PUSH(o, signals, nsignals, signals_cap) = *s;
	return 0;
}

int sw_out_rdtsc(struct sw_out *o, const struct trace_rdtsc *r)
{
	if (o->w && trace_write_rdtsc(o->w, r) < 0)
		return -1;
	if (o->keep)
		*PUSH(o, rdtsc, nrdtsc, rdtsc_cap) = *r;
	return 0;
}

int sw_out_thread(struct sw_out *o, const struct trace_thread *t)
{
	if (o->w && trace_write_thread(o->w, t) < 0)
		return -1;
	if (o->keep)
		*PUSH(o, threads, nthreads, threads_cap) = *t;
	return 0;
}

int sw_out_file(struct sw_out *o, const struct trace_file_copy *f)
{
	if (o->w && trace_write_file(o->w, f) < 0)
		return -1;
	if (o->keep) {
		struct trace_file_copy *k = PUSH(o, files, nfiles, files_cap);
		*k = *f;
		k->path = dup_bytes(f->path, strlen(f->path) + 1);
		k->bytes = dup_bytes(f->bytes, (size_t)f->size);
		k->len = f->size;
	}
	return 0;
}

int sw_out_sched(struct sw_out *o, const struct trace_sched_run *runs, size_t n)
{
	for (size_t i = 0; o->w && i < n; i += TRACE_SCHED_MAX_RUNS) {
		size_t k = n - i < TRACE_SCHED_MAX_RUNS ? n - i : TRACE_SCHED_MAX_RUNS;
		if (trace_write_sched(o->w, runs + i, k) < 0)
			return -1;
	}
	if (o->keep)
		for (size_t i = 0; i < n; i++)
			trace_append_sched(&o->td, &o->sched_cap, &runs[i]);
	return 0;
}

int sw_out_sigframe(struct sw_out *o, const struct trace_sigframe *f)
{
	if (o->w && trace_write_sigframe(o->w, f) < 0)
		return -1;
	if (o->keep) {
		struct trace_sigframe *k = PUSH(o, sigframes, nsigframes, sigframes_cap);
		*k = *f;
		k->bytes = dup_bytes(f->bytes, f->len);
	}
	return 0;
}

int sw_out_end(struct sw_out *o, const struct trace_end *e)
{
	if (o->w && trace_write_end(o->w, e) < 0)
		return -1;
	o->td.end = *e;
	o->td.complete = true;
	return 0;
}

void sw_out_free(struct sw_out *o)
{
	struct trace_data *td = &o->td;
	for (size_t i = 0; i < td->nmeta; i++) {
		free(td->meta_keys[i]);
		free(td->meta_values[i]);
	}
	free(td->meta_keys);
	free(td->meta_values);
	for (size_t i = 0; i < td->nstreams; i++)
		free(td->streams[i].pt);
	free(td->streams);
	free(td->mmaps);
	free(td->munmaps);
	for (size_t i = 0; i < td->ncode; i++)
		free((void *)td->code[i].bytes);
	free(td->code);
	for (size_t i = 0; i < td->nsyscalls; i++) {
		for (size_t j = 0; j < td->syscalls[i].nwrites; j++)
			free((void *)td->syscalls[i].writes[j].bytes);
		free((void *)td->syscalls[i].writes);
	}
	free(td->syscalls);
	free(td->signals);
	free(td->rdtsc);
	free(td->threads);
	for (size_t i = 0; i < td->nfiles; i++) {
		free((void *)td->files[i].path);
		free((void *)td->files[i].bytes);
	}
	free(td->files);
	free(td->sched);
	for (size_t i = 0; i < td->nsigframes; i++)
		free((void *)td->sigframes[i].bytes);
	free(td->sigframes);
	trace_pt_appender_free(&o->pt);
	memset(o, 0, sizeof *o);
}
