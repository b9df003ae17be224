/* Reading a .ptrev recording: the file header, then record after record,
 * each one's header checksum verified before its length is believed and
 * its payload checksum verified before its contents are decoded. Every
 * length is checked against the file size before anything is read or
 * allocated, so a flipped bit yields an error naming the record and the
 * offset, never a huge allocation or a read out of bounds.
 * Layout and rules: docs/trace-format.md. */
#include "ptrev/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_codec.h"
#include "trace_reader_internal.h"

static int error(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int error(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Reads exactly n bytes at off; a short read means the file shrank after
 * we measured it (returns the count read, or -1 with errno). */
static ssize_t pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

bool trace_file_looks_like_recording(const char *path)
{
	uint8_t h[TRACE_MAGIC_LEN];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t k = pread_full(fd, h, sizeof h, 0);
	close(fd);
	return k == (ssize_t)sizeof h && memcmp(h, TRACE_MAGIC, sizeof h) == 0;
}

static int check_file_header(int fd, uint64_t size, char *err, size_t errlen)
{
	uint8_t h[TRACE_FILE_HEADER_LEN];
	if (size == 0)
		return error(err, errlen, "not a ptrev recording (empty file)");
	size_t n = size < sizeof h ? (size_t)size : sizeof h;
	ssize_t k = pread_full(fd, h, n, 0);
	if (k < 0)
		return error(err, errlen, "reading the file header: %s", strerror(errno));
	if ((size_t)k < n)
		return error(err, errlen, "the file shrank while it was being read");
	size_t m = n < TRACE_MAGIC_LEN ? n : TRACE_MAGIC_LEN;
	if (memcmp(h, TRACE_MAGIC, m) != 0)
		return error(err, errlen, "not a ptrev recording (bad magic)");
	if (n < sizeof h)
		return error(err, errlen,
			     "truncated: the file header needs %zu bytes but the file ends at 0x%llx",
			     sizeof h, (unsigned long long)size);
	/* Checksum before version: a flipped version bit is corruption, while
	 * a newer ptrev's file has a valid checksum and a higher version. */
	if (le_get32(h + 12) != trace_crc32c(0, h, 12))
		return error(err, errlen, "corrupted file header (checksum mismatch)");
	uint32_t version = le_get32(h + 8);
	if (version != TRACE_FORMAT_VERSION)
		return error(err, errlen,
			     "recording format version %u is not supported (this ptrev reads version %d)",
			     version, TRACE_FORMAT_VERSION);
	return 0;
}

/* "PT" or "type 42" for messages. */
static const char *type_label(uint32_t type, char *buf, size_t n)
{
	const char *name = trace_type_name(type);
	if (name)
		return name;
	snprintf(buf, n, "type %u", type);
	return buf;
}

static int read_records(int fd, struct trace_data *td, char *err, size_t errlen)
{
	uint64_t size = td->file_size, off = TRACE_FILE_HEADER_LEN;
	uint8_t *buf = NULL;
	size_t cap = 0;
	int rc = 0;
	char tb[24], why[200];
	for (unsigned long long idx = 1; off < size; idx++) {
		uint8_t h[TRACE_RECORD_HEADER_LEN];
		if (size - off < sizeof h) {
			/* A torn tail: what came before it is whole. */
			snprintf(td->torn, sizeof td->torn,
				 "the file ends inside record %llu at offset 0x%llx (%llu of its "
				 "header's %zu bytes are there)", idx, (unsigned long long)off,
				 (unsigned long long)(size - off), sizeof h);
			break;
		}
		ssize_t k = pread_full(fd, h, sizeof h, off);
		if (k != (ssize_t)sizeof h) {
			rc = error(err, errlen, "reading record %llu at offset 0x%llx: %s", idx,
				   (unsigned long long)off,
				   k < 0 ? strerror(errno) : "the file shrank while it was being read");
			break;
		}
		if (le_get32(h + 12) != trace_crc32c(0, h, 12)) {
			rc = error(err, errlen,
				   "corrupted header of record %llu at offset 0x%llx (header checksum mismatch)",
				   idx, (unsigned long long)off);
			break;
		}
		uint32_t type = le_get32(h), len = le_get32(h + 4);
		const char *label = type_label(type, tb, sizeof tb);
		if (len > TRACE_MAX_PAYLOAD) {
			rc = error(err, errlen,
				   "malformed %s record %llu at offset 0x%llx: length %u exceeds the %u-byte limit",
				   label, idx, (unsigned long long)off, len, TRACE_MAX_PAYLOAD);
			break;
		}
		uint64_t need = sizeof h + (uint64_t)len;
		if (need > size - off) {
			snprintf(td->torn, sizeof td->torn,
				 "the file ends inside record %llu (%s) at offset 0x%llx (%llu of its "
				 "%llu bytes are there)", idx, label, (unsigned long long)off,
				 (unsigned long long)(size - off), (unsigned long long)need);
			break;
		}
		if (td->complete) {
			rc = error(err, errlen,
				   "record %llu (%s) at offset 0x%llx follows the END record, which must be last",
				   idx, label, (unsigned long long)off);
			break;
		}
		if (!buf || len > cap) {
			free(buf);
			cap = len > 256 ? len : 256;
			buf = malloc(cap); /* len <= file size: checked above */
			if (!buf) {
				rc = error(err, errlen, "out of memory reading record %llu (%u bytes)",
					   idx, len);
				break;
			}
		}
		k = pread_full(fd, buf, len, off + sizeof h);
		if (k != (ssize_t)len) {
			rc = error(err, errlen, "reading record %llu at offset 0x%llx: %s", idx,
				   (unsigned long long)off,
				   k < 0 ? strerror(errno) : "the file shrank while it was being read");
			break;
		}
		if (le_get32(h + 8) != trace_crc32c(0, buf, len)) {
			rc = error(err, errlen, "checksum mismatch in record %llu (%s) at offset 0x%llx",
				   idx, label, (unsigned long long)off);
			break;
		}
		int r = trace_parse_record(td, type, buf, len, why, sizeof why);
		if (r < 0) {
			rc = error(err, errlen, "malformed %s record %llu at offset 0x%llx: %s",
				   label, idx, (unsigned long long)off, why);
			break;
		}
		if (r > 0)
			td->nskipped++; /* unknown type: forward compatibility */
		off += need;
	}
	free(buf);
	return rc;
}

int trace_read_file(const char *path, struct trace_data *td, char *err, size_t errlen)
{
	memset(td, 0, sizeof *td);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error(err, errlen, "%s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return error(err, errlen, "%s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return error(err, errlen, "not a regular file");
	}
	td->file_size = (uint64_t)st.st_size;
	int rc = check_file_header(fd, td->file_size, err, errlen);
	if (rc == 0) {
		td->priv = calloc(1, sizeof(struct trace_reader_priv));
		if (!td->priv)
			rc = error(err, errlen, "out of memory");
	}
	if (rc == 0)
		rc = read_records(fd, td, err, errlen);
	close(fd);
	if (rc < 0)
		trace_data_free(td);
	return rc;
}

void trace_data_free(struct trace_data *td)
{
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
	free(td->code);
	free(td->syscalls);
	free(td->signals);
	free(td->rdtsc);
	free(td->threads);
	free(td->files);
	free(td->sched);
	free(td->sigframes); /* their bytes are blocks, freed below */
	free(td->states);
	free(td->gdb_writes); /* their bytes are blocks too */
	struct trace_reader_priv *pv = td->priv;
	if (pv) {
		for (size_t i = 0; i < pv->nblocks; i++)
			free(pv->blocks[i]);
		free(pv->blocks);
		trace_pt_appender_free(&pv->pt);
		free(pv);
	}
	memset(td, 0, sizeof *td);
}

const struct trace_file_copy *trace_file_copy_find(const struct trace_data *td,
						   const char *path,
						   const uint8_t *build_id,
						   uint32_t build_id_len)
{
	/* The latest whole copy: a file replaced during the recording under
	 * the same build-id is the same file. */
	for (size_t i = td->nfiles; i-- > 0;) {
		const struct trace_file_copy *f = &td->files[i];
		if (f->len == f->size && f->build_id_len == build_id_len &&
		    (!build_id_len || memcmp(f->build_id, build_id, build_id_len) == 0) &&
		    strcmp(f->path, path) == 0)
			return f;
	}
	return NULL;
}

const char *trace_meta(const struct trace_data *td, const char *key)
{
	for (size_t i = 0; i < td->nmeta; i++)
		if (strcmp(td->meta_keys[i], key) == 0)
			return td->meta_values[i];
	return NULL;
}
