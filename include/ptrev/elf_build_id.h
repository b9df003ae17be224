/* The GNU build-id of an ELF file (decode/trace_image.c): how decoding
 * finds a mapped file's recorded copy, and how a replay tells whether the
 * file at a recorded path is the build that ran. */
#ifndef PTREV_ELF_BUILD_ID_H
#define PTREV_ELF_BUILD_ID_H

#include <stddef.h>
#include <stdint.h>

/* The GNU build-id of the ELF file open at @fd: its length (0 if it has
 * none or is not ELF), at most @max bytes copied to @id. */
size_t trace_elf_build_id(int fd, uint8_t *id, size_t max);

#endif
