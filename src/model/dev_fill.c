/* The default rules' device rows (dev.c's table dev), filled rank by
 * rank with the rank's cut and first call bound as numbers.
 *
 * As one statement over every rank, the cut was a correlated subquery a
 * row (the rank's last step start, and its first call where a kernel had
 * no launch): 3.3 k of the statement's 17.3 k instructions a kernel, on
 * the one thread that runs after every fresh parse. (A rank's launch
 * calls read once into memory and looked up from there cost more than the
 * subquery a kernel: a runtime call is read for each, and a trace has two
 * or three for each kernel.) */
#include "model_int.h"

/* Default: GPU activity by category, exact ns, negative durations as 0;
 * the launch is the runtime call with the same correlation (its last).
 * ?1 the rank, ?2 its cut (win: GPU work launched, or started where no
 * call was recorded, from the last step on is cut: dev leaves it out,
 * dev_win measures it by time), ?3 its first call (work with a smaller
 * correlation and no call of its own was launched before the trace
 * began: kept). The cut as the rows go in: an UPDATE after cost a scan of
 * every row. LIMIT -1 keeps the inner SELECT whole, so its launch is
 * looked up once a row. */
#define DEV_ROW_SELECT \
"SELECT x.*, CASE WHEN (x.launch_ts IS NULL AND x.correlation >= 0" \
"  AND x.correlation < ?3)" \
"  OR COALESCE(x.launch_ts, x.ts) < COALESCE(?2, 9223372036854775807)" \
"  THEN 0 ELSE 1 END AS cut" \
" FROM (SELECT e.rank, e.idx, e.name, e.ts_ns AS ts," \
"  max(e.dur_ns, 0) AS dur, e.stream, e.correlation," \
"  COALESCE(e.gbps, 0.0) AS gbps," \
"  COALESCE(ta_kind_known(e.name, e.cat, 0), ta_kind_learn(e.name, e.cat, 0," \
"   (SELECT name FROM names WHERE name_id = e.name)," \
"   (SELECT name FROM names WHERE name_id = e.cat))) AS kind, 1 AS idle_kernel," \
"  CASE WHEN e.correlation = -1 THEN NULL ELSE (SELECT r.ts_ns FROM events r" \
"   WHERE r.role = " TA_SQL(TA_ROLE_RUNTIME) " AND r.rank = e.rank" \
"   AND r.correlation = e.correlation ORDER BY r.idx DESC LIMIT 1) END AS launch_ts," \
"  e.idx AS ord, e.pid, e.tid, e.blocks_per_sm, e.occupancy, e.shared_mem" \
" FROM events e" \
" WHERE e.role = " TA_SQL(TA_ROLE_GPU) " AND e.rank = ?1" \
"  AND e.ts_ns IS NOT NULL AND e.dur_ns IS NOT NULL LIMIT -1) x"

/* The rank's cut (win's last_start; NULL: none) and its first call, as
 * the SQL values the one statement compared with. */
static const char params_sql[] =
	"SELECT (SELECT last_start FROM win WHERE rank = ?1), "
	TA_FIRST_CALL_SQL("?1");

/* One rank's rows into the table ins inserts into. */
static int fill_rank(sqlite3_stmt *params, sqlite3_stmt *ins, int64_t rank,
		     struct ta_error *err)
{
	sqlite3 *db = sqlite3_db_handle(ins);
	int rc;

	sqlite3_bind_int64(params, 1, rank);
	if ((rc = sqlite3_step(params)) != SQLITE_ROW) {
		sqlite3_reset(params);
		return ta_db_done(db, rc == SQLITE_DONE ? SQLITE_ERROR : rc, err);
	}
	sqlite3_bind_int64(ins, 1, rank);
	sqlite3_bind_value(ins, 2, sqlite3_column_value(params, 0));
	sqlite3_bind_value(ins, 3, sqlite3_column_value(params, 1));
	rc = sqlite3_step(ins);
	sqlite3_reset(ins);
	sqlite3_reset(params);
	return ta_db_done(db, rc, err);
}

int ta_model_fill_dev(sqlite3 *db, const char *table, struct ta_error *err)
{
	sqlite3_stmt *ranks = NULL, *params = NULL, *ins = NULL;
	char *sql = sqlite3_mprintf("INSERT INTO %s " DEV_ROW_SELECT, table);
	int rc = -1, step = SQLITE_DONE;

	if (!sql)
		ta_error_set(err, TA_EXIT_SYSTEM, "out of memory");
	else if (ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank",
			       &ranks, err) == 0 &&
		 ta_db_prepare(db, params_sql, &params, err) == 0 &&
		 ta_db_prepare(db, sql, &ins, err) == 0) {
		rc = 0;
		while (rc == 0 && (step = sqlite3_step(ranks)) == SQLITE_ROW)
			rc = fill_rank(params, ins, sqlite3_column_int64(ranks, 0), err);
		if (rc == 0)
			rc = ta_db_done(db, step, err);
	}
	sqlite3_finalize(ranks);
	sqlite3_finalize(params);
	sqlite3_finalize(ins);
	sqlite3_free(sql);
	return rc;
}
