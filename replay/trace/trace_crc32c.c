/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of
 * every .ptrev record. Castagnoli rather than the zlib polynomial because
 * x86-64 computes it in hardware (SSE4.2 crc32), which matters when the
 * recorder checksums every PT chunk; the table path gives the same values
 * everywhere else. Check value: crc32c("123456789") = 0xE3069283. */
#include "ptrev/trace_file.h"

#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

static uint32_t table[256];
static int table_ready;

static void make_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		table[i] = c;
	}
	__atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

/* Exposed (file-local name) so the unit test can compare both paths. */
uint32_t trace_crc32c_soft(uint32_t crc, const void *data, size_t len);
uint32_t trace_crc32c_soft(uint32_t crc, const void *data, size_t len)
{
	/* Two threads building the same table write the same values. */
	if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE))
		make_table();
	const uint8_t *p = data;
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t c = (uint32_t)~crc;
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8); /* x86 is little-endian, as the CRC wants */
		c = _mm_crc32_u64(c, v);
		p += 8;
		len -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (len--)
		c32 = _mm_crc32_u8(c32, *p++);
	return ~c32;
}
#endif

uint32_t trace_crc32c(uint32_t crc, const void *data, size_t len)
{
#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_hw(crc, data, len);
#endif
	return trace_crc32c_soft(crc, data, len);
}
