/* Closing a recording's file, whoever wrote it: `ptrev record`
 * (server/cli) and `serve -o` (server/target). Written by
 * server/record/record_file.c. */
#ifndef PTREV_RECORD_FILE_H
#define PTREV_RECORD_FILE_H

#include "ptrev/trace_file.h"

/* Close w, the writer of path (set to keep going after a write error). A
 * write error (a full disk, the file size limit) is said in one line: the
 * file, the error, how much it kept, and went_on (what happened to the
 * program meanwhile); it is no failure, since the file holds whole
 * records. 0, or -1 for any other failure (said too). */
int record_file_close(struct trace_writer *w, const char *path, const char *went_on);

#endif
