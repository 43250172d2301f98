/* Temporal breakdown (hta-semantics §9.2): per rank, its analysis window
 * (the model's span: its kept steps' windows; HTA: first to last GPU
 * activity) split into idle, compute and non-compute time. */
#include "ta_command.h"
#include "analyses/common/intervals.h"
#include "ta_analyses.h"
#include "ta_db.h"

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "idle_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "compute_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "non_compute_us", TA_COL_REAL, TA_UNIT_US, 0 },
	/* the window's length (HTA's kernel_time, which is no kernel time:
	 * named so in --hta-compat, compat/hta/names.c) */
	{ "window_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "idle_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "compute_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "non_compute_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};

/* Each rank's analysis window, then its GPU work (the model's dev_win,
 * clipped to the window; HTA's: every kept row) in time order. Asked a
 * rank at a time: one join of every rank with the view made SQLite copy
 * the view, index the copy and sort it (55 of the 180 ms on a 200 MB
 * trace). */
static const char ranks_sql[] =
	"SELECT s.rank, w.ts, w.end_ts FROM sel_ranks s"
	" LEFT JOIN span w ON w.rank = s.rank ORDER BY s.rank";
static const char rows_sql[] =
	"SELECT ts, dur, kind FROM dev_win WHERE rank = ? ORDER BY sort_ts";

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
	int64_t window, idle, comp, non;

	ta_table_set_int(t, r, 0, rank);
	if (all->n == 0) {
		for (size_t c = 1; c <= 4; c++)
			ta_table_set_real(t, r, c, 0);
		ta_table_note(t, "rank %lld: no GPU activity", (long long)rank);
		return;
	}
	/* held at int64's ends: an edited database's times may be any */
	window = w1 >= w0 ? ta_sub_sat(w1, w0) :
		 ta_sub_sat(ta_union_last_end(all), ta_union_first_start(all));
	idle = ta_sub_sat(window, ta_union_length(all));
	comp = ta_union_length(compute);
	non = ta_sub_sat(ta_sub_sat(window, comp), idle);
	ta_table_set_real(t, r, 1, (double)idle / 1000.0);
	ta_table_set_real(t, r, 2, (double)comp / 1000.0);
	ta_table_set_real(t, r, 3, (double)non / 1000.0);
	ta_table_set_real(t, r, 4, (double)window / 1000.0);
	if (window != 0) {
		ta_table_set_real(t, r, 5, pct(idle, window));
		ta_table_set_real(t, r, 6, pct(comp, window));
		ta_table_set_real(t, r, 7, pct(non, window));
	}
}

/* One rank's GPU work into all and compute. */
static int rank_rows(sqlite3_stmt *st, int64_t rank, struct ta_union *all,
		     struct ta_union *compute)
{
	int rc;

	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(st, 0), dur = sqlite3_column_int64(st, 1);

		ta_union_add(all, ts, dur);
		if (sqlite3_column_int(st, 2) == TA_KIND_COMPUTE)
			ta_union_add(compute, ts, dur);
	}
	sqlite3_reset(st);
	return rc;
}

int ta_temporal_run(sqlite3 *db, const struct ta_query *q,
		    struct ta_table **out, struct ta_error *err)
{
	/* only lengths are needed: stream, so memory stays flat */
	struct ta_union all = { .streaming = 1 }, compute = { .streaming = 1 };
	sqlite3_stmt *ranks = NULL, *st = NULL;
	struct ta_table *t;
	int rc = SQLITE_DONE, step;

	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV, err) < 0 ||
	    ta_db_prepare(db, ranks_sql, &ranks, err) < 0)
		return -1;
	if (ta_db_prepare(db, rows_sql, &st, err) < 0) {
		sqlite3_finalize(ranks);
		return -1;
	}
	t = ta_table_new("Temporal breakdown", cols, sizeof(cols) / sizeof(cols[0]));
	while (rc == SQLITE_DONE && (step = sqlite3_step(ranks)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(ranks, 0), w0 = 0, w1 = -1;

		if (ta_rules(q)->windows && sqlite3_column_type(ranks, 1) != SQLITE_NULL) {
			w0 = sqlite3_column_int64(ranks, 1);
			w1 = sqlite3_column_int64(ranks, 2);
		}
		ta_union_reset(&all);
		ta_union_reset(&compute);
		rc = rank_rows(st, rank, &all, &compute);
		if (rc == SQLITE_DONE)
			add_rank(t, rank, &all, &compute, w0, w1);
	}
	if (rc == SQLITE_DONE)
		rc = step;
	sqlite3_finalize(st);
	sqlite3_finalize(ranks);
	ta_union_free(&all);
	ta_union_free(&compute);
	if (rc != SQLITE_DONE) {
		ta_db_done(db, rc, err);   /* the step's code: finalize reset the connection's */
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

/* The command: this analysis alone. */
static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_temporal_run(db, q, out, err);
}

static const struct ta_cmd_info info = {
	"temporal", "[options] PATH",
	"Temporal breakdown per rank: of its analysis window (its kept steps' "
	"windows;\n--window span: first to last GPU activity), the time the "
	"GPU was idle,\ncomputing, or busy with anything else (communication, "
	"memory copies).",
	NULL, NULL, NULL, NULL,
	run, { NULL }
};

const struct ta_command ta_command_temporal = {
	"temporal", NULL, "idle, compute and non-compute GPU time per rank",
	TA_SPREAD_PER_RANK, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_RULES }, &info
};
