/* Idle time per stream (hta-semantics §9.6): each gap before a kernel is
 * host wait (the launch came after the stream drained), kernel wait (a
 * short gap between kernels) or other.
 *
 * Streams' idle times overlap (a NCCL stream idles between collectives
 * while the compute stream is busy), so their sum explains nothing about
 * the GPU. By default each rank also gets rows for the whole GPU (stream
 * NULL): the time no stream ran anything in the rank's analysis window,
 * the same time temporal calls idle, split by the same rules, the gap
 * before the window's first kernel and after its last included. */
#include "analyses/common/intervals.h"
#include "analyses/common/stats.h"
#include "ta_analyses.h"
#include "ta_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_idle_opts ta_idle_defaults = { 30000, NULL, 0, 0 };

enum { HOST_WAIT, KERNEL_WAIT, OTHER, NCAT };
static const char *const cat_names[NCAT + 1] = { "host_wait", "kernel_wait",
	"other", NULL };

static const struct ta_col idle_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "stream", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "category", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "idle_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "idle_ratio", TA_COL_REAL, TA_UNIT_RATIO, 0 },
};

static const struct ta_col stats_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "stream", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "category", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "count", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "mean_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "std_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "min_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "p25_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "p50_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "p75_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "max_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

/* Gaps ended by work launched in the step the profiler cut short (the
 * window measures it by time): what they were is told by the next work
 * the kept steps launched, as if the cut step's had not run (a copy for
 * the next batch, often with no launch recorded, would otherwise split a
 * host stall into "other", or a wait on queued work into host wait). */
struct deferred {
	struct { int64_t start, len; } *v;
	size_t n, cap;
};

/* One stream's gaps, by category. */
struct stream_acc {
	int64_t rank, stream;
	int present[NCAT];
	struct ta_dvec gaps[NCAT];   /* µs, kept only for --stats */
	int keep_gaps;
	int64_t sum_ns[NCAT];        /* exact totals */
	int n;                       /* kernels seen */
	int whole;                   /* the whole GPU: stream NULL */
	int64_t prev_end;
	struct deferred pend;        /* gaps a cut step's work ended */
};

static int stream_selected(const struct ta_idle_opts *o, int64_t stream)
{
	size_t i;

	if (!o->streams)
		return 1;
	for (i = 0; i < o->nstreams; i++)
		if (o->streams[i] == stream)
			return 1;
	return 0;
}

static void count_gap(struct stream_acc *s, int cat, int64_t gap)
{
	s->present[cat] = 1;
	s->sum_ns[cat] += gap;
	if (s->keep_gaps)
		ta_dvec_push(&s->gaps[cat], (double)gap / 1000.0);
}

static void defer(struct stream_acc *s, int64_t start, int64_t len)
{
	struct deferred *d = &s->pend;

	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 16;
		d->v = ta_xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	d->v[d->n].start = start;
	d->v[d->n].len = len;
	d->n++;
}

/* The deferred gaps, told by kept work launched at launch (if known);
 * last: none came, nothing the kept steps launched was left to run. */
static void settle(struct stream_acc *s, int has_launch, int64_t launch,
		   int64_t wait_ns, int last)
{
	size_t i;

	for (i = 0; i < s->pend.n; i++) {
		int64_t start = s->pend.v[i].start, len = s->pend.v[i].len;

		count_gap(s, last || (has_launch && launch > start) ? HOST_WAIT :
			  len < wait_ns ? KERNEL_WAIT : OTHER, len);
	}
	s->pend.n = 0;
}

static void add_kernel(struct stream_acc *s, int64_t ts, int64_t dur,
		       int has_launch, int64_t launch, int cut,
		       int64_t wait_ns, int prev_end)
{
	int64_t gap = ts - s->prev_end, start = s->prev_end;
	int cat;

	if (s->n++ == 0) {
		s->prev_end = ts + dur;
		if (prev_end)
			s->present[OTHER] = 1; /* HTA: the first kernel's NaN gap */
		return;
	}
	if (has_launch && launch > s->prev_end)
		cat = HOST_WAIT;
	else if (gap < wait_ns)
		cat = KERNEL_WAIT;
	else
		cat = OTHER;
	/* HTA measures from the previous kernel's end, so overlapping kernels
	 * give negative gaps; the default measures from the latest end */
	if (prev_end) {
		s->prev_end = ts + dur;
	} else {
		if (ts + dur > s->prev_end)
			s->prev_end = ts + dur;
		if (!cut)
			settle(s, has_launch, launch, wait_ns, 0);
		if (gap <= 0)
			return;
		if (cut) {
			defer(s, start, gap);
			return;
		}
	}
	count_gap(s, cat, gap);
}

static double maybe_round(double x, const struct ta_rules *R)
{
	return R->hta_arithmetic ? ta_round(x, 2) : x;
}

static void emit_idle(struct ta_table *t, struct stream_acc *s,
		      const struct ta_rules *R)
{
	double sum[NCAT] = { 0 }, total = 0;
	int c;

	for (c = 0; c < NCAT; c++) {
		sum[c] = (double)s->sum_ns[c] / 1000.0;
		total += sum[c];
	}
	for (c = 0; c < NCAT; c++) {
		size_t r;

		if (R->idle_prev_end && !s->present[c])
			continue;
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, 0, s->rank);
		if (!s->whole)
			ta_table_set_int(t, r, 1, s->stream);
		ta_table_set_text(t, r, 2, cat_names[c]);
		ta_table_set_real(t, r, 3, maybe_round(sum[c], R));
		if (total > 0)
			ta_table_set_real(t, r, 4, maybe_round(sum[c] / total, R));
	}
}

static void emit_stats(struct ta_table *t, struct stream_acc *s,
		       const struct ta_rules *R)
{
	int c;

	for (c = 0; c < NCAT; c++) {
		struct ta_stats st;
		double v[7];
		size_t r, k;

		if (R->idle_prev_end ? !s->present[c] : s->gaps[c].n == 0)
			continue;
		ta_stats_compute(s->gaps[c].v, s->gaps[c].n, &st);
		v[0] = st.mean, v[1] = st.std, v[2] = st.min, v[3] = st.p25;
		v[4] = st.p50, v[5] = st.p75, v[6] = st.max;
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, 0, s->rank);
		ta_table_set_int(t, r, 1, s->stream);
		ta_table_set_text(t, r, 2, cat_names[c]);
		ta_table_set_int(t, r, 3, (int64_t)st.count);
		for (k = 0; k < 7; k++)
			ta_table_set_real(t, r, 4 + k, maybe_round(v[k], R));
	}
}

static void flush_stream(struct ta_table *t, struct stream_acc *s,
			 const struct ta_idle_opts *o,
			 const struct ta_rules *R)
{
	int c;

	settle(s, 0, 0, o->kernel_wait_ns, 1);
	if (s->n) {
		if (o->stats)
			emit_stats(t, s, R);
		else
			emit_idle(t, s, R);
	}
	for (c = 0; c < NCAT; c++) {
		ta_dvec_free(&s->gaps[c]);
		s->present[c] = 0;
		s->sum_ns[c] = 0;
	}
	s->n = 0;
}

/* A rank's kernels inside its analysis window (dev_win; all of them with
 * --hta-compat or --window span, where it is HTA's first-to-last span),
 * stream by stream in the order of each stream's first kernel in the
 * file, each in time order: sorted here, where SQL's GROUP BY, join and
 * sort of every row cost 1.2 G instructions on a 200 MB rank. */
static const char idle_sql[] =
	"SELECT stream, ts, dur, launch_ts, ord, cut FROM dev_win"
	" WHERE rank = ? AND idle_kernel";

struct idle_row {
	int64_t stream, ts, dur, launch, ord;
	int has_launch, cut;
	size_t at;           /* its place as read: ties stay in it */
};

struct idle_rows {
	struct idle_row *v;
	size_t n, cap;
};

static int cmp_stream_time(const void *a, const void *b)
{
	const struct idle_row *x = a, *y = b;

	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->ord != y->ord)
		return x->ord < y->ord ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* A stream's rows in v: from, n, and its first kernel's ord. */
struct stream_run {
	size_t from, n;
	int64_t first;
};

static int cmp_run_first(const void *a, const void *b)
{
	const struct stream_run *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

static int read_rank(sqlite3_stmt *st, int64_t rank, struct idle_rows *r)
{
	int rc;

	r->n = 0;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 1024;
			r->v = ta_xrealloc(r->v, r->cap * sizeof(*r->v));
		}
		r->v[r->n] = (struct idle_row){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4),
			sqlite3_column_type(st, 3) != SQLITE_NULL,
			sqlite3_column_int(st, 5), r->n };
		r->n++;
	}
	return rc;
}

/* The rank's streams, each a run of rows sorted by time, in the order of
 * their first kernels; *nruns of them (freed by the caller). */
static struct stream_run *stream_runs(struct idle_rows *r, size_t *nruns)
{
	struct stream_run *runs = NULL;
	size_t i, n = 0;

	ta_qsort(r->v, r->n, sizeof(*r->v), cmp_stream_time);
	for (i = 0; i < r->n; i++) {
		if (!n || r->v[i].stream != r->v[runs[n - 1].from].stream) {
			runs = ta_xrealloc(runs, (n + 1) * sizeof(*runs));
			runs[n++] = (struct stream_run){ i, 0, r->v[i].ord };
		}
		runs[n - 1].n++;
		if (r->v[i].ord < runs[n - 1].first)
			runs[n - 1].first = r->v[i].ord;
	}
	ta_qsort(runs, n, sizeof(*runs), cmp_run_first);
	*nruns = n;
	return runs;
}

/* The rank's idle time as temporal measures it (same window, same rows),
 * split by what ended each gap: rows for the whole GPU, stream NULL. */
static const char ranks_sql[] =
	"SELECT s.rank, w.ts, w.end_ts FROM sel_ranks s"
	" LEFT JOIN span w ON w.rank = s.rank ORDER BY s.rank";
static const char rank_rows_sql[] =
	"SELECT ts, dur, launch_ts, cut FROM dev_win WHERE rank = ? ORDER BY sort_ts";

static void add_gap(struct stream_acc *s, int64_t gap, int cat)
{
	if (gap <= 0)
		return;
	s->present[cat] = 1;
	s->sum_ns[cat] += gap;
}

/* One rank: w1 < w0 is the first-to-last span of its GPU work. The gap
 * after the last kernel is host wait: nothing the window launched was
 * left to run. */
static int whole_gpu(const struct ta_query *q, struct ta_table *t,
		     sqlite3_stmt *st, int64_t rank,
		     int64_t w0, int64_t w1, int64_t wait_ns)
{
	struct stream_acc s;
	int64_t end = w0;
	int rc, any = 0;

	memset(&s, 0, sizeof(s));
	s.rank = rank;
	s.whole = 1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(st, 0);
		int64_t e = ts + sqlite3_column_int64(st, 1);
		int has = sqlite3_column_type(st, 2) != SQLITE_NULL;
		int64_t launch = sqlite3_column_int64(st, 2);
		int cut = sqlite3_column_int(st, 3);

		if (!any++ && w1 < w0)
			end = ts;
		if (!cut)
			settle(&s, has, launch, wait_ns, 0);
		if (ts > end && cut)
			defer(&s, end, ts - end);
		else if (ts > end)
			add_gap(&s, ts - end, has && launch > end ? HOST_WAIT :
				ts - end < wait_ns ? KERNEL_WAIT : OTHER);
		if (e > end)
			end = e;
	}
	sqlite3_reset(st);
	settle(&s, 0, 0, wait_ns, 1);
	free(s.pend.v);
	if (rc != SQLITE_DONE)
		return rc;
	if (!any)
		return SQLITE_DONE;
	if (w1 >= w0)
		add_gap(&s, w1 - end, HOST_WAIT);
	for (int c = 0; c < NCAT; c++)
		s.present[c] = 1;
	s.n = 1;
	emit_idle(t, &s, ta_rules(q));
	return SQLITE_DONE;
}

static int whole_gpu_rows(sqlite3 *db, const struct ta_query *q,
			  struct ta_table *t, int64_t wait_ns, struct ta_error *err)
{
	sqlite3_stmt *ranks = NULL, *st = NULL;
	int rc = SQLITE_DONE, step;

	if (ta_db_prepare(db, ranks_sql, &ranks, err) < 0)
		return -1;
	if (ta_db_prepare(db, rank_rows_sql, &st, err) < 0) {
		sqlite3_finalize(ranks);
		return -1;
	}
	while (rc == SQLITE_DONE && (step = sqlite3_step(ranks)) == SQLITE_ROW) {
		int64_t w0 = 0, w1 = -1;

		if (sqlite3_column_type(ranks, 1) != SQLITE_NULL) {
			w0 = sqlite3_column_int64(ranks, 1);
			w1 = sqlite3_column_int64(ranks, 2);
		}
		rc = whole_gpu(q, t, st, sqlite3_column_int64(ranks, 0), w0, w1,
			       wait_ns);
	}
	if (rc == SQLITE_DONE)
		rc = step;
	sqlite3_finalize(st);
	sqlite3_finalize(ranks);
	if (rc != SQLITE_DONE) {
		ta_db_failed(db, err);
		return -1;
	}
	return 0;
}

/* By rank, the whole GPU's rows first; the rest keep their order (the
 * sort is stable). */
static int cmp_rank_whole_first(const struct ta_table *t, size_t a, size_t b)
{
	int64_t ra = ta_table_cell(t, a, 0)->i, rb = ta_table_cell(t, b, 0)->i;
	int wa = ta_table_cell(t, a, 1)->null, wb = ta_table_cell(t, b, 1)->null;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return wb - wa;
}

int ta_idle_run(sqlite3 *db, const struct ta_query *q,
		const struct ta_idle_opts *o, struct ta_table **out,
		struct ta_error *err)
{
	struct stream_acc s;
	struct idle_rows rows = { NULL, 0, 0 };
	sqlite3_stmt *st = NULL, *ranks = NULL;
	struct ta_table *t;
	const struct ta_rules *R = ta_rules(q);
	int rc;

	*out = NULL;
	memset(&s, 0, sizeof(s));
	s.keep_gaps = o->stats;
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV, err) < 0 ||
	    ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank", &ranks, err) < 0)
		return -1;
	if (ta_db_prepare(db, idle_sql, &st, err) < 0) {
		sqlite3_finalize(ranks);
		return -1;
	}
	t = o->stats ? ta_table_new("Idle intervals per stream", stats_cols, 11)
		     : ta_table_new("Idle time per stream", idle_cols, 5);
	ta_table_set_values(t, 2, cat_names); /* a gate on a misspelt category errs */
	while ((rc = sqlite3_step(ranks)) == SQLITE_ROW &&
	       (rc = read_rank(st, sqlite3_column_int64(ranks, 0), &rows)) == SQLITE_DONE) {
		size_t nruns, k, i;
		struct stream_run *runs = stream_runs(&rows, &nruns);

		for (k = 0; k < nruns; k++) {
			const struct idle_row *v = &rows.v[runs[k].from];

			if (!stream_selected(o, v->stream))
				continue;
			s.rank = sqlite3_column_int64(ranks, 0);
			s.stream = v->stream;
			for (i = 0; i < runs[k].n; i++)
				add_kernel(&s, v[i].ts, v[i].dur, v[i].has_launch, v[i].launch,
					   v[i].cut, o->kernel_wait_ns, R->idle_prev_end);
			if (s.n)
				flush_stream(t, &s, o, R);
		}
		free(runs);
	}
	free(rows.v);
	free(s.pend.v);
	sqlite3_finalize(st);
	sqlite3_finalize(ranks);
	if (rc != SQLITE_DONE) {
		ta_db_failed(db, err);
		ta_table_free(t);
		return -1;
	}
	if (R->whole_gpu && !o->stats && !o->streams) {
		if (whole_gpu_rows(db, q, t, o->kernel_wait_ns, err) < 0) {
			ta_table_free(t);
			return -1;
		}
		/* a rank's rows together, as a shard gives them */
		ta_table_sort(t, cmp_rank_whole_first);
	}
	*out = t;
	return 0;
}
