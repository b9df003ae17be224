/* The event recorder's STATE bounds from the environment, for `ptrev
 * record` and `ptrev serve --record`: PTREV_EVENT_SIGNAL_MS and
 * PTREV_EVENT_SLICE_MS, in milliseconds, fractions too (tests keep
 * histories short with small ones). */
#include <stdlib.h>

#include "ptrev/cli.h"

/* A bound in milliseconds ("0.2" too) as microseconds; 0 (the default)
 * when unset or not a positive number. */
static unsigned env_us(const char *name)
{
	const char *ms = getenv(name);
	char *end;
	double v = ms ? strtod(ms, &end) : 0;
	if (!ms || end == ms || *end || !(v > 0) || v > 60000)
		return 0;
	return v * 1000 < 1 ? 1 : (unsigned)(v * 1000);
}

void cli_event_bounds(unsigned *signal_us, unsigned *slice_us)
{
	*signal_us = env_us("PTREV_EVENT_SIGNAL_MS");
	*slice_us = env_us("PTREV_EVENT_SLICE_MS");
}
