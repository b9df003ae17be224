/* The code a recording ran, as a libipt image: what decoding a recording
 * (and its history index) needs. Implemented in decode/trace_image.c. */
#ifndef PTREV_TRACE_IMAGE_H
#define PTREV_TRACE_IMAGE_H

#include <intel-pt.h>
#include <stddef.h>

#include "ptrev/trace_file.h"

/* libipt's image of every executable mapping the recording ever saw: the
 * mapped files (checked against their recorded build-ids) and the recorded
 * code bytes, which win where both exist. */
struct trace_image {
	struct pt_image_section_cache *iscache;
	struct pt_image *image;
	int code_fd;		/* memfd holding the CODE bytes, or -1 */
};

/* Returns 0, or -1 with a message in @err naming the mapping at fault:
 * "FILE: cannot open ...", "FILE changed since recording (build-id ...)",
 * "overlapping code mappings over time are not supported yet (...)". */
int trace_image_build(struct trace_image *ti, const struct trace_data *td,
		      char *err, size_t errlen);
void trace_image_free(struct trace_image *ti);

#endif
