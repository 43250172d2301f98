/* Sets of ids read once (ids.h). */
#include "ids.h"

#include <stdlib.h>

int ta_ids_read(sqlite3 *db, const char *sql, struct ta_ids *set,
		struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	set->v = NULL;
	set->n = 0;
	if (ta_db_prepare(db, sql, &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
			continue;
		if (set->n == cap) {
			cap = cap ? 2 * cap : 64;
			set->v = ta_xrealloc(set->v, cap * sizeof(*set->v));
		}
		set->v[set->n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0) {
		free(set->v);
		set->v = NULL;
		set->n = 0;
		return -1;
	}
	ta_qsort(set->v, set->n, sizeof(*set->v), ta_cmp_i64);
	return 0;
}

int ta_ids_has(const struct ta_ids *set, int64_t id)
{
	size_t i = ta_lower_i64(set->v, set->n, id);

	return i < set->n && set->v[i] == id;
}

static size_t pair_slot(const struct ta_pairs *s, int64_t rank, int64_t id)
{
	uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL ^ (uint64_t)rank * 0xC2B2AE3D27D4EB4FULL;
	size_t i = (size_t)(h ^ h >> 29) & (s->cap - 1);

	while (s->used[i] && (s->v[i][0] != rank || s->v[i][1] != id))
		i = (i + 1) & (s->cap - 1);
	return i;
}

int ta_pairs_add(struct ta_pairs *s, int64_t rank, int64_t id)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {   /* at most half full */
		struct ta_pairs g = { NULL, NULL, 0, s->cap ? 2 * s->cap : 1024 };

		g.v = ta_xmalloc(g.cap * sizeof(*g.v));
		g.used = ta_xcalloc(g.cap, 1);
		for (i = 0; i < s->cap; i++)
			if (s->used[i])
				ta_pairs_add(&g, s->v[i][0], s->v[i][1]);
		ta_pairs_free(s);
		*s = g;
	}
	i = pair_slot(s, rank, id);
	if (s->used[i])
		return 0;
	s->used[i] = 1;
	s->v[i][0] = rank, s->v[i][1] = id;
	s->n++;
	return 1;
}

void ta_pairs_free(struct ta_pairs *s)
{
	free(s->v);
	free(s->used);
	s->v = NULL;
	s->used = NULL;
	s->n = s->cap = 0;
}
