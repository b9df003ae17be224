/* Tests for the .ptrev file (replay/trace_*.c, docs/trace-format.md):
 * every record type written and read back equal; PT chunks concatenated
 * per thread; a file without END (recorder killed, for real) read as an
 * incomplete prefix; every truncation length and every single-bit flip
 * of a small file refused with a precise error; wrong version, huge
 * lengths, malformed payloads with valid checksums, records after END,
 * unknown record types skipped; random corruption with checksums
 * repaired (run this under ASan+UBSan); a write failure leaving whole
 * records only; `ptrev info` output, complete and incomplete; copies
 * of binaries (FILE records) split in chunks, read back, found by path
 * and build-id, saved again, cut short by a killed recorder; the thread
 * schedule (SCHED records) merged across records, saved, kept in memory
 * by a writer, refused when malformed; signal frames (SIGFRAME records)
 * read back byte for byte, saved, refused by the writer and the reader
 * when out of bounds, copied into a writer's kept recording; a writer
 * keeping its recording in memory, beside a file or alone, holds exactly
 * what reading the file back gives, for every record type. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ptrev/trace_file.h"
#include "ptrev/trace_info.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"

/* SIGNAL payload: tid:i32 pos:u64 signo:i32 siginfo[128] handler_ip:u64. */
#define TRACE_SIGNAL_LEN_FOR_TEST (4 + 8 + 4 + 128 + 8)

static char dir[64];
static char errbuf[512];

static const char *tmp(const char *name)
{
	static char paths[8][128];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, 128, "%s/%s", dir, name);
	return p;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(n + 1);
	*len = fread(b, 1, n, f);
	b[*len] = 0;
	fclose(f);
	return b;
}

static void spit(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- the sample recording: one record of every type ---- */

static const uint8_t pt_a[] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
			       0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
			       0x02, 0x23};
static const uint8_t code_bytes[] = {0x55, 0x48, 0x89, 0xe5, 0xc3};
static const uint8_t wr0[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const uint8_t wr1[] = {0xaa};

static struct trace_mmap sample_mmap(void)
{
	struct trace_mmap m;
	memset(&m, 0, sizeof m);
	m.tid = 0;
	m.pos = 0;
	m.start = 0x400000;
	m.end = 0x401000;
	m.offset = 0x1000;
	m.prot = 5;
	m.flags = 2;
	m.build_id_len = 20;
	for (int i = 0; i < 20; i++)
		m.build_id[i] = (uint8_t)(0xb0 + i);
	strcpy(m.path, "/usr/bin/some prog");
	return m;
}

static struct trace_mem_write sample_writes[2];

static struct trace_syscall sample_syscall(void)
{
	struct trace_syscall s;
	memset(&s, 0, sizeof s);
	s.tid = 100;
	s.pos = 1234;
	s.nr = 0;
	for (int i = 0; i < 6; i++)
		s.args[i] = 0x1111111111111111ull * (i + 1);
	s.result = -14;
	s.unknown = true;
	s.kept_cpu = true;
	sample_writes[0] = (struct trace_mem_write){0x7ffd0000, wr0, sizeof wr0};
	sample_writes[1] = (struct trace_mem_write){0x7ffd1000, wr1, sizeof wr1};
	s.nwrites = 2;
	s.writes = sample_writes;
	return s;
}

static struct trace_signal sample_signal(void)
{
	struct trace_signal s;
	memset(&s, 0, sizeof s);
	s.tid = 101;
	s.pos = 77;
	s.signo = SIGSEGV;
	for (int i = 0; i < 128; i++)
		s.siginfo[i] = (uint8_t)i;
	s.handler_ip = 0x401234;
	return s;
}

static const struct trace_rdtsc sample_rdtsc = {100, 55, 0x123456789abcdefull, 7, true};
static const struct trace_thread sample_thread_start = {101, 100, 500, false, 0};
static const struct trace_thread sample_thread_exit = {101, 0, 900, true, -3};
static const struct trace_end sample_end = {1, SIGSEGV, 123456, 3, 2500000000ull, 5, 1};
static const struct trace_sched_run sample_sched[3] = {{100, 0, 3}, {101, 0, 2}, {100, 3, 4}};
static uint8_t sample_frame_bytes[40];

static struct trace_sigframe sample_sigframe(void)
{
	for (size_t i = 0; i < sizeof sample_frame_bytes; i++)
		sample_frame_bytes[i] = (uint8_t)(0xf0 ^ i);
	return (struct trace_sigframe){101, 77, 0x7ffe1000, sample_frame_bytes,
				       sizeof sample_frame_bytes};
}

/* Frames compared field by field (the struct has padding). */
static bool same_sigframe(const struct trace_sigframe *a, const struct trace_sigframe *b)
{
	return a->tid == b->tid && a->pos == b->pos && a->addr == b->addr && a->len == b->len &&
	       a->bytes && !memcmp(a->bytes, b->bytes, b->len);
}

/* Runs compared field by field (the struct has padding). */
static bool same_sched(const struct trace_sched_run *a, size_t na,
		       const struct trace_sched_run *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].tid != b[i].tid || a[i].pos != b[i].pos || a[i].count != b[i].count)
			return false;
	return true;
}

/* Writes the sample's records with w (left open); boundaries[] gets the
 * size of the file at path after each record. */
static void write_sample_records(struct trace_writer *w, const char *path, bool with_end,
				 bool with_unknown, uint64_t *boundaries, int *nb)
{
	int n = 0;
#define REC(call)                                                          \
	do {                                                               \
		CHECK((call) == 0, "%s", #call);                           \
		if (boundaries)                                            \
			boundaries[n] = file_size(path);                   \
		n++;                                                       \
	} while (0)
	if (boundaries)
		boundaries[n] = file_size(path);
	n++;
	REC(trace_write_meta(w, "backend", "sw"));
	REC(trace_write_meta(w, "program", "/usr/bin/some prog"));
	REC(trace_write_meta(w, "arg", "some prog"));
	REC(trace_write_meta(w, "arg", "-x"));
	REC(trace_write_meta(w, "arg", "two words"));
	REC(trace_write_meta(w, "cpu", "GenuineIntel/6/85/4"));
	REC(trace_write_meta(w, "empty", ""));
	struct trace_thread t0 = {100, 0, 0, false, 0};
	REC(trace_write_thread(w, &t0));
	struct trace_mmap m = sample_mmap();
	REC(trace_write_mmap(w, &m));
	REC(trace_write_pt(w, 100, pt_a, sizeof pt_a));
	struct trace_code c = {0x7fff0000, code_bytes, sizeof code_bytes};
	REC(trace_write_code(w, &c));
	struct trace_syscall s = sample_syscall();
	REC(trace_write_syscall(w, &s));
	if (with_unknown)
		REC(trace_write_raw(w, 999, "future", 6));
	struct trace_munmap u = {100, 1300, 0x500000, 0x502000};
	REC(trace_write_munmap(w, &u));
	REC(trace_write_thread(w, &sample_thread_start));
	REC(trace_write_pt(w, 101, pt_a, 4));
	REC(trace_write_sched(w, sample_sched, 3));
	struct trace_signal sg = sample_signal();
	REC(trace_write_signal(w, &sg));
	struct trace_sigframe sf = sample_sigframe();
	REC(trace_write_sigframe(w, &sf));
	REC(trace_write_rdtsc(w, &sample_rdtsc));
	REC(trace_write_pt(w, 100, pt_a + 4, 2));
	REC(trace_write_thread(w, &sample_thread_exit));
	if (with_end)
		REC(trace_write_end(w, &sample_end));
#undef REC
	*nb = n;
}

/* Writes the sample; boundaries[] gets the file size after each record. */
static int write_sample(const char *path, bool with_end, bool with_unknown,
			uint64_t *boundaries, int *nb)
{
	struct trace_writer *w = trace_writer_open(path, errbuf, sizeof errbuf);
	CHECK(w, "open: %s", errbuf);
	if (!w)
		return -1;
	write_sample_records(w, path, with_end, with_unknown, boundaries, nb);
	CHECK(trace_writer_close(w, errbuf, sizeof errbuf) == 0, "close: %s", errbuf);
	return 0;
}

static void check_sample(const struct trace_data *td, bool with_end)
{
	CHECK(td->complete == with_end, "complete %d", td->complete);
	CHECK(td->nmeta == 7, "nmeta %zu", td->nmeta);
	if (td->nmeta == 7) {
		CHECK(!strcmp(td->meta_keys[0], "backend") && !strcmp(td->meta_values[0], "sw"), "meta 0");
		CHECK(!strcmp(td->meta_keys[4], "arg") && !strcmp(td->meta_values[4], "two words"), "meta 4");
		CHECK(!strcmp(td->meta_values[6], ""), "empty value");
	}
	CHECK(trace_meta(td, "cpu") && !strcmp(trace_meta(td, "cpu"), "GenuineIntel/6/85/4"), "cpu");
	CHECK(trace_meta(td, "nope") == NULL, "missing key");
	CHECK(td->nstreams == 2, "nstreams %zu", td->nstreams);
	if (td->nstreams == 2) {
		CHECK(td->streams[0].tid == 100 && td->streams[0].pt_len == sizeof pt_a + 2 &&
		      !memcmp(td->streams[0].pt, pt_a, sizeof pt_a) &&
		      !memcmp(td->streams[0].pt + sizeof pt_a, pt_a + 4, 2), "stream 100");
		CHECK(td->streams[1].tid == 101 && td->streams[1].pt_len == 4 &&
		      !memcmp(td->streams[1].pt, pt_a, 4), "stream 101");
	}
	struct trace_mmap m = sample_mmap();
	CHECK(td->nmmaps == 1 && !memcmp(&td->mmaps[0], &m, sizeof m), "mmap differs");
	CHECK(td->nmunmaps == 1 && td->munmaps[0].tid == 100 && td->munmaps[0].pos == 1300 &&
	      td->munmaps[0].start == 0x500000 && td->munmaps[0].end == 0x502000, "munmap");
	CHECK(td->ncode == 1 && td->code[0].addr == 0x7fff0000 &&
	      td->code[0].len == sizeof code_bytes &&
	      !memcmp(td->code[0].bytes, code_bytes, sizeof code_bytes), "code");
	struct trace_syscall s = sample_syscall();
	CHECK(td->nsyscalls == 1, "nsyscalls %zu", td->nsyscalls);
	if (td->nsyscalls == 1) {
		const struct trace_syscall *r = &td->syscalls[0];
		CHECK(r->tid == s.tid && r->pos == s.pos && r->nr == s.nr &&
		      !memcmp(r->args, s.args, sizeof s.args) && r->result == -14 &&
		      r->unknown && r->kept_cpu && r->nwrites == 2, "syscall fields");
		for (size_t i = 0; i < r->nwrites && i < 2; i++)
			CHECK(r->writes[i].addr == s.writes[i].addr &&
			      r->writes[i].len == s.writes[i].len &&
			      !memcmp(r->writes[i].bytes, s.writes[i].bytes, s.writes[i].len),
			      "syscall write %zu", i);
	}
	struct trace_signal sg = sample_signal();
	CHECK(td->nsignals == 1 && td->signals[0].tid == sg.tid && td->signals[0].pos == sg.pos &&
	      td->signals[0].signo == SIGSEGV && !memcmp(td->signals[0].siginfo, sg.siginfo, 128) &&
	      td->signals[0].handler_ip == sg.handler_ip, "signal");
	CHECK(td->nrdtsc == 1 && td->rdtsc[0].tid == 100 && td->rdtsc[0].pos == 55 &&
	      td->rdtsc[0].value == sample_rdtsc.value && td->rdtsc[0].aux == 7 &&
	      td->rdtsc[0].is_rdtscp, "rdtsc");
	CHECK(td->nthreads == 3, "nthreads %zu", td->nthreads);
	if (td->nthreads == 3) {
		CHECK(td->threads[0].tid == 100 && td->threads[0].parent == 0 && !td->threads[0].exited, "t0");
		CHECK(td->threads[1].tid == 101 && td->threads[1].parent == 100 &&
		      td->threads[1].pos == 500 && !td->threads[1].exited, "t1");
		CHECK(td->threads[2].tid == 101 && td->threads[2].exited &&
		      td->threads[2].exit_code == -3 && td->threads[2].pos == 900, "t2");
	}
	if (with_end)
		CHECK(!memcmp(&td->end, &sample_end, sizeof sample_end), "end differs");
	CHECK(same_sched(td->sched, td->nsched, sample_sched, 3), "sample schedule differs");
	struct trace_sigframe sf = sample_sigframe();
	CHECK(td->nsigframes == 1 && same_sigframe(&td->sigframes[0], &sf), "sigframe differs");
}

static void test_crc(void)
{
	extern uint32_t trace_crc32c_soft(uint32_t, const void *, size_t);
	CHECK(trace_crc32c(0, "123456789", 9) == 0xE3069283u, "check value %08x",
	      trace_crc32c(0, "123456789", 9));
	CHECK(trace_crc32c_soft(0, "123456789", 9) == 0xE3069283u, "soft check value");
	uint8_t buf[300];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	for (size_t n = 0; n < sizeof buf; n += 7) {
		CHECK(trace_crc32c(0, buf + 1, n) == trace_crc32c_soft(0, buf + 1, n), "len %zu", n);
		/* incremental use equals one call */
		CHECK(trace_crc32c(trace_crc32c(0, buf, n / 2), buf + n / 2, n - n / 2) ==
		      trace_crc32c(0, buf, n), "incremental %zu", n);
	}
}

static void test_roundtrip(void)
{
	const char *p = tmp("sample.ptrev");
	int nb;
	write_sample(p, true, true, NULL, &nb);
	struct trace_data td;
	int rc = trace_read_file(p, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0, "read: %s", errbuf);
	if (rc == 0) {
		check_sample(&td, true);
		CHECK(td.nskipped == 1, "nskipped %zu", td.nskipped);
		CHECK(td.file_size == file_size(p), "file_size");
		trace_data_free(&td);
	}
	/* Freeing twice (zeroed) is harmless. */
	trace_data_free(&td);
}

static void test_many_chunks(void)
{
	const char *p = tmp("chunks.ptrev");
	struct trace_writer *w = trace_writer_open(p, errbuf, sizeof errbuf);
	CHECK(w, "%s", errbuf);
	if (!w)
		return;
	enum { THREADS = 3, CHUNKS = 700 };
	size_t expect_len[THREADS] = {0};
	uint8_t chunk[97];
	for (int i = 0; i < CHUNKS; i++) {
		int t = (i * 7) % THREADS;
		size_t n = (size_t)(i % 97);
		for (size_t k = 0; k < n; k++)
			chunk[k] = (uint8_t)(expect_len[t] + k + t * 31);
		CHECK(trace_write_pt(w, 1000 + t, chunk, n) == 0, "pt %d", i);
		expect_len[t] += n;
	}
	CHECK(trace_writer_close(w, errbuf, sizeof errbuf) == 0, "%s", errbuf);
	struct trace_data td;
	CHECK(trace_read_file(p, &td, errbuf, sizeof errbuf) == 0, "%s", errbuf);
	CHECK(!td.complete, "no END written");
	CHECK(td.nstreams == THREADS, "nstreams %zu", td.nstreams);
	for (size_t s = 0; s < td.nstreams; s++) {
		int t = td.streams[s].tid - 1000;
		CHECK(t >= 0 && t < THREADS && td.streams[s].pt_len == expect_len[t],
		      "stream %zu len %zu", s, td.streams[s].pt_len);
		if (t < 0 || t >= THREADS)
			continue;
		bool ok = true;
		for (size_t k = 0; k < td.streams[s].pt_len; k++)
			ok &= td.streams[s].pt[k] == (uint8_t)(k + t * 31);
		CHECK(ok, "stream %d bytes out of order", t);
	}
	trace_data_free(&td);
}

/* A recorder killed with SIGKILL mid-recording, without closing. */
static void test_killed_writer(void)
{
	const char *p = tmp("killed.ptrev");
	pid_t pid = fork();
	if (pid == 0) {
		struct trace_writer *w = trace_writer_open(p, errbuf, sizeof errbuf);
		if (!w)
			_exit(3);
		trace_write_meta(w, "backend", "sw");
		for (int i = 0; i < 50; i++)
			trace_write_pt(w, 4242, pt_a, sizeof pt_a);
		raise(SIGKILL);
		_exit(4);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child status %x", st);
	struct trace_data td;
	int rc = trace_read_file(p, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0, "%s", errbuf);
	if (rc == 0) {
		CHECK(!td.complete && td.nstreams == 1 && td.streams[0].pt_len == 50 * sizeof pt_a,
		      "complete %d nstreams %zu", td.complete, td.nstreams);
		trace_data_free(&td);
	}
}

/* Every prefix of the sample: a whole-record prefix reads as incomplete;
 * one that ends inside a record (a torn tail) reads as the records before
 * it, saying where the file ends; one inside the file header is refused
 * as truncated (or not a recording at all). */
static void test_truncation(void)
{
	const char *p = tmp("trunc-src.ptrev"), *q = tmp("trunc.ptrev");
	uint64_t bounds[64];
	int nb;
	write_sample(p, true, true, bounds, &nb);
	size_t len;
	uint8_t *b = slurp(p, &len);
	for (size_t l = 0; l < len; l++) {
		spit(q, b, l);
		struct trace_data td;
		errbuf[0] = 0;
		int rc = trace_read_file(q, &td, errbuf, sizeof errbuf);
		bool boundary = false;
		for (int i = 0; i < nb; i++)
			boundary |= bounds[i] == l;
		/* The records wholly before the cut. */
		size_t whole = 0;
		for (int i = 1; i < nb; i++)
			whole += bounds[i] <= l;
		if (boundary) {
			CHECK(rc == 0 && !td.complete && !td.torn[0], "len %zu: %s", l, errbuf);
		} else if (l == 0) {
			CHECK(rc < 0 && strstr(errbuf, "empty file"), "len 0: %s", errbuf);
		} else if (l < 16) { /* the file header */
			CHECK(rc < 0 && !strncmp(errbuf, "truncated: ", 11), "len %zu: '%s'", l, errbuf);
		} else {
			char want[40];
			snprintf(want, sizeof want, "inside record %zu ", whole + 1);
			CHECK(rc == 0 && !td.complete && strstr(td.torn, want) &&
			      (td.nmeta + td.nstreams + td.nsyscalls + td.nsignals + td.nmmaps > 0) ==
				      (whole > 0),
			      "len %zu: rc %d '%s' torn '%s'", l, rc, errbuf, td.torn);
		}
		if (rc == 0)
			trace_data_free(&td);
	}
	/* The exact wording for a record cut in its payload. */
	size_t l = (size_t)bounds[2] + 20;
	spit(q, b, l);
	struct trace_data td;
	char want[200];
	snprintf(want, sizeof want,
		 "the file ends inside record 3 (META) at offset 0x%llx (20 of its %llu bytes are "
		 "there)", (unsigned long long)bounds[2],
		 (unsigned long long)(bounds[3] - bounds[2]));
	CHECK(trace_read_file(q, &td, errbuf, sizeof errbuf) == 0 && !strcmp(td.torn, want),
	      "got '%s' want '%s'", td.torn, want);
	trace_data_free(&td);
	free(b);
}

/* CRC-32C catches every single-bit error, so each flip is refused. */
static void test_bit_flips(void)
{
	const char *p = tmp("flip-src.ptrev"), *q = tmp("flip.ptrev");
	int nb;
	write_sample(p, true, true, NULL, &nb);
	size_t len;
	uint8_t *b = slurp(p, &len);
	int magic = 0, header = 0, rec_header = 0, payload = 0;
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			b[i] ^= (uint8_t)(1 << bit);
			spit(q, b, len);
			b[i] ^= (uint8_t)(1 << bit);
			struct trace_data td;
			errbuf[0] = 0;
			int rc = trace_read_file(q, &td, errbuf, sizeof errbuf);
			CHECK(rc < 0, "flip byte %zu bit %d read fine", i, bit);
			if (rc == 0) {
				trace_data_free(&td);
				continue;
			}
			if (strstr(errbuf, "bad magic"))
				magic++;
			else if (strstr(errbuf, "corrupted file header"))
				header++;
			else if (strstr(errbuf, "header checksum mismatch"))
				rec_header++;
			else if (strstr(errbuf, "checksum mismatch in record"))
				payload++;
			else
				CHECK(0, "flip byte %zu bit %d: unexpected '%s'", i, bit, errbuf);
		}
	}
	CHECK(magic == 64 && header == 64, "magic %d header %d", magic, header);
	CHECK(rec_header > 0 && payload > 0, "rec_header %d payload %d", rec_header, payload);
	free(b);
}

/* A file header / record header with a valid checksum, built by hand. */
static void file_header(uint8_t *h, uint32_t version)
{
	memcpy(h, "PTREVREC", 8);
	put32(h + 8, version);
	put32(h + 12, trace_crc32c(0, h, 12));
}

static void record_header(uint8_t *h, uint32_t type, uint32_t len, uint32_t crc)
{
	put32(h, type);
	put32(h + 4, len);
	put32(h + 8, crc);
	put32(h + 12, trace_crc32c(0, h, 12));
}

static void expect_error(const char *path, const char *want)
{
	struct trace_data td;
	errbuf[0] = 0;
	int rc = trace_read_file(path, &td, errbuf, sizeof errbuf);
	CHECK(rc < 0 && strstr(errbuf, want), "want '%s' got '%s'", want, errbuf);
	if (rc == 0)
		trace_data_free(&td);
}

static void test_headers(void)
{
	const char *q = tmp("hdr.ptrev");
	uint8_t f[64];
	file_header(f, 7);
	spit(q, f, 16);
	expect_error(q, "recording format version 7 is not supported (this ptrev reads version 1)");
	spit(q, "\x7f" "ELF\2\1\1\0\0\0\0\0\0\0\0\0", 16);
	expect_error(q, "not a ptrev recording (bad magic)");
	spit(q, "PTR", 3);
	expect_error(q, "truncated: the file header needs 16 bytes but the file ends at 0x3");
	spit(q, "XY", 2);
	expect_error(q, "not a ptrev recording (bad magic)");
	expect_error(dir, "not a regular file");
	expect_error(tmp("does-not-exist"), "No such file");

	/* Huge lengths behind a valid header checksum: refused before any
	 * allocation or read. */
	file_header(f, 1);
	record_header(f + 16, TRACE_REC_PT, 0xfffffff0u, 0);
	spit(q, f, 32);
	expect_error(q, "malformed PT record 1 at offset 0x10: length 4294967280 exceeds");
	record_header(f + 16, TRACE_REC_PT, 1u << 29, 0);
	spit(q, f, 40);
	struct trace_data td;
	CHECK(trace_read_file(q, &td, errbuf, sizeof errbuf) == 0 &&
	      strstr(td.torn, "record 1 (PT) at offset 0x10 (24 of its 536870928 bytes"),
	      "a length past the file's end is its torn tail: '%s'", td.torn);
	trace_data_free(&td);
	/* A corrupted length is caught by the header checksum. */
	record_header(f + 16, TRACE_REC_PT, 4, trace_crc32c(0, "\1\0\0\0", 4));
	memcpy(f + 32, "\1\0\0\0", 4);
	f[21] ^= 0x40;
	spit(q, f, 36);
	expect_error(q, "corrupted header of record 1 at offset 0x10 (header checksum mismatch)");
	f[21] ^= 0x40;
	f[33] ^= 1;
	spit(q, f, 36);
	expect_error(q, "checksum mismatch in record 1 (PT) at offset 0x10");
}

/* A record of a known type whose payload has a valid checksum but does
 * not parse. */
static void expect_malformed(uint32_t type, const void *payload, size_t len, const char *want)
{
	const char *q = tmp("malformed.ptrev");
	struct trace_writer *w = trace_writer_open(q, errbuf, sizeof errbuf);
	trace_write_meta(w, "backend", "sw");
	trace_write_raw(w, type, payload, len);
	trace_writer_close(w, errbuf, sizeof errbuf);
	expect_error(q, want);
}

static void test_malformed(void)
{
	uint8_t p[512];
	memset(p, 0, sizeof p);
	/* META: key length far beyond the payload */
	put32(p, 0x7fffffff);
	expect_malformed(TRACE_REC_META, p, 8, "malformed META record 2 at offset 0x31: key length");
	put32(p, 3);
	memcpy(p + 4, "a\0b", 3);
	put32(p + 7, 0);
	expect_malformed(TRACE_REC_META, p, 11, "malformed META record 2 at offset 0x31: key contains a NUL");
	put32(p, 0);
	expect_malformed(TRACE_REC_META, p, 8, "empty key");
	put32(p, 1);
	p[4] = 'k';
	put32(p + 5, 100);
	expect_malformed(TRACE_REC_META, p, 12, "needs 100 more bytes");
	/* PT with no room for the tid, and tid 0 */
	expect_malformed(TRACE_REC_PT, p, 2, "malformed PT record 2");
	memset(p, 0, sizeof p);
	expect_malformed(TRACE_REC_PT, p, 8, "thread id 0 is not valid");
	/* SYSCALL claiming 2^32-1 writes in a small payload */
	put32(p, 5);
	memset(p + 4, 0, 76);
	put32(p + 80, 0);
	put32(p + 84 - 4, 0xffffffffu);
	expect_malformed(TRACE_REC_SYSCALL, p, 84 + 24, "claims 4294967295 memory writes");
	put32(p + 80, 2);
	put32(p + 84 + 8, 0x10000000u); /* first write's length */
	expect_malformed(TRACE_REC_SYSCALL, p, 84 + 24, "needs 268435456 more bytes");
	put32(p + 76, 0x80);
	expect_malformed(TRACE_REC_SYSCALL, p, 84 + 24, "unknown flag bits 0x80");
	/* MMAP: build-id length out of range; path length beyond the payload */
	memset(p, 0, sizeof p);
	put32(p + 4 + 32 + 8, 200);
	expect_malformed(TRACE_REC_MMAP, p, 72, "build-id length 200 exceeds 20");
	put32(p + 4 + 32 + 8, 0);
	put32(p + 68, 5000);
	expect_malformed(TRACE_REC_MMAP, p, 72 + 10, "path length 5000 exceeds 4095");
	put32(p + 68, 0);
	p[4 + 8] = 1; /* start 1 > end 0 */
	expect_malformed(TRACE_REC_MMAP, p, 72, "ends before it starts");
	/* SIGNAL 0, END kind 5, trailing bytes */
	memset(p, 0, sizeof p);
	put32(p, 9);
	expect_malformed(TRACE_REC_SIGNAL, p, 152, "signal number 0 out of range");
	put32(p, 5);
	expect_malformed(TRACE_REC_END, p, 48, "status kind 5");
	put32(p, 0);
	expect_malformed(TRACE_REC_END, p, 49, "1 unexpected bytes after the last field");
	expect_malformed(TRACE_REC_END, p, 47, "malformed END record 2");
	/* CODE wrapping around the address space */
	memset(p, 0xff, 8);
	expect_malformed(TRACE_REC_CODE, p, 12, "wrap around the address space");
}

static void test_after_end(void)
{
	const char *q = tmp("after-end.ptrev");
	struct trace_writer *w = trace_writer_open(q, errbuf, sizeof errbuf);
	trace_write_end(w, &sample_end);
	trace_write_pt(w, 5, pt_a, 3);
	trace_writer_close(w, errbuf, sizeof errbuf);
	expect_error(q, "record 2 (PT) at offset 0x50 follows the END record");
}

/* trace_writer_restart: the file begins again, as if just opened (the
 * event recorder at an exec); a kept recording refuses. */
static void test_writer_restart(void)
{
	const char *q = tmp("restart.ptrev");
	struct trace_writer *w = trace_writer_open(q, errbuf, sizeof errbuf);
	trace_write_meta(w, "program", "/bin/sh");
	trace_write_pt(w, 5, pt_a, 3);
	CHECK(trace_writer_restart(w) == 0, "restart: %s", trace_writer_error(w));
	trace_write_meta(w, "program", "/bin/true");
	trace_write_end(w, &sample_end);
	CHECK(trace_writer_close(w, errbuf, sizeof errbuf) == 0, "%s", errbuf);
	struct trace_data td;
	CHECK(trace_read_file(q, &td, errbuf, sizeof errbuf) == 0, "%s", errbuf);
	CHECK(td.nmeta == 1 && strcmp(trace_meta(&td, "program"), "/bin/true") == 0 &&
	      td.nstreams == 0 && td.complete, "only what followed the restart is left");
	trace_data_free(&td);

	struct trace_data kept;
	memset(&kept, 0, sizeof kept);
	w = trace_writer_open_memory(errbuf, sizeof errbuf);
	CHECK(trace_writer_keep(w, &kept) == 0, "keep");
	CHECK(trace_writer_restart(w) < 0 && strstr(trace_writer_error(w), "kept in memory"),
	      "a kept recording refuses to start again");
	trace_writer_close(w, errbuf, sizeof errbuf);
	trace_data_free(&kept);
}

static void test_writer_rejects(void)
{
	const char *q = tmp("rejects.ptrev");
	struct trace_writer *w = trace_writer_open(q, errbuf, sizeof errbuf);
	CHECK(trace_writer_error(w) == NULL, "no error yet");
	CHECK(trace_write_meta(w, "Bad Key", "x") < 0, "bad key accepted");
	CHECK(trace_writer_error(w) && strstr(trace_writer_error(w), "Bad Key"), "reason");
	struct trace_signal s = sample_signal();
	s.signo = 0;
	CHECK(trace_write_signal(w, &s) < 0, "signal 0 accepted");
	struct trace_mmap m = sample_mmap();
	m.build_id_len = 21;
	CHECK(trace_write_mmap(w, &m) < 0, "build-id 21 accepted");
	/* Invalid input does not stop later valid records. */
	CHECK(trace_write_meta(w, "backend", "sw") == 0, "valid after invalid");
	CHECK(trace_writer_close(w, errbuf, sizeof errbuf) < 0 && strstr(errbuf, "Bad Key"),
	      "close reports the first error: %s", errbuf);
	struct trace_data td;
	CHECK(trace_read_file(q, &td, errbuf, sizeof errbuf) == 0 && td.nmeta == 1, "%s", errbuf);
	trace_data_free(&td);
	CHECK(trace_writer_open(tmp("no-such-dir/x"), errbuf, sizeof errbuf) == NULL &&
	      strstr(errbuf, "No such file"), "open error: %s", errbuf);
}

/* In a forked child: a writer of q under a 1000-byte file size limit
 * (SIGXFSZ ignored: writes fail with EFBIG); the child exits 3 without. */
static struct trace_writer *limited_writer(const char *q)
{
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = {1000, 1000};
	setrlimit(RLIMIT_FSIZE, &rl);
	struct trace_writer *w = trace_writer_open(q, errbuf, sizeof errbuf);
	if (!w)
		_exit(3);
	return w;
}

/* A write that fails half-way (file size limit) leaves whole records only. */
static void test_write_failure(void)
{
	const char *q = tmp("fsize.ptrev");
	pid_t pid = fork();
	if (pid == 0) {
		struct trace_writer *w = limited_writer(q);
		uint8_t chunk[150];
		memset(chunk, 0x55, sizeof chunk);
		int ok = 0;
		while (trace_write_pt(w, 7, chunk, sizeof chunk) == 0)
			ok++;
		const char *e = trace_writer_error(w);
		if (!e || !strstr(e, "too large"))
			_exit(4);
		if (trace_write_pt(w, 7, chunk, 1) == 0) /* sticky */
			_exit(5);
		if (trace_writer_close(w, errbuf, sizeof errbuf) == 0)
			_exit(6);
		_exit(ok == 5 ? 0 : 7); /* 16 + 5 * (16 + 4 + 150) = 866 <= 1000 */
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %x", st);
	CHECK(file_size(q) == 16 + 5 * 170, "size %llu", (unsigned long long)file_size(q));
	struct trace_data td;
	CHECK(trace_read_file(q, &td, errbuf, sizeof errbuf) == 0 && !td.complete &&
	      td.nstreams == 1 && td.streams[0].pt_len == 750, "%s", errbuf);
	trace_data_free(&td);

	/* keep_going: the same failure drops the records from there on,
	 * each write reporting success; the file keeps the first five. */
	q = tmp("fsize-keep.ptrev");
	pid = fork();
	if (pid == 0) {
		struct trace_writer *w = limited_writer(q);
		trace_writer_keep_going(w);
		uint8_t chunk[150];
		memset(chunk, 0x55, sizeof chunk);
		for (int i = 0; i < 20; i++)
			if (trace_write_pt(w, 7, chunk, sizeof chunk) != 0)
				_exit(4);
		uint64_t kept = 0;
		if (!trace_writer_io_failed(w, &kept) || kept != 16 + 5 * 170 ||
		    !strstr(trace_writer_error(w), "writing record 6: File too large"))
			_exit(5);
		_exit(trace_writer_close(w, errbuf, sizeof errbuf) < 0 ? 0 : 6);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "keep going: child status %x", st);
	CHECK(trace_read_file(q, &td, errbuf, sizeof errbuf) == 0 && !td.complete &&
	      td.nstreams == 1 && td.streams[0].pt_len == 750, "keep going: %s", errbuf);
	trace_data_free(&td);
}

/* Random corruption with every checksum repaired, so the payload parsers
 * see garbage: any result is fine, a crash or a leak is not. */
static void fix_checksums(uint8_t *b, size_t len)
{
	if (len >= 16)
		put32(b + 12, trace_crc32c(0, b, 12));
	size_t off = 16;
	while (len - off >= 16 && off < len) {
		uint32_t plen = get32(b + off + 4);
		if (plen > len - off - 16)
			plen = (uint32_t)(len - off - 16);
		put32(b + off + 4, plen);
		put32(b + off + 8, trace_crc32c(0, b + off + 16, plen));
		put32(b + off + 12, trace_crc32c(0, b + off, 12));
		off += 16 + plen;
	}
}

static void test_fuzz(void)
{
	const char *p = tmp("fuzz-src.ptrev"), *q = tmp("fuzz.ptrev");
	int nb;
	write_sample(p, true, true, NULL, &nb);
	size_t len;
	uint8_t *orig = slurp(p, &len);
	uint8_t *b = malloc(len);
	unsigned seed = 12345;
	int ok = 0, bad = 0;
	volatile unsigned sink = 0;
	for (int iter = 0; iter < 3000; iter++) {
		memcpy(b, orig, len);
		int n = 1 + rand_r(&seed) % 8;
		for (int k = 0; k < n; k++) {
			size_t at = 16 + rand_r(&seed) % (len - 16);
			switch (rand_r(&seed) % 3) {
			case 0: b[at] ^= (uint8_t)(1 << (rand_r(&seed) % 8)); break;
			case 1: b[at] = (uint8_t)rand_r(&seed); break;
			default: b[at] = (rand_r(&seed) & 1) ? 0xff : 0; break;
			}
		}
		fix_checksums(b, len);
		spit(q, b, len);
		struct trace_data td;
		if (trace_read_file(q, &td, errbuf, sizeof errbuf) == 0) {
			ok++;
			/* touch everything the reader handed out */
			for (size_t i = 0; i < td.nsyscalls; i++)
				for (size_t j = 0; j < td.syscalls[i].nwrites; j++)
					for (size_t k = 0; k < td.syscalls[i].writes[j].len; k++)
						sink += td.syscalls[i].writes[j].bytes[k];
			for (size_t i = 0; i < td.ncode; i++)
				for (size_t k = 0; k < td.code[i].len; k++)
					sink += td.code[i].bytes[k];
			for (size_t i = 0; i < td.nmmaps; i++)
				sink += strlen(td.mmaps[i].path);
			for (size_t i = 0; i < td.nmeta; i++)
				sink += strlen(td.meta_keys[i]) + strlen(td.meta_values[i]);
			for (size_t i = 0; i < td.nsched; i++)
				sink += (unsigned)(td.sched[i].pos + td.sched[i].count);
			for (size_t i = 0; i < td.nsigframes; i++)
				for (size_t k = 0; k < td.sigframes[i].len; k++)
					sink += td.sigframes[i].bytes[k];
			trace_data_free(&td);
		} else {
			bad++;
			CHECK(!strncmp(errbuf, "malformed ", 10) || !strncmp(errbuf, "truncated: ", 11) ||
			      strstr(errbuf, "follows the END") || strstr(errbuf, "checksum"),
			      "unexpected error '%s'", errbuf);
		}
	}
	(void)sink;
	CHECK(ok > 0 && bad > 0, "ok %d bad %d", ok, bad);
	free(b);
	free(orig);
}

/* ---- ptrev info ---- */

static char *run_info(const char *path, int *rc, char **err_out)
{
	const char *out = tmp("info.out"), *errp = tmp("info.err");
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fo, 1);
	dup2(fe, 2);
	char *argv[] = {"info", (char *)path, NULL};
	*rc = trace_info_main(2, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fo);
	close(fe);
	size_t n;
	*err_out = (char *)slurp(errp, &n);
	return (char *)slurp(out, &n);
}

static void test_info(void)
{
	const char *p = tmp("info.ptrev");
	struct trace_writer *w = trace_writer_open(p, errbuf, sizeof errbuf);
	trace_write_meta(w, "backend", "sw");
	trace_write_meta(w, "program", "/tmp/prog");
	trace_write_meta(w, "arg", "prog");
	trace_write_meta(w, "arg", "--fast");
	trace_write_meta(w, "arg", "two words");
	trace_write_meta(w, "cwd", "/home/me");
	trace_write_meta(w, "pid", "4321");
	trace_write_meta(w, "cpu", "GenuineIntel/6/85/4");
	trace_write_meta(w, "psb_period", "4096");
	trace_write_meta(w, "ptrev_version", "0.1.0");
	trace_write_meta(w, "start_time", "2024-05-01T12:00:00Z");
	struct trace_thread t0 = {4321, 0, 0, false, 0}, t1 = {4322, 4321, 10, false, 0};
	trace_write_thread(w, &t0);
	trace_write_thread(w, &t1);
	/* PSB, PSBEND, pad, garbage (a decode error), PSB, PSBEND */
	uint8_t pt[64];
	size_t n = 0;
	memcpy(pt + n, pt_a, sizeof pt_a);
	n += sizeof pt_a;
	pt[n++] = 0x00;
	pt[n++] = 0x02;
	pt[n++] = 0xff;
	memcpy(pt + n, pt_a, sizeof pt_a);
	n += sizeof pt_a;
	trace_write_pt(w, 4321, pt, n);         /* 39 bytes */
	trace_write_pt(w, 4322, pt_a, 16 + 1);  /* a PSB and a bit */
	struct trace_syscall s = sample_syscall();
	s.tid = 4321;
	trace_write_syscall(w, &s);
	trace_writer_close(w, errbuf, sizeof errbuf);

	/* Incomplete: PSBs counted by libipt (2 + 1), totals from records. */
	int rc;
	char *err;
	char *out = run_info(p, &rc, &err);
	char want[2048];
	snprintf(want, sizeof want,
		 "file: %s\n"
		 "format version: 1\n"
		 "backend: sw\n"
		 "program: /tmp/prog\n"
		 "arguments: --fast 'two words'\n"
		 "pid: 4321\n"
		 "cwd: /home/me\n"
		 "cpu: GenuineIntel/6/85/4\n"
		 "start time: 2024-05-01T12:00:00Z\n"
		 "ptrev version: 0.1.0\n"
		 "threads: 2 (4321, 4322)\n"
		 "thread switches: not recorded\n"
		 "instructions: unknown (recording incomplete: the recorder stopped before the program ended)\n"
		 "psb packets: 3\n"
		 "psb period: 4096\n"
		 "trace bytes: 56\n"
		 "bits per instruction: unknown\n"
		 "syscalls: 1\n"
		 "signals: 0\n"
		 "rdtsc: 0\n"
		 "mappings: 0\n"
		 "binaries: not copied (--no-copy)\n"
		 "duration: unknown (recording incomplete: the recorder stopped before the program ended)\n"
		 "status: incomplete (no END record: the recorder stopped before the program ended)\n",
		 p);
	CHECK(rc == 0 && out && !strcmp(out, want), "rc %d, incomplete info:\n%s\nwant:\n%s\nstderr: %s",
	      rc, out, want, err);
	free(out);
	free(err);

	/* Complete, killed by SIGSEGV: totals from END. */
	int fd = open(p, O_WRONLY | O_APPEND);
	{
		/* The same records plus an END (taken from another file). */
		const char *e = tmp("end-only.ptrev");
		struct trace_writer *we = trace_writer_open(e, errbuf, sizeof errbuf);
		struct trace_end end = {1, SIGSEGV, 224, 7, 1234567890, 3, 2};
		trace_write_end(we, &end);
		trace_writer_close(we, errbuf, sizeof errbuf);
		size_t elen;
		uint8_t *eb = slurp(e, &elen);
		CHECK(write(fd, eb + 16, elen - 16) == (ssize_t)(elen - 16), "append");
		free(eb);
		close(fd);
	}
	out = run_info(p, &rc, &err);
	CHECK(rc == 0 && out && strstr(out, "\ninstructions: 224\n") &&
	      strstr(out, "\npsb packets: 7\n") && strstr(out, "\ntrace bytes: 56\n") &&
	      strstr(out, "\nbits per instruction: 2.00\n") && strstr(out, "\nsyscalls: 3\n") &&
	      strstr(out, "\nsignals: 2\n") && strstr(out, "\nduration: 1.235 s\n") &&
	      strstr(out, "\nstatus: killed by signal SIGSEGV\n"), "complete info:\n%s", out);
	free(out);
	free(err);

	/* A bad file: the reason on stderr, exit status 1. */
	const char *bad = tmp("bad.ptrev");
	spit(bad, "hello, world, not a recording", 29);
	out = run_info(bad, &rc, &err);
	char wante[256];
	snprintf(wante, sizeof wante, "ptrev info: %s: not a ptrev recording (bad magic)\n", bad);
	CHECK(rc == 1 && out && !*out && err && !strcmp(err, wante), "rc %d stderr '%s'", rc, err);
	free(out);
	free(err);
}

/* Records of type in the file at path, and the file offset after the
 * n-th of them (n counted from 1) in *after. */
static int count_records(const char *path, uint32_t type, int n, uint64_t *after)
{
	size_t len;
	uint8_t *b = slurp(path, &len);
	int count = 0;
	for (size_t off = 16; b && off + 16 <= len;) {
		size_t next = off + 16 + get32(b + off + 4);
		if (get32(b + off) == type && ++count == n && after)
			*after = next;
		off = next;
	}
	free(b);
	return count;
}

static void test_files(void)
{
	const char *p = tmp("files.ptrev");
	size_t big_len = (5u << 20) / 2 + 123; /* 3 chunks of at most 1 MiB */
	uint8_t *big = malloc(big_len);
	for (size_t i = 0; i < big_len; i++)
		big[i] = (uint8_t)(i * 131 + (i >> 12));
	struct trace_file_copy f[4] = {
		{ .path = "/usr/lib/libbig.so", .build_id = {1, 2, 3, 4}, .build_id_len = 20,
		  .size = big_len, .bytes = big },
		{ .path = "/bin/prog", .build_id = {9, 9}, .build_id_len = 2,
		  .size = sizeof code_bytes, .bytes = code_bytes },
		{ .path = "/bin/no-build-id", .size = 3, .bytes = (const uint8_t *)"abc" },
		{ .path = "/empty", .build_id = {5}, .build_id_len = 1 },
	};
	struct trace_writer *w = trace_writer_open(p, errbuf, sizeof errbuf);
	trace_write_meta(w, "backend", "sw");
	struct trace_mmap m = sample_mmap();
	trace_write_mmap(w, &m);
	for (int i = 0; i < 4; i++)
		CHECK(trace_write_file(w, &f[i]) == 0, "write file %d: %s", i,
		      trace_writer_error(w));
	struct trace_file_copy bad = f[1];
	bad.path = "";
	CHECK(trace_write_file(w, &bad) < 0, "empty path accepted");
	CHECK(trace_writer_close(w, errbuf, sizeof errbuf) < 0, "close after a rejected write");
	CHECK(count_records(p, TRACE_REC_FILE, 0, NULL) == 3 + 1 + 1 + 1, "%d FILE records",
	      count_records(p, TRACE_REC_FILE, 0, NULL));

	struct trace_data td;
	int rc = trace_read_file(p, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0, "read: %s", errbuf);
	if (rc == 0) {
		CHECK(td.nfiles == 4 && td.nskipped == 0, "nfiles %zu skipped %zu", td.nfiles,
		      td.nskipped);
		CHECK(td.nsched == 0 && td.sched == NULL, "no SCHED records, nsched %zu",
		      td.nsched);
		for (size_t i = 0; i < td.nfiles && i < 4; i++) {
			const struct trace_file_copy *r = &td.files[i];
			CHECK(!strcmp(r->path, f[i].path) && r->size == f[i].size &&
			      r->len == f[i].size && r->build_id_len == f[i].build_id_len &&
			      !memcmp(r->build_id, f[i].build_id, 20) &&
			      (!r->size || !memcmp(r->bytes, f[i].bytes, r->size)),
			      "file %zu differs", i);
		}
		CHECK(trace_file_copy_find(&td, "/bin/prog", f[1].build_id, 2) == &td.files[1],
		      "find prog");
		CHECK(trace_file_copy_find(&td, "/bin/no-build-id", NULL, 0) == &td.files[2],
		      "find without build-id");
		CHECK(!trace_file_copy_find(&td, "/bin/prog", f[1].build_id, 1), "short build-id");
		CHECK(!trace_file_copy_find(&td, "/bin/prog", f[0].build_id, 2), "other build-id");
		CHECK(!trace_file_copy_find(&td, "/bin/other", f[1].build_id, 2), "other path");

		/* monitor save keeps them. */
		const char *q = tmp("files-saved.ptrev");
		CHECK(trace_save(&td, q, NULL, errbuf, sizeof errbuf) == 0, "save: %s", errbuf);
		struct trace_data td2;
		CHECK(trace_read_file(q, &td2, errbuf, sizeof errbuf) == 0, "read saved: %s", errbuf);
		CHECK(td2.nfiles == 4 && td2.files[0].size == big_len &&
		      !memcmp(td2.files[0].bytes, big, big_len), "saved copies differ");
		trace_data_free(&td2);
		trace_data_free(&td);
	}
	int out_rc;
	char *err, *out = run_info(p, &out_rc, &err);
	char want[128];
	snprintf(want, sizeof want, "\nbinaries: 4 copied (%zu bytes)\n",
		 big_len + sizeof code_bytes + 3);
	CHECK(out_rc == 0 && out && strstr(out, want), "info:\n%s\nwant %s", out, want);
	free(out);
	free(err);

	/* A recorder killed between two chunks: the prefix reads, the
	 * partial copy is no copy. */
	uint64_t cut = 0;
	count_records(p, TRACE_REC_FILE, 2, &cut);
	CHECK(cut && truncate(p, (off_t)cut) == 0, "truncate at %llu", (unsigned long long)cut);
	rc = trace_read_file(p, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0, "read cut: %s", errbuf);
	if (rc == 0) {
		CHECK(td.nfiles == 1 && td.files[0].len == 2u << 20 &&
		      td.files[0].size == big_len, "partial copy: %zu", td.nfiles);
		CHECK(!trace_file_copy_find(&td, f[0].path, f[0].build_id, 20),
		      "a partial copy found");
		trace_data_free(&td);
	}
	out = run_info(p, &out_rc, &err);
	CHECK(out_rc == 0 && out && strstr(out, "\nbinaries: not copied (--no-copy)\n"),
	      "info:\n%s", out);
	free(out);
	free(err);
	free(big);
}

/* FILE payloads that must be refused. */
static void test_files_malformed(void)
{
	uint8_t pl[128];
	size_t n = 0;
#define PUT32(v) (put32(pl + n, (v)), n += 4)
#define PUT64(v) (put32(pl + n, (uint32_t)(v)), put32(pl + n + 4, (uint32_t)((uint64_t)(v) >> 32)), n += 8)
	/* A chunk at offset 4 with no copy started. */
	PUT32(0);
	memset(pl + n, 0, 20);
	n += 20;
	PUT64(8);
	PUT64(4);
	PUT32(2);
	memcpy(pl + n, "/x", 2);
	n += 2;
	memcpy(pl + n, "abcd", 4);
	n += 4;
	expect_malformed(TRACE_REC_FILE, pl, n, "chunk at offset 4 of /x does not continue the previous FILE record");
	/* Bytes past the claimed size. */
	put32(pl + 24, 2);
	put32(pl + 32, 0);
	expect_malformed(TRACE_REC_FILE, pl, n, "4 bytes at offset 0 of a 2-byte file");
	/* Build-id longer than 20. */
	put32(pl, 21);
	expect_malformed(TRACE_REC_FILE, pl, n, "build-id length 21 exceeds 20");
#undef PUT32
#undef PUT64
}

static void test_info_exit_status(void)
{
	const char *p = tmp("exit.ptrev");
	struct trace_writer *w = trace_writer_open(p, errbuf, sizeof errbuf);
	trace_write_meta(w, "arg", "only-argv0");
	trace_write_meta(w, "cpu_vendor", "GenuineIntel");
	trace_write_meta(w, "cpu_family", "6");
	trace_write_meta(w, "cpu_model", "85");
	trace_write_meta(w, "cpu_stepping", "4");
	struct trace_end end = {0, 3, 0, 0, 0, 0, 0};
	trace_write_end(w, &end);
	trace_writer_close(w, errbuf, sizeof errbuf);
	int rc;
	char *err;
	char *out = run_info(p, &rc, &err);
	CHECK(rc == 0 && out && strstr(out, "\nstatus: exited with code 3\n") &&
	      strstr(out, "\nbackend: unknown\n") && strstr(out, "\narguments: (none)\n") &&
	      strstr(out, "\nthreads: 0\n") && strstr(out, "\ninstructions: 0\n") &&
	      strstr(out, "\ncpu: GenuineIntel/6/85/4\n") &&
	      strstr(out, "\nbits per instruction: unknown\n") &&
	      !strstr(out, "thread switches"), "info:\n%s", out);
	free(out);
	free(err);

	/* Stopped by the recorder (SIGINT to ptrev record). */
	w = trace_writer_open(p, errbuf, sizeof errbuf);
	struct trace_end stopped = {2, SIGINT, 10, 0, 0, 0, 0};
	trace_write_end(w, &stopped);
	trace_writer_close(w, errbuf, sizeof errbuf);
	out = run_info(p, &rc, &err);
	CHECK(rc == 0 && out && strstr(out, "\ninstructions: 10\n") &&
	      strstr(out, "\nstatus: recording stopped before the program ended (the recorder received SIGINT)\n"),
	      "info:\n%s", out);
	free(out);
	free(err);
	char *argv_bad[] = {"info", NULL};
	CHECK(trace_info_main(1, argv_bad) == 2, "usage error");
}

/* ---- the thread schedule (SCHED records) ---- */

/* Merging as trace_append_sched does it, on a recording in memory. */
static void test_sched_merge(void)
{
	struct trace_data td;
	memset(&td, 0, sizeof td);
	size_t cap = 0;
	const struct trace_sched_run in[] = {
		{7, 0, 0},    /* empty: ignored */
		{7, 0, 5},
		{7, 5, 2},    /* continues: merged */
		{7, 9, 1},    /* same thread, not right after: kept apart */
		{8, 0, 3},
		{8, 3, 0},    /* empty: ignored, and does not stop the next merge */
		{8, 3, 4},
		{7, 10, 1},
	};
	for (size_t i = 0; i < sizeof in / sizeof *in; i++)
		trace_append_sched(&td, &cap, &in[i]);
	const struct trace_sched_run want[] = {{7, 0, 7}, {7, 9, 1}, {8, 0, 7}, {7, 10, 1}};
	CHECK(same_sched(td.sched, td.nsched, want, 4), "merged to %zu runs", td.nsched);
	/* Many runs: the array grows and keeps them all. */
	for (uint64_t i = 0; i < 1000; i++) {
		struct trace_sched_run r = {(pid_t)(20 + (i & 1)), 1000 + i / 2, 1};
		trace_append_sched(&td, &cap, &r);
	}
	CHECK(td.nsched == 1004 && cap >= td.nsched && td.sched[1003].tid == 21 &&
	      td.sched[1003].pos == 1499, "grown to %zu runs", td.nsched);
	free(td.sched);
}

/* Runs written in several records come back merged across them; the
 * writer refuses an empty or oversized record. */
static void test_sched_file(void)
{
	const char *p = tmp("sched.ptrev");
	struct trace_writer *w = trace_writer_open(p, errbuf, sizeof errbuf);
	trace_write_meta(w, "backend", "sw");
	struct trace_thread t0 = {100, 0, 0, false, 0}, t1 = {101, 100, 10, false, 0};
	trace_write_thread(w, &t0);
	trace_write_thread(w, &t1);
	/* 100's second run continues its first, but 101 ran in between. */
	const struct trace_sched_run r1[] = {{100, 0, 10}, {101, 0, 5}, {100, 10, 3}};
	/* The first run continues the last one of r1: merged across records. */
	const struct trace_sched_run r2[] = {{100, 13, 7}, {101, 5, 0}, {101, 5, 4}};
	const struct trace_sched_run r3[] = {{101, 9, 1}};
	CHECK(trace_write_sched(w, r1, 3) == 0, "r1: %s", trace_writer_error(w));
	trace_write_pt(w, 100, pt_a, 4); /* other records between SCHED records */
	CHECK(trace_write_sched(w, r2, 3) == 0, "r2: %s", trace_writer_error(w));
	CHECK(trace_write_sched(w, r3, 1) == 0, "r3: %s", trace_writer_error(w));
	CHECK(count_records(p, TRACE_REC_SCHED, 0, NULL) == 3, "SCHED records");
	/* The record with r3 is 16 + 4 + 20 bytes. */
	uint64_t before = 0, after = 0;
	count_records(p, TRACE_REC_SCHED, 2, &before);
	count_records(p, TRACE_REC_SCHED, 3, &after);
	CHECK(after - before == 16 + 4 + 20, "SCHED record of one run is %llu bytes",
	      (unsigned long long)(after - before));
	trace_writer_close(w, errbuf, sizeof errbuf);

	struct trace_data td;
	int rc = trace_read_file(p, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0, "read: %s", errbuf);
	const struct trace_sched_run want[] = {{100, 0, 10}, {101, 0, 5}, {100, 10, 10},
					       {101, 5, 5}};
	if (rc == 0) {
		CHECK(same_sched(td.sched, td.nsched, want, 4), "read back %zu runs", td.nsched);
		CHECK(td.nskipped == 0, "skipped %zu", td.nskipped);
		trace_data_free(&td);
	}
	int orc;
	char *err, *out = run_info(p, &orc, &err);
	CHECK(orc == 0 && out && strstr(out, "\nthreads: 2 (100, 101)\nthread switches: 3\n"),
	      "info:\n%s", out);
	free(out);
	free(err);

	/* A single thread with a schedule: no switches. */
	const char *q = tmp("sched-one.ptrev");
	w = trace_writer_open(q, errbuf, sizeof errbuf);
	trace_write_thread(w, &t0);
	const struct trace_sched_run one[] = {{100, 0, 10}, {100, 10, 5}};
	trace_write_sched(w, one, 2);
	trace_writer_close(w, errbuf, sizeof errbuf);
	out = run_info(q, &orc, &err);
	CHECK(orc == 0 && out && strstr(out, "\nthread switches: 0\n"), "info:\n%s", out);
	free(out);
	free(err);

	/* Refused: no runs, more than a record may hold. */
	q = tmp("sched-rejects.ptrev");
	w = trace_writer_open(q, errbuf, sizeof errbuf);
	CHECK(trace_write_sched(w, r1, 0) < 0, "0 runs accepted");
	const char *why = trace_writer_error(w);
	CHECK(why && strstr(why, "SCHED record of 0 runs"), "reason: %s", why ? why : "none");
	struct trace_sched_run *many = calloc(TRACE_SCHED_MAX_RUNS + 1, sizeof *many);
	for (size_t i = 0; i <= TRACE_SCHED_MAX_RUNS; i++)
		many[i] = (struct trace_sched_run){(pid_t)(1 + (i & 1)), i / 2, 1};
	CHECK(trace_write_sched(w, many, TRACE_SCHED_MAX_RUNS + 1) < 0, "4097 runs accepted");
	const struct trace_sched_run wraps = {5, UINT64_MAX - 1, 2};
	CHECK(trace_write_sched(w, &wraps, 1) < 0, "a run past 2^64 accepted");
	CHECK(trace_write_sched(w, many, TRACE_SCHED_MAX_RUNS) == 0, "4096 runs refused");
	CHECK(trace_writer_close(w, errbuf, sizeof errbuf) < 0 && strstr(errbuf, "SCHED"),
	      "close after a rejected write: %s", errbuf);
	rc = trace_read_file(q, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0 && td.nsched == TRACE_SCHED_MAX_RUNS, "4096 runs: %s", errbuf);
	if (rc == 0)
		trace_data_free(&td);
	free(many);
}

/* Alternating threads: no run merges, so n runs in, n runs out. */
static struct trace_sched_run *alternating(size_t n)
{
	struct trace_sched_run *r = calloc(n, sizeof *r);
	for (size_t i = 0; i < n; i++)
		r[i] = (struct trace_sched_run){(pid_t)(300 + (i & 1)), 3 * (i / 2), 3};
	return r;
}

/* monitor save writes the schedule back, in records of bounded size. */
static void test_sched_save(void)
{
	size_t n = TRACE_SCHED_MAX_RUNS * 2 + 5;
	struct trace_sched_run *runs = alternating(n);
	struct trace_data td;
	memset(&td, 0, sizeof td);
	size_t cap = 0;
	for (size_t i = 0; i < n; i++)
		trace_append_sched(&td, &cap, &runs[i]);
	const char *p = tmp("sched-saved.ptrev");
	CHECK(trace_save(&td, p, &sample_end, errbuf, sizeof errbuf) == 0, "save: %s", errbuf);
	CHECK(count_records(p, TRACE_REC_SCHED, 0, NULL) == 3, "%d SCHED records",
	      count_records(p, TRACE_REC_SCHED, 0, NULL));
	struct trace_data back;
	int rc = trace_read_file(p, &back, errbuf, sizeof errbuf);
	CHECK(rc == 0, "read saved: %s", errbuf);
	if (rc == 0) {
		CHECK(back.complete && same_sched(back.sched, back.nsched, runs, n),
		      "saved schedule: %zu runs of %zu", back.nsched, n);
		/* And once more from what was read. */
		const char *q = tmp("sched-saved2.ptrev");
		CHECK(trace_save(&back, q, NULL, errbuf, sizeof errbuf) == 0, "save: %s", errbuf);
		struct trace_data again;
		rc = trace_read_file(q, &again, errbuf, sizeof errbuf);
		CHECK(rc == 0 && same_sched(again.sched, again.nsched, runs, n),
		      "saved twice: %s", errbuf);
		if (rc == 0)
			trace_data_free(&again);
		trace_data_free(&back);
	}
	free(td.sched);
	free(runs);
}

/* A writer keeping its recording in memory (the live recorder's): the file
 * and the kept copy hold the same schedule, split into records as needed. */
static void test_sched_kept(void)
{
	const char *p = tmp("sched-sw.ptrev");
	struct trace_data kept;
	memset(&kept, 0, sizeof kept);
	struct trace_writer *w = trace_writer_open(p, errbuf, sizeof errbuf);
	CHECK(w && trace_writer_keep(w, &kept) == 0, "open: %s", errbuf);
	if (!w)
		return;
	size_t n = TRACE_SCHED_MAX_RUNS + 10;
	struct trace_sched_run *runs = alternating(n);
	CHECK(trace_write_schedule(w, runs, 0) == 0, "no runs");
	CHECK(count_records(p, TRACE_REC_SCHED, 0, NULL) == 0, "no runs: a record written");
	CHECK(trace_write_schedule(w, runs, n) == 0, "sched: %s", trace_writer_error(w));
	/* Continues the last run: merged live as the reader merges it. */
	struct trace_sched_run more = runs[n - 1];
	more.pos += more.count;
	CHECK(trace_write_schedule(w, &more, 1) == 0, "sched: %s", trace_writer_error(w));
	CHECK(count_records(p, TRACE_REC_SCHED, 0, NULL) == 3, "%d SCHED records",
	      count_records(p, TRACE_REC_SCHED, 0, NULL));
	CHECK(kept.nsched == n && kept.sched[n - 1].count == 6, "live: %zu runs", kept.nsched);
	trace_writer_close(w, errbuf, sizeof errbuf);
	struct trace_data td;
	int rc = trace_read_file(p, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0 && same_sched(td.sched, td.nsched, kept.sched, kept.nsched),
	      "file and live schedules differ: %s", errbuf);
	if (rc == 0)
		trace_data_free(&td);
	/* Memory only: the kept recording grows on without a file. */
	w = trace_writer_open_memory(errbuf, sizeof errbuf);
	CHECK(w && trace_writer_keep(w, &kept) == 0 && trace_write_schedule(w, runs, 2) == 0 &&
	      kept.nsched == n + 2, "memory only");
	trace_writer_close(w, NULL, 0);
	trace_data_free(&kept);
	free(runs);
}

static void test_sched_malformed(void)
{
	uint8_t pl[64];
	memset(pl, 0, sizeof pl);
	/* 2 runs claimed, 1 present */
	put32(pl, 2);
	put32(pl + 4, 5);
	expect_malformed(TRACE_REC_SCHED, pl, 4 + 20,
			 "malformed SCHED record 2 at offset 0x31: claims 2 runs but 20 bytes follow");
	/* a byte too many */
	expect_malformed(TRACE_REC_SCHED, pl, 4 + 40 + 1, "malformed SCHED record 2");
	/* no runs */
	put32(pl, 0);
	expect_malformed(TRACE_REC_SCHED, pl, 4, "malformed SCHED record 2 at offset 0x31: claims 0 runs");
	/* too short for the count */
	expect_malformed(TRACE_REC_SCHED, pl, 3, "malformed SCHED record 2");
	/* thread 0 */
	put32(pl, 1);
	put32(pl + 4, 0);
	expect_malformed(TRACE_REC_SCHED, pl, 24, "malformed SCHED record 2 at offset 0x31: thread id 0");
	/* pos + count past 2^64 */
	put32(pl + 4, 5);
	memset(pl + 8, 0xff, 8);
	put32(pl + 16, 2);
	expect_malformed(TRACE_REC_SCHED, pl, 24, "malformed SCHED record 2 at offset 0x31: run 0");
}

/* ---- signal frames (SIGFRAME records) ---- */

/* n bytes that differ from frame to frame (seed) and from byte to byte. */
static uint8_t *frame_bytes(size_t n, unsigned seed)
{
	uint8_t *b = malloc(n);
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 131 + (i >> 8) * 7 + seed);
	return b;
}

/* Frames of different sizes, the largest allowed and one ending at the
 * very top of the address space, come back byte for byte; monitor save
 * writes them again. */
static void test_sigframe_file(void)
{
	uint8_t *small = frame_bytes(1000, 1), *big = frame_bytes(TRACE_SIGFRAME_MAX, 2);
	const uint8_t top_byte = 0x5a;
	const struct trace_sigframe frames[3] = {
		{100, 77, 0x7ffc0000, small, 1000},
		{101, 5, 0x7ffd0000, big, TRACE_SIGFRAME_MAX},
		{100, 900, UINT64_MAX, &top_byte, 1},
	};
	const char *p = tmp("sigframe.ptrev");
	struct trace_writer *w = trace_writer_open(p, errbuf, sizeof errbuf);
	trace_write_meta(w, "backend", "sw");
	for (int i = 0; i < 3; i++)
		CHECK(trace_write_sigframe(w, &frames[i]) == 0, "frame %d: %s", i,
		      trace_writer_error(w));
	CHECK(trace_writer_close(w, errbuf, sizeof errbuf) == 0, "close: %s", errbuf);
	CHECK(count_records(p, TRACE_REC_SIGFRAME, 0, NULL) == 3, "SIGFRAME records");
	/* 16 header + tid, pos, addr (20) + the bytes. */
	uint64_t before = 0, after = 0;
	count_records(p, TRACE_REC_SIGFRAME, 1, &before);
	count_records(p, TRACE_REC_SIGFRAME, 2, &after);
	CHECK(after - before == 16 + 20 + TRACE_SIGFRAME_MAX, "record of the biggest frame is %llu bytes",
	      (unsigned long long)(after - before));

	struct trace_data td;
	int rc = trace_read_file(p, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0, "read: %s", errbuf);
	if (rc != 0)
		goto out;
	CHECK(td.nsigframes == 3 && td.nskipped == 0, "%zu frames, %zu skipped", td.nsigframes,
	      td.nskipped);
	for (size_t i = 0; i < td.nsigframes && i < 3; i++)
		CHECK(same_sigframe(&td.sigframes[i], &frames[i]), "frame %zu differs", i);

	/* Saved and read back: the same frames, in the same order. */
	const char *q = tmp("sigframe-saved.ptrev");
	CHECK(trace_save(&td, q, &sample_end, errbuf, sizeof errbuf) == 0, "save: %s", errbuf);
	trace_data_free(&td);
	struct trace_data back;
	rc = trace_read_file(q, &back, errbuf, sizeof errbuf);
	CHECK(rc == 0, "read saved: %s", errbuf);
	if (rc == 0) {
		CHECK(back.complete && back.nsigframes == 3, "saved: %zu frames", back.nsigframes);
		for (size_t i = 0; i < back.nsigframes && i < 3; i++)
			CHECK(same_sigframe(&back.sigframes[i], &frames[i]), "saved frame %zu differs", i);
		trace_data_free(&back);
	}
	/* The sample, with its one frame among every other record, saved. */
	const char *r = tmp("sigframe-sample.ptrev");
	int nb;
	write_sample(r, true, false, NULL, &nb);
	rc = trace_read_file(r, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0, "read sample: %s", errbuf);
	if (rc == 0) {
		CHECK(trace_save(&td, q, &td.end, errbuf, sizeof errbuf) == 0, "save: %s", errbuf);
		trace_data_free(&td);
		rc = trace_read_file(q, &td, errbuf, sizeof errbuf);
		CHECK(rc == 0, "read saved sample: %s", errbuf);
		if (rc == 0) {
			check_sample(&td, true);
			trace_data_free(&td);
		}
	}
out:
	free(small);
	free(big);
}

static bool same_gdb_write(const struct trace_gdb_write *a, const struct trace_gdb_write *b)
{
	return a->tid == b->tid && a->pos == b->pos && a->regs == b->regs && a->addr == b->addr &&
	       a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

/* gdb's changes (memory and registers, interleaved as a `call` makes
 * them) come back in file order, byte for byte, and monitor save keeps
 * them; the writer refuses what the reader would; a malformed one is
 * named. */
static void test_gdb_writes(void)
{
	uint8_t *regs = frame_bytes(TRACE_GDB_REGS_MIN + 832, 4), *mem = frame_bytes(300, 5);
	const struct trace_gdb_write writes[3] = {
		{100, 12, false, 0x555555558010, mem, 4},
		{100, 12, true, 0, regs, TRACE_GDB_REGS_MIN + 832},
		{101, 3, false, 0x7ffc0000, mem, 300},
	};
	const char *p = tmp("gdb-writes.ptrev");
	struct trace_writer *w = trace_writer_open(p, errbuf, sizeof errbuf);
	trace_write_meta(w, "backend", "event");
	for (int i = 0; i < 3; i++)
		CHECK(trace_write_gdb_write(w, &writes[i]) == 0, "write %d: %s", i,
		      trace_writer_error(w));
	struct trace_gdb_write bad = writes[1];
	bad.len = TRACE_GDB_REGS_MIN - 1;
	CHECK(trace_write_gdb_write(w, &bad) < 0, "registers of 215 bytes accepted");
	bad = writes[0];
	bad.len = 0;
	CHECK(trace_write_gdb_write(w, &bad) < 0, "0 bytes of memory accepted");
	bad.len = 2;
	bad.addr = UINT64_MAX;
	CHECK(trace_write_gdb_write(w, &bad) < 0, "memory past 2^64 accepted");
	bad = writes[0];
	bad.tid = 0;
	CHECK(trace_write_gdb_write(w, &bad) < 0, "thread 0 accepted");
	trace_writer_close(w, errbuf, sizeof errbuf);
	CHECK(count_records(p, TRACE_REC_GDB_MEM, 0, NULL) == 2 &&
	      count_records(p, TRACE_REC_GDB_REGS, 0, NULL) == 1, "GDB_MEM and GDB_REGS records");
	struct trace_data td;
	int rc = trace_read_file(p, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0 && td.ngdb_writes == 3 && td.nskipped == 0, "read: %s, %zu writes", errbuf,
	      rc == 0 ? td.ngdb_writes : 0);
	for (size_t i = 0; rc == 0 && i < td.ngdb_writes && i < 3; i++)
		CHECK(same_gdb_write(&td.gdb_writes[i], &writes[i]), "write %zu differs", i);
	if (rc == 0) {
		const char *q = tmp("gdb-writes-saved.ptrev");
		CHECK(trace_save(&td, q, &sample_end, errbuf, sizeof errbuf) == 0, "save: %s",
		      errbuf);
		trace_data_free(&td);
		rc = trace_read_file(q, &td, errbuf, sizeof errbuf);
		CHECK(rc == 0 && td.ngdb_writes == 3, "saved: %s", errbuf);
		for (size_t i = 0; rc == 0 && i < td.ngdb_writes && i < 3; i++)
			CHECK(same_gdb_write(&td.gdb_writes[i], &writes[i]), "saved write %zu differs",
			      i);
		if (rc == 0)
			trace_data_free(&td);
	}
	uint8_t raw[4 + 8 + 8 + 16] = {100, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0x10};
	expect_malformed(TRACE_REC_GDB_REGS, raw, sizeof raw,
			 "gdb's register change of 16 bytes at 0x10: not registers");
	expect_malformed(TRACE_REC_GDB_MEM, raw, 20, "gdb's memory change of 0 bytes");
	free(regs);
	free(mem);
}

/* The writer refuses a frame the reader would refuse, says why, and goes
 * on writing valid records. */
static void test_sigframe_rejects(void)
{
	const char *q = tmp("sigframe-rejects.ptrev");
	struct trace_writer *w = trace_writer_open(q, errbuf, sizeof errbuf);
	uint8_t *big = frame_bytes(TRACE_SIGFRAME_MAX + 1, 3);
	struct trace_sigframe f = {100, 7, 0x7ffc0000, big, 0};
	CHECK(trace_write_sigframe(w, &f) < 0, "0 bytes accepted");
	const char *why = trace_writer_error(w);
	CHECK(why && strstr(why, "SIGFRAME of 0 bytes is not 1-65536 bytes"), "reason: %s",
	      why ? why : "none");
	f.len = TRACE_SIGFRAME_MAX + 1;
	CHECK(trace_write_sigframe(w, &f) < 0, "65537 bytes accepted");
	f.len = 3;
	f.addr = UINT64_MAX - 1; /* the third byte would be at 2^64 */
	CHECK(trace_write_sigframe(w, &f) < 0, "a frame past 2^64 accepted");
	f.addr = 0x7ffc0000;
	f.tid = 0;
	CHECK(trace_write_sigframe(w, &f) < 0, "thread 0 accepted");
	f.tid = -5;
	CHECK(trace_write_sigframe(w, &f) < 0, "thread -5 accepted");
	f.tid = 100;
	CHECK(trace_write_sigframe(w, &f) == 0, "valid after invalid");
	CHECK(trace_writer_close(w, errbuf, sizeof errbuf) < 0 &&
	      strstr(errbuf, "SIGFRAME of 0 bytes"), "close reports the first error: %s", errbuf);
	struct trace_data td;
	int rc = trace_read_file(q, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0 && td.nsigframes == 1 && same_sigframe(&td.sigframes[0], &f),
	      "only the valid frame: %s", errbuf);
	if (rc == 0)
		trace_data_free(&td);
	/* Each rejection on a fresh writer, with its own reason. */
	const struct {
		struct trace_sigframe f;
		const char *want;
	} bad[] = {
		{{100, 7, 0x1000, big, TRACE_SIGFRAME_MAX + 1}, "SIGFRAME of 65537 bytes is not 1-65536"},
		{{100, 7, UINT64_MAX - 1, big, 3}, "wraps around the address space"},
		{{0, 7, 0x1000, big, 3}, "SIGFRAME of thread 0"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		w = trace_writer_open(q, errbuf, sizeof errbuf);
		CHECK(trace_write_sigframe(w, &bad[i].f) < 0, "case %zu accepted", i);
		why = trace_writer_error(w);
		CHECK(why && strstr(why, bad[i].want), "case %zu: '%s' want '%s'", i,
		      why ? why : "none", bad[i].want);
		trace_writer_close(w, errbuf, sizeof errbuf);
		CHECK(count_records(q, TRACE_REC_SIGFRAME, 0, NULL) == 0, "case %zu written", i);
	}
	free(big);
}

/* A writer keeping its recording in memory: the record in the file, and a
 * copy of the bytes in memory that outlives the caller's buffer. */
static void test_sigframe_kept(void)
{
	const char *p = tmp("sigframe-sw.ptrev");
	struct trace_data kept;
	memset(&kept, 0, sizeof kept);
	struct trace_writer *w = trace_writer_open(p, errbuf, sizeof errbuf);
	CHECK(w && trace_writer_keep(w, &kept) == 0, "open: %s", errbuf);
	if (!w)
		return;
	uint8_t *buf = frame_bytes(700, 4), *want = frame_bytes(700, 4);
	struct trace_sigframe f = {321, 42, 0x7ffc1230, buf, 700};
	CHECK(trace_write_sigframe(w, &f) == 0, "sigframe: %s", trace_writer_error(w));
	/* The caller reuses its buffer for a smaller second frame at once. */
	memset(buf, 0xee, 700);
	struct trace_sigframe g = {322, 43, 0x7ffd0000, buf, 300};
	CHECK(trace_write_sigframe(w, &g) == 0, "sigframe: %s", trace_writer_error(w));
	free(buf);
	struct trace_sigframe fw = f, gw = g;
	fw.bytes = want;
	uint8_t ee[300];
	memset(ee, 0xee, sizeof ee);
	gw.bytes = ee;
	CHECK(kept.nsigframes == 2 && same_sigframe(&kept.sigframes[0], &fw) &&
	      same_sigframe(&kept.sigframes[1], &gw), "live: %zu frames", kept.nsigframes);
	CHECK(kept.nsigframes == 2 && kept.sigframes[0].bytes != want, "live bytes not a copy");
	/* A frame the writer refuses is not kept either. */
	struct trace_sigframe empty = {321, 44, 0x1000, ee, 0};
	CHECK(trace_write_sigframe(w, &empty) < 0 && kept.nsigframes == 2, "empty frame accepted");
	trace_writer_close(w, errbuf, sizeof errbuf);
	CHECK(count_records(p, TRACE_REC_SIGFRAME, 0, NULL) == 2, "SIGFRAME records in the file");
	struct trace_data td;
	int rc = trace_read_file(p, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0 && td.nsigframes == 2 && same_sigframe(&td.sigframes[0], &fw) &&
	      same_sigframe(&td.sigframes[1], &gw), "file and live frames differ: %s", errbuf);
	if (rc == 0)
		trace_data_free(&td);
	/* Memory only. */
	w = trace_writer_open_memory(errbuf, sizeof errbuf);
	CHECK(w && trace_writer_keep(w, &kept) == 0 && trace_write_sigframe(w, &fw) == 0 &&
	      kept.nsigframes == 3 && same_sigframe(&kept.sigframes[2], &fw), "memory only");
	trace_writer_close(w, NULL, 0);
	/* Neither file nor kept copy: nothing kept. */
	struct trace_writer *none = trace_writer_open_memory(errbuf, sizeof errbuf);
	CHECK(none && trace_write_sigframe(none, &fw) == 0 && kept.nsigframes == 3,
	      "kept without keep");
	trace_writer_close(none, NULL, 0);
	trace_data_free(&kept); /* frees the copies: ASan reports a leak otherwise */
	free(want);
}

static void test_sigframe_malformed(void)
{
	uint8_t *pl = calloc(1, 20 + TRACE_SIGFRAME_MAX + 1);
	put32(pl, 100);
	/* too short for tid, pos and addr */
	expect_malformed(TRACE_REC_SIGFRAME, pl, 19,
			 "malformed SIGFRAME record 2 at offset 0x31: needs 8 more bytes");
	/* no frame bytes */
	expect_malformed(TRACE_REC_SIGFRAME, pl, 20,
			 "malformed SIGFRAME record 2 at offset 0x31: frame of 0 bytes is not 1-65536 bytes");
	/* one byte too many */
	expect_malformed(TRACE_REC_SIGFRAME, pl, 20 + TRACE_SIGFRAME_MAX + 1,
			 "malformed SIGFRAME record 2 at offset 0x31: frame of 65537 bytes");
	/* the last byte past 2^64 */
	memset(pl + 12, 0xff, 8);
	expect_malformed(TRACE_REC_SIGFRAME, pl, 22,
			 "malformed SIGFRAME record 2 at offset 0x31: 2 bytes at 0xffffffffffffffff wrap around");
	memset(pl + 12, 0, 8);
	/* thread 0 and a negative thread */
	put32(pl, 0);
	expect_malformed(TRACE_REC_SIGFRAME, pl, 24,
			 "malformed SIGFRAME record 2 at offset 0x31: thread id 0 is not valid");
	put32(pl, 0xffffffffu);
	expect_malformed(TRACE_REC_SIGFRAME, pl, 24,
			 "malformed SIGFRAME record 2 at offset 0x31: thread id -1 is not valid");
	free(pl);
}

/* ---- a writer keeping its recording in memory (trace_writer_keep) ---- */

/* Two recordings in memory compared field by field (the structs have
 * padding): the first difference, or NULL when they are equal. */
static const char *data_diff(const struct trace_data *a, const struct trace_data *b)
{
#define DIFF(same, what)             \
	do {                         \
		if (!(same))         \
			return what; \
	} while (0)
	DIFF(a->nmeta == b->nmeta, "META count");
	for (size_t i = 0; i < a->nmeta; i++)
		DIFF(!strcmp(a->meta_keys[i], b->meta_keys[i]) &&
		     !strcmp(a->meta_values[i], b->meta_values[i]), "META");
	DIFF(a->nstreams == b->nstreams, "stream count");
	for (size_t i = 0; i < a->nstreams; i++)
		DIFF(a->streams[i].tid == b->streams[i].tid &&
		     a->streams[i].pt_len == b->streams[i].pt_len &&
		     !memcmp(a->streams[i].pt, b->streams[i].pt, a->streams[i].pt_len), "PT");
	DIFF(a->nmmaps == b->nmmaps, "MMAP count");
	for (size_t i = 0; i < a->nmmaps; i++) /* the parser zeroes them first */
		DIFF(!memcmp(&a->mmaps[i], &b->mmaps[i], sizeof a->mmaps[i]), "MMAP");
	DIFF(a->nmunmaps == b->nmunmaps, "MUNMAP count");
	for (size_t i = 0; i < a->nmunmaps; i++)
		DIFF(a->munmaps[i].tid == b->munmaps[i].tid && a->munmaps[i].pos == b->munmaps[i].pos &&
		     a->munmaps[i].start == b->munmaps[i].start &&
		     a->munmaps[i].end == b->munmaps[i].end, "MUNMAP");
	DIFF(a->ncode == b->ncode, "CODE count");
	for (size_t i = 0; i < a->ncode; i++)
		DIFF(a->code[i].addr == b->code[i].addr && a->code[i].len == b->code[i].len &&
		     !memcmp(a->code[i].bytes, b->code[i].bytes, a->code[i].len), "CODE");
	DIFF(a->nsyscalls == b->nsyscalls, "SYSCALL count");
	for (size_t i = 0; i < a->nsyscalls; i++) {
		const struct trace_syscall *x = &a->syscalls[i], *y = &b->syscalls[i];
		DIFF(x->tid == y->tid && x->pos == y->pos && x->nr == y->nr &&
		     !memcmp(x->args, y->args, sizeof x->args) && x->result == y->result &&
		     x->unknown == y->unknown && x->kept_cpu == y->kept_cpu &&
		     x->nwrites == y->nwrites, "SYSCALL");
		for (size_t k = 0; k < x->nwrites; k++)
			DIFF(x->writes[k].addr == y->writes[k].addr &&
			     x->writes[k].len == y->writes[k].len &&
			     !memcmp(x->writes[k].bytes, y->writes[k].bytes, x->writes[k].len),
			     "SYSCALL memory write");
	}
	DIFF(a->nsignals == b->nsignals, "SIGNAL count");
	for (size_t i = 0; i < a->nsignals; i++)
		DIFF(a->signals[i].tid == b->signals[i].tid && a->signals[i].pos == b->signals[i].pos &&
		     a->signals[i].signo == b->signals[i].signo &&
		     !memcmp(a->signals[i].siginfo, b->signals[i].siginfo, 128) &&
		     a->signals[i].handler_ip == b->signals[i].handler_ip, "SIGNAL");
	DIFF(a->nsigframes == b->nsigframes, "SIGFRAME count");
	for (size_t i = 0; i < a->nsigframes; i++)
		DIFF(same_sigframe(&a->sigframes[i], &b->sigframes[i]), "SIGFRAME");
	DIFF(a->nrdtsc == b->nrdtsc, "RDTSC count");
	for (size_t i = 0; i < a->nrdtsc; i++)
		DIFF(a->rdtsc[i].tid == b->rdtsc[i].tid && a->rdtsc[i].pos == b->rdtsc[i].pos &&
		     a->rdtsc[i].value == b->rdtsc[i].value && a->rdtsc[i].aux == b->rdtsc[i].aux &&
		     a->rdtsc[i].is_rdtscp == b->rdtsc[i].is_rdtscp, "RDTSC");
	DIFF(a->nthreads == b->nthreads, "THREAD count");
	for (size_t i = 0; i < a->nthreads; i++)
		DIFF(a->threads[i].tid == b->threads[i].tid &&
		     a->threads[i].parent == b->threads[i].parent &&
		     a->threads[i].pos == b->threads[i].pos &&
		     a->threads[i].exited == b->threads[i].exited &&
		     a->threads[i].exit_code == b->threads[i].exit_code, "THREAD");
	DIFF(same_sched(a->sched, a->nsched, b->sched, b->nsched), "SCHED");
	DIFF(a->nfiles == b->nfiles, "FILE count");
	for (size_t i = 0; i < a->nfiles; i++) {
		const struct trace_file_copy *x = &a->files[i], *y = &b->files[i];
		DIFF(!strcmp(x->path, y->path) && x->build_id_len == y->build_id_len &&
		     !memcmp(x->build_id, y->build_id, sizeof x->build_id) && x->size == y->size &&
		     x->len == y->len && (!x->len || !memcmp(x->bytes, y->bytes, x->len)), "FILE");
	}
	DIFF(a->complete == b->complete, "complete");
	if (a->complete)
		DIFF(a->end.status_kind == b->end.status_kind && a->end.status == b->end.status &&
		     a->end.instructions == b->end.instructions &&
		     a->end.psb_count == b->end.psb_count &&
		     a->end.duration_ns == b->end.duration_ns &&
		     a->end.syscalls == b->end.syscalls && a->end.signals == b->end.signals, "END");
	DIFF(a->nskipped == b->nskipped, "skipped records");
	DIFF(a->file_size == b->file_size, "file size");
#undef DIFF
	return NULL;
}

/* Beyond the sample: copies of binaries in several chunks, and PT chunks
 * far bigger than the sample's, of a third thread. */
static void write_more_records(struct trace_writer *w, const uint8_t *big, size_t big_len)
{
	struct trace_file_copy f[2] = {
		{ .path = "/usr/lib/libbig.so", .build_id = {1, 2, 3}, .build_id_len = 20,
		  .size = big_len, .bytes = big },
		{ .path = "/empty", .build_id = {5}, .build_id_len = 1 },
	};
	for (int i = 0; i < 2; i++)
		CHECK(trace_write_file(w, &f[i]) == 0, "file %d: %s", i, trace_writer_error(w));
	CHECK(trace_write_pt(w, 102, big, big_len) == 0, "big PT: %s", trace_writer_error(w));
	CHECK(trace_write_pt(w, 102, big, 0) == 0, "empty PT: %s", trace_writer_error(w));
	CHECK(trace_write_pt(w, 100, big + 7, 4096) == 0, "PT: %s", trace_writer_error(w));
}

/* The same records through a writer with a file and one without: each
 * kept recording equals the file read back, before END (incomplete) and
 * after it. */
static void test_keep_equals_file(void)
{
	const char *p = tmp("kept.ptrev");
	size_t big_len = (5u << 20) / 2 + 123;
	uint8_t *big = malloc(big_len);
	for (size_t i = 0; i < big_len; i++)
		big[i] = (uint8_t)(i * 131 + (i >> 12));
	struct trace_data kf, km, back;
	memset(&kf, 0, sizeof kf);
	memset(&km, 0, sizeof km);
	struct trace_writer *wf = trace_writer_open(p, errbuf, sizeof errbuf);
	struct trace_writer *wm = trace_writer_open_memory(errbuf, sizeof errbuf);
	CHECK(wf && wm, "open: %s", errbuf);
	if (!wf || !wm)
		return;
	CHECK(trace_writer_keep(wf, &kf) == 0 && trace_writer_keep(wm, &km) == 0, "keep");
	CHECK(kf.file_size == 16 && kf.nmeta == 0 && !kf.complete, "a new recording");
	int nb;
	write_sample_records(wf, p, false, true, NULL, &nb);
	write_sample_records(wm, NULL, false, true, NULL, &nb);
	write_more_records(wf, big, big_len);
	write_more_records(wm, big, big_len);
	int rc = trace_read_file(p, &back, errbuf, sizeof errbuf);
	CHECK(rc == 0, "read: %s", errbuf);
	if (rc == 0) {
		const char *d = data_diff(&kf, &back);
		CHECK(!d, "beside the file, incomplete: %s differs", d);
		d = data_diff(&km, &back);
		CHECK(!d, "memory only, incomplete: %s differs", d);
		CHECK(!kf.complete && kf.file_size == file_size(p), "file size %llu",
		      (unsigned long long)kf.file_size);
		trace_data_free(&back);
	}
	CHECK(trace_write_end(wf, &sample_end) == 0 && trace_write_end(wm, &sample_end) == 0,
	      "END");
	CHECK(trace_writer_close(wf, errbuf, sizeof errbuf) == 0, "close: %s", errbuf);
	CHECK(trace_writer_close(wm, errbuf, sizeof errbuf) == 0, "close memory: %s", errbuf);
	rc = trace_read_file(p, &back, errbuf, sizeof errbuf);
	CHECK(rc == 0, "read: %s", errbuf);
	if (rc == 0) {
		const char *d = data_diff(&kf, &back);
		CHECK(!d, "beside the file: %s differs", d);
		d = data_diff(&km, &back);
		CHECK(!d, "memory only: %s differs", d);
		trace_data_free(&back);
	}
	CHECK(km.nskipped == 1 && km.nfiles == 2 && km.nstreams == 3 &&
	      km.streams[2].pt_len == big_len && km.file_size == file_size(p),
	      "kept: %zu skipped, %zu files, %zu streams", km.nskipped, km.nfiles, km.nstreams);
	/* The writers are closed: the recordings are the caller's. */
	trace_data_free(&kf);
	trace_data_free(&km);
	free(big);
}

/* The sample kept in memory alone is the sample, as the reader sees it. */
static void test_keep_sample(void)
{
	struct trace_data km;
	memset(&km, 0, sizeof km);
	struct trace_writer *w = trace_writer_open_memory(errbuf, sizeof errbuf);
	CHECK(w && trace_writer_keep(w, &km) == 0, "open: %s", errbuf);
	if (!w)
		return;
	int nb;
	write_sample_records(w, NULL, true, true, NULL, &nb);
	CHECK(trace_writer_close(w, errbuf, sizeof errbuf) == 0, "close: %s", errbuf);
	check_sample(&km, true);
	CHECK(km.nskipped == 1, "nskipped %zu", km.nskipped);
	trace_data_free(&km);
}

/* A recording read from a file grows on through a writer that keeps into
 * it, as if the file had those records too. */
static void test_keep_continues(void)
{
	const char *p = tmp("cut.ptrev"), *q = tmp("whole.ptrev");
	int nb;
	write_sample(p, false, true, NULL, &nb);
	write_sample(q, true, true, NULL, &nb);
	struct trace_data td, whole;
	int rc = trace_read_file(p, &td, errbuf, sizeof errbuf);
	CHECK(rc == 0 && !td.complete, "read: %s", errbuf);
	if (rc != 0)
		return;
	struct trace_writer *w = trace_writer_open_memory(errbuf, sizeof errbuf);
	CHECK(w && trace_writer_keep(w, &td) == 0 && trace_write_end(w, &sample_end) == 0,
	      "END: %s", w ? trace_writer_error(w) : errbuf);
	trace_writer_close(w, NULL, 0);
	rc = trace_read_file(q, &whole, errbuf, sizeof errbuf);
	CHECK(rc == 0, "read: %s", errbuf);
	if (rc == 0) {
		const char *d = data_diff(&td, &whole);
		CHECK(!d, "continued: %s differs", d);
		trace_data_free(&whole);
	}
	trace_data_free(&td);
}

/* What does not reach the file does not reach the kept recording, and a
 * record the reader would refuse is reported, not kept. */
static void test_keep_failures(void)
{
	const char *q = tmp("keep-rejects.ptrev");
	struct trace_data kept;
	memset(&kept, 0, sizeof kept);
	struct trace_writer *w = trace_writer_open(q, errbuf, sizeof errbuf);
	CHECK(w && trace_writer_keep(w, &kept) == 0, "open: %s", errbuf);
	if (!w)
		return;
	CHECK(trace_write_meta(w, "Bad Key", "x") < 0 && kept.nmeta == 0, "bad key kept");
	struct trace_signal sg = sample_signal();
	sg.signo = 0;
	CHECK(trace_write_signal(w, &sg) < 0 && kept.nsignals == 0, "signal 0 kept");
	/* In the file (trace_write_raw checks nothing), refused by the
	 * parser: the kept recording leaves it out and says so. */
	CHECK(trace_write_raw(w, TRACE_REC_SIGNAL, "xx", 2) < 0 && kept.nsignals == 0,
	      "a malformed SIGNAL kept");
	CHECK(strstr(trace_writer_error(w), "Bad Key"), "the first error stays: %s",
	      trace_writer_error(w));
	struct trace_writer *m = trace_writer_open_memory(errbuf, sizeof errbuf);
	struct trace_data mk;
	memset(&mk, 0, sizeof mk);
	CHECK(m && trace_writer_keep(m, &mk) == 0, "memory: %s", errbuf);
	CHECK(trace_write_pt(m, 0, pt_a, 3) < 0 && mk.nstreams == 0 &&
	      strstr(trace_writer_error(m), "record 1 (PT) would not read back: thread id 0"),
	      "PT of thread 0: %s", trace_writer_error(m));
	CHECK(trace_write_raw(m, 999, "future", 6) == 0 && mk.nskipped == 1, "unknown type");
	trace_writer_close(m, NULL, 0);
	trace_data_free(&mk);
	CHECK(count_records(q, TRACE_REC_SIGNAL, 0, NULL) == 1, "the raw record is in the file");
	/* Keeping stops: the file goes on alone. */
	CHECK(trace_write_meta(w, "backend", "sw") == 0 && kept.nmeta == 1, "kept");
	trace_writer_keep(w, NULL);
	CHECK(trace_write_meta(w, "program", "p") == 0 && kept.nmeta == 1, "kept after keep(NULL)");
	trace_writer_close(w, NULL, 0);
	trace_data_free(&kept);

	/* A write that fails half-way (file size limit): the kept recording
	 * holds what the file holds. */
	const char *f = tmp("keep-fsize.ptrev");
	pid_t pid = fork();
	if (pid == 0) {
		struct trace_data k;
		memset(&k, 0, sizeof k);
		struct trace_writer *fw = limited_writer(f);
		if (trace_writer_keep(fw, &k) < 0)
			_exit(3);
		uint8_t chunk[150];
		memset(chunk, 0x55, sizeof chunk);
		while (trace_write_pt(fw, 7, chunk, sizeof chunk) == 0)
			;
		trace_writer_close(fw, NULL, 0);
		/* 16 + 5 * (16 + 4 + 150) = 866 <= 1000 */
		_exit(k.nstreams == 1 && k.streams[0].pt_len == 750 && k.file_size == 866 ? 0 : 4);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %x", st);
}

/* Event recordings: SIGNAL records that say where the signal was
 * delivered, and STATE records (a point no event marks). Both read back
 * as written, survive `monitor save`, and a malformed one is refused with
 * its reason; a SIGNAL without `where` is at an instruction position. */
static void test_event_records(void)
{
	const char *q = tmp("event.ptrev");
	struct trace_writer *w = trace_writer_open(q, errbuf, sizeof errbuf);
	trace_write_meta(w, "backend", "event");
	struct trace_signal sg[4];
	for (int i = 0; i < 4; i++) {
		sg[i] = sample_signal();
		sg[i].pos = 10 + (uint64_t)i;
		sg[i].where = (enum trace_signal_where)i;
		CHECK(trace_write_signal(w, &sg[i]) == 0, "signal %d", i);
	}
	struct trace_state st;
	memset(&st, 0, sizeof st);
	st.tid = 100;
	st.pos = 77;
	for (int i = 0; i < 27; i++)
		st.regs[i] = 0x1000u * (unsigned)i + 3;
	st.vec_hash = 0x1111222233334444ull;
	st.stack_lo = 0x7ffc0000;
	st.stack_hi = 0x7ffc1000;
	st.stack_hash = 0x5555666677778888ull;
	st.mem_bytes = 123456;
	st.mem_hash = 0x99990000aaaabbbbull;
	st.flags = TRACE_STATE_LIVE_STACKS;
	st.ran_ns = 123456789;
	CHECK(trace_write_state(w, &st) == 0, "state");
	/* One with ranges left out (what other threads' syscalls may write). */
	static const uint64_t skip[4] = {0x601000, 64, 0x7ffc0800, 1};
	struct trace_state sk = st;
	sk.pos = 78;
	sk.skip = skip;
	sk.nskip = 2;
	CHECK(trace_write_state(w, &sk) == 0, "state with ranges left out");
	/* One with the stack around rsp (its own STATE_STACK record). */
	static uint8_t sp[64];
	for (size_t i = 0; i < sizeof sp; i++)
		sp[i] = (uint8_t)(i * 7 + 1);
	struct trace_state ss = st;
	ss.pos = 79;
	ss.sp_addr = 0x7ffc0f00;
	ss.sp_len = sizeof sp;
	ss.sp_bytes = sp;
	CHECK(trace_write_state(w, &ss) == 0, "state with its stack");
	/* One with memory a replay puts in place there (STATE_MEM records,
	 * after its STATE_STACK). */
	static uint8_t m0[40], m1[3];
	for (size_t i = 0; i < sizeof m0; i++)
		m0[i] = (uint8_t)(i * 5 + 2);
	m1[0] = 0xaa;
	const struct trace_mem_write mem[2] = {{0x7ffb0000, m0, sizeof m0},
					       {0x7ffff7ffd000, m1, sizeof m1}};
	struct trace_state sm = ss;
	sm.pos = 80;
	sm.mem = mem;
	sm.nmem = 2;
	CHECK(trace_write_state(w, &sm) == 0, "state with its memory");
	struct trace_state bad = sm;
	bad.nmem = TRACE_STATE_MEM_RANGES + 1;
	CHECK(trace_write_state(w, &bad) < 0, "more than TRACE_STATE_MEM_RANGES ranges accepted");
	const struct trace_mem_write empty = {0x1000, m1, 0};
	bad.mem = &empty;
	bad.nmem = 1;
	CHECK(trace_write_state(w, &bad) < 0, "a range of no bytes accepted");
	bad = ss;
	bad.sp_len = TRACE_STATE_SP_MAX + 1;
	CHECK(trace_write_state(w, &bad) < 0, "a stack of more than TRACE_STATE_SP_MAX accepted");
	bad = st;
	bad.stack_hi = bad.stack_lo - 1;
	CHECK(trace_write_state(w, &bad) < 0, "a stack range ending before it starts accepted");
	trace_writer_close(w, errbuf, sizeof errbuf);
	for (int pass = 0; pass < 2; pass++) {
		struct trace_data td;
		const char *path = pass ? tmp("event-saved.ptrev") : q;
		CHECK(trace_read_file(path, &td, errbuf, sizeof errbuf) == 0, "read %s: %s", path,
		      errbuf);
		CHECK(td.nsignals == 4, "pass %d: %zu signals", pass, td.nsignals);
		for (size_t i = 0; i < td.nsignals && i < 4; i++)
			CHECK(td.signals[i].pos == sg[i].pos && td.signals[i].where == sg[i].where &&
			      td.signals[i].handler_ip == sg[i].handler_ip, "pass %d: signal %zu", pass,
			      i);
		const struct trace_state *r = td.nstates == 4 ? &td.states[0] : NULL;
		const struct trace_state *rm = r ? &td.states[3] : NULL;
		CHECK(r && r->nmem == 0 && td.states[2].nmem == 0 && rm->pos == 80 &&
		      rm->sp_len == sizeof sp && rm->nmem == 2 && rm->mem[0].addr == mem[0].addr &&
		      rm->mem[0].len == sizeof m0 && !memcmp(rm->mem[0].bytes, m0, sizeof m0) &&
		      rm->mem[1].addr == mem[1].addr && rm->mem[1].len == sizeof m1 &&
		      !memcmp(rm->mem[1].bytes, m1, sizeof m1), "pass %d: the point's memory", pass);
		CHECK(r && r->nskip == 0 && td.states[1].pos == 78 && td.states[1].nskip == 2 &&
		      !memcmp(td.states[1].skip, skip, sizeof skip), "pass %d: ranges left out", pass);
		CHECK(r && r->sp_len == 0 && td.states[1].sp_len == 0 && td.states[2].pos == 79 &&
		      td.states[2].sp_addr == ss.sp_addr && td.states[2].sp_len == sizeof sp &&
		      !memcmp(td.states[2].sp_bytes, sp, sizeof sp), "pass %d: the stack", pass);
		CHECK(r && r->tid == st.tid && r->pos == st.pos &&
		      !memcmp(r->regs, st.regs, sizeof st.regs) && r->vec_hash == st.vec_hash &&
		      r->stack_lo == st.stack_lo && r->stack_hi == st.stack_hi &&
		      r->stack_hash == st.stack_hash && r->mem_bytes == st.mem_bytes &&
		      r->mem_hash == st.mem_hash && r->flags == st.flags && r->ran_ns == st.ran_ns,
		      "pass %d: state", pass);
		if (!pass)
			CHECK(trace_save(&td, tmp("event-saved.ptrev"), NULL, errbuf, sizeof errbuf) == 0,
			      "save: %s", errbuf);
		trace_data_free(&td);
	}
	/* Malformed: an unknown delivery point, a short STATE. */
	uint8_t p[TRACE_SIGNAL_LEN_FOR_TEST + 4];
	memset(p, 0, sizeof p);
	put32(p, 100);
	put32(p + 12, SIGUSR1);
	put32(p + TRACE_SIGNAL_LEN_FOR_TEST, 9);
	expect_malformed(TRACE_REC_SIGNAL, p, sizeof p, "signal delivery point 9 unknown");
	uint8_t short_state[40] = {100};
	expect_malformed(TRACE_REC_STATE, short_state, sizeof short_state, "STATE");
	/* Stack bytes with no STATE before them, or none at all. */
	uint8_t stray[4 + 8 + 8 + 16] = {100, 0, 0, 0, 79};
	expect_malformed(TRACE_REC_STATE_STACK, stray, sizeof stray,
			 "stack bytes of thread 100's point 79, which the STATE record before is not");
	expect_malformed(TRACE_REC_STATE_STACK, stray, 20, "stack of 0 bytes");
	expect_malformed(TRACE_REC_STATE_MEM, stray, sizeof stray,
			 "memory of thread 100's point 79, which the STATE record before is not");
	expect_malformed(TRACE_REC_STATE_MEM, stray, 20, "point's memory of 0 bytes");

	/* A STATE record as recordings made before flags and ran_ns have it
	 * (276 bytes): read with both 0 (the whole stack hashed, no bound
	 * known); a field cut in half is malformed. */
	uint8_t old[276 + 4];
	memset(old, 0, sizeof old);
	put32(old, 100);
	old[4] = 77;
	const char *o = tmp("old-state.ptrev");
	w = trace_writer_open(o, errbuf, sizeof errbuf);
	trace_write_meta(w, "backend", "event");
	trace_write_raw(w, TRACE_REC_STATE, old, 276);
	trace_writer_close(w, errbuf, sizeof errbuf);
	struct trace_data td;
	CHECK(trace_read_file(o, &td, errbuf, sizeof errbuf) == 0, "read the old STATE: %s", errbuf);
	CHECK(td.nstates == 1 && td.states[0].pos == 77 && td.states[0].flags == 0 &&
	      td.states[0].ran_ns == 0, "the old STATE read back with flags 0");
	trace_data_free(&td);
	expect_malformed(TRACE_REC_STATE, old, 280, "STATE");
	/* Ranges left out: a count that the bytes after it do not match, or
	 * none, is malformed. */
	uint8_t ranged[292 + 4 + 32];
	memset(ranged, 0, sizeof ranged);
	put32(ranged, 100);
	put32(ranged + 292, 2);
	const char *rq = tmp("ranged-state.ptrev");
	w = trace_writer_open(rq, errbuf, sizeof errbuf);
	trace_write_meta(w, "backend", "event");
	trace_write_raw(w, TRACE_REC_STATE, ranged, sizeof ranged);
	trace_writer_close(w, errbuf, sizeof errbuf);
	CHECK(trace_read_file(rq, &td, errbuf, sizeof errbuf) == 0 && td.nstates == 1 &&
	      td.states[0].nskip == 2, "a STATE with two ranges read: %s", errbuf);
	trace_data_free(&td);
	expect_malformed(TRACE_REC_STATE, ranged, sizeof ranged - 16, "2 ranges left out");
	put32(ranged + 292, 0);
	expect_malformed(TRACE_REC_STATE, ranged, 296, "0 ranges left out");
}

int main(void)
{
	strcpy(dir, "/tmp/ptrev-trace-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_crc();
	test_roundtrip();
	test_many_chunks();
	test_killed_writer();
	test_truncation();
	test_bit_flips();
	test_headers();
	test_malformed();
	test_after_end();
	test_writer_restart();
	test_writer_rejects();
	test_write_failure();
	test_fuzz();
	test_info();
	test_info_exit_status();
	test_files();
	test_files_malformed();
	test_sched_merge();
	test_sched_file();
	test_sched_save();
	test_sched_kept();
	test_sched_malformed();
	test_sigframe_file();
	test_sigframe_rejects();
	test_sigframe_kept();
	test_sigframe_malformed();
	test_gdb_writes();
	test_keep_sample();
	test_keep_equals_file();
	test_keep_continues();
	test_keep_failures();
	test_event_records();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	if (failures) {
		fprintf(stderr, "%d check(s) failed\n", failures);
		return 1;
	}
	puts("trace_file: all checks passed");
	return 0;
}
