#include "ptrev/cpu_id.h"

#include <cpuid.h>
#include <string.h>

int cpu_id_read(struct cpu_id *id)
{
	unsigned a, b, c, d;
	memset(id, 0, sizeof *id);
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return -1;
	memcpy(id->vendor, &b, 4);
	memcpy(id->vendor + 4, &d, 4);
	memcpy(id->vendor + 8, &c, 4);
	__get_cpuid(1, &a, &b, &c, &d);
	id->stepping = a & 0xf;
	id->model = (a >> 4) & 0xf;
	id->family = (a >> 8) & 0xf;
	/* Extended family for family 15; extended model for 6 and 15+. */
	if (id->family == 0xf)
		id->family += (a >> 20) & 0xff;
	if (id->family == 0x6 || id->family >= 0xf)
		id->model += ((a >> 16) & 0xf) << 4;
	return 0;
}
