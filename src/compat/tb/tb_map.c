/* The int64 -> index map of tb_map.h: open addressing, linear probing. */
#include "tb_map.h"

#include "ta.h"
#include "ta_intern.h"

#include <math.h>
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

int64_t tb_key(struct ta_intern *keys, sqlite3_stmt *st, int col)
{
	struct ta_buf b = { 0 };
	double d;
	int64_t id;
	int is_new;

	switch (sqlite3_column_type(st, col)) {
	case SQLITE_INTEGER:
		return sqlite3_column_int64(st, col);
	case SQLITE_NULL:
		return TB_KEY_NONE;
	case SQLITE_FLOAT:   /* 1.0 is 1 to Python's dict */
		d = sqlite3_column_double(st, col);
		if (d == floor(d) && d >= -9.2e18 && d <= 9.2e18)
			return (int64_t)d;
		ta_buf_addc(&b, 'f');
		ta_buf_add(&b, &d, sizeof(d));
		break;
	default:
		ta_buf_addc(&b, 's');
		ta_buf_add(&b, sqlite3_column_text(st, col), (size_t)sqlite3_column_bytes(st, col));
		break;
	}
	id = ta_intern(keys, b.s, b.len, &is_new);
	ta_buf_free(&b);
	return TB_KEY_NONE + id;
}
