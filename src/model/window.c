/* The analysis window of each rank (default rules; --hta-compat and
 * --window span use first-to-last GPU activity, as HTA does).
 *
 * The kept steps are the rank's ProfilerStep#N ranges but the last when
 * there are two or more. A kept step's window runs from the end of the
 * previous step's window (the first: the later of its CPU start and the
 * end of the GPU work launched before it) to the later of its CPU end and
 * the end of the GPU work launched inside it. So windows are contiguous:
 * a host stall at a step's start or end is that step's idle time, and a
 * GPU-bound pipeline (the CPU running ahead) shows no false idle. A rank
 * without steps: its first to last GPU activity.
 *
 *   step_win (rank, step, ts, end_ts)   each kept step's window
 *   span (rank, ts, end_ts)             the union of a rank's windows */
#include "model_int.h"

#include <stdlib.h>

struct step {
	int64_t step, ts, end, gpu_end;
};

static int load_steps(sqlite3 *db, int64_t rank, struct step **v, size_t *n,
		      struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	*n = 0;
	if (ta_db_prepare(db, "SELECT step, ts, end_ts FROM steps WHERE rank = ?"
			  " ORDER BY ts", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*v = ta_xrealloc(*v, cap * sizeof(**v));
		}
		(*v)[*n] = (struct step){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			INT64_MIN };
		(*n)++;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

/* The end of the GPU work launched inside each step (launched: its
 * launch call's start, or its own start when none was recorded), and of
 * the work launched before the first. One pass over the rank's work. */
static int gpu_ends(sqlite3 *db, int64_t rank, struct step *v, size_t n,
		    int64_t *before, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t k = 0;
	int rc;

	*before = INT64_MIN;
	if (ta_db_prepare(db, "SELECT COALESCE(launch_ts, ts) AS l, ts + dur"
			  " FROM dev WHERE rank = ? ORDER BY l", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t l = sqlite3_column_int64(st, 0);
		int64_t end = sqlite3_column_int64(st, 1);

		if (l < v[0].ts) {
			if (end > *before)
				*before = end;
			continue;
		}
		while (k < n && l >= v[k].end)
			k++;
		if (k < n && l >= v[k].ts && end > v[k].gpu_end)
			v[k].gpu_end = end;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

static int put(sqlite3_stmt *st, int64_t rank, int64_t step, int64_t ts,
	       int64_t end)
{
	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_int64(st, 2, step);
	sqlite3_bind_int64(st, 3, ts);
	sqlite3_bind_int64(st, 4, end);
	if (sqlite3_step(st) != SQLITE_DONE)
		return -1;
	sqlite3_reset(st);
	return 0;
}

static int rank_windows(sqlite3 *db, sqlite3_stmt *ins, int64_t rank,
			struct ta_error *err)
{
	struct step *v = NULL;
	size_t n, k;
	int64_t before, prev;
	int rc = load_steps(db, rank, &v, &n, err);

	if (rc == 0 && n >= 2)
		n--; /* the last step is cut short by the profiler */
	if (rc == 0 && n > 0)
		rc = gpu_ends(db, rank, v, n, &before, err);
	prev = n > 0 ? (before > v[0].ts ? before : v[0].ts) : 0;
	for (k = 0; rc == 0 && k < n; k++) {
		int64_t end = v[k].end;

		if (v[k].gpu_end > end)
			end = v[k].gpu_end;
		if (end < prev) /* the previous step's work outlasts this one */
			end = prev;
		if (put(ins, rank, v[k].step, prev, end) < 0)
			rc = ta_db_done(db, SQLITE_ERROR, err);
		prev = end;
	}
	free(v);
	return rc;
}

int ta_model_windows(sqlite3 *db, int by_steps, struct ta_error *err)
{
	sqlite3_stmt *ranks = NULL, *ins = NULL;
	int rc;

	if (ta_db_exec(db, "DROP TABLE IF EXISTS temp.step_win;"
		       "DROP TABLE IF EXISTS temp.span;"
		       "CREATE TEMP TABLE step_win (rank INTEGER, step INTEGER,"
		       "  ts INTEGER, end_ts INTEGER);", err) < 0)
		return -1;
	if (by_steps) {
		if (ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank",
				  &ranks, err) < 0 ||
		    ta_db_prepare(db, "INSERT INTO temp.step_win VALUES (?, ?, ?, ?)",
				  &ins, err) < 0) {
			sqlite3_finalize(ranks);
			return -1;
		}
		while ((rc = sqlite3_step(ranks)) == SQLITE_ROW &&
		       rank_windows(db, ins, sqlite3_column_int64(ranks, 0), err) == 0)
			;
		sqlite3_finalize(ranks);
		sqlite3_finalize(ins);
		if (rc == SQLITE_ROW || ta_db_done(db, rc, err) < 0)
			return -1;
	}
	/* ranks without steps (or --window span): first to last GPU work */
	return ta_db_exec(db, "CREATE TEMP TABLE span AS"
			  " SELECT rank, min(ts) AS ts, max(end_ts) AS end_ts"
			  " FROM step_win GROUP BY rank"
			  " UNION ALL SELECT rank, min(ts), max(ts + dur) FROM dev"
			  " WHERE rank NOT IN (SELECT rank FROM step_win)"
			  " GROUP BY rank;"
			  "CREATE UNIQUE INDEX temp.span_rank ON span (rank);", err);
}
