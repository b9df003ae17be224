#include "ptrev/hex.h"

int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool hex_parse_u64(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;
	while (s < end && hex_digit((unsigned char)*s) >= 0) {
		if (n == 16)
			return false;
		v = (v << 4) | (uint64_t)hex_digit((unsigned char)*s);
		s++;
		n++;
	}
	if (n == 0)
		return false;
	*p = s;
	*out = v;
	return true;
}

bool hex_decode(const char *hex, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hex_digit((unsigned char)hex[2 * i]);
		int lo = hex_digit((unsigned char)hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

void hex_encode(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
}
