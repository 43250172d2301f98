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
