/* Temporal breakdown (hta-semantics §9.2): per rank, its analysis window
 * (the model's span: its kept steps' windows; HTA: first to last GPU
 * activity) split into idle, compute and non-compute time. */
#include "intervals.h"
#include "ta_analyses.h"
#include "ta_db.h"

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "idle_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "compute_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "non_compute_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "kernel_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "idle_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "compute_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "non_compute_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};

/* The GPU work of each rank's analysis window (the model's dev_win,
 * clipped to it; HTA's: every kept row) and the window itself. */
static const char rows_sql[] =
	"SELECT s.rank, d.ts, d.dur, d.kind, w.ts, w.end_ts FROM sel_ranks s"
	" LEFT JOIN span w ON w.rank = s.rank"
	" LEFT JOIN dev_win d ON d.rank = s.rank ORDER BY s.rank, d.ts";

/* HTA divides first, then multiplies, then rounds: keep that order. */
static double pct(int64_t part, int64_t whole)
{
	return ta_round(100.0 * ((double)part / (double)whole), 2);
}

/* window: the rank's analysis window [w0, w1), or w1 < w0 for HTA's
 * first-to-last GPU span */
static void add_rank(struct ta_table *t, int64_t rank, struct ta_union *all,
		     struct ta_union *compute, int64_t w0, int64_t w1)
{
	size_t r = ta_table_add_row(t);
	int64_t kernel, idle, comp, non;

	ta_table_set_int(t, r, 0, rank);
	if (all->n == 0) {
		for (size_t c = 1; c <= 4; c++)
			ta_table_set_real(t, r, c, 0);
		ta_table_note(t, "rank %lld: no GPU activity", (long long)rank);
		return;
	}
	kernel = w1 >= w0 ? w1 - w0 :
		 ta_union_last_end(all) - ta_union_first_start(all);
	idle = kernel - ta_union_length(all);
	comp = ta_union_length(compute);
	non = kernel - comp - idle;
	ta_table_set_real(t, r, 1, (double)idle / 1000.0);
	ta_table_set_real(t, r, 2, (double)comp / 1000.0);
	ta_table_set_real(t, r, 3, (double)non / 1000.0);
	ta_table_set_real(t, r, 4, (double)kernel / 1000.0);
	if (kernel != 0) {
		ta_table_set_real(t, r, 5, pct(idle, kernel));
		ta_table_set_real(t, r, 6, pct(comp, kernel));
		ta_table_set_real(t, r, 7, pct(non, kernel));
	}
}

int ta_temporal_run(sqlite3 *db, const struct ta_query *q,
		    struct ta_table **out, struct ta_error *err)
{
	/* only lengths are needed: stream, so memory stays flat */
	struct ta_union all = { .streaming = 1 }, compute = { .streaming = 1 };
	sqlite3_stmt *st = NULL;
	struct ta_table *t;
	int64_t rank = 0, w0 = 0, w1 = -1;
	int have = 0, rc;

	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_DEV, err) < 0 ||
	    ta_db_prepare(db, rows_sql, &st, err) < 0)
		return -1;
	t = ta_table_new("Temporal breakdown", cols, sizeof(cols) / sizeof(cols[0]));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t r = sqlite3_column_int64(st, 0);

		if (have && r != rank) {
			add_rank(t, rank, &all, &compute, w0, w1);
			ta_union_reset(&all);
			ta_union_reset(&compute);
		}
		rank = r;
		have = 1;
		if (!q->hta_compat && sqlite3_column_type(st, 4) != SQLITE_NULL) {
			w0 = sqlite3_column_int64(st, 4);
			w1 = sqlite3_column_int64(st, 5);
		} else {
			w0 = 0, w1 = -1;
		}
		if (sqlite3_column_type(st, 1) == SQLITE_NULL)
			continue;
		ta_union_add(&all, sqlite3_column_int64(st, 1),
			     sqlite3_column_int64(st, 2));
		if (sqlite3_column_int(st, 3) == TA_KIND_COMPUTE)
			ta_union_add(&compute, sqlite3_column_int64(st, 1),
				     sqlite3_column_int64(st, 2));
	}
	if (have)
		add_rank(t, rank, &all, &compute, w0, w1);
	sqlite3_finalize(st);
	ta_union_free(&all);
	ta_union_free(&compute);
	if (rc != SQLITE_DONE) {
		ta_error_set(err, TA_EXIT_SYSTEM, "database: %s", sqlite3_errmsg(db));
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}
