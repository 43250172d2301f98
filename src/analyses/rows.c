/* Which rows the analyses see. HTA's event selection, µs rounding,
 * device-row rule and step filter (hta-semantics §2-§7) differ from the
 * right ones in a handful of rules; both versions live here, so every
 * analysis is written once over TEMP TABLE dev. */
#include "ta_analyses.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

/* GPU activity categories (CUDA, older Kineto, MTIA). */
#define GPU_CATS "'kernel', 'Kernel', 'gpu_memcpy', 'Memcpy', 'gpu_memset'," \
	" 'Memset', 'mtia_ccp_events'"
#define STEP_GLOB "'ProfilerStep#[0-9]*'"

static void sql_kind(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	const char *cat = (const char *)sqlite3_value_text(argv[1]);

	(void)argc;
	sqlite3_result_int(ctx, ta_classify(name, cat,
					    sqlite3_value_int(argv[2])));
}

/* 1 if the rank is in the trace, 0 if not, -1 on a database error. */
static int rank_exists(sqlite3 *db, int64_t rank, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_db_prepare(db, "SELECT 1 FROM files WHERE rank = ?", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	return ta_db_done(db, rc, err) < 0 ? -1 : 0;
}

static int select_ranks(sqlite3 *db, const struct ta_query *q,
			struct ta_error *err)
{
	char sql[96];
	size_t i;

	if (ta_db_exec(db, "DROP TABLE IF EXISTS temp.sel_ranks;"
		       "CREATE TEMP TABLE sel_ranks (rank INTEGER PRIMARY KEY);",
		       err) < 0)
		return -1;
	if (!q->ranks)
		return ta_db_exec(db, "INSERT INTO sel_ranks SELECT rank FROM files",
				  err);
	for (i = 0; i < q->nranks; i++) {
		int found = rank_exists(db, q->ranks[i], err);

		if (found < 0)
			return -1;
		if (!found) {
			ta_error_set(err, TA_EXIT_INPUT,
				     "rank %lld is not in the trace",
				     (long long)q->ranks[i]);
			return -1;
		}
		snprintf(sql, sizeof(sql),
			 "INSERT OR IGNORE INTO sel_ranks VALUES (%lld)",
			 (long long)q->ranks[i]);
		if (ta_db_exec(db, sql, err) < 0)
			return -1;
	}
	return 0;
}

/* The last CPU row of each correlation: the partner of §4. */
#define CPU_CORR_SQL \
"DROP TABLE IF EXISTS temp.cpu_corr;" \
"CREATE TEMP TABLE cpu_corr (rank INTEGER, correlation INTEGER, idx INTEGER," \
"  PRIMARY KEY (rank, correlation));" \
"INSERT INTO cpu_corr SELECT rank, correlation, max(idx) FROM hrows" \
"  WHERE is_gpu = 0 AND correlation != -1 GROUP BY rank, correlation;"

/* §2.3-§2.4: rows with dur and cat (not "Trace"), µs-rounded when the
 * file has float timestamps; §3 GPU-event flag; §4 partner index. */
static const char hta_rows_sql[] =
"CREATE TEMP TABLE hrows AS SELECT e.rank, e.idx, e.name, e.cat,"
"  CASE WHEN f.hta_rounded THEN e.hta_ts_ns ELSE e.ts_ns END AS ts,"
"  CASE WHEN f.hta_rounded THEN e.hta_dur_ns ELSE e.dur_ns END AS dur,"
"  e.stream, e.correlation, COALESCE(e.gbps, 0.0) AS gbps,"
"  ((e.stream >= 0 AND e.correlation >= 0) OR e.name IN (SELECT name_id"
"    FROM names WHERE name IN ('Event Sync', 'Context Sync'))) AS is_gpu,"
"  NULL AS partner, e.pid, e.tid"
" FROM events e JOIN files f ON f.rank = e.rank"
" WHERE e.rank IN (SELECT rank FROM sel_ranks) AND e.dur_ns IS NOT NULL"
"  AND e.cat IS NOT NULL"
"  AND e.cat NOT IN (SELECT name_id FROM names WHERE name = 'Trace');"
"CREATE INDEX temp.hrows_idx ON hrows (rank, idx);"
"CREATE INDEX temp.hrows_corr ON hrows (rank, correlation);"
CPU_CORR_SQL
"UPDATE hrows SET partner = COALESCE((SELECT c.idx FROM cpu_corr c"
"  WHERE c.rank = hrows.rank AND c.correlation = hrows.correlation), 0)"
" WHERE is_gpu AND correlation != -1;";

/* HTA's trace start: its rows before the step filter (§2). */
#define HTA_MIN_TS_SQL \
	"SELECT min(CASE WHEN f.hta_rounded THEN e.hta_ts_ns ELSE e.ts_ns END)" \
	" FROM events e JOIN files f ON f.rank = e.rank" \
	" WHERE e.dur_ns IS NOT NULL AND e.cat IS NOT NULL" \
	" AND e.cat NOT IN (SELECT name_id FROM names WHERE name = 'Trace')"

/* §7.1: P counts distinct step names over all ranks. */
static const char hta_steps_sql[] =
"SELECT count(DISTINCT e.name) FROM events e JOIN names n"
" ON n.name_id = e.name WHERE e.dur_ns IS NOT NULL AND e.cat IS NOT NULL"
" AND e.cat NOT IN (SELECT name_id FROM names WHERE name = 'Trace')"
" AND n.name GLOB " STEP_GLOB;

/* §7.2: keep CPU rows before the last step's start, and GPU rows whose
 * correlation a kept CPU row has. */
static const char hta_filter_sql[] =
"CREATE TEMP TABLE win AS SELECT s.rank, COALESCE("
"  (SELECT max(h.ts) FROM hrows h JOIN names n ON n.name_id = h.name"
"   WHERE h.rank = s.rank AND NOT h.is_gpu AND n.name GLOB " STEP_GLOB "),"
"  (SELECT min(h.ts) FROM hrows h WHERE h.rank = s.rank AND NOT h.is_gpu))"
"  AS last_start FROM sel_ranks s;"
"DELETE FROM hrows WHERE NOT is_gpu"
"  AND ts >= (SELECT last_start FROM win w WHERE w.rank = hrows.rank);"
CPU_CORR_SQL
"DELETE FROM hrows WHERE is_gpu"
"  AND (SELECT last_start FROM win w WHERE w.rank = hrows.rank) IS NOT NULL"
"  AND NOT EXISTS (SELECT 1 FROM cpu_corr c WHERE c.rank = hrows.rank"
"   AND c.correlation = hrows.correlation);";

/* Every device row an analysis sees, whichever rules chose it. kind:
 * enum ta_kind; idle_kernel: counts for idle time; ord: row order. */
static const char dev_table_sql[] =
"CREATE TEMP TABLE dev (rank INTEGER, idx INTEGER, name INTEGER, ts INTEGER,"
"  dur INTEGER, stream INTEGER, correlation INTEGER, gbps REAL, kind INTEGER,"
"  idle_kernel INTEGER, launch_ts INTEGER, ord INTEGER, pid, tid);"
"CREATE INDEX temp.dev_ts ON dev (rank, ts);"
"CREATE INDEX temp.dev_corr ON dev (rank, correlation);";

/* §3: device rows are stream != -1; ord is §7.2 step 5's row order. */
static const char hta_dev_sql[] =
"INSERT INTO dev SELECT h.rank, h.idx, h.name, h.ts, h.dur,"
"  h.stream, h.correlation, h.gbps, ta_kind(n.name, c.name, 1) AS kind,"
"  c.name IN (" GPU_CATS ") AS idle_kernel,"
"  CASE WHEN h.partner IS NULL THEN NULL ELSE (SELECT p.ts FROM hrows p"
"   WHERE p.rank = h.rank AND p.idx = h.partner) END AS launch_ts,"
"  CASE WHEN %d AND NOT h.is_gpu THEN h.idx + 1000000000000 ELSE h.idx END"
"   AS ord, h.pid, h.tid"
" FROM hrows h LEFT JOIN names n ON n.name_id = h.name"
" LEFT JOIN names c ON c.name_id = h.cat WHERE h.stream != -1;";

/* HTA's rows and step filter into TEMP TABLE hrows; returns whether the
 * filter ran (1), or -1. */
static int hta_rows(sqlite3 *db, struct ta_error *err)
{
	int64_t steps;
	int filtered;

	if (ta_db_exec(db, hta_rows_sql, err) < 0 ||
	    ta_db_get_int(db, hta_steps_sql, 0, &steps, err) < 0)
		return -1;
	filtered = steps >= 2;
	if (filtered && ta_db_exec(db, hta_filter_sql, err) < 0)
		return -1;
	return filtered;
}

/* Those rules cost about a second per 200 MB of trace, so a database
 * that can be written keeps their result for every rank (main.hta_rows,
 * and whether the step filter ran in info), and later runs only select.
 * Changing a rule above means a new TA_SCHEMA_VERSION. */
static int keep_hta_rows(sqlite3 *rw, void *ctx, struct ta_error *err)
{
	struct ta_query every = { 0, NULL, 0 };
	char sql[1024];
	int filtered;

	(void)ctx;
	if (ta_db_has(rw, "table", "hta_rows"))
		return 0; /* another process was first */
	if (select_ranks(rw, &every, err) < 0 || (filtered = hta_rows(rw, err)) < 0)
		return -1;
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE hta_rows AS SELECT * FROM temp.hrows;"
		 "CREATE INDEX hta_rows_idx ON hta_rows (rank, idx);"
		 "CREATE INDEX hta_rows_corr ON hta_rows (rank, correlation);"
		 "CREATE INDEX hta_rows_dev ON hta_rows (rank, ts) WHERE stream != -1;"
		 "INSERT INTO info VALUES ('hta_step_filter', %d);"
		 "INSERT INTO info SELECT 'hta_min_ts', (" HTA_MIN_TS_SQL ");",
		 filtered);
	return ta_db_exec(rw, sql, err);
}

static int prepare_hta(sqlite3 *db, struct ta_error *err)
{
	char sql[sizeof(hta_dev_sql) + 16];
	int64_t kept;
	int filtered;

	if (ta_db_has(db, "table", "hta_rows") ||
	    ta_db_write(db, keep_hta_rows, NULL, NULL) == 0) {
		if (ta_db_get_int(db, "SELECT value FROM info WHERE key ="
				  " 'hta_step_filter'", 0, &kept, err) < 0)
			return -1;
		filtered = kept == 1;
		if (ta_db_exec(db, "CREATE TEMP VIEW hrows AS SELECT * FROM"
			       " main.hta_rows WHERE rank IN"
			       " (SELECT rank FROM temp.sel_ranks)", err) < 0)
			return -1;
	} else if ((filtered = hta_rows(db, err)) < 0) {
		return -1; /* a database we may not write: for this run only */
	}
	snprintf(sql, sizeof(sql), hta_dev_sql, filtered);
	return ta_db_exec(db, sql, err);
}

/* Default: GPU activity by category, exact ns, negative durations as 0;
 * the launch is the runtime call with the same correlation. The last
 * ProfilerStep is left out as HTA intends, but per rank: only ranks with
 * two or more steps are cut, and GPU work is kept or dropped by when it
 * was launched (or started, when no launch was recorded). */
static const char default_dev_sql[] =
"INSERT INTO dev SELECT e.rank, e.idx, e.name, e.ts_ns AS ts,"
"  max(e.dur_ns, 0) AS dur, e.stream, e.correlation,"
"  COALESCE(e.gbps, 0.0) AS gbps,"
"  ta_kind(n.name, c.name, 0) AS kind, 1 AS idle_kernel,"
"  CASE WHEN e.correlation = -1 THEN NULL ELSE (SELECT r.ts_ns FROM events r"
"   WHERE r.role = 2 AND r.rank = e.rank AND r.correlation = e.correlation"
"   ORDER BY r.idx DESC LIMIT 1) END AS launch_ts,"
"  e.idx AS ord, e.pid, e.tid"
" FROM events e JOIN names c ON c.name_id = e.cat"
" LEFT JOIN names n ON n.name_id = e.name"
" WHERE e.role = 1 AND e.rank IN (SELECT rank FROM sel_ranks)"
"  AND e.ts_ns IS NOT NULL AND e.dur_ns IS NOT NULL;"
"CREATE TEMP TABLE win AS SELECT e.rank, max(e.ts_ns) AS last_start"
" FROM events e INDEXED BY events_ann JOIN names n ON n.name_id = e.name"
" WHERE e.role = 6 AND e.rank IN (SELECT rank FROM sel_ranks)"
"  AND n.name GLOB " STEP_GLOB " AND e.dur_ns IS NOT NULL"
" GROUP BY e.rank HAVING count(DISTINCT e.name) >= 2;"
"DELETE FROM dev WHERE COALESCE(launch_ts, ts) >="
" (SELECT last_start FROM win w WHERE w.rank = dev.rank);";

/* The rows for q are already there (several analyses in one run). */
static int already_prepared(sqlite3 *db, const char *key)
{
	sqlite3_stmt *st = NULL;
	int same = 0;

	if (sqlite3_prepare_v2(db, "SELECT key FROM temp.rows_key", -1, &st,
			       NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		same = strcmp((const char *)sqlite3_column_text(st, 0), key) == 0;
	sqlite3_finalize(st);
	return same;
}

static void query_key(const struct ta_query *q, struct ta_buf *key)
{
	size_t i;

	ta_buf_addf(key, "%d:", q->hta_compat);
	if (!q->ranks)
		ta_buf_adds(key, "all");
	for (i = 0; q->ranks && i < q->nranks; i++)
		ta_buf_addf(key, "%lld,", (long long)q->ranks[i]);
}

static int remember(sqlite3 *db, const char *key, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_db_exec(db, "DROP TABLE IF EXISTS temp.rows_key;"
		       "CREATE TEMP TABLE rows_key (key TEXT)", err) < 0 ||
	    ta_db_prepare(db, "INSERT INTO temp.rows_key VALUES (?)", &st, err) < 0)
		return -1;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
	sqlite3_finalize(st);
	return rc;
}

static int prepare_rows(sqlite3 *db, const struct ta_query *q,
			struct ta_error *err);

int ta_rows_prepare(sqlite3 *db, const struct ta_query *q, struct ta_error *err)
{
	struct ta_buf key = { 0 };
	int rc = 0;

	query_key(q, &key);
	if (!already_prepared(db, key.s)) {
		rc = prepare_rows(db, q, err);
		if (rc == 0)
			rc = remember(db, key.s, err);
	}
	ta_buf_free(&key);
	return rc;
}

static int prepare_rows(sqlite3 *db, const struct ta_query *q,
			struct ta_error *err)
{
	if (sqlite3_create_function(db, "ta_kind", 3,
				    SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				    sql_kind, NULL, NULL) != SQLITE_OK) {
		ta_error_set(err, TA_EXIT_SYSTEM, "database: %s",
			     sqlite3_errmsg(db));
		return -1;
	}
	/* hrows is a view of main.hta_rows or a table of its own */
	if (ta_db_exec(db, ta_db_int(db, "SELECT count(*) FROM sqlite_temp_master"
				     " WHERE type = 'view' AND name = 'hrows'", 0) > 0 ?
		       "DROP VIEW temp.hrows" : "DROP TABLE IF EXISTS temp.hrows",
		       err) < 0 ||
	    ta_db_exec(db, "DROP TABLE IF EXISTS temp.rows_key;"
		       "DROP TABLE IF EXISTS temp.dev;"
		       "DROP TABLE IF EXISTS temp.win;"
		       "DROP TABLE IF EXISTS temp.cpu_corr;", err) < 0 ||
	    select_ranks(db, q, err) < 0)
		return -1;
	/* indexes first: rows arrive in (rank, ts) order, so both grow by
	 * appending, where CREATE INDEX afterwards would sort in memory */
	if (ta_db_exec(db, dev_table_sql, err) < 0)
		return -1;
	return q->hta_compat ? prepare_hta(db, err)
			     : ta_db_exec(db, default_dev_sql, err);
}

int ta_rows_negative_dur(sqlite3 *db)
{
	/* if the query fails, say yes: not streaming is always right */
	return ta_db_int(db, "SELECT EXISTS (SELECT 1 FROM dev WHERE dur < 0)", 1) != 0;
}

int64_t ta_rows_min_ts(sqlite3 *db, int hta_compat)
{
	/* both read every row: the loader and keep_hta_rows noted them */
	if (!hta_compat)
		return ta_db_int(db, "SELECT min(min_ts_ns) FROM files", 0);
	if (ta_db_has(db, "table", "hta_rows"))
		return ta_db_int(db, "SELECT value FROM info WHERE key = 'hta_min_ts'", 0);
	return ta_db_int(db, HTA_MIN_TS_SQL, 0);
}
