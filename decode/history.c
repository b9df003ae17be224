/* The history object's life: making one (its configuration and the cache
 * of decoded segments) and freeing everything it holds. Above both the
 * index (history_index.c) and the cache (history_cache.c, which reads the
 * index), so that neither has to call the other's set-up. */
#include "history_internal.h"

#include <stdlib.h>

struct history *history_new(const struct history_config *cfg)
{
	struct history *h;

	if (!cfg || !cfg->image)
		return NULL;
	h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->cfg = *cfg;
	if (hist_cache_init(h) < 0) {
		free(h);
		return NULL;
	}
	return h;
}

void history_free(struct history *h)
{
	if (!h)
		return;
	hist_cache_free(h);
	for (int i = 0; i < HIST_EVKINDS; i++)
		free(h->ev[i].v);
	free(h->seg);
	free(h->buf);
	free(h);
}
