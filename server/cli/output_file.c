/* The file a recording is written to (-o): a recording may be replaced by
 * a new one, anything else only with --force, so that a mistyped -o does
 * not destroy a document. */
#include <stdio.h>
#include <sys/stat.h>

#include "ptrev/cli.h"
#include "ptrev/trace_file.h"

int cli_check_output(const char *path, bool force, char *err, size_t errlen)
{
	struct stat st;
	if (force || stat(path, &st) != 0)
		return 0; /* nothing there (the writer says why it cannot create it) */
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is a directory", path);
		return -1;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0 && !trace_file_looks_like_recording(path)) {
		snprintf(err, errlen, "%s exists and is not a ptrev recording; --force "
			 "overwrites it", path);
		return -1;
	}
	return 0;
}
