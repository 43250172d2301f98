/* op_cover.h: a rank's ops loaded by start, swept with the launches. */
#include "op_cover.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

int ta_op_cover_load(sqlite3 *db, const char *sql, int64_t rank,
		     struct ta_op_cover *c, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	memset(c, 0, sizeof(*c));
	if (ta_db_prepare(db, sql, &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (c->n == cap) {
			cap = cap ? 2 * cap : 1024;
			c->ops = ta_xrealloc(c->ops, cap * sizeof(*c->ops));
		}
		c->ops[c->n] = (struct ta_op){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			sqlite3_column_int64(st, 3), c->n };
		c->n++;
	}
	sqlite3_finalize(st);
	c->active = ta_xcalloc(c->n + 1, sizeof(*c->active));
	if (ta_db_done(db, rc, err) < 0) {
		ta_op_cover_free(c);
		return -1;
	}
	return 0;
}

const struct ta_op *ta_op_cover_find(struct ta_op_cover *c, int64_t tid, int64_t ts,
				     int64_t end, int any_thread)
{
	const struct ta_op *best = NULL;
	size_t i, k = 0;

	while (c->next < c->n && c->ops[c->next].ts <= ts)
		c->active[c->nactive++] = c->next++;
	for (i = 0; i < c->nactive; i++) {
		const struct ta_op *o = &c->ops[c->active[i]];

		if (o->end < ts)
			continue;          /* over for good: launches come in time order */
		c->active[k++] = c->active[i];
		if (o->end < end || (!any_thread && o->tid != tid))
			continue;
		if (!best || o->ts > best->ts || (o->ts == best->ts && o->ord < best->ord))
			best = o;
	}
	c->nactive = k;
	return best;
}

void ta_op_cover_free(struct ta_op_cover *c)
{
	free(c->ops);
	free(c->active);
	memset(c, 0, sizeof(*c));
}
