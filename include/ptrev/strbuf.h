/* Growable byte buffer: the one way ptrev builds replies, XML and file paths.
 * Contents are always NUL-terminated (the NUL is not counted in len), so a
 * buffer holding text can be passed to C string functions directly. */
#ifndef PTREV_STRBUF_H
#define PTREV_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf {
	char *data; /* NUL-terminated; NULL until the first append */
	size_t len;
	size_t cap;
};

#define STRBUF_INIT {NULL, 0, 0}

void strbuf_init(struct strbuf *sb);
void strbuf_free(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);              /* len = 0, keeps memory */
void strbuf_append(struct strbuf *sb, const void *data, size_t n);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_putc(struct strbuf *sb, char c);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
/* Append n bytes as lowercase hex (two digits per byte). */
void strbuf_hex(struct strbuf *sb, const void *data, size_t n);
/* Append text with XML's five special characters escaped. */
void strbuf_xml_escaped(struct strbuf *sb, const char *s);
/* Returns the string (never NULL: "" when empty). */
const char *strbuf_str(const struct strbuf *sb);

#endif
