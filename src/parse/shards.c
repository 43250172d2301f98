/* A directory of shards (ingest FILE... -o DIR: one database per trace
 * file, written anywhere, by any process) into one database: each shard's
 * rows copied in rank order, names mapped onto one table of names. */
#include "ta_db.h"
#include "ta_ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct shard {
	char *path;
	int64_t rank;
};

static int cmp_shard(const void *a, const void *b)
{
	const struct shard *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* "a, b, c" of the events table's columns, with cat and name mapped. */
static int column_lists(sqlite3 *db, struct ta_buf *into, struct ta_buf *from,
			struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc, first = 1;

	if (ta_db_prepare(db, "SELECT name FROM pragma_table_info('events')", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 0);

		ta_buf_adds(into, first ? "" : ", ");
		ta_buf_adds(from, first ? "" : ", ");
		ta_buf_adds(into, c);
		if (strcmp(c, "cat") == 0 || strcmp(c, "name") == 0)
			ta_buf_addf(from, "(SELECT m.new FROM temp.name_map m WHERE m.old = e.%s)", c);
		else
			ta_buf_addf(from, "e.%s", c);
		first = 0;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

/* A shard is read only once it is known whole: ours (ta_db_open), of
 * one rank, its events all of that rank. */
static int shard_rank(struct shard *s, struct ta_error *err)
{
	sqlite3 *db = NULL;
	int rc = ta_db_open(s->path, &db, err);

	if (rc == 0)
		rc = ta_db_validate(db, s->path, 1, 0, err);
	if (rc == 0)
		rc = ta_db_get_int(db, "SELECT rank FROM files", -1, &s->rank, err);
	sqlite3_close(db);
	if (rc < 0 && err->code == TA_EXIT_INPUT && strstr(err->msg, "not a traceanalyze database"))
		ta_error_set(err, TA_EXIT_INPUT, "'%s': not a traceanalyze shard of "
			     "schema %d (ingest it again)", s->path, TA_SCHEMA_VERSION);
	return rc;
}

static int copy_shard(sqlite3 *db, const struct shard *s, const char *insert,
		      struct ta_error *err)
{
	char *sql = sqlite3_mprintf("ATTACH %Q AS shard", s->path);
	int rc;

	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': %s", s->path, sqlite3_errmsg(db));
		return -1;
	}
	if (ta_db_exec(db, "BEGIN;"
		       "INSERT INTO main.names (name) SELECT s.name FROM shard.names s"
		       " WHERE NOT EXISTS (SELECT 1 FROM main.names m WHERE m.name = s.name)"
		       " ORDER BY s.name_id;"
		       "DELETE FROM temp.name_map;"
		       "INSERT INTO temp.name_map SELECT s.name_id, m.name_id"
		       " FROM shard.names s JOIN main.names m ON m.name = s.name;", err) < 0 ||
	    ta_db_exec(db, insert, err) < 0 ||
	    ta_db_exec(db,
		       "INSERT INTO main.files (rank, path, bytes, mtime_ns, events,"
		       " json_bytes, truncated, damage, hta_rounded, bad_times, min_ts_ns,"
		       " max_ts_ns) SELECT rank, path, bytes, mtime_ns, events, json_bytes,"
		       " truncated, damage, hta_rounded, bad_times, min_ts_ns, max_ts_ns"
		       " FROM shard.files;"
		       "INSERT INTO main.meta SELECT * FROM shard.meta;"
		       /* what its parse said, said again by every read (a key
		        * of its own: every shard's are 'noted:0'...) */
		       "INSERT OR REPLACE INTO main.info SELECT 'noted:' || (SELECT"
		       " count(*) FROM main.info WHERE key GLOB 'noted:*') || '.' || key,"
		       " value FROM shard.info WHERE key GLOB 'noted:*' ORDER BY rowid;"
		       "INSERT INTO main.snap_segments SELECT * FROM shard.snap_segments;"
		       "INSERT INTO main.snap_blocks SELECT * FROM shard.snap_blocks;"
		       "INSERT INTO main.snap_events SELECT * FROM shard.snap_events;"
		       "COMMIT;", err) < 0) {
		char msg[200];
		int code = err->code; /* a damaged shard: exit 3 (ta_db_exec) */

		snprintf(msg, sizeof(msg), "%.199s", err->msg);
		if (strstr(msg, "UNIQUE"))
			ta_error_set(err, TA_EXIT_INPUT, "'%.300s': a second shard of "
				     "rank %lld", s->path, (long long)s->rank);
		else
			ta_error_set(err, code, "'%.300s': %s", s->path, msg);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_exec(db, "DETACH shard", NULL, NULL, NULL);
		return -1;
	}
	return ta_db_exec(db, "DETACH shard", err);
}

int ta_shards_merge(char *const *paths, size_t n, const char *out,
		    unsigned lazy_indexes, struct ta_error *err)
{
	struct shard *s = ta_xcalloc(n + 1, sizeof(*s));
	struct ta_buf into = { 0 }, from = { 0 }, insert = { 0 };
	sqlite3 *db = NULL;
	char sql[256];
	size_t i;
	int rc = -1, k;

	for (i = 0; i < n; i++)
		s[i].path = paths[i];
	if (sqlite3_open(out, &db) != SQLITE_OK) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot create the database", out);
		goto done;
	}
	/* the shards' schemas are data: no function with side effects */
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	for (i = 0; i < n; i++)
		if (shard_rank(&s[i], err) < 0)
			goto done;
	ta_qsort(s, n, sizeof(*s), cmp_shard);
	if (ta_db_exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;",
		       err) < 0 ||
	    ta_db_exec(db, ta_db_schema_sql, err) < 0 ||
	    ta_db_exec(db, "CREATE UNIQUE INDEX names_by_name ON names (name);"
		       "CREATE TEMP TABLE name_map (old INTEGER PRIMARY KEY, new INTEGER);",
		       err) < 0 ||
	    column_lists(db, &into, &from, err) < 0)
		goto done;
	ta_buf_addf(&insert, "INSERT INTO main.events (%s) SELECT %s FROM shard.events e"
		    " ORDER BY e.rowid", into.s, from.s);
	for (i = 0; i < n; i++)
		if (copy_shard(db, &s[i], insert.s, err) < 0)
			goto done;
	snprintf(sql, sizeof(sql), "BEGIN; DROP INDEX names_by_name;"
		 "INSERT INTO info VALUES ('schema_version', %d), ('tool_version', '%s');",
		 TA_SCHEMA_VERSION, TA_VERSION);
	if (ta_db_exec(db, sql, err) < 0 || ta_db_exec(db, ta_db_index_sql, err) < 0)
		goto done;
	/* as ingestion: the rest when a command first needs them */
	for (k = 0; k < TA_NLAZY_INDEXES; k++)
		if (lazy_indexes >> k & 1 && ta_db_exec(db, ta_db_lazy_index_sql[k], err) < 0)
			goto done;
	rc = ta_db_exec(db, "COMMIT", err);
done:
	sqlite3_close(db);
	ta_buf_free(&into);
	ta_buf_free(&from);
	ta_buf_free(&insert);
	free(s);
	return rc;
}
