/* The memory image for `ptrev decode --raw`: raw binaries, kAFL/Nyx page
 * dumps and ELF files, all added to libipt's image through one section cache
 * so that every instruction gets a valid image section id (ptxed's --check
 * reports "bad isid" otherwise). Every file is checked here first so that a
 * user gets one clear line instead of a libipt error code. */
#include "raw_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { page_size = 4096 };

int raw_parse_u64(const char *s, uint64_t *value)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*value = v;
	return 0;
}

/* The size of the regular file @path; prints why not and returns -1. */
static int file_size(const char *what, const char *path, uint64_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		fprintf(stderr, "%s: %s: cannot open '%s': %s\n", RAW_PROG,
			what, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: %s: '%s' is not a regular file\n",
			RAW_PROG, what, path);
		close(fd);
		return -1;
	}
	close(fd);
	*size = (uint64_t)st.st_size;
	return 0;
}

/* Adds @size bytes of @path at file offset @offset as a section at @vaddr. */
static int add_section(struct pt_image_section_cache *iscache,
		       struct pt_image *image, const char *what,
		       const char *path, uint64_t offset, uint64_t size,
		       uint64_t vaddr)
{
	int isid, err;

	isid = pt_iscache_add_file(iscache, path, offset, size, vaddr);
	if (isid < 0) {
		fprintf(stderr, "%s: %s: cannot add '%s' at 0x%" PRIx64
			": %s\n", RAW_PROG, what, path, vaddr,
			pt_errstr(pt_errcode(isid)));
		return -1;
	}
	err = pt_image_add_cached(image, iscache, isid, NULL);
	if (err < 0) {
		fprintf(stderr, "%s: %s: cannot map '%s' at 0x%" PRIx64
			": %s\n", RAW_PROG, what, path, vaddr,
			pt_errstr(pt_errcode(err)));
		return -1;
	}
	return 0;
}

/* ---- --image FILE[:OFFSET[-END]]:ADDR ----------------------------------- */

/* Splits an optional ":OFFSET[-END]" off the end of @path (ptxed's file
 * range syntax). A suffix that is not a range is part of the file name. */
static int split_range(char *path, uint64_t *offset, uint64_t *end)
{
	char *colon = strrchr(path, ':');
	char *dash;

	*offset = 0;
	*end = 0;
	if (!colon)
		return 0;
	dash = strchr(colon + 1, '-');
	if (dash)
		*dash = '\0';
	if (raw_parse_u64(colon + 1, offset) < 0 ||
	    (dash && raw_parse_u64(dash + 1, end) < 0)) {
		if (dash)
			*dash = '-';
		*offset = 0;
		*end = 0;
		return 0;
	}
	if (dash && *end <= *offset)
		return -1;
	*colon = '\0';
	return 0;
}

int raw_image_add_binary(struct pt_image_section_cache *iscache,
			 struct pt_image *image, const char *arg)
{
	char *path = strdup(arg);
	char *colon = path ? strrchr(path, ':') : NULL;
	uint64_t addr, offset, end, fsize, size;
	int ret = -1;

	if (!path) {
		fprintf(stderr, "%s: out of memory\n", RAW_PROG);
		return -1;
	}
	if (!colon || raw_parse_u64(colon + 1, &addr) < 0) {
		fprintf(stderr, "%s: --image: expected FILE:ADDRESS, got '%s'\n",
			RAW_PROG, arg);
		goto out;
	}
	*colon = '\0';
	if (split_range(path, &offset, &end) < 0) {
		fprintf(stderr, "%s: --image: empty file range in '%s'\n",
			RAW_PROG, arg);
		goto out;
	}
	if (file_size("--image", path, &fsize) < 0)
		goto out;
	if (fsize == 0 || offset >= fsize || end > fsize) {
		fprintf(stderr, "%s: --image: '%s' (%" PRIu64 " bytes) has "
			"nothing at the range given in '%s'\n", RAW_PROG, path,
			fsize, arg);
		goto out;
	}
	size = (end ? end : fsize) - offset;
	ret = add_section(iscache, image, "--image", path, offset, size, addr);
out:
	free(path);
	return ret;
}

/* ---- --pages ADDRFILE:DUMPFILE ------------------------------------------ */

/* Reads the whole page address list; returns the page count or -1. */
static long read_page_addrs(const char *path, uint64_t **addrs)
{
	uint64_t size;
	unsigned char *bytes;
	FILE *f;
	long n, i;

	if (file_size("--pages", path, &size) < 0)
		return -1;
	if (size == 0 || size % 8) {
		fprintf(stderr, "%s: --pages: '%s' has %" PRIu64 " bytes, "
			"not a nonempty list of 8-byte page addresses\n",
			RAW_PROG, path, size);
		return -1;
	}
	n = (long)(size / 8);
	bytes = malloc(size);
	*addrs = malloc((size_t)n * sizeof(**addrs));
	f = fopen(path, "rb");
	if (!bytes || !*addrs || !f || fread(bytes, 1, size, f) != size) {
		fprintf(stderr, "%s: --pages: cannot read '%s'\n", RAW_PROG,
			path);
		n = -1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		uint64_t v = 0;
		int b;

		/* Little-endian whatever the host is. */
		for (b = 7; b >= 0; b--)
			v = (v << 8) | bytes[i * 8 + b];
		/* Loaded where it says, aligned or not: a dump tool may
		 * have recorded a partial page that way (dyn_test does). */
		if (v % page_size)
			fprintf(stderr, "%s: --pages: warning: address %ld in "
				"'%s' (0x%" PRIx64 ") is not page aligned\n",
				RAW_PROG, i, path, v);
		(*addrs)[i] = v;
	}
out:
	if (f)
		fclose(f);
	free(bytes);
	if (n < 0) {
		free(*addrs);
		*addrs = NULL;
	}
	return n;
}

int raw_image_add_pages(struct pt_image_section_cache *iscache,
			struct pt_image *image, const char *arg)
{
	char *addr_path = strdup(arg);
	char *dump_path = addr_path ? strrchr(addr_path, ':') : NULL;
	uint64_t *addrs = NULL, dump_size;
	long n, first, i;
	int ret = -1;

	if (!addr_path) {
		fprintf(stderr, "%s: out of memory\n", RAW_PROG);
		return -1;
	}
	if (!dump_path || dump_path == addr_path || !dump_path[1]) {
		fprintf(stderr, "%s: --pages: expected ADDRFILE:DUMPFILE, "
			"got '%s'\n", RAW_PROG, arg);
		goto out;
	}
	*dump_path++ = '\0';

	n = read_page_addrs(addr_path, &addrs);
	if (n < 0 || file_size("--pages", dump_path, &dump_size) < 0)
		goto out;
	if (dump_size != (uint64_t)n * page_size) {
		fprintf(stderr, "%s: --pages: '%s' has %" PRIu64 " bytes but "
			"'%s' lists %ld pages of 4096 bytes\n", RAW_PROG,
			dump_path, dump_size, addr_path, n);
		goto out;
	}

	/* Consecutive pages at consecutive addresses become one section:
	 * fewer sections make image lookups faster. */
	for (first = 0; first < n; first = i) {
		for (i = first + 1; i < n; i++)
			if (addrs[i] != addrs[i - 1] + page_size)
				break;
		if (add_section(iscache, image, "--pages", dump_path,
				(uint64_t)first * page_size,
				(uint64_t)(i - first) * page_size,
				addrs[first]) < 0)
			goto out;
	}
	ret = 0;
out:
	free(addrs);
	free(addr_path);
	return ret;
}

/* ---- --elf FILE[:BIAS] --------------------------------------------------- */

static int add_elf_segments(struct pt_image_section_cache *iscache,
			    struct pt_image *image, const char *path, int fd,
			    uint64_t fsize, uint64_t bias)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t nphdr = 0, i;
	int loaded = 0, ret = -1;

	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		fprintf(stderr, "%s: --elf: '%s' is not an ELF file\n",
			RAW_PROG, path);
		goto out;
	}
	if (elf_getphdrnum(elf, &nphdr) < 0) {
		fprintf(stderr, "%s: --elf: '%s': bad program headers: %s\n",
			RAW_PROG, path, elf_errmsg(-1));
		goto out;
	}
	for (i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			fprintf(stderr, "%s: --elf: '%s': bad program header "
				"%zu: %s\n", RAW_PROG, path, i, elf_errmsg(-1));
			goto out;
		}
		if (ph.p_type != PT_LOAD || ph.p_filesz == 0)
			continue;
		if (ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset) {
			fprintf(stderr, "%s: --elf: '%s': segment %zu lies "
				"past the end of the file\n", RAW_PROG, path, i);
			goto out;
		}
		if (add_section(iscache, image, "--elf", path, ph.p_offset,
				ph.p_filesz, ph.p_vaddr + bias) < 0)
			goto out;
		loaded++;
	}
	if (!loaded) {
		fprintf(stderr, "%s: --elf: '%s' has no loadable segment\n",
			RAW_PROG, path);
		goto out;
	}
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	return ret;
}

int raw_image_add_elf(struct pt_image_section_cache *iscache,
		      struct pt_image *image, const char *arg)
{
	char *path = strdup(arg);
	char *colon = path ? strrchr(path, ':') : NULL;
	uint64_t bias = 0, fsize;
	int fd, ret = -1;

	if (!path) {
		fprintf(stderr, "%s: out of memory\n", RAW_PROG);
		return -1;
	}
	/* A suffix that is not a number belongs to the file name. */
	if (colon && raw_parse_u64(colon + 1, &bias) == 0)
		*colon = '\0';
	else
		bias = 0;

	if (file_size("--elf", path, &fsize) < 0)
		goto out;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "%s: --elf: libelf is unusable: %s\n",
			RAW_PROG, elf_errmsg(-1));
		goto out;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "%s: --elf: cannot open '%s': %s\n", RAW_PROG,
			path, strerror(errno));
		goto out;
	}
	ret = add_elf_segments(iscache, image, path, fd, fsize, bias);
	close(fd);
out:
	free(path);
	return ret;
}
