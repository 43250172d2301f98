/* What a command says about the job beside its tables: its files, clock,
 * ranks and steps, for the HTML page's header and --trace's source. The
 * queries live here so that commands hold no SQL (tests/layers.sh). */
#include "ta_model.h"

#include <stdlib.h>
#include <string.h>

static char *text_or(sqlite3 *db, const char *sql)
{
	char *s = ta_db_text(db, sql);

	return s ? s : ta_xstrdup("?");
}

void ta_model_facts(sqlite3 *db, struct ta_job_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->ranks = (size_t)ta_db_int(db, "SELECT count(*) FROM sel_ranks", 0);
	f->steps = (size_t)ta_db_int(db, "SELECT count(*) FROM step_win", 0);
	f->memory_span_ns = -1;
	if (ta_db_int(db, "SELECT count(*) FROM main.names WHERE name = '[memory]'", 0) > 0)
		f->memory_span_ns = ta_db_int(db, "SELECT max(ts_ns) - min(ts_ns)"
					      " FROM main.memory", 0);
	/* many ranks: the first few files (format: SQL's own) */
	f->files = text_or(db, "SELECT CASE WHEN count(*) <= 8 THEN"
			   " (SELECT group_concat(path, ', ') FROM (SELECT path FROM"
			   "  main.files ORDER BY rank)) ELSE (SELECT group_concat(path, ', ')"
			   "  FROM (SELECT path FROM main.files ORDER BY rank LIMIT 3))"
			   " || format(' and %d more', count(*) - 3) END FROM main.files");
	f->start = text_or(db, "SELECT format('%.3f us on the traces'' clock',"
			   " min(min_ts_ns) / 1000.0) FROM main.files");
}

void ta_model_facts_free(struct ta_job_facts *f)
{
	free(f->files);
	free(f->start);
}

int ta_model_inputs(sqlite3 *db, struct ta_input_file **v, size_t *n,
		    struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*v = NULL;
	*n = 0;
	if (ta_db_prepare(db, "SELECT rank, path, bytes, mtime_ns FROM main.files"
			  " ORDER BY rank", &st, err) < 0)
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
