/* tests/record/test_record_copy's program: dynamically linked (so ld.so
 * and libc are mapped and copied too), built twice with a different
 * VARIANT so that the two builds have different build-ids. */
#include <stdio.h>

#ifndef VARIANT
#define VARIANT 1
#endif

int main(void)
{
	printf("variant %d\n", VARIANT);
	return VARIANT;
}
