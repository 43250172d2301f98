/* The roofline per op (and shape) and per kernel: each row's work over
 * its kernels' time against the roof at its intensity. Calls outside
 * the kept steps are left out, as every other command leaves them. */
#include "roofline_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ta_roof_measures(struct ta_table *t, size_t r, size_t col, double flops,
		      double bytes, int known, int64_t gpu_ns, const char *dtype,
		      const struct ta_roof_gpu *g)
{
	double i, peak, at;

	if (gpu_ns > 0)   /* else no kernel of it was found: unknown */
		ta_table_set_real(t, r, col + 1, (double)gpu_ns / 1e3);
	if (!known || bytes <= 0)
		return;
	i = flops / bytes;
	ta_table_set_real(t, r, col, i);
	at = ta_roof_at(g, dtype, i, &peak);
	if (at > 0) {
		ta_table_set_real(t, r, col + 6, peak / 1e12);
		ta_table_set_real(t, r, col + 7, g->p.gbps);
	}
	if (gpu_ns <= 0)
		return;
	ta_table_set_real(t, r, col + 2, flops / (double)gpu_ns / 1e3);
	ta_table_set_real(t, r, col + 3, bytes / (double)gpu_ns);
	if (at <= 0)
		return;
	ta_table_set_real(t, r, col + 4, 100 * flops / ((double)gpu_ns * 1e-9) / at);
	ta_table_set_text(t, r, col + 5, i < peak / (g->p.gbps * 1e9) ? "memory" : "compute");
}

void ta_roof_set_count(struct ta_table *t, size_t r, size_t col, double v)
{
	if (v >= 0 && v < 9e18)   /* else no int64: unknown, not wrapped */
		ta_table_set_int(t, r, col, llround(v));
}

#define MEASURE_COLS \
	{ "intensity", TA_COL_REAL, TA_UNIT_NONE, 0 }, \
	{ "gpu_us", TA_COL_REAL, TA_UNIT_US, 0 }, \
	{ "tflops", TA_COL_REAL, TA_UNIT_NONE, 0 }, \
	{ "gbps", TA_COL_REAL, TA_UNIT_NONE, 0 }, \
	{ "peak_pct", TA_COL_REAL, TA_UNIT_PCT, 0 }, \
	{ "bound", TA_COL_TEXT, TA_UNIT_NONE, 0 }, \
	{ "peak_tflops", TA_COL_REAL, TA_UNIT_NONE, 0 }, \
	{ "peak_gbps", TA_COL_REAL, TA_UNIT_NONE, 0 }

static const struct ta_col op_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "op", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "dtype", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "flops", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	MEASURE_COLS,
	{ "kernel", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};
/* --group-by shape: shape after dtype */
static const struct ta_col shape_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "op", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "dtype", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "shape", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "flops", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	MEASURE_COLS,
	{ "kernel", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};
static const struct ta_col kernel_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "kernel", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "dtype", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "flops", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	MEASURE_COLS
};
#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

static const char *dtype_or_empty(const struct ta_roof_call *c)
{
	return c->known ? c->work.dtype : "";
}

static int shapes_on;  /* qsort has no context: --group-by shape */

static int cmp_call(const void *a, const void *b)
{
	const struct ta_roof_call *x = a, *y = b;
	int d;

	if (x->in_window != y->in_window)
		return x->in_window ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if ((d = strcmp(x->op, y->op)) != 0)
		return d;
	if ((d = strcmp(dtype_or_empty(x), dtype_or_empty(y))) != 0)
		return d;
	if (x->known != y->known)
		return x->known ? -1 : 1;
	return shapes_on ? strcmp(x->shape, y->shape) : 0;
}

/* rank, then GPU time, most first */
static int cmp_rows(const struct ta_table *t, size_t a, size_t b)
{
	const struct ta_cell *ra = ta_table_cell(t, a, 0), *rb = ta_table_cell(t, b, 0);
	size_t g = (size_t)(strcmp(t->cols[t->ncols - 1].name, "kernel") == 0 ? 8 : 7);

	g = t->ncols - g;
	double ga, gb;

	if (ra->i != rb->i)
		return ra->i < rb->i ? -1 : 1;
	ga = ta_table_cell(t, a, g)->d, gb = ta_table_cell(t, b, g)->d;
	return ga > gb ? -1 : ga < gb;
}

/* A rank with no counted call in its window still has a row, empty: a
 * gate on it trips on the missing value instead of passing on nothing. */
static void empty_ranks(struct ta_table *t, const struct ta_roof_ctx *c)
{
	size_t i, r, n = t->nrows;

	for (i = 0; i < c->ngpus; i++) {
		for (r = 0; r < n && ta_table_cell(t, r, 0)->i != c->gpus[i].rank; r++)
			;
		if (r < n)
			continue;
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, 0, c->gpus[i].rank);
		ta_table_set_text(t, r, 1, "(no counted op)");
		ta_table_set_int(t, r, t->ncols == NCOLS(shape_cols) ? 4 : 3, 0);
	}
}

/* The name of the longest kernel among a group's calls' main kernels. */
static void set_kernel(struct ta_table *t, size_t row, sqlite3_stmt *name,
		       const struct ta_roof_call *v, size_t n)
{
	size_t i, best = 0;

	for (i = 1; i < n; i++)
		if (v[i].gpu_ns > v[best].gpu_ns && v[i].kernel >= 0)
			best = i;
	if (!n || v[best].kernel < 0 || !name)
		return;
	sqlite3_bind_int64(name, 1, v[best].kernel);
	if (sqlite3_step(name) == SQLITE_ROW)
		ta_table_set_text(t, row, t->ncols - 1, (const char *)sqlite3_column_text(name, 0));
	sqlite3_reset(name);
}

struct ta_table *ta_roof_by_op(sqlite3 *db, struct ta_roof_ctx *c)
{
	struct ta_roof *r = &c->r;
	int sh = c->o->shapes;
	struct ta_table *t = ta_table_new(sh ? "Roofline per op and shape" :
					  "Roofline per op", sh ? shape_cols : op_cols,
					  sh ? NCOLS(shape_cols) : NCOLS(op_cols));
	size_t i = 0, j;
	sqlite3_stmt *name = NULL;

	if (ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?", &name, NULL) < 0)
		name = NULL;
	shapes_on = sh;
	if (r->ncalls)
		qsort(r->calls, r->ncalls, sizeof(*r->calls), cmp_call);
	while (i < r->ncalls && r->calls[i].in_window) {
		const struct ta_roof_call *f = &r->calls[i];
		double flops = 0, bytes = 0;
		int64_t gpu = 0;
		size_t row, col = 2, found = 0;

		/* a call with no kernel found (lost from the trace) is left
		 * out: its FLOPs over the others' time read 138 % of the roof
		 * (helper-66); warn_calls says how many */
		for (j = i; j < r->ncalls && cmp_call(f, &r->calls[j]) == 0; j++)
			if (r->calls[j].gpu_ns > 0) {
				flops += r->calls[j].work.flops;
				bytes += r->calls[j].work.bytes;
				gpu = ta_add_sat(gpu, r->calls[j].gpu_ns);
				found++;
			}
		if (!found) {
			i = j;
			continue;
		}
		row = ta_table_add_row(t);
		ta_table_set_int(t, row, 0, f->rank);
		ta_table_set_text(t, row, 1, f->op);
		if (f->known)
			ta_table_set_text(t, row, 2, f->work.dtype);
		if (sh)
			ta_table_set_text(t, row, ++col, f->shape);
		ta_table_set_int(t, row, col + 1, (int64_t)found);
		if (f->known) {
			ta_roof_set_count(t, row, col + 2, flops);
			ta_roof_set_count(t, row, col + 3, bytes);
		}
		ta_roof_measures(t, row, col + 4, flops, bytes, f->known, gpu, f->work.dtype,
				 ta_roof_gpu_of(c, f->rank));
		set_kernel(t, row, name, f, j - i);
		i = j;
	}
	sqlite3_finalize(name);
	empty_ranks(t, c);
	ta_table_set_values(t, t->ncols - 4, ta_roof_bounds);
	ta_table_sort(t, cmp_rows);
	return t;
}

/* The calls in the window and their launches as tables, so SQL joins them
 * with the kernels. */
static int store_calls(sqlite3 *db, const struct ta_roof *r, struct ta_error *err)
{
	sqlite3_stmt *a = NULL, *b = NULL;
	size_t i;
	int rc = ta_db_exec(db, "DROP TABLE IF EXISTS temp.roof_call;"
			    "DROP TABLE IF EXISTS temp.roof_launch;"
			    "CREATE TEMP TABLE roof_call (id INTEGER PRIMARY KEY, known,"
			    " dtype TEXT, flops REAL, bytes REAL, gpu_ns INTEGER);"
			    "CREATE TEMP TABLE roof_launch (rank, correlation, call);", err);

	if (rc < 0 || ta_db_prepare(db, "INSERT INTO roof_call VALUES (?,?,?,?,?,?)", &a, err) < 0 ||
	    ta_db_prepare(db, "INSERT INTO roof_launch VALUES (?,?,?)", &b, err) < 0) {
		sqlite3_finalize(a);
		return -1;
	}
	ta_db_exec(db, "SAVEPOINT roof_store;", NULL);   /* one write, not one a row */
	for (i = 0; i < r->ncalls; i++) {
		const struct ta_roof_call *k = &r->calls[i];

		sqlite3_bind_int64(a, 1, (int64_t)i);
		sqlite3_bind_int(a, 2, k->known);
		sqlite3_bind_text(a, 3, k->known ? k->work.dtype : "", -1, SQLITE_STATIC);
		sqlite3_bind_double(a, 4, k->work.flops);
		sqlite3_bind_double(a, 5, k->work.bytes);
		sqlite3_bind_int64(a, 6, k->gpu_ns);
		sqlite3_step(a);
		sqlite3_reset(a);
	}
	for (i = 0; i < r->nlaunches; i++) {
		if (!r->calls[r->launches[i].call].in_window)
			continue;
		sqlite3_bind_int64(b, 1, r->launches[i].rank);
		sqlite3_bind_int64(b, 2, r->launches[i].correlation);
		sqlite3_bind_int64(b, 3, (int64_t)r->launches[i].call);
		sqlite3_step(b);
		sqlite3_reset(b);
	}
	sqlite3_finalize(a);
	sqlite3_finalize(b);
	ta_db_exec(db, "RELEASE roof_store;", NULL);
	/* the join then reads the kernels once, finding each one's call */
	return ta_db_exec(db, "CREATE INDEX temp.roof_launch_corr ON roof_launch"
			  " (rank, correlation);", err);
}

/* A call's work goes to its kernels in proportion to their time (a
 * convolution's backward is two GEMMs, an attention's several kernels),
 * memory copies and sets none of it. */
static const char kernels_sql[] =
	/* the kernels read once, then found by correlation (a join on the
	 * view took 25 s on a 200 MB trace) */
	"DROP TABLE IF EXISTS temp.roof_g;"
	"CREATE TEMP TABLE roof_g AS SELECT rank, correlation, name, dur,"
	"  cat IS NOT " TA_CAT_MEMCPY " AND cat IS NOT " TA_CAT_MEMSET " AS work"
	"  FROM gpu WHERE correlation != -1;"
	"CREATE INDEX temp.roof_g_corr ON roof_g (rank, correlation);"
	"DROP TABLE IF EXISTS temp.roof_k;"
	"CREATE TEMP TABLE roof_k AS SELECT g.rank, g.name, g.dur, l.call, g.work"
	"  FROM roof_launch l JOIN roof_g g ON g.rank = l.rank AND g.correlation = l.correlation;"
	"DROP TABLE IF EXISTS temp.roof_part;"
	"CREATE TEMP TABLE roof_part AS SELECT k.*, CASE WHEN k.work THEN k.dur * 1.0 /"
	"  max(ta_sum(CASE WHEN k.work THEN k.dur ELSE 0 END) OVER (PARTITION BY k.call), 1)"
	"  ELSE 0 END AS part FROM roof_k k;";

static const char kernels_rows_sql[] =
	"SELECT s.rank, n.name, c.dtype, count(*), sum(c.flops * s.part),"
	"  sum(c.bytes * s.part), ta_sum(s.dur), min(c.known)"
	" FROM roof_part s JOIN roof_call c ON c.id = s.call JOIN label n ON n.name_id = s.name"
	" GROUP BY s.rank, n.name, c.dtype ORDER BY s.rank, ta_sum(s.dur) DESC, n.name";

int ta_roof_by_kernel(sqlite3 *db, struct ta_roof_ctx *c, struct ta_table **out,
		      struct ta_error *err)
{
	struct ta_table *t = ta_table_new("Roofline per kernel", kernel_cols,
					  NCOLS(kernel_cols));
	sqlite3_stmt *st = NULL;
	int rc;

	if (store_calls(db, &c->r, err) < 0 || ta_db_exec(db, kernels_sql, err) < 0 ||
	    ta_db_prepare(db, kernels_rows_sql, &st, err) < 0) {
		ta_table_free(t);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t r = ta_table_add_row(t);
		int known = sqlite3_column_int(st, 7);
		const char *dtype = (const char *)sqlite3_column_text(st, 2);
		double flops = sqlite3_column_double(st, 4), bytes = sqlite3_column_double(st, 5);

		ta_table_set_int(t, r, 0, sqlite3_column_int64(st, 0));
		ta_table_set_text(t, r, 1, (const char *)sqlite3_column_text(st, 1));
		if (known && dtype && *dtype)
			ta_table_set_text(t, r, 2, dtype);
		ta_table_set_int(t, r, 3, sqlite3_column_int64(st, 3));
		if (known) {
			ta_roof_set_count(t, r, 4, flops);
			ta_roof_set_count(t, r, 5, bytes);
		}
		ta_roof_measures(t, r, 6, flops, bytes, known, sqlite3_column_int64(st, 6),
				 dtype, ta_roof_gpu_of(c, sqlite3_column_int64(st, 0)));
	}
	sqlite3_finalize(st);
	empty_ranks(t, c);
	ta_table_set_values(t, t->ncols - 3, ta_roof_bounds);
	ta_table_sort(t, cmp_rows);
	*out = t;
	return ta_db_done(db, rc, err);
}
