/* What a command says about the job beside its tables: its files, clock,
 * ranks and steps, for the HTML page's header and --trace's source. The
 * queries live here so that commands hold no SQL (tests/layers.sh). */
#include "ta_model.h"
#include "ta_table.h"

#include <stdlib.h>
#include <string.h>

/* A row per rank's file, on one database or each shard's: rank,
 * selected (by --ranks), path, its kept steps, its first and last
 * [memory] event and earliest time. */
static const struct ta_col fact_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "selected", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "path", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "steps", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "memory_min_ns", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "memory_max_ns", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "min_ts_ns", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "modules", TA_COL_INT, TA_UNIT_NONE, 0 },
};

enum { F_RANK, F_SELECTED, F_PATH, F_STEPS, F_MEM_MIN, F_MEM_MAX, F_MIN_TS, F_MODULES };

static const char facts_sql[] =
"SELECT f.rank, f.rank IN (SELECT rank FROM sel_ranks), " TA_GIVEN_PATH("f") ","
"  (SELECT count(*) FROM step_win w WHERE w.rank = f.rank),"
"  m.lo, m.hi, f.min_ts_ns,"
/* nn.Module frames (with_modules): the names hold one */
"  EXISTS (SELECT 1 FROM main.names WHERE name GLOB 'nn.Module: *')"
" FROM main.files f LEFT JOIN (SELECT rank, min(ts_ns) AS lo, max(ts_ns) AS hi"
"  FROM main.events WHERE ph = 'i' AND name = (SELECT name_id FROM main.names"
"   WHERE name = '[memory]') GROUP BY rank) m ON m.rank = f.rank"
" ORDER BY f.rank";

int ta_model_facts_rows(sqlite3 *db, const struct ta_query *q,
			struct ta_table **out, struct ta_error *err)
{
	struct ta_table *t = ta_table_new("facts", fact_cols,
					  sizeof(fact_cols) / sizeof(*fact_cols));
	sqlite3_stmt *st = NULL;
	int rc;

	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_DEV, err) < 0 ||
	    ta_db_prepare(db, facts_sql, &st, err) < 0) {
		ta_table_free(t);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t r = ta_table_add_row(t), c;

		for (c = 0; c < t->ncols; c++) {
			if (sqlite3_column_type(st, (int)c) == SQLITE_NULL)
				continue;
			if (t->cols[c].type == TA_COL_TEXT)
				ta_table_set_text(t, r, c, (const char *)sqlite3_column_text(st, (int)c));
			else
				ta_table_set_int(t, r, c, sqlite3_column_int64(st, (int)c));
		}
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0) {
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

void ta_model_facts_of(const struct ta_table *rows, struct ta_job_facts *f)
{
	struct ta_buf files = { 0 };
	int64_t lo = 0, hi = 0;
	size_t r, n = rows->nrows;
	int mem = 0;

	memset(f, 0, sizeof(*f));
	for (r = 0; r < n; r++) {
		const struct ta_cell *m0 = ta_table_cell(rows, r, F_MEM_MIN);
		const struct ta_cell *m1 = ta_table_cell(rows, r, F_MEM_MAX);

		f->ranks += ta_table_cell(rows, r, F_SELECTED)->i != 0;
		f->modules |= ta_table_cell(rows, r, F_MODULES)->i != 0;
		f->steps += (size_t)ta_table_cell(rows, r, F_STEPS)->i;
		if (!m0->null && (!mem || m0->i < lo))
			lo = m0->i;
		if (!m1->null && (!mem || m1->i > hi))
			hi = m1->i;
		mem |= !m0->null;
		/* many ranks: the first few files */
		if (n <= 8 || r < 3)
			ta_buf_addf(&files, "%s%s", r ? ", " : "",
				    ta_table_cell(rows, r, F_PATH)->s ?
				    ta_table_cell(rows, r, F_PATH)->s : "");
	}
	if (n > 8)
		ta_buf_addf(&files, " and %zu more", n - 3);
	f->memory_span_ns = mem ? hi - lo : -1;
	f->files = files.s ? files.s : ta_xstrdup("?");
}

void ta_model_facts_free(struct ta_job_facts *f)
{
	free(f->files);
}

int ta_model_inputs(sqlite3 *db, struct ta_input_file **v, size_t *n,
		    struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*v = NULL;
	*n = 0;
	if (ta_db_exec(db, TA_GIVEN_PATHS_DDL, err) < 0 ||
	    ta_db_prepare(db, "SELECT rank, " TA_GIVEN_PATH("f") ", bytes, mtime_ns"
			  " FROM main.files f ORDER BY rank", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *p = (const char *)sqlite3_column_text(st, 1);

		*v = ta_xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[(*n)++] = (struct ta_input_file){ sqlite3_column_int64(st, 0),
			p ? ta_xstrdup(p) : NULL, sqlite3_column_int64(st, 2),
			sqlite3_column_int64(st, 3) };
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0) {
		ta_model_inputs_free(*v, *n);
		*v = NULL, *n = 0;
		return -1;
	}
	return 0;
}

void ta_model_inputs_free(struct ta_input_file *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

int64_t ta_model_snapshot_events(sqlite3 *db)
{
	if (ta_db_int(db, "SELECT count(*) FROM main.info WHERE key = 'snapshot'", 0) == 0)
		return -1;
	return ta_db_int(db, "SELECT count(*) FROM main.snap_events", 0);
}
