/* The int64 -> index map of tb_map.h: open addressing, linear probing. */
#include "tb_map.h"

#include "ta.h"

#include <stdlib.h>

void tb_map_init(struct tb_map *m, size_t n)
{
	m->cap = 16;
	while (m->cap < 2 * n + 2)
		m->cap *= 2;
	m->k = ta_xcalloc(m->cap, sizeof(*m->k));
	m->v = ta_xmalloc(m->cap * sizeof(*m->v));
	for (size_t i = 0; i < m->cap; i++)
		m->v[i] = -1;
}

long *tb_map_at(struct tb_map *m, int64_t key)
{
	size_t i = ((uint64_t)key * 0x9E3779B97F4A7C15ull) & (m->cap - 1);

	while (m->v[i] != -1 && m->k[i] != key)
		i = (i + 1) & (m->cap - 1);
	m->k[i] = key;
	return &m->v[i];
}

void tb_map_free(struct tb_map *m)
{
	free(m->k);
	free(m->v);
	m->k = NULL;
	m->v = NULL;
}
