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

#include <stdlib.h>
#include <string.h>

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
"  AND e.ts_ns IS NOT NULL AND e.dur_ns IS NOT NULL" \
"  AND NOT ta_dev_repeat(e.ts_ns, e.dur_ns, e.name, e.stream, e.correlation) LIMIT -1) x"

/* The rank's cut (win's last_start; NULL: none) and its first call, as
 * the SQL values the one statement compared with. */
static const char params_sql[] =
	"SELECT (SELECT last_start FROM win WHERE rank = ?1), "
	TA_FIRST_CALL_SQL("?1");

/* A GPU row recorded twice (the same start, length, name, stream and
 * correlation: no GPU runs one kernel twice at once) counts once
 * (helper-66: every kernel twice doubled ops, kernels and the roofline,
 * and turned the critical path to launch delay). The rows come in the
 * order of events_gpu (rank, ts_ns, dur_ns, name, stream, correlation,
 * idx): a repeat follows the row it repeats, so the row before is all
 * there is to compare (a lookup of an earlier one cost 5 k instructions
 * a kernel, 2 % of a fresh temporal). */
struct repeat {
	int have;
	sqlite3_int64 key[5];
	int null[5];
	int64_t n;            /* repeats of the rank so far */
	int64_t negative;     /* rows with a negative length (read as 0) */
};

static void sql_repeat(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct repeat *r = sqlite3_user_data(ctx);
	int same = r->have, k;

	for (k = 0; k < argc && k < 5; k++) {
		int null = sqlite3_value_type(argv[k]) != SQLITE_INTEGER;
		sqlite3_int64 v = null ? 0 : sqlite3_value_int64(argv[k]);

		same &= null == r->null[k] && v == r->key[k] && !null;
		r->null[k] = null;
		r->key[k] = v;
	}
	r->have = 1;
	r->n += same;
	r->negative += !r->null[1] && r->key[1] < 0;
	sqlite3_result_int(ctx, same);
}

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

int ta_model_fill_dev(sqlite3 *db, const char *table, const char *repeats,
		      struct ta_error *err)
{
	sqlite3_stmt *ranks = NULL, *params = NULL, *ins = NULL, *said = NULL;
	char *sql = sqlite3_mprintf("INSERT INTO %s " DEV_ROW_SELECT, table);
	char *put = sqlite3_mprintf("DROP TABLE IF EXISTS %s;"
				    "CREATE TABLE %s (rank INTEGER, n INTEGER, negative INTEGER);",
				    repeats, repeats);
	char *one = sqlite3_mprintf("INSERT INTO %s VALUES (?, ?, ?)", repeats);
	/* the connection's until it closes, or until replaced here: a
	 * statement of the caller's running keeps it (SQLITE_BUSY) */
	struct repeat *r = ta_xcalloc(1, sizeof(*r));
	int rc = -1, step = SQLITE_DONE;

	if (!sql || !put || !one) {
		ta_error_set(err, TA_EXIT_SYSTEM, "out of memory");
		free(r);
	} else if (sqlite3_create_function_v2(db, "ta_dev_repeat", 5, SQLITE_UTF8, r,
					      sql_repeat, NULL, NULL, free) != SQLITE_OK)
		ta_db_failed(db, err);   /* (r freed by SQLite) */
	else if (ta_db_exec(db, put, err) == 0 &&
		 ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank",
			       &ranks, err) == 0 &&
		 ta_db_prepare(db, params_sql, &params, err) == 0 &&
		 ta_db_prepare(db, sql, &ins, err) == 0 &&
		 ta_db_prepare(db, one, &said, err) == 0) {
		rc = 0;
		while (rc == 0 && (step = sqlite3_step(ranks)) == SQLITE_ROW) {
			int64_t rank = sqlite3_column_int64(ranks, 0);

			memset(r, 0, sizeof(*r));
			rc = fill_rank(params, ins, rank, err);
			if (rc == 0 && (r->n > 0 || r->negative > 0)) {
				sqlite3_bind_int64(said, 1, rank);
				sqlite3_bind_int64(said, 2, r->n);
				sqlite3_bind_int64(said, 3, r->negative);
				rc = ta_db_done(db, sqlite3_step(said), err);
				sqlite3_reset(said);
			}
		}
		if (rc == 0)
			rc = ta_db_done(db, step, err);
	}
	sqlite3_finalize(ranks);
	sqlite3_finalize(params);
	sqlite3_finalize(ins);
	sqlite3_finalize(said);
	sqlite3_free(sql);
	sqlite3_free(put);
	sqlite3_free(one);
	return rc;
}
