/* Hex text <-> numbers and bytes, as the remote protocol writes them. */
#ifndef PTREV_HEX_H
#define PTREV_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Value of one hex digit, or -1. */
int hex_digit(int c);
/* Parse hex digits at *p (at least one, at most 16), advancing *p past them.
 * Returns false if there is no digit or the value overflows 64 bits. */
bool hex_parse_u64(const char **p, const char *end, uint64_t *out);
/* Decode exactly n bytes from 2n hex digits. Returns false on a bad digit. */
bool hex_decode(const char *hex, size_t n, uint8_t *out);
/* Encode n bytes as 2n lowercase hex digits (no NUL written). */
void hex_encode(const uint8_t *in, size_t n, char *out);

#endif
