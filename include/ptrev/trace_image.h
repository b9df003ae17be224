/* The code a recording ran, as a libipt image: what decoding a recording
 * (and its history index) needs. Implemented in decode/trace_image.c. */
#ifndef PTREV_TRACE_IMAGE_H
#define PTREV_TRACE_IMAGE_H

#include <intel-pt.h>
#include <stdbool.h>
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

/* Where the bytes of the file mapping @m are: the file at m->path when it
 * exists and has the recorded build-id (*copy = NULL), else the
 * recording's copy of it (*copy set; FILE records). Returns 0, or -1 with
 * why neither will do in @err, naming the file: "FILE: cannot open ...",
 * "FILE changed since recording (build-id ...)", each followed by "; the
 * recording has no copy of it ...". */
int trace_image_file_source(const struct trace_data *td,
			    const struct trace_mmap *m,
			    const struct trace_file_copy **copy,
			    char *err, size_t errlen);

/* A path whose file holds the recorded binary @path (as the MMAP records
 * name it; e.g. the program, for gdb's exec-file or a re-execution): @path
 * itself when it is the recorded build (*is_temp false), else a new file
 * in $TMPDIR (or /tmp), mode 0700, holding the recording's copy, which the
 * caller unlinks when done (*is_temp true). A path no executable mapping
 * names is returned as it is. Returns 0, or -1 with why in @err (as
 * trace_image_file_source). */
int trace_image_binary_path(const struct trace_data *td, const char *path,
			    char *out, size_t outlen, bool *is_temp,
			    char *err, size_t errlen);
void trace_image_free(struct trace_image *ti);

#endif
