/* One thread's intel_pt event during a recording: open it on the thread,
 * map its data ring and AUX area, and move what they hold into the trace
 * (PT bytes as PT chunks, mapping records as MMAP records). */
#include "pt_backend_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int pt_snapshot_maps(struct pt_rec *r, pid_t tid)
{
	if (sideband_update(r->sb, tid, 0) < 0) {
		r->write_failed = true;
		snprintf(r->err, r->errlen, "cannot record the mappings of process %d",
			 (int)r->inf->pid);
		return -1;
	}
	return 0;
}

struct pt_tev *pt_tev_find(struct pt_rec *r, pid_t tid)
{
	for (size_t i = 0; i < r->ntevs; i++)
		if (r->tevs[i].tid == tid)
			return &r->tevs[i];
	return NULL;
}

static void unmap_tev(struct pt_tev *t)
{
	if (t->aux_base)
		munmap(t->aux_base, t->aux_len);
	if (t->base)
		munmap(t->base, t->base_len);
	if (t->fd >= 0)
		close(t->fd);
	t->aux_base = t->base = NULL;
	t->fd = -1;
}

static void map_error(struct pt_rec *r, const char *what, size_t bytes, int e)
{
	const char *hint = e == EPERM || e == ENOMEM
		? ": over the locked-memory limit (/proc/sys/kernel/perf_event_mlock_kb "
		  "and ulimit -l); use a smaller AUX size or run as root"
		: "";
	snprintf(r->err, r->errlen, "cannot map the %zu-byte %s: %s%s", bytes, what,
		 strerror(e), hint);
}

int pt_tev_open(struct pt_rec *r, pid_t tid)
{
	if (r->ntevs == r->cap_tevs) {
		size_t cap = r->cap_tevs ? 2 * r->cap_tevs : 8;
		struct pt_tev *n = realloc(r->tevs, cap * sizeof(*n));
		if (!n) {
			snprintf(r->err, r->errlen, "out of memory");
			return -1;
		}
		r->tevs = n;
		r->cap_tevs = cap;
	}
	struct pt_tev t = { .tid = tid, .fd = -1 };
	long fd = syscall(SYS_perf_event_open, &r->attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL && r->attr.build_id) {
		/* Kernels before 5.12 have no build-ids in MMAP2: do without. */
		r->attr.build_id = 0;
		fd = syscall(SYS_perf_event_open, &r->attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0) {
		snprintf(r->err, r->errlen, "perf_event_open(intel_pt) on thread %d: %s",
			 (int)tid, strerror(errno));
		return -1;
	}
	t.fd = (int)fd;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	t.base_len = page + r->data_bytes;
	t.base = mmap(NULL, t.base_len, PROT_READ | PROT_WRITE, MAP_SHARED, t.fd, 0);
	if (t.base == MAP_FAILED) {
		t.base = NULL;
		map_error(r, "perf data ring", r->data_bytes, errno);
		unmap_tev(&t);
		return -1;
	}
	struct perf_event_mmap_page *pc = t.base;
	/* Tell the kernel where the AUX area goes (right after the data
	 * ring) before mapping it there. Writable: non-overwrite mode, the
	 * kernel never overwrites bytes we have not released. */
	pc->aux_offset = t.base_len;
	pc->aux_size = r->aux_bytes;
	t.aux_len = r->aux_bytes;
	t.aux_base = !t.aux_len ? NULL
		: mmap(NULL, t.aux_len, PROT_READ | PROT_WRITE, MAP_SHARED, t.fd,
		       (off_t)pc->aux_offset);
	if (t.aux_base == MAP_FAILED) {
		t.aux_base = NULL;
		map_error(r, "PT AUX area", r->aux_bytes, errno);
		unmap_tev(&t);
		return -1;
	}
	t.ring = (struct pt_ring){
		.pc = pc,
		.data = (uint8_t *)t.base + page,
		.data_size = r->data_bytes,
		.aux = t.aux_base,
		.aux_size = r->aux_bytes,
	};
	if (ioctl(t.fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		snprintf(r->err, r->errlen, "cannot enable intel_pt on thread %d: %s", (int)tid,
			 strerror(errno));
		unmap_tev(&t);
		return -1;
	}
	r->tevs[r->ntevs++] = t;
	return 0;
}

struct drain_ctx {
	struct pt_rec *r;
	struct pt_tev *t;
};

static int pt_sink(void *ctx, const void *buf, size_t len)
{
	struct drain_ctx *d = ctx;
	if (trace_write_pt(d->r->w, d->t->tid, buf, len) < 0) {
		d->r->write_failed = true;
		return -1;
	}
	d->r->pt_bytes += len;
	return 0;
}

static int on_record(void *ctx, const struct perf_event_header *h)
{
	struct drain_ctx *d = ctx;
	struct pt_rec *r = d->r;
	struct pt_sb_event ev;
	if (pt_sb_parse(h, r->attr.sample_id_all, r->attr.sample_type, &ev) < 0) {
		if (r->verbose)
			fprintf(stderr, "ptrev: pt: malformed perf record type %u skipped\n",
				h->type);
		return 0;
	}
	switch (ev.kind) {
	case PT_SB_MMAP: {
		struct trace_mmap m;
		memset(&m, 0, sizeof(m));
		m.tid = (pid_t)ev.tid;
		m.start = ev.addr;
		m.end = ev.addr + ev.len;
		m.offset = ev.pgoff;
		m.prot = ev.type == PERF_RECORD_MMAP2 ? ev.prot : 4 /* PROT_EXEC */;
		m.flags = ev.flags;
		m.build_id_len = ev.build_id_len;
		memcpy(m.build_id, ev.build_id, ev.build_id_len);
		snprintf(m.path, sizeof(m.path), "%s", ev.name ? ev.name : "");
		/* perf names anonymous memory "//anon"; the trace says "". */
		if (strcmp(m.path, "//anon") == 0)
			m.path[0] = 0;
		if (trace_write_mmap(r->w, &m) < 0) {
			r->write_failed = true;
			return -1;
		}
		break;
	}
	case PT_SB_AUX:
		if (ev.truncated) {
			r->truncated++;
			if (r->verbose)
				fprintf(stderr, "ptrev: pt: thread %d: AUX area full, trace data "
					"lost (use a larger AUX size)\n", (int)d->t->tid);
		}
		if (ev.partial)
			r->partial++;
		break;
	case PT_SB_LOST:
		r->lost_records += ev.lost;
		/* Mapping records may be among the lost: take the maps again. */
		if (pt_snapshot_maps(r, d->t->tid) < 0)
			return -1;
		break;
	default:
		break;
	}
	return 0;
}

int pt_tev_drain(struct pt_rec *r, struct pt_tev *t)
{
	struct drain_ctx d = { r, t };
	/* Sideband first: a mapping is recorded before the code run in it. */
	if (pt_data_drain(&t->ring, on_record, &d) < 0) {
		if (r->write_failed || r->err[0]) {
			if (!r->err[0])
				snprintf(r->err, r->errlen, "cannot write the recording");
			return -1;
		}
		/* A malformed record: drop the rest of the ring rather than
		 * stall on it, and take the maps again instead. */
		__atomic_store_n(&t->ring.pc->data_tail,
				 __atomic_load_n(&t->ring.pc->data_head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		r->lost_records++;
		if (pt_snapshot_maps(r, t->tid) < 0)
			return -1;
	}
	if (t->ring.aux && pt_aux_drain(&t->ring, pt_sink, &d, NULL) < 0) {
		if (r->write_failed)
			snprintf(r->err, r->errlen, "cannot write the recording");
		else
			snprintf(r->err, r->errlen, "thread %d: corrupt AUX head/tail", (int)t->tid);
		return -1;
	}
	return 0;
}

int pt_tev_close(struct pt_rec *r, pid_t tid)
{
	struct pt_tev *t = pt_tev_find(r, tid);
	if (!t)
		return 0;
	int rc = pt_tev_drain(r, t);
	unmap_tev(t);
	*t = r->tevs[--r->ntevs];
	return rc;
}
