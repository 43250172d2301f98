/* The model's entry point: which ranks, which rules, what is built. */
#include "model_int.h"

#include <stdlib.h>
#include <string.h>

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

int ta_model_select_ranks(sqlite3 *db, const struct ta_query *q,
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


/* What was built, for which query: a second analysis of the same run (a
 * report) adds only what it needs more. */
static int built_for(sqlite3 *db, const char *key, unsigned *have)
{
	sqlite3_stmt *st = NULL;
	int same = 0;

	*have = 0;
	if (sqlite3_prepare_v2(db, "SELECT key, need FROM temp.model_state", -1,
			       &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		same = strcmp((const char *)sqlite3_column_text(st, 0), key) == 0;
		*have = (unsigned)sqlite3_column_int(st, 1);
	}
	sqlite3_finalize(st);
	return same;
}

static void query_key(const struct ta_query *q, struct ta_buf *key)
{
	size_t i;

	ta_buf_addf(key, "%u:%d:", ta_rules_id(q), q->window_span);
	if (!q->ranks)
		ta_buf_adds(key, "all");
	for (i = 0; q->ranks && i < q->nranks; i++)
		ta_buf_addf(key, "%lld,", (long long)q->ranks[i]);
}

/* No DROP here: an analysis may ask for more while it reads (a DROP would
 * fail then, "database table is locked"). */
static int remember(sqlite3 *db, const char *key, unsigned need,
		    struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_db_exec(db, "CREATE TEMP TABLE IF NOT EXISTS model_state"
		       " (key TEXT, need INTEGER); DELETE FROM temp.model_state",
		       err) < 0 ||
	    ta_db_prepare(db, "INSERT INTO temp.model_state VALUES (?, ?)", &st,
			  err) < 0)
		return -1;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, (int)need);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

/* ta_tensor_core(name): 1 when the kernel runs on the tensor cores
 * (classify.c's one list), for analyses that sum kernel time in SQL. */
static void sql_tensor_core(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	sqlite3_result_int(ctx, (ta_name_traits(sqlite3_user_data(ctx),
			   (const char *)sqlite3_value_text(argv[0])) &
			   TA_NAME_TENSOR_CORE) != 0);
}

static void free_name_memo(void *m)
{
	ta_name_memo_free(m);
}

/* Drops temp.name, a view or a table (DROP TABLE of a view fails). */
static int drop_view_or_table(sqlite3 *db, const char *name, struct ta_error *err)
{
	char sql[128];
	int view;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM sqlite_temp_master"
		 " WHERE type = 'view' AND name = '%s'", name);
	view = ta_db_int(db, sql, 0) > 0;
	snprintf(sql, sizeof(sql), "DROP %s IF EXISTS temp.%s", view ? "VIEW" : "TABLE", name);
	return ta_db_exec(db, sql, err);
}

/* A new query: what an earlier one built goes. */
static int start_over(sqlite3 *db, const struct ta_query *q,
		      struct ta_error *err)
{
	void *memo = ta_model_kind_memo_new();

	/* (a new registration frees the last one's memo; the two that share
	 * it are registered again at once, before any statement runs) */
	if (sqlite3_create_function_v2(db, "ta_kind", 3,
				       SQLITE_UTF8 | SQLITE_DETERMINISTIC,
				       memo, ta_model_sql_kind,
				       NULL, NULL, ta_model_kind_memo_free) != SQLITE_OK ||
	    sqlite3_create_function_v2(db, "ta_kind_known", 3, SQLITE_UTF8,
				       memo, ta_model_sql_kind_known,
				       NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function_v2(db, "ta_kind_learn", 5, SQLITE_UTF8,
				       memo, ta_model_sql_kind_learn,
				       NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_create_function_v2(db, "ta_tensor_core", 1,
				       SQLITE_UTF8 | SQLITE_DETERMINISTIC,
				       ta_name_memo_new(), sql_tensor_core, NULL,
				       NULL, free_name_memo) != SQLITE_OK) {
		ta_db_failed(db, err);
		return -1;
	}
	/* hrows is a view of main.hta_rows or a table of its own, dev a view
	 * of main.dev_rows or of temp.dev_all, or HTA's table (dev_all then
	 * none) */
	if (drop_view_or_table(db, "hrows", err) < 0 ||
	    drop_view_or_table(db, "dev", err) < 0 ||
	    drop_view_or_table(db, "dev_all", err) < 0 ||
	    ta_db_exec(db, "DROP VIEW IF EXISTS temp.hta_trace;"
		       "DROP TABLE IF EXISTS temp.model_state;"
		       "DROP TABLE IF EXISTS temp.win;"
		       "DROP TABLE IF EXISTS temp.cpu_corr;"
		       "DROP TABLE IF EXISTS temp.hta_enqueue;"
		       "DROP TABLE IF EXISTS temp.step_win;"
		       "DROP TABLE IF EXISTS temp.span;"
		       "DROP TABLE IF EXISTS temp.coll;"
		       "DROP TABLE IF EXISTS temp.coll_steps;", err) < 0 ||
	    ta_model_select_ranks(db, q, err) < 0)
		return -1;
	return ta_model_views(db, ta_rules(q)->trace_frame, err);
}

/* A selected rank whose host launched GPU work (kernel, graph, async copy
 * or set calls) while its trace holds no GPU activity: the profiler ran
 * without ProfilerActivity.CUDA (its runtime calls are CPU activity). Its
 * GPU would read idle all along (25 ms lost a step, 0 % busy, where it
 * was 40 % busy). A damaged file with no GPU activity is refused too:
 * what was lost may be all of it. */
/* Whether rank (SQL) has a GPU row. */
#define HAS_GPU_ROWS(rank) "EXISTS (SELECT 1 FROM main.events g WHERE" \
	" g.role = " TA_SQL(TA_ROLE_GPU) " AND g.rank = " rank ")"
/* rank's (SQL) runtime calls that run GPU work, joined to their names n:
 * a host function launched on a stream (cudaLaunchHostFunc) runs none;
 * every async copy or set does (cuMemcpyHtoDAsync_v2, cudaMemcpy2DAsync,
 * cuMemsetD32Async) */
#define GPU_CALLS(rank) "main.events r JOIN main.names n ON n.name_id = r.name" \
	" WHERE r.role = " TA_SQL(TA_ROLE_RUNTIME) " AND r.rank = " rank \
	" AND ((n.name GLOB '*Launch*' AND n.name NOT GLOB '*HostFunc*')" \
	" OR n.name GLOB '*Memcpy*Async*' OR n.name GLOB '*Memset*Async*')"
static const char gpu_unrecorded_sql[] =
"WITH nogpu AS (SELECT s.rank FROM sel_ranks s WHERE NOT " HAS_GPU_ROWS("s.rank") "),"
" calls AS (SELECT nogpu.rank, (SELECT count(*) FROM " GPU_CALLS("nogpu.rank")
") AS n, (SELECT max(f.truncated) FROM files f WHERE f.rank = nogpu.rank)"
/* (cut: only where the machine had a GPU: a CPU job's trace cut short
 * is not one that lost its GPU's events; helper-67) */
"  AND EXISTS (SELECT 1 FROM meta m WHERE m.rank = nogpu.rank"
"   AND m.key = 'deviceProperties') AS cut FROM nogpu)"
" SELECT calls.rank, calls.n, (SELECT path FROM inputs i WHERE i.rank = calls.rank), calls.cut"
" FROM calls WHERE calls.n > 0 OR calls.cut ORDER BY calls.rank LIMIT 1";

/* Checked once a connection, for the ranks the first analysis that asks
 * selects (the user's --ranks): stragglers and critical-path then
 * prepare every rank for the matching, and a rank --ranks leaves out is
 * not refused there (its collectives are missing: said as such). */
static int gpu_recorded(sqlite3 *db, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_db_int(db, "SELECT count(*) FROM temp.sqlite_master"
		      " WHERE name = 'gpu_checked'", 0) > 0)
		return 0;
	if (ta_db_prepare(db, gpu_unrecorded_sql, &st, err) < 0)
		return -1;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW && sqlite3_column_int64(st, 3) > 0) {
		const char *path = (const char *)sqlite3_column_text(st, 2);

		/* Kineto writes the GPU's events after the host's: a file cut
		 * short may have lost them all (helper-66: "host-stalled, 0 %
		 * busy" on the host's half of a GPT-2 step) */
		ta_error_set(err, TA_EXIT_INPUT, "'%s': rank %lld: the file is cut short "
			     "before any GPU activity (the profiler writes the GPU's "
			     "events after the host's): GPU time is not measured",
			     path ? path : "?", (long long)sqlite3_column_int64(st, 0));
		sqlite3_finalize(st);
		return -1;
	}
	if (rc == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(st, 2);

		ta_error_set(err, TA_EXIT_INPUT, "'%s': rank %lld launched GPU work "
			     "(%lld calls) but its trace holds no GPU activity (profiled "
			     "without ProfilerActivity.CUDA, or with CUPTI's counters in "
			     "its place): GPU time is not measured (ops, annotations, "
			     "steps and counters read what it holds)",
			     path ? path : "?", (long long)sqlite3_column_int64(st, 0),
			     (long long)sqlite3_column_int64(st, 1));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	return ta_db_exec(db, "CREATE TEMP TABLE IF NOT EXISTS gpu_checked (x)", err);
}

int ta_model_prepare(sqlite3 *db, const struct ta_query *q, unsigned need,
		     struct ta_error *err)
{
	struct ta_buf key = { 0 };
	unsigned have;
	int rc = 0;

	/* HTA's views read its rows */
	if (ta_rules(q)->trace_frame)
		need |= TA_NEED_DEV;
	query_key(q, &key);
	if (!built_for(db, key.s, &have)) {
		have = 0;
		rc = start_over(db, q, err);
	}
	if (rc == 0 && (need & ~have & TA_NEED_DEV))
		rc = ta_model_dev(db, q, err);
	if (rc == 0 && (need & ~have & TA_NEED_DEV))
		rc = ta_model_windows(db, ta_rules(q)->windows && !q->window_span, err);
	if (rc == 0 && (need & ~have & ~TA_NEED_DEV))
		rc = ta_model_build(db, ta_rules(q)->trace_frame, need & ~have & ~TA_NEED_DEV,
				    err);
	if (rc == 0 && (need & TA_NEED_GPU) && !ta_rules(q)->trace_frame)
		rc = gpu_recorded(db, err);
	if (rc == 0 && (need & TA_NEED_DEV) && !ta_rules(q)->trace_frame)
		ta_model_warn_lost_launches(db);
	if (rc == 0)
		rc = remember(db, key.s, have | (need & ~TA_NEED_GPU), err);
	/* a cache entry keeps its part from the first coll made in it (not
	 * one gathered from shards: every rank's) */
	if (rc == 0 && (need & ~have & TA_NEED_COLL) && !ta_model_gathered(db))
		ta_model_keep_part(db, q);
	ta_buf_free(&key);
	return rc;
}

int ta_model_gpu_unrecorded(sqlite3 *db, int64_t rank)
{
	sqlite3_stmt *st = NULL;
	int rc;

	/* gpu_unrecorded_sql's test, for one rank */
	if (sqlite3_prepare_v2(db, "SELECT NOT " HAS_GPU_ROWS("?1") " AND EXISTS"
			       " (SELECT 1 FROM " GPU_CALLS("?1") ")", -1, &st,
			       NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_bind_int64(st, 1, rank);
	rc = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	return rc;
}

int ta_model_negative_dur(sqlite3 *db)
{
	/* none in any kept row: none in the ranks dev shows */
	if (ta_model_dev_negative_kept(db) == 0)
		return 0;
	/* if the query fails, say yes: not streaming is always right */
	return ta_db_int(db, "SELECT EXISTS (SELECT 1 FROM dev WHERE dur < 0)", 1) != 0;
}

unsigned ta_model_lazy_indexes(unsigned need)
{
	return (need & TA_NEED_HOST ? 1u << TA_INDEX_HOST_TIME : 0) |
	       (need & TA_NEED_THREAD ? 1u << TA_INDEX_THREAD : 0) |
	       (need & TA_NEED_MEM ? 1u << TA_INDEX_MEMORY : 0) |
	       (need & TA_NEED_FLOW ? 1u << TA_INDEX_FLOW : 0);
}
