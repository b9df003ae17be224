/* The recorded binaries run from the recording's copies where the files
 * at their paths changed (include/ptrev/binary_copies.h). */
#include "ptrev/binary_copies.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptrev/elf_build_id.h"
#include "ptrev/start_state.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3: executable even where memfd_noexec says not */
#endif

/* The copies put in memory files so far, one each for ptrev's life: a
 * replay maps the same library again for each piece of history it
 * makes, from several threads. */
struct held {
	char *path;
	uint8_t build_id[20];
	uint32_t build_id_len;
	int fd;
};
static struct held held[64];
static size_t nheld;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

static int memfd_of(const struct trace_file_copy *c)
{
	int fd = -1;
	pthread_mutex_lock(&held_lock);
	for (size_t i = 0; i < nheld && fd < 0; i++)
		if (held[i].build_id_len == c->build_id_len &&
		    memcmp(held[i].build_id, c->build_id, c->build_id_len) == 0 &&
		    strcmp(held[i].path, c->path) == 0)
			fd = held[i].fd;
	if (fd < 0 && nheld < sizeof held / sizeof held[0]) {
		fd = memfd_create("ptrev-copy", MFD_CLOEXEC | MFD_EXEC);
		if (fd < 0 && errno == EINVAL)
			fd = memfd_create("ptrev-copy", MFD_CLOEXEC);
		size_t done = 0;
		while (fd >= 0 && done < c->len) {
			ssize_t n = write(fd, c->bytes + done, c->len - done);
			if (n <= 0) {
				close(fd);
				fd = -1;
				break;
			}
			done += (size_t)n;
		}
		char *path = fd >= 0 ? strdup(c->path) : NULL;
		if (fd >= 0 && !path) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			held[nheld] = (struct held){path, {0}, c->build_id_len, fd};
			memcpy(held[nheld].build_id, c->build_id, c->build_id_len);
			nheld++;
		}
	}
	pthread_mutex_unlock(&held_lock);
	return fd;
}

/* Say once per file (every replay and piece of history runs the program
 * again) that its copy runs in its place. */
static void say_once(const char *file, bool gone)
{
	static char *said[64];
	static size_t nsaid;
	bool new_one = true;
	pthread_mutex_lock(&held_lock);
	for (size_t i = 0; i < nsaid && new_one; i++)
		new_one = strcmp(said[i], file) != 0;
	if (new_one && nsaid < sizeof said / sizeof said[0])
		said[nsaid++] = strdup(file);
	pthread_mutex_unlock(&held_lock);
	if (new_one)
		fprintf(stderr, "ptrev: %s %s since the recording: the replay runs the recording's "
			"copy of it\n", file, gone ? "is gone" : "is another build");
}

/* Is the file at path the build with build-id id? 1 yes, 0 another build,
 * -1 gone (errno). */
static int same_build(const char *path, const uint8_t *id, uint32_t len)
{
	uint8_t now[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = trace_elf_build_id(fd, now, sizeof now);
	close(fd);
	return n == len && memcmp(now, id, len) == 0;
}

/* The copy of m's file as a path the replay process can open, in buf; or
 * NULL with why. */
static const char *copy_path(const struct trace_data *td, const struct trace_mmap *m,
			     const char *state, char *buf, size_t buflen, char *why, size_t whylen)
{
	uint32_t len = m->build_id_len < 20 ? m->build_id_len : 20;
	const struct trace_file_copy *c = trace_file_copy_find(td, m->path, m->build_id, len);
	int fd = c ? memfd_of(c) : -1;
	if (fd < 0) {
		snprintf(why, whylen, "%s %s since the recording, which holds no copy of it "
			 "(recorded with --no-copy, or it was not run from)", m->path, state);
		return NULL;
	}
	snprintf(buf, buflen, "/proc/%d/fd/%d", (int)getpid(), fd);
	return buf;
}

const char *binary_copy_for_map(const struct trace_data *td, const struct trace_mmap *m,
				char *buf, size_t buflen, char *why, size_t whylen)
{
	if (!m->build_id_len)
		return m->path; /* not an ELF file: nothing to tell builds apart by */
	int same = same_build(m->path, m->build_id, m->build_id_len < 20 ? m->build_id_len : 20);
	if (same == 1)
		return m->path;
	const char *copy = copy_path(td, m, same == 0 ? "is another build" : "is gone", buf, buflen,
				     why, whylen);
	if (copy)
		say_once(m->path, same < 0);
	return copy;
}

/* The recorded mapping of the program's file: the initial one holding
 * its entry point. */
static const struct trace_mmap *program_mapping(const struct trace_data *td,
						const uint8_t *auxv, size_t auxv_len)
{
	uint64_t entry = auxv ? start_state_auxv_value(auxv, auxv_len, AT_ENTRY) : 0;
	for (size_t i = 0; entry && i < td->nmmaps; i++) {
		const struct trace_mmap *m = &td->mmaps[i];
		if (m->tid == 0 && m->path[0] == '/' && m->start <= entry && entry < m->end)
			return m;
	}
	return NULL;
}

/* A relative path of exactly len bytes under dir, its directories made:
 * names of up to 200 bytes joined by '/'. */
static char *same_length_path(const char *dir, size_t len)
{
	char *rel = malloc(len + 1);
	if (!rel)
		return NULL;
	memset(rel, 'p', len);
	rel[len] = '\0';
	for (size_t i = 200; i + 1 < len; i += 201)
		rel[i] = '/';
	for (size_t i = 0; i < len; i++) {
		if (rel[i] != '/')
			continue;
		char sub[4096 + 64];
		rel[i] = '\0';
		snprintf(sub, sizeof sub, "%s/%s", dir, rel);
		rel[i] = '/';
		if (mkdir(sub, 0700) < 0) {
			free(rel);
			return NULL;
		}
	}
	return rel;
}

int binary_copy_exe(const struct trace_data *td, const char *path, const char *cwd,
		    const uint8_t *auxv, size_t auxv_len, char **dir, char **rel, char *why,
		    size_t whylen)
{
	*dir = *rel = NULL;
	const struct trace_mmap *m = program_mapping(td, auxv, auxv_len);
	if (!m || !m->build_id_len)
		return 0;
	char file[8192];
	if (path[0] == '/' || !cwd)
		snprintf(file, sizeof file, "%s", path);
	else
		snprintf(file, sizeof file, "%s/%s", cwd, path);
	int same = same_build(file, m->build_id, m->build_id_len < 20 ? m->build_id_len : 20);
	if (same == 1)
		return 0;
	char link_to[64];
	if (!copy_path(td, m, same == 0 ? "is another build" : "is gone", link_to,
		       sizeof link_to, why, whylen)) {
		if (same < 0)
			return -1;
		/* Another build and no copy (--no-copy): it runs, and the
		 * replay diverges where the builds differ, which it says. */
		fprintf(stderr, "ptrev: %s; the replay runs the file there\n", why);
		return 0;
	}
	const char *tmp = getenv("TMPDIR");
	char templ[4096];
	snprintf(templ, sizeof templ, "%s/ptrev-exe-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(templ)) {
		snprintf(why, whylen, "cannot run the recording's copy of %s: a directory for it: "
			 "%s", m->path, strerror(errno));
		return -1;
	}
	*dir = strdup(templ);
	*rel = *dir ? same_length_path(*dir, strlen(path)) : NULL;
	char at[8192];
	if (*rel)
		snprintf(at, sizeof at, "%s/%s", *dir, *rel);
	if (!*rel || symlink(link_to, at) < 0) {
		snprintf(why, whylen, "cannot run the recording's copy of %s: %s", m->path,
			 strerror(errno ? errno : ENOMEM));
		binary_copy_exe_done(*dir, *rel);
		*dir = *rel = NULL;
		return -1;
	}
	say_once(file, same < 0);
	return 1;
}

void binary_copy_exe_done(char *dir, char *rel)
{
	if (dir && rel) {
		/* The link, then each directory made for it, innermost first. */
		char p[8192];
		snprintf(p, sizeof p, "%s/%s", dir, rel);
		unlink(p);
		for (char *s = strrchr(rel, '/'); s; s = strrchr(rel, '/')) {
			*s = '\0';
			snprintf(p, sizeof p, "%s/%s", dir, rel);
			rmdir(p);
		}
	}
	if (dir)
		rmdir(dir);
	free(dir);
	free(rel);
}

const struct trace_file_copy *binary_copy_changed(const struct trace_data *td, const char *path)
{
	const struct trace_mmap *m = NULL;
	for (size_t i = td->nmmaps; i-- > 0 && !m;)
		if (td->mmaps[i].build_id_len && strcmp(td->mmaps[i].path, path) == 0)
			m = &td->mmaps[i];
	if (!m)
		return NULL;
	uint32_t len = m->build_id_len < 20 ? m->build_id_len : 20;
	if (same_build(path, m->build_id, len) == 1)
		return NULL;
	return trace_file_copy_find(td, path, m->build_id, len);
}
