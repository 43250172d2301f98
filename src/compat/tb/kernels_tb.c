/* kernels --tb-compat: the TensorBoard profiler plugin's Kernel view
 * (kernel_parser.py; run_generator.py:371-403, kineto 790be856), number
 * for number. Per rank (the plugin's worker): every kernel event (cat
 * "kernel", any case), grouped by name; calls, total, mean, max and min
 * µs, each rounded half to even as Python's round() does; the mean
 * blocks per SM and est. achieved occupancy weighted by duration, an
 * absent value counted as 0 (pandas' fillna(0)), 0 when the durations
 * add up to 0, to 2 decimals as numpy rounds them; "Tensor Cores Used"
 * by the plugin's 2019 list of name fragments (Volta and Ampere: no
 * Hopper kernel is on it); durations as written, a negative one too
 * (pandas takes them as they come). The two launch columns are empty when the
 * plugin leaves them out: no kernel of the rank with a device and a
 * blocks per SM above 0 (an occupancy of 0 or more). Largest total
 * first, names in order among equals. */
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_intern.h"
#include "optree_tb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "tensor_cores_used", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "total_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "mean_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "max_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "min_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "blocks_per_sm", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "occupancy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};
#define NCOLS (sizeof(cols) / sizeof(*cols))

struct group {
	char *name;
	int64_t calls;
	double sum, max, min, bpsm_w, occ_w;
};

struct rank_groups {
	struct group *v;
	size_t n, cap;
	int64_t rank;
	int has_bpsm, has_occ;
};

static int by_total(const void *x, const void *y)
{
	const struct group *a = x, *b = y;

	if (a->sum != b->sum)
		return a->sum > b->sum ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* numpy's round(x, 2): scaled, rounded half to even, scaled back */
static double round2(double x)
{
	return rint(x * 100.0) / 100.0;
}

static void flush(struct rank_groups *g, struct ta_table *t)
{
	size_t i;

	ta_qsort(g->v, g->n, sizeof(*g->v), by_total);
	for (i = 0; i < g->n; i++) {
		const struct group *k = &g->v[i];
		size_t r = ta_table_add_row(t);

		ta_table_set_int(t, r, 0, g->rank);
		ta_table_set_text(t, r, 1, k->name);
		ta_table_set_text(t, r, 2, tb_tc_kernel(k->name) ? "Yes" : "No");
		ta_table_set_int(t, r, 3, k->calls);
		ta_table_set_int(t, r, 4, (int64_t)rint(k->sum));
		ta_table_set_int(t, r, 5, (int64_t)rint(k->sum / (double)k->calls));
		ta_table_set_int(t, r, 6, (int64_t)rint(k->max));
		ta_table_set_int(t, r, 7, (int64_t)rint(k->min));
		/* np.average raises ZeroDivisionError on weights adding to 0:
		 * the plugin's except gives 0 */
		if (g->has_bpsm)
			ta_table_set_real(t, r, 8, k->sum != 0 ? round2(k->bpsm_w / k->sum) : 0);
		if (g->has_occ)
			ta_table_set_real(t, r, 9, k->sum != 0 ? round2(k->occ_w / k->sum) : 0);
		free(k->name);
	}
	g->n = 0;
	g->has_bpsm = g->has_occ = 0;
}

static void add(struct rank_groups *g, sqlite3_stmt *st)
{
	const char *name = (const char *)sqlite3_column_text(st, 1);
	double dur = (double)sqlite3_column_int64(st, 2) / 1000.0;
	double bpsm = sqlite3_column_double(st, 3), occ = sqlite3_column_double(st, 4);
	int device = sqlite3_column_type(st, 5) != SQLITE_NULL;
	struct group *k;

	if (!g->n || strcmp(g->v[g->n - 1].name, name) != 0) {
		if (g->n == g->cap) {
			g->cap = g->cap ? 2 * g->cap : 64;
			g->v = ta_xrealloc(g->v, g->cap * sizeof(*g->v));
		}
		k = &g->v[g->n++];
		memset(k, 0, sizeof(*k));
		k->name = ta_xstrdup(name);
		k->max = k->min = dur;
	}
	k = &g->v[g->n - 1];
	k->calls++;
	k->sum += dur;
	k->max = fmax(k->max, dur);
	k->min = fmin(k->min, dur);
	k->bpsm_w += bpsm * dur; /* NULL reads 0.0: fillna(0) */
	k->occ_w += occ * dur;
	/* gpu_metrics_parser.py: a kernel of a device, with a value */
	g->has_bpsm |= device && sqlite3_column_type(st, 3) != SQLITE_NULL && bpsm > 0;
	g->has_occ |= device && sqlite3_column_type(st, 4) != SQLITE_NULL && occ >= 0;
}

int ta_kernels_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		      struct ta_error *err)
{
	struct ta_table *t;
	struct rank_groups g = { NULL, 0, 0, 0, 0, 0 };
	sqlite3_stmt *st = NULL;
	int rc;

	*out = NULL;
	if (ta_model_prepare(db, q, 0, err) < 0 ||
	    ta_db_prepare(db, "SELECT rank, name, dur, blocks_per_sm, occupancy, device"
			  " FROM trace_x WHERE lower(cat) = 'kernel' AND name IS NOT NULL"
			  " ORDER BY rank, name", &st, err) < 0)
		return -1;
	t = ta_table_new("GPU kernels (the TensorBoard plugin's Kernel view)", cols, NCOLS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);

		if (g.n && rank != g.rank)
			flush(&g, t);
		g.rank = rank;
		add(&g, st);
	}
	flush(&g, t);
	free(g.v);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ta_table_free(t);
		ta_db_failed(db, err);
		return -1;
	}
	*out = t;
	return 0;
}

/* ---- kernels --by op --tb-compat: the "Kernel + Op" table ----
 * (op_agg.py's aggregate_kernels, run_generator.py:321-369): the kernels
 * the plugin's trees reach (optree_tb.c), grouped by name, launching op
 * ("CallTreeRoot" for the kernels no runtime call claimed), grid, block,
 * registers and shared memory as Python's str() writes them ("None"
 * when absent; 0 for no registers or shared memory); calls, total, max
 * and min µs as summed (not rounded), the mean rounded half to even; the
 * launch means weighted by duration to two decimals as Python rounds,
 * empty where the Kernel view leaves them out. Largest total first,
 * groups in the order the walk met them among equals. */

static const struct ta_col op_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "op", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "grid", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "block", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "registers", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "shared_mem", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "tensor_cores_used", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "op_tc_eligible", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "total_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "mean_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "max_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "min_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "blocks_per_sm", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "occupancy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};
#define NOPCOLS (sizeof(op_cols) / sizeof(*op_cols))

struct op_group {
	const struct tb_kernel *first;
	int64_t calls;
	double total, max, min, bpsm, occ;
	size_t order;
};

static int op_by_total(const void *x, const void *y)
{
	const struct op_group *a = x, *b = y;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static void op_rows(struct ta_table *t, int64_t rank, const struct tb_forest *f)
{
	struct ta_intern *keys = ta_intern_new();
	struct op_group *g = ta_xcalloc(f->nkernels + 1, sizeof(*g));
	size_t n = 0;

	for (size_t i = 0; i < f->nkernels; i++) {
		const struct tb_kernel *k = &f->kernels[i];
		struct ta_buf key = { 0 };
		int is_new;
		struct op_group *o;

		ta_buf_addf(&key, "%s\037%s\037%s\037%s\037%lld\037%lld", k->name, k->op,
			    k->grid ? k->grid : "None", k->block ? k->block : "None",
			    (long long)k->regs, (long long)k->smem);
		o = &g[ta_intern(keys, key.s, key.len, &is_new) - 1];
		ta_buf_free(&key);
		if (is_new) {
			o->first = k;
			o->order = n++;
			o->min = k->dur;
		}
		o->calls++;
		o->total += k->dur;
		o->min = fmin(o->min, k->dur);
		o->max = fmax(o->max, k->dur);
		o->bpsm += k->bpsm * k->dur;
		o->occ += k->occ * k->dur;
	}
	ta_qsort(g, n, sizeof(*g), op_by_total);
	for (size_t i = 0; i < n; i++) {
		const struct tb_kernel *k = g[i].first;
		size_t r = ta_table_add_row(t);

		ta_table_set_int(t, r, 0, rank);
		ta_table_set_text(t, r, 1, k->name);
		ta_table_set_text(t, r, 2, k->op);
		ta_table_set_text(t, r, 3, k->grid ? k->grid : "None");
		ta_table_set_text(t, r, 4, k->block ? k->block : "None");
		ta_table_set_int(t, r, 5, k->regs);
		ta_table_set_int(t, r, 6, k->smem);
		ta_table_set_text(t, r, 7, k->tc_used ? "Yes" : "No");
		ta_table_set_text(t, r, 8, k->op_tc_eligible ? "Yes" : "No");
		ta_table_set_int(t, r, 9, g[i].calls);
		ta_table_set_real(t, r, 10, g[i].total);
		ta_table_set_int(t, r, 11, (int64_t)rint(g[i].total / (double)g[i].calls));
		ta_table_set_real(t, r, 12, g[i].max);
		ta_table_set_real(t, r, 13, g[i].min);
		if (f->has_bpsm)
			ta_table_set_real(t, r, 14, g[i].total > 0 ? tb_round2(g[i].bpsm / g[i].total) : 0);
		if (f->has_occ)
			ta_table_set_real(t, r, 15, g[i].total > 0 ? tb_round2(g[i].occ / g[i].total) : 0);
	}
	free(g);
	ta_intern_free(keys);
}

/* one rank: its trees, then its rows */
static int op_rank(sqlite3 *db, struct ta_table *t, int64_t rank, void *ctx,
		   struct ta_error *err)
{
	struct tb_forest f;

	(void)ctx;
	if (tb_forest_build(db, rank, &f, err) < 0)
		return -1;
	op_rows(t, rank, &f);
	tb_forest_free(&f);
	return 0;
}

int ta_kernels_op_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
			 struct ta_error *err)
{
	return tb_each_rank(db, q, ta_table_new("GPU kernels per launching op (the TensorBoard "
						"plugin's Kernel view)", op_cols, NOPCOLS),
			    op_rank, NULL, out, err);
}
