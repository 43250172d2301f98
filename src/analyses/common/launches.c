#include "launches.h"

#include <stdlib.h>

int ta_launches_load(sqlite3 *db, int64_t rank, struct ta_launches *l,
		     struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	l->n = 0;
	/* events_launch's order: the last of a correlation's run is its
	 * largest idx */
	if (ta_db_prepare(db, "SELECT correlation, ts, dur FROM calls WHERE rank = ?"
			  " AND correlation != -1 ORDER BY correlation, idx", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t corr = sqlite3_column_int64(st, 0);

		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
			continue;
		if (l->n && l->v[l->n - 1].corr == corr)
			l->n--; /* a later call of the same correlation */
		if (l->n == l->cap) {
			l->cap = l->cap * 2 + 1024;
			l->v = ta_xrealloc(l->v, l->cap * sizeof(*l->v));
		}
		l->v[l->n].corr = corr;
		l->v[l->n].has_ts = sqlite3_column_type(st, 1) != SQLITE_NULL;
		l->v[l->n].ts = sqlite3_column_int64(st, 1);
		/* a call with no duration: not known to have returned */
		l->v[l->n].end = sqlite3_column_type(st, 2) == SQLITE_NULL ? INT64_MAX :
				 ta_add_sat(l->v[l->n].ts, sqlite3_column_int64(st, 2) > 0 ?
					    sqlite3_column_int64(st, 2) : 0);
		l->n++;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

int ta_launches_ts(const struct ta_launches *l, sqlite3_value *corr, int64_t *ts)
{
	int64_t end;

	return ta_launches_span(l, corr, ts, &end);
}

int ta_launches_span(const struct ta_launches *l, sqlite3_value *corr,
		     int64_t *ts, int64_t *end)
{
	int64_t c = sqlite3_value_int64(corr);
	size_t lo = 0, hi = l->n;

	if (sqlite3_value_type(corr) != SQLITE_INTEGER || c == -1)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->v[mid].corr < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == l->n || l->v[lo].corr != c || !l->v[lo].has_ts)
		return 0;
	*ts = l->v[lo].ts;
	*end = l->v[lo].end;
	return 1;
}

void ta_launches_free(struct ta_launches *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
