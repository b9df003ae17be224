/* `ptrev decode --raw PT ...`: the PT file and the decoder set-up (the
 * command line is server/cli/decode_cmd.c's). Decoding itself is
 * raw_loop.c, the image raw_image.c, the output format raw_print.c. */
#include "ptrev/raw_decode.h"
#include "raw_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t iscache_limit = 256ull << 20;

/* Reads all of @path (pipes too); a PT stream must not be empty. */
static int load_pt(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, used = 0;
	uint8_t *buf;

	if (!f) {
		fprintf(stderr, "%s: cannot open PT file '%s': %s\n", RAW_PROG,
			path, strerror(errno));
		return -1;
	}
	buf = malloc(cap);
	while (buf) {
		size_t n = fread(buf + used, 1, cap - used, f);
		uint8_t *bigger;

		used += n;
		if (used < cap)
			break;
		bigger = realloc(buf, cap * 2);
		if (!bigger) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = bigger;
		cap *= 2;
	}
	if (!buf || ferror(f)) {
		fprintf(stderr, "%s: cannot read PT file '%s': %s\n", RAW_PROG,
			path, buf ? strerror(errno) : "out of memory");
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	if (!used) {
		fprintf(stderr, "%s: PT file '%s' is empty\n", RAW_PROG, path);
		free(buf);
		return -1;
	}
	*data = buf;
	*size = used;
	return 0;
}

static int load_images(struct pt_image_section_cache *iscache,
		       struct pt_image *image, const struct raw_decode_args *a)
{
	int i, err = 0;

	for (i = 0; i < a->n_images && !err; i++) {
		const struct image_arg *img = &a->images[i];

		switch (img->kind) {
		case image_binary:
			err = raw_image_add_binary(iscache, image, img->value);
			break;
		case image_pages:
			err = raw_image_add_pages(iscache, image, img->value);
			break;
		case image_elf:
			err = raw_image_add_elf(iscache, image, img->value);
			break;
		}
	}
	return err;
}

/* A trace cut inside a packet: the instruction decoder just stops there, as
 * at a clean end, so look at the packets after the last PSB. Returns 1 and
 * the partial packet's offset when the stream ends inside a packet. A cut at
 * a packet boundary leaves a valid, shorter trace and cannot be seen. */
static int ends_inside_packet(const struct pt_config *config,
			      uint64_t *offset)
{
	struct pt_packet_decoder *pkt = pt_pkt_alloc_decoder(config);
	uint64_t size = (uint64_t)(config->end - config->begin);
	int status, cut = 0;

	if (!pkt)
		return 0;
	status = pt_pkt_sync_backward(pkt);
	while (status >= 0) {
		struct pt_packet packet;

		if (pt_pkt_get_offset(pkt, offset) < 0)
			break;
		status = pt_pkt_next(pkt, &packet, sizeof(packet));
		if (status == -pte_eos)
			cut = *offset < size;
	}
	pt_pkt_free_decoder(pkt);
	return cut;
}

/* Builds the decoder, decodes, prints; returns the exit status. */
static int decode(const struct raw_decode_args *a, struct pt_image *image,
		  uint8_t *pt, size_t pt_size)
{
	struct raw_out *out = malloc(sizeof(*out));
	struct raw_loop_result result;
	struct pt_insn_decoder *decoder;
	struct pt_config config;
	uint64_t cut_at = 0;
	int err;

	if (!out) {
		fprintf(stderr, "%s: out of memory\n", RAW_PROG);
		return 1;
	}
	raw_out_init(out, stdout, a->count_only);

	pt_config_init(&config);
	config.begin = pt;
	config.end = pt + pt_size;
	if (a->have_cpu) {
		config.cpu = a->cpu;
		/* An unknown cpu is reported in the output and decoding goes
		 * on without errata, as ptxed does. */
		err = pt_cpu_errata(&config.errata, &config.cpu);
		if (err < 0)
			raw_print_error(out, 1, 0, 0, 0, "config error", err);
	}

	decoder = pt_insn_alloc_decoder(&config);
	if (!decoder) {
		fprintf(stderr, "%s: cannot create a PT decoder\n", RAW_PROG);
		free(out);
		return 1;
	}
	err = pt_insn_set_image(decoder, image);
	if (err < 0) {
		fprintf(stderr, "%s: cannot set the image: %s\n", RAW_PROG,
			pt_errstr(pt_errcode(err)));
		pt_insn_free_decoder(decoder);
		free(out);
		return 1;
	}

	raw_decode_loop(decoder, out, &result);
	pt_insn_free_decoder(decoder);

	if (a->count_only)
		fprintf(stdout, "instructions: %llu\nerrors: %llu\n",
			(unsigned long long)out->instructions,
			(unsigned long long)out->errors);
	raw_out_flush(out);

	err = 0;
	if (result.synced && ends_inside_packet(&config, &cut_at)) {
		fprintf(stderr, "%s: '%s' ends inside a packet at offset 0x%"
			PRIx64 " of 0x%zx bytes: the trace is truncated\n",
			RAW_PROG, a->pt_path, cut_at, pt_size);
		err = 1;
	}
	if (!result.synced) {
		fprintf(stderr, "%s: no PSB packet in '%s': not an Intel PT "
			"stream, or cut before its first PSB\n", RAW_PROG,
			a->pt_path);
		err = 1;
	} else if (out->errors) {
		fprintf(stderr, "%s: %llu error%s while decoding '%s'\n", RAW_PROG,
			(unsigned long long)out->errors,
			out->errors == 1 ? "" : "s", a->pt_path);
		err = 1;
	}
	free(out);
	return err;
}

int raw_decode(const struct raw_decode_args *args)
{
	struct pt_image_section_cache *iscache = NULL;
	struct pt_image *image = NULL;
	uint8_t *pt = NULL;
	size_t pt_size = 0;
	int status = 1;

	if (load_pt(args->pt_path, &pt, &pt_size) < 0)
		goto out;

	iscache = pt_iscache_alloc(NULL);
	/* Keep sections mapped once used: with the default limit of 0 libipt
	 * maps and unmaps a section at every switch between sections, which
	 * made a 9.6M-instruction trace spend most of its time in mmap. The
	 * mappings are of files, paged in lazily. */
	if (iscache)
		pt_iscache_set_limit(iscache, iscache_limit);
	image = pt_image_alloc(NULL);
	if (!iscache || !image) {
		fprintf(stderr, "%s: out of memory\n", RAW_PROG);
		goto out;
	}
	if (load_images(iscache, image, args) < 0)
		goto out;

	status = decode(args, image, pt, pt_size);
out:
	pt_image_free(image);
	pt_iscache_free(iscache);
	free(pt);
	return status;
}
