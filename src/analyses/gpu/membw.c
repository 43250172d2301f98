/* Memory bandwidth per copy kind (hta-semantics §9.9): the running sum of
 * the bandwidth of the copies in flight, at each start and end. */
#include "analyses/common/stats.h"
#include "ta_analyses.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_membw_opts ta_membw_defaults = { 0 };

/* Sub-type: "Memset", "Memcpy Unknown", or the first 11 characters
 * ("Memcpy HtoD"). Points: every start, then every end, stably by time;
 * HTA replaces a duration of 0 by 1 µs. The default puts ends before
 * starts at the same instant, so back-to-back copies do not add up. */
static const char points_sql[] =
	"WITH m AS (SELECT d.rank, d.ts, CASE WHEN d.dur = 0 THEN 1000 ELSE d.dur END"
	"  AS dur, d.gbps, d.ord, CASE WHEN n.name GLOB 'Memset*' THEN 'Memset'"
	"  WHEN n.name GLOB 'Memcpy*' THEN substr(n.name, 1, 11)"
	"  ELSE 'Memcpy Unknown' END AS sub FROM dev_win d JOIN label n"
	"  ON n.name_id = d.name WHERE d.kind = " TA_SQL(TA_KIND_MEMORY) ")"
	" SELECT rank, sub, ts, gbps, 0 AS side, ord FROM m"
	" UNION ALL SELECT rank, sub, ts + dur, -gbps, 1, ord FROM m"
	" ORDER BY rank, sub, ts, side %s, ord";

static const struct ta_col summary_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "count", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "mean_gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "std_gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "min_gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "p25_gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "p50_gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "p75_gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "max_gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
	/* not HTA's: the points above are counted alike whatever the time
	 * between them (a 256 B copy's point weighs what a 3.5 MB copy's
	 * does); this is the bandwidth over the time copies were in flight:
	 * their bytes over that time */
	{ "inflight_gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
};

static const struct ta_col series_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "ts_us", TA_COL_REAL, TA_UNIT_NONE, 1 },
	{ "gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
};

struct kind_acc {
	int64_t rank;
	char name[32];
	double value;
	int64_t active;
	int have;
	struct ta_dvec points;
	int64_t last;              /* the last point's time */
	double weighted, inflight; /* GB/s x ns, and ns, with copies in flight */
	double known;              /* the sum of those with a bandwidth (> 0:
				    * none, or one below 0, is no bandwidth
				    * to average: left out of both) */
	int64_t nknown;
};

static void flush(struct ta_table *t, struct kind_acc *k)
{
	struct ta_stats st;
	size_t r;

	if (!k->have)
		return;
	if (k->points.n) { /* HTA: a kind with no positive point has no row */
		ta_stats_compute(k->points.v, k->points.n, &st);
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, 0, k->rank);
		ta_table_set_text(t, r, 1, k->name);
		ta_stats_set_row(t, r, 2, &st);
		if (t->ncols > 10 && k->inflight > 0)
			ta_table_set_real(t, r, 10, k->weighted / k->inflight);
	}
	ta_dvec_free(&k->points);
	k->have = 0;
	k->value = 0;
	k->active = 0;
	k->weighted = k->inflight = 0;
	k->known = 0;
	k->nknown = 0;
}

/* HTA adds doubles in order, so the sum between copies can be a residue
 * like 1e-17 that counts as a point; the default counts the copies in
 * flight and is exactly 0 when there are none. */
static void point(struct ta_table *t, struct kind_acc *k, int64_t ts,
		  double gbps, int is_end, const struct ta_membw_opts *o,
		  int drift, int64_t min_ts)
{
	double own = is_end ? -gbps : gbps;   /* the copy's bandwidth */

	if (k->have && k->nknown > 0 && ts > k->last) {
		k->weighted += k->known * (double)(ts - k->last);
		k->inflight += (double)(ts - k->last);
	}
	k->last = ts;
	if (own > 0) {
		k->known += gbps;
		k->nknown += is_end ? -1 : 1;
		if (k->nknown == 0)
			k->known = 0;
	}
	k->value += gbps;
	k->active += is_end ? -1 : 1;
	if (!drift && k->active == 0)
		k->value = 0;
	k->have = 1;
	if (o->series) {
		size_t r = ta_table_add_row(t);

		ta_table_set_int(t, r, 0, k->rank);
		ta_table_set_text(t, r, 1, k->name);
		ta_table_set_real(t, r, 2, (double)(ts - min_ts) / 1000.0);
		ta_table_set_real(t, r, 3, k->value);
	} else if (k->value > 0) {
		ta_dvec_push(&k->points, k->value);
	}
}

int ta_membw_run(sqlite3 *db, const struct ta_query *q,
		 const struct ta_membw_opts *o, struct ta_table **out,
		 struct ta_error *err)
{
	struct kind_acc k;
	sqlite3_stmt *st = NULL;
	struct ta_table *t;
	char sql[sizeof(points_sql) + 8];
	int64_t min_ts;
	int rc;

	*out = NULL;
	memset(&k, 0, sizeof(k));
	snprintf(sql, sizeof(sql), points_sql, ta_rules(q)->hta_order ? "" : "DESC");
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV, err) < 0 || ta_db_prepare(db, sql, &st, err) < 0)
		return -1;
	min_ts = ta_model_min_ts(db, q);
	t = o->series ? ta_table_new("Memory bandwidth", series_cols, 4)
		      : ta_table_new("Memory bandwidth per copy kind", summary_cols,
				     ta_rules(q)->hta_arithmetic ? 10 : 11);
	if (o->series)
		ta_table_final_rows(t, q->sink); /* a row per point, final as it comes */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);

		if (k.have && (rank != k.rank || strcmp(name, k.name) != 0)) {
			if (!o->series)
				flush(t, &k);
			k.have = 0, k.value = 0, k.active = 0;
			k.weighted = k.inflight = k.known = 0;
			k.nknown = 0;
		}
		k.rank = rank;
		snprintf(k.name, sizeof(k.name), "%s", name);
		point(t, &k, sqlite3_column_int64(st, 2), sqlite3_column_double(st, 3),
		      sqlite3_column_int(st, 4), o, ta_rules(q)->hta_arithmetic, min_ts);
	}
	if (!o->series)
		flush(t, &k);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ta_db_failed(db, err);
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}
