/* ops --tb-compat: the TensorBoard plugin's Operator view (op_agg.py's
 * aggregate_ops, run_generator.py's _generate_op_table; kineto
 * 790be856), number for number. Per rank, the operators of the plugin's
 * trees (optree_tb.c) grouped by name, or by name and str(Input Dims)
 * with --group-by shape: calls, self and total device and host µs
 * (Python's round(), half to even), tensor-core eligibility (the first
 * call's) and the shares of device time on tensor-core kernels
 * (round(100 x, 2)). Largest self device time first (self host time when
 * the rank has no kernel but collectives' and no copy or set: the device
 * columns are then left empty, as the plugin leaves them out), groups in
 * the order the walk met them among equals. */
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
	{ "input_shape", TA_COL_TEXT, TA_UNIT_NONE, 1 },   /* --group-by shape */
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "self_device_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "device_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "self_cpu_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "cpu_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "tc_eligible", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "tc_self_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "tc_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};
#define NCOLS (sizeof(cols) / sizeof(*cols))

/* the same, but input_shape */
static const struct ta_col name_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "self_device_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "device_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "self_cpu_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "cpu_us", TA_COL_INT, TA_UNIT_US, 0 },
	{ "tc_eligible", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "tc_self_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "tc_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};

struct agg {
	const char *name, *shape;
	int64_t calls;
	double host, device, self_host, self_device, tc_self, tc_total;
	int tc_eligible;
	size_t order;
	double key;
};

static int by_key(const void *x, const void *y)
{
	const struct agg *a = x, *b = y;

	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static void emit(struct ta_table *t, int64_t rank, const struct tb_forest *f, int by_shape)
{
	struct ta_intern *keys = ta_intern_new();
	struct agg *a = ta_xcalloc(f->nops + 1, sizeof(*a));
	size_t n = 0;

	for (size_t i = 0; i < f->nops; i++) {
		const struct tb_op *op = &f->ops[i];
		struct ta_buf k = { 0 };
		int is_new;
		int64_t id;
		struct agg *g;

		ta_buf_adds(&k, op->name);
		if (by_shape) {
			ta_buf_adds(&k, "###");
			ta_buf_adds(&k, op->shape);
		}
		id = ta_intern(keys, k.s, k.len, &is_new);
		ta_buf_free(&k);
		g = &a[id - 1];
		if (is_new) {
			g->name = op->name;
			g->shape = op->shape;
			g->tc_eligible = op->tc_eligible;
			g->order = n++;
		}
		g->calls++;
		g->host += op->dur;
		g->device += op->device;
		g->self_host += op->self_host;
		g->self_device += op->self_device;
		g->tc_self += op->tc_self;
		g->tc_total += op->tc_total;
	}
	for (size_t i = 0; i < n; i++)
		a[i].key = f->show_gpu ? a[i].self_device : a[i].self_host;
	ta_qsort(a, n, sizeof(*a), by_key);
	for (size_t i = 0; i < n; i++) {
		size_t r = ta_table_add_row(t), c = 2;

		ta_table_set_int(t, r, 0, rank);
		ta_table_set_text(t, r, 1, a[i].name);
		if (by_shape)
			ta_table_set_text(t, r, c++, a[i].shape);
		ta_table_set_int(t, r, c++, a[i].calls);
		if (f->show_gpu) {
			ta_table_set_int(t, r, c, (int64_t)rint(a[i].self_device));
			ta_table_set_int(t, r, c + 1, (int64_t)rint(a[i].device));
		}
		c += 2;
		ta_table_set_int(t, r, c++, (int64_t)rint(a[i].self_host));
		ta_table_set_int(t, r, c++, (int64_t)rint(a[i].host));
		ta_table_set_text(t, r, c++, a[i].tc_eligible ? "Yes" : "No");
		ta_table_set_real(t, r, c++, a[i].self_device > 0 ?
				  tb_round2(100 * (a[i].tc_self / a[i].self_device)) : 0);
		ta_table_set_real(t, r, c, a[i].device > 0 ?
				  tb_round2(100 * (a[i].tc_total / a[i].device)) : 0);
	}
	free(a);
	ta_intern_free(keys);
}

/* one rank: its trees, then its rows */
static int rank_rows(sqlite3 *db, struct ta_table *t, int64_t rank, void *ctx,
		     struct ta_error *err)
{
	struct tb_forest f;

	if (tb_forest_build(db, rank, &f, err) < 0)
		return -1;
	emit(t, rank, &f, *(const int *)ctx);
	tb_forest_free(&f);
	return 0;
}

int ta_ops_tb_run(sqlite3 *db, const struct ta_query *q, int by_shape,
		  struct ta_table **out, struct ta_error *err)
{
	struct ta_table *t;

	if (by_shape)
		t = ta_table_new("Operators by input shape (the TensorBoard plugin's "
				 "Operator view)", cols, NCOLS);
	else
		t = ta_table_new("Operators (the TensorBoard plugin's Operator view)",
				 name_cols, NCOLS - 1);
	return tb_each_rank(db, q, t, rank_rows, &by_shape, out, err);
}
