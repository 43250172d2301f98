/* Queue length per stream (hta-semantics §9.8): launches issued but not
 * yet started on the GPU. +1 at each launch call, -1 when the GPU work
 * starts; statistics over the change points, the series, or the time spent
 * with the queue at or above a length. */
#include "analyses/common/stats.h"
#include "ta_analyses.h"
#include "ta_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_queue_opts ta_queue_defaults = { 0, 0 };

/* The queue's change points, +1 first at equal times: the model's rules
 * (HTA's §9.8 with --hta-compat) decide which launches count. */
static const char points_sql[] =
	"SELECT rank, stream, ts, sign, 1 FROM enqueue ORDER BY 1, 2, 3, 4 DESC";

/* Default: the queue's length counts every launch, but only the points
 * inside the rank's analysis window are measured (ANALYSIS WINDOW). */
static const char window_points_sql[] =
	"SELECT e.rank, e.stream, e.ts, e.sign, e.ts >= w.ts AND e.ts <= w.end_ts"
	" FROM enqueue e JOIN span w ON w.rank = e.rank"
	" WHERE e.ts <= w.end_ts ORDER BY 1, 2, 3, 4 DESC";

static const struct ta_col summary_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "stream", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "count", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "mean", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "std", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "min", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "p25", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "p50", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "p75", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "max", TA_COL_REAL, TA_UNIT_NONE, 0 },
};

static const struct ta_col series_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "stream", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "ts_us", TA_COL_REAL, TA_UNIT_NONE, 1 },
	{ "queue_length", TA_COL_INT, TA_UNIT_NONE, 0 },
};

static const struct ta_col blocked_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "stream", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "blocked_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "blocked_ratio", TA_COL_REAL, TA_UNIT_RATIO, 0 },
};

struct stream_acc {
	int64_t rank, stream, len, prev_ts, blocked;
	int have;
	int measured;        /* the last point was inside the window */
	struct ta_dvec values;
	int64_t span_rank;   /* the rank span was computed for, -1 if none */
	double span;
	int failed;          /* the span could not be read */
};

/* The time a blocked ratio is of: HTA's trace duration (max ts - min ts
 * over all the rank's rows), or by default its analysis window; -1 on a
 * database error. */
static double rank_span(sqlite3 *db, int64_t rank, int windows)
{
	sqlite3_stmt *st = NULL;
	double span = -1;
	int rc;

	if (sqlite3_prepare_v2(db, windows ? "SELECT end_ts - ts FROM span WHERE rank = ?"
			       : "SELECT last_ts - first_ts FROM rank_span WHERE rank = ?", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, rank);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			span = sqlite3_column_double(st, 0);
		else if (rc == SQLITE_DONE)
			span = 0;
	}
	sqlite3_finalize(st);
	return span;
}

static void flush(sqlite3 *db, struct ta_table *t, struct stream_acc *s,
		  const struct ta_queue_opts *o, int windows)
{
	size_t r;

	if (!s->have)
		return;
	if (o->blocked_at > 0) {
		double span;

		if (s->span_rank != s->rank) { /* once per rank, not per stream */
			s->span = rank_span(db, s->rank, windows);
			s->failed |= s->span < 0;
			s->span_rank = s->rank;
		}
		span = s->span;
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, 0, s->rank);
		ta_table_set_int(t, r, 1, s->stream);
		ta_table_set_real(t, r, 2, (double)s->blocked / 1000.0);
		ta_table_set_real(t, r, 3, span > 0 ? (double)s->blocked / span : NAN);
	} else if (!o->series) {
		struct ta_stats st;

		ta_stats_compute(s->values.v, s->values.n, &st);
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, 0, s->rank);
		ta_table_set_int(t, r, 1, s->stream);
		ta_stats_set_row(t, r, 2, &st);
	}
	ta_dvec_free(&s->values);
	s->have = s->measured = 0;
	s->len = s->blocked = 0;
}

static void point(struct ta_table *t, struct stream_acc *s, int64_t ts,
		  int delta, int inside, const struct ta_queue_opts *o,
		  int64_t min_ts)
{
	/* the time since the previous point counts at the previous length */
	if (s->measured && s->len >= o->blocked_at && o->blocked_at > 0)
		s->blocked += ts - s->prev_ts;
	s->len += delta;
	s->prev_ts = ts;
	s->have = 1;
	s->measured = inside;
	if (!inside)
		return; /* before the window: the length only */
	if (o->series) {
		size_t r = ta_table_add_row(t);

		ta_table_set_int(t, r, 0, s->rank);
		ta_table_set_int(t, r, 1, s->stream);
		ta_table_set_real(t, r, 2, (double)(ts - min_ts) / 1000.0);
		ta_table_set_int(t, r, 3, s->len);
	} else {
		ta_dvec_push(&s->values, (double)s->len);
	}
}

int ta_queue_run(sqlite3 *db, const struct ta_query *q,
		 const struct ta_queue_opts *o, struct ta_table **out,
		 struct ta_error *err)
{
	struct stream_acc s;
	sqlite3_stmt *st = NULL;
	struct ta_table *t;
	int64_t min_ts;
	int rc;

	*out = NULL;
	memset(&s, 0, sizeof(s));
	s.span_rank = -1;
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV | TA_NEED_QUEUE, err) < 0 ||
	    ta_db_prepare(db, ta_rules(q)->windows ? window_points_sql : points_sql,
			  &st, err) < 0)
		return -1;
	min_ts = ta_model_min_ts(db, q);
	if (o->blocked_at > 0)
		t = ta_table_new("Time with a full launch queue", blocked_cols, 4);
	else if (o->series)
		ta_table_final_rows(t = ta_table_new("Launch queue length",
						     series_cols, 4), q->sink);
	else
		t = ta_table_new("Launch queue length per stream", summary_cols, 10);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);
		int64_t stream = sqlite3_column_int64(st, 1);

		if (s.have && (rank != s.rank || stream != s.stream))
			flush(db, t, &s, o, ta_rules(q)->windows);
		s.rank = rank;
		s.stream = stream;
		point(t, &s, sqlite3_column_int64(st, 2), sqlite3_column_int(st, 3),
		      sqlite3_column_int(st, 4), o, min_ts);
	}
	flush(db, t, &s, o, ta_rules(q)->windows);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE && s.failed)
		rc = SQLITE_ERROR;
	if (rc == SQLITE_DONE && ta_rules(q)->notes) {
		int64_t early = ta_db_int(db, "SELECT count(*) FROM dev WHERE"
					  " correlation != -1 AND launch_ts > ts", -1);

		if (early > 0)
			ta_table_warn(t, "%lld GPU activities start before their "
				      "launch call; counted as launched when they "
				      "started", (long long)early);
		else if (early < 0)
			rc = SQLITE_ERROR;
	}
	if (rc != SQLITE_DONE) {
		ta_db_failed(db, err);
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}
