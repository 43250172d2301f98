/* Time per user annotation (hta-semantics §9.10): record_function ranges
 * on the CPU, or their copies on the GPU timeline, aggregated by name with
 * HTA's top-k rule; or each kernel mapped to its innermost GPU range. */
#include "analyses/common/topk.h"
#include "ta_analyses.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_annotations_opts ta_annotations_defaults = { 0, 0, 1000, 0.8 };

/* The ranges in the analysis window (the model's rules, HTA's with
 * --hta-compat): CPU-side or GPU-side. */
static const char cpu_ranges_sql[] =
	"SELECT a.rank, n.name, a.dur FROM cpu_ann a"
	" JOIN label n ON n.name_id = a.name ORDER BY a.rank, n.name";
static const char gpu_ranges_sql[] =
	"SELECT a.rank, n.name, a.dur FROM gpu_ann_win a"
	" JOIN label n ON n.name_id = a.name ORDER BY a.rank, n.name";

/* The shortest GPU range on the kernel's pid and tid that overlaps it.
 * A range that overlaps starts after the kernel's start minus the longest
 * range, which bounds the index scan to a few ranges per kernel. */
static const char kernels_sql[] =
	"WITH longest AS (SELECT rank, max(dur) AS dur FROM gpu_ann GROUP BY rank)"
	" SELECT d.rank, d.ts, d.stream, kn.name, (SELECT an.name FROM gpu_ann a"
	"  JOIN label an ON an.name_id = a.name"
	"  WHERE a.rank = d.rank AND a.pid IS d.pid AND a.tid IS d.tid"
	"  AND a.ts < d.ts + d.dur AND a.ts >= d.ts - l.dur"
	"  AND d.ts < a.ts + a.dur ORDER BY a.dur, a.idx LIMIT 1)"
	" FROM dev d JOIN label kn ON kn.name_id = d.name"
	" LEFT JOIN longest l ON l.rank = d.rank WHERE d.kind != " TA_SQL(TA_KIND_OTHER)
	" ORDER BY d.rank, d.ts, d.idx";

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "count", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "total_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "max_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "min_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "std_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "mean_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

static const struct ta_col kernel_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "ts_us", TA_COL_REAL, TA_UNIT_NONE, 1 },
	{ "stream", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "kernel", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "annotation", TA_COL_TEXT, TA_UNIT_NONE, 1 },
};

static int cmp_rank_name(const void *x, const void *y)
{
	const struct out_row *a = x, *b = y;
	int c;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	c = strcmp(a->a.name, b->a.name);
	return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

static struct ta_table *to_table(struct out_rows *o, int gpu)
{
	struct ta_table *t = ta_table_new(gpu ? "GPU annotations" : "Annotations",
					  cols, 8);
	size_t i;

	ta_qsort(o->v, o->n, sizeof(*o->v), cmp_rank_name);
	for (i = 0; i < o->n; i++) {
		const struct out_row *w = &o->v[i];
		size_t r = ta_table_add_row(t);

		ta_table_set_int(t, r, 0, w->rank);
		ta_table_set_text(t, r, 1, w->a.name);
		ta_topk_set_stats(t, r, 2, w);
		free(w->a.name);
	}
	free(o->v);
	return t;
}

struct names {
	struct agg_list l;
	int64_t rank;
};

static void flush(struct names *l, const struct ta_annotations_opts *o,
		  int totals, struct out_rows *out)
{
	if (l->l.n)
		ta_topk_group(l->l.v, l->l.n, l->rank, 0, o->top, o->duration_ratio,
			      totals, out);
	ta_agg_list_clear(&l->l);
}

static int run_breakdown(sqlite3 *db, const struct ta_query *q,
			 const struct ta_annotations_opts *o,
			 struct ta_table **out, struct ta_error *err)
{
	struct names l = { { NULL, 0, 0 }, 0 };
	struct out_rows rows = { 0 };
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_db_prepare(db, o->gpu ? gpu_ranges_sql : cpu_ranges_sql, &st,
			  err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);

		if (l.l.n && rank != l.rank)
			flush(&l, o, ta_rules(q)->topk_totals, &rows);
		l.rank = rank;
		ta_agg_add(ta_agg_list_name(&l.l, name),
			   (double)sqlite3_column_int64(st, 2));
	}
	flush(&l, o, ta_rules(q)->topk_totals, &rows);
	free(l.l.v);
	sqlite3_finalize(st);
	*out = to_table(&rows, o->gpu);
	if (rc != SQLITE_DONE) {
		ta_db_failed(db, err);
		ta_table_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static int run_kernels(sqlite3 *db, const struct ta_query *q,
		       struct ta_table **out, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct ta_table *t;
	int64_t min_ts = ta_model_min_ts(db, q);
	int rc;

	if (ta_db_prepare(db, kernels_sql, &st, err) < 0)
		return -1;
	t = ta_table_new("Kernels and their innermost GPU annotation", kernel_cols, 5);
	ta_table_final_rows(t, q->sink); /* a row per kernel, final as it comes */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t r = ta_table_add_row(t);

		ta_table_set_int(t, r, 0, sqlite3_column_int64(st, 0));
		ta_table_set_real(t, r, 1,
				  (double)(sqlite3_column_int64(st, 1) - min_ts) / 1000.0);
		ta_table_set_int(t, r, 2, sqlite3_column_int64(st, 2));
		ta_table_set_text(t, r, 3, (const char *)sqlite3_column_text(st, 3));
		ta_table_set_text(t, r, 4, (const char *)sqlite3_column_text(st, 4));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ta_db_failed(db, err);
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

int ta_annotations_run(sqlite3 *db, const struct ta_query *q,
		       const struct ta_annotations_opts *o,
		       struct ta_table **out, struct ta_error *err)
{
	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_DEV, err) < 0)
		return -1;
	return o->kernels ? run_kernels(db, q, out, err)
			  : run_breakdown(db, q, o, out, err);
}
