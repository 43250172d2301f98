/* What diff says of each op's efficiency: for each op and type with
 * counted work on both sides (roofline), its main kernel, achieved
 * TFLOP/s and side of the ridge in BASE and TEST, where the kernel
 * changed (prefill against decode, a new cuBLAS choice), the bound
 * flipped or the rate moved by a quarter or more. A side's row for an op
 * is its rank with the most GPU time in it. */
#include "ta_analyses.h"

#include <math.h>
#include <string.h>

static const struct ta_col cols[] = {
	{ "op", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "dtype", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "base_tflops", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "test_tflops", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "base_bound", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "test_bound", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "base_kernel", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "test_kernel", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};

static size_t col(const struct ta_table *t, const char *name)
{
	long c = ta_table_col(t, name);

	return c < 0 ? t->ncols : (size_t)c;
}

/* The row of op and dtype with the most GPU time; SIZE_MAX if none. */
static size_t find(const struct ta_table *t, const char *op, const char *dtype)
{
	size_t r, best = SIZE_MAX, g = col(t, "gpu_us");

	for (r = 0; r < t->nrows; r++) {
		const struct ta_cell *o = ta_table_cell(t, r, 1), *d = ta_table_cell(t, r, 2);

		if (o->null || d->null || strcmp(o->s, op) || strcmp(d->s, dtype))
			continue;
		if (best == SIZE_MAX || ta_table_cell(t, r, g)->d > ta_table_cell(t, best, g)->d)
			best = r;
	}
	return best;
}

static const char *text(const struct ta_table *t, size_t r, const char *name)
{
	const struct ta_cell *c = ta_table_cell(t, r, col(t, name));

	return c->null ? "" : c->s;
}

static int changed(const struct ta_table *b, size_t rb, const struct ta_table *t, size_t rt)
{
	double x = ta_table_cell(b, rb, col(b, "tflops"))->d;
	double y = ta_table_cell(t, rt, col(t, "tflops"))->d;

	return strcmp(text(b, rb, "kernel"), text(t, rt, "kernel")) ||
	       strcmp(text(b, rb, "bound"), text(t, rt, "bound")) ||
	       (x > 0 && fabs(y - x) >= 0.25 * x);
}

static void add(struct ta_table *out, const struct ta_table *b, size_t rb,
		const struct ta_table *t, size_t rt)
{
	size_t r = ta_table_add_row(out);

	ta_table_set_text(out, r, 0, text(b, rb, "op"));
	ta_table_set_text(out, r, 1, text(b, rb, "dtype"));
	ta_table_set_real(out, r, 2, ta_table_cell(b, rb, col(b, "tflops"))->d);
	ta_table_set_real(out, r, 3, ta_table_cell(t, rt, col(t, "tflops"))->d);
	ta_table_set_text(out, r, 4, text(b, rb, "bound"));
	ta_table_set_text(out, r, 5, text(t, rt, "bound"));
	ta_table_set_text(out, r, 6, text(b, rb, "kernel"));
	ta_table_set_text(out, r, 7, text(t, rt, "kernel"));
}

int ta_diff_roofline(sqlite3 *base, sqlite3 *db, const struct ta_query *q,
		     struct ta_table **out, struct ta_error *err)
{
	struct ta_roofline_opts o = { TA_ROOF_BY_OP, 0, 0, 0 };
	struct ta_table *b = NULL, *t = NULL;
	size_t r;

	*out = NULL;
	if (ta_roofline_run(base, q, &o, &b, err) < 0 ||
	    ta_roofline_run(db, q, &o, &t, err) < 0) {
		ta_table_free(b);
		return -1;
	}
	*out = ta_table_new("Op efficiency, BASE and TEST", cols, sizeof(cols) / sizeof(cols[0]));
	for (r = 0; r < b->nrows; r++) {
		const struct ta_cell *op = ta_table_cell(b, r, 1), *d = ta_table_cell(b, r, 2);
		size_t rb, rt;

		if (op->null || d->null || ta_table_cell(b, r, col(b, "tflops"))->null)
			continue;
		rb = find(b, op->s, d->s);
		if (rb != r || (rt = find(t, op->s, d->s)) == SIZE_MAX ||
		    ta_table_cell(t, rt, col(t, "tflops"))->null)
			continue;   /* one row per op and type, on both sides */
		if (changed(b, rb, t, rt))
			add(*out, b, rb, t, rt);
	}
	ta_table_free(b);
	ta_table_free(t);
	return 0;
}
