#include "ptrev/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_init(struct strbuf *sb)
{
	sb->data = NULL;
	sb->len = 0;
	sb->cap = 0;
}

void strbuf_free(struct strbuf *sb)
{
	free(sb->data);
	strbuf_init(sb);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->data)
		sb->data[0] = '\0';
}

static void grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	if (need <= sb->cap)
		return;
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap *= 2;
	char *p = realloc(sb->data, cap);
	if (!p) {
		/* Out of memory leaves nothing sensible to do in a debug server. */
		fputs("ptrev: out of memory\n", stderr);
		abort();
	}
	sb->data = p;
	sb->cap = cap;
}

void strbuf_append(struct strbuf *sb, const void *data, size_t n)
{
	grow(sb, n);
	if (n)
		memcpy(sb->data + sb->len, data, n);
	sb->len += n;
	sb->data[sb->len] = '\0';
}

void strbuf_puts(struct strbuf *sb, const char *s)
{
	strbuf_append(sb, s, strlen(s));
}

void strbuf_putc(struct strbuf *sb, char c)
{
	strbuf_append(sb, &c, 1);
}

void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return;
	grow(sb, (size_t)n);
	vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_hex(struct strbuf *sb, const void *data, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = data;
	grow(sb, 2 * n);
	for (size_t i = 0; i < n; i++) {
		sb->data[sb->len++] = digits[p[i] >> 4];
		sb->data[sb->len++] = digits[p[i] & 15];
	}
	sb->data[sb->len] = '\0';
}

void strbuf_xml_escaped(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': strbuf_puts(sb, "&lt;"); break;
		case '>': strbuf_puts(sb, "&gt;"); break;
		case '&': strbuf_puts(sb, "&amp;"); break;
		case '"': strbuf_puts(sb, "&quot;"); break;
		case '\'': strbuf_puts(sb, "&apos;"); break;
		default: strbuf_putc(sb, *s);
		}
	}
}

const char *strbuf_str(const struct strbuf *sb)
{
	return sb->data ? sb->data : "";
}
