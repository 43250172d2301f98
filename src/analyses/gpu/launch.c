/* Kernel launch statistics (hta-semantics §9.7): for every launch, the
 * launch call's CPU time, the GPU activity's time and the delay between
 * the end of the call and the start on the GPU. */
#include "analyses/common/intervals.h"
#include "analyses/common/stats.h"
#include "ta_analyses.h"
#include "ta_db.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_launch_opts ta_launch_defaults = { 0, 0, 50000, 100000 };

/* Each GPU activity with the call(s) the model counts as its launch
 * (default: its correlation's last runtime or driver call; HTA: every CPU
 * row of a correlation with one of §9.7's launch names). From the GPU
 * rows (few, indexed) to their calls: CROSS JOIN keeps SQLite from
 * starting at the calls. The last column, the GPU time of all of a call's
 * activities, only --summary's default rules read (a tenth of launch's
 * time otherwise): %s is that sum or NULL. */
#define CALL_GPU_SQL "ta_sum(d.dur) OVER (PARTITION BY l.rank, l.idx)"
static const char launch_sql[] =
	"SELECT l.rank, l.correlation, gn.name, l.dur, d.dur,"
	"  max(0, d.ts - (l.ts + l.dur)), ln.name,"
	"  row_number() OVER (PARTITION BY l.rank, l.idx ORDER BY d.idx) - 1, %s"
	" FROM dev d CROSS JOIN launch l ON l.rank = d.rank"
	"  AND l.correlation = d.correlation"
	" LEFT JOIN label gn ON gn.name_id = d.name"
	" LEFT JOIN label ln ON ln.name_id = l.name"
	" WHERE d.correlation != -1 AND l.dur IS NOT NULL"
	" ORDER BY l.rank, l.idx, d.idx";

static const struct ta_col launch_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "correlation", TA_COL_INT, TA_UNIT_NONE, 1 },
	/* which GPU activity of the call: 0, or 0..n-1 for a CUDA graph's n
	 * kernels; with it the key columns name one row */
	{ "nth", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "kernel", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "cpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "gpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "launch_delay_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "api", TA_COL_TEXT, TA_UNIT_NONE, 1 },
};

static const struct ta_col summary_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "launches", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "short_kernels", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "short_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "runtime_outliers", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "runtime_outlier_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "delay_outliers", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "delay_outlier_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "cpu_p50_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "cpu_p95_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "gpu_p50_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "gpu_p95_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "delay_p50_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "delay_p95_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

struct rank_acc {
	int64_t rank, n, shorts, runtime_out, delay_out;
	struct ta_dvec cpu, gpu, delay;
};

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sets the median and 95th percentile of v in columns col, col + 1. */
static void p50_p95(struct ta_table *t, size_t row, size_t col, struct ta_dvec *v)
{
	ta_qsort(v->v, v->n, sizeof(*v->v), cmp_d);
	ta_table_set_real(t, row, col, ta_percentile(v->v, v->n, 0.5));
	ta_table_set_real(t, row, col + 1, ta_percentile(v->v, v->n, 0.95));
}

static void summary_row(struct ta_table *t, struct rank_acc *a)
{
	size_t r = ta_table_add_row(t);
	double n = (double)a->n;

	ta_table_set_int(t, r, 0, a->rank);
	ta_table_set_int(t, r, 1, a->n);
	ta_table_set_int(t, r, 2, a->shorts);
	ta_table_set_real(t, r, 3, ta_round(100.0 * (double)a->shorts / n, 2));
	ta_table_set_int(t, r, 4, a->runtime_out);
	ta_table_set_real(t, r, 5, ta_round(100.0 * (double)a->runtime_out / n, 2));
	ta_table_set_int(t, r, 6, a->delay_out);
	ta_table_set_real(t, r, 7, ta_round(100.0 * (double)a->delay_out / n, 2));
	p50_p95(t, r, 8, &a->cpu);
	p50_p95(t, r, 10, &a->gpu);
	p50_p95(t, r, 12, &a->delay);
	ta_dvec_free(&a->cpu);
	ta_dvec_free(&a->gpu);
	ta_dvec_free(&a->delay);
	a->n = a->shorts = a->runtime_out = a->delay_out = 0;
}

/* The classes of HTA's plots (§9.7), counted per rank. call_gpu: the GPU
 * time of every activity of the call (a CUDA graph's kernels): a kernel
 * is short when its call's work is shorter than the call. */
static void count(struct rank_acc *a, const struct ta_launch_opts *o,
		  int64_t cpu, int64_t gpu, int64_t call_gpu, int64_t delay)
{
	a->n++;
	a->shorts += cpu <= o->runtime_cutoff_ns && call_gpu < cpu;
	a->runtime_out += cpu > o->runtime_cutoff_ns;
	a->delay_out += delay > o->launch_delay_cutoff_ns;
	ta_dvec_push(&a->cpu, (double)cpu / 1000.0);
	ta_dvec_push(&a->gpu, (double)gpu / 1000.0);
	ta_dvec_push(&a->delay, (double)delay / 1000.0);
}

static int warn_shared_correlations(sqlite3 *db, struct ta_table *t)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM (SELECT 1 FROM calls"
			       " WHERE correlation != -1 GROUP BY rank, correlation"
			       " HAVING count(*) > 1)", -1, &st, NULL) != SQLITE_OK)
		return SQLITE_ERROR;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0)
		ta_table_warn(t, "%lld correlation ids belong to more than one "
			      "runtime call; their GPU work is counted once, with "
			      "the last call", (long long)sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? SQLITE_DONE : rc;
}

int ta_launch_run(sqlite3 *db, const struct ta_query *q,
		  const struct ta_launch_opts *o, struct ta_table **out,
		  struct ta_error *err)
{
	struct rank_acc acc = { 0 };
	sqlite3_stmt *st = NULL;
	struct ta_table *t;
	/* HTA judges each kernel alone (it links no graph launch) */
	int per_call = !ta_rules(q)->trace_frame;
	char sql[sizeof(launch_sql) + sizeof(CALL_GPU_SQL)];
	int rc;

	snprintf(sql, sizeof(sql), launch_sql, o->summary && per_call ? CALL_GPU_SQL : "NULL");
	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV, err) < 0 ||
	    ta_db_prepare(db, sql, &st, err) < 0)
		return -1;
	t = o->summary ? ta_table_new("Kernel launches per rank", summary_cols, 14)
		       : ta_table_new("Kernel launches", launch_cols, 8);
	if (!o->summary)
		ta_table_final_rows(t, q->sink); /* a row per launch, final as it comes */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);
		int64_t cpu = sqlite3_column_int64(st, 3), gpu = sqlite3_column_int64(st, 4);
		int64_t delay = sqlite3_column_int64(st, 5);
		size_t r;

		if (per_call && cpu < 0) /* a negative duration is 0, as everywhere */
			cpu = 0;

		if (o->summary) {
			if (acc.n && rank != acc.rank)
				summary_row(t, &acc);
			acc.rank = rank;
			count(&acc, o, cpu, gpu, per_call ? sqlite3_column_int64(st, 8) : gpu,
			      delay);
			continue;
		}
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, 0, rank);
		ta_table_set_int(t, r, 1, sqlite3_column_int64(st, 1));
		ta_table_set_int(t, r, 2, sqlite3_column_int64(st, 7));
		ta_table_set_text(t, r, 3, (const char *)sqlite3_column_text(st, 2));
		ta_table_set_real(t, r, 4, (double)cpu / 1000.0);
		ta_table_set_real(t, r, 5, (double)gpu / 1000.0);
		ta_table_set_real(t, r, 6, (double)delay / 1000.0);
		ta_table_set_text(t, r, 7, (const char *)sqlite3_column_text(st, 6));
	}
	if (o->summary && acc.n)
		summary_row(t, &acc);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE && ta_rules(q)->notes)
		rc = warn_shared_correlations(db, t);
	if (rc != SQLITE_DONE) {
		ta_db_failed(db, err);
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}
