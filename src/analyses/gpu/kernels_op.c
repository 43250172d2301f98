/* kernels --by op: the TensorBoard plugin's Kernel + Op table, right on
 * today's traces: per rank, kernel name and the CPU op that launched it
 * (the innermost op on the launch call's thread holding the call, as
 * launch --by-op finds it; every launching API counts, the driver API's
 * cuLaunchKernelEx of cuBLASLt and cuDNN too, where the plugin lost
 * them), the calls and their time, blocks per SM and est. achieved
 * occupancy (time-weighted, those Kineto could not compute counted, not
 * averaged in) and whether it is a tensor-core kernel. Over the analysis
 * window, as the per-name table; a kernel no call launched, or whose call
 * no op holds, has an empty op. */
#include "analyses/common/op_cover.h"
#include "analyses/common/topk.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_intern.h"
#include "ta_model.h"

#include <stdlib.h>
#include <string.h>

/* A label's text (valid until the next call). */
static const char *label_of(sqlite3_stmt *st, int64_t id)
{
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, id);
	return sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
}

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "op", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "count", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "total_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "max_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "min_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "std_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "mean_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "blocks_per_sm", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "occupancy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "occupancy_unknown", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "tensor_core", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};
#define NCOLS (sizeof(cols) / sizeof(*cols))

/* every CPU op (no Python frame), by start */
static const char ops_sql[] =
	"SELECT h.tid, h.ts, h.ts + h.dur, h.name FROM host h WHERE h.rank = ?1"
	" AND h.role = " TA_SQL(TA_ROLE_CPU_OP) " AND h.cat IS NOT " TA_CAT_PYTHON
	" AND h.ts IS NOT NULL AND h.dur IS NOT NULL ORDER BY h.ts, h.idx";
/* the window's kernels with the call that launched them (its last, as
 * the model links them), by the call's start */
static const char kernels_sql[] =
	"SELECT d.name, d.dur, d.blocks_per_sm, d.occupancy, d.shared_mem, c.tid, c.ts,"
	" c.ts + c.dur FROM dev_win d LEFT JOIN launch c ON c.rank = d.rank"
	" AND c.correlation = d.correlation"
	" WHERE d.rank = ?1 AND d.kind IN (" TA_SQL(TA_KIND_COMPUTE) ", " TA_SQL(TA_KIND_COMM) ")"
	" ORDER BY c.ts IS NULL, c.ts, d.sort_ts";

struct group {
	int64_t name, op;   /* label ids; op -1: none */
	char *name_s, *op_s;   /* their text: ties sorted by it, as ids differ
				* between one database and a shard (-j) */
	struct agg a;
};

static int by_total(const void *x, const void *y)
{
	const struct group *a = x, *b = y;
	int c;

	if (a->a.sum != b->a.sum)
		return a->a.sum > b->a.sum ? -1 : 1;
	c = strcmp(a->name_s ? a->name_s : "", b->name_s ? b->name_s : "");
	if (c)
		return c;
	if ((a->op < 0) != (b->op < 0))
		return a->op < 0 ? -1 : 1;
	return strcmp(a->op_s ? a->op_s : "", b->op_s ? b->op_s : "");
}

static int one_rank(sqlite3 *db, int64_t rank, struct ta_table *t, sqlite3_stmt *label,
		    struct ta_error *err)
{
	struct ta_op_cover ops;
	struct ta_intern *keys = ta_intern_new();
	struct group *g = NULL;
	size_t ng = 0, capg = 0, i;
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_op_cover_load(db, ops_sql, rank, &ops, err) < 0) {
		ta_intern_free(keys);
		return -1;
	}
	if (ta_db_prepare(db, kernels_sql, &st, err) < 0) {
		ta_op_cover_free(&ops);
		ta_intern_free(keys);
		return -1;
	}
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct ta_op *o = NULL;
		int64_t key[2], id;
		double dur = (double)sqlite3_column_int64(st, 1);
		int has_occ = sqlite3_column_type(st, 3) != SQLITE_NULL, is_new;

		if (sqlite3_column_type(st, 6) != SQLITE_NULL)
			o = ta_op_cover_find(&ops, sqlite3_column_int64(st, 5),
					     sqlite3_column_int64(st, 6),
					     sqlite3_column_int64(st, 7), 0);
		key[0] = sqlite3_column_int64(st, 0);
		key[1] = o ? o->name : -1;
		id = ta_intern(keys, (const char *)key, sizeof(key), &is_new) - 1;
		if (is_new) {
			if (ng == capg) {
				capg = capg ? 2 * capg : 256;
				g = ta_xrealloc(g, capg * sizeof(*g));
			}
			memset(&g[ng], 0, sizeof(g[ng]));
			g[ng].name = key[0];
			g[ng].op = key[1];
			ng++;
		}
		ta_agg_add(&g[id].a, dur);
		ta_agg_launch(&g[id].a, dur, sqlite3_column_double(st, 2), has_occ,
			      sqlite3_column_double(st, 3),
			      has_occ && ta_occupancy_unknown(sqlite3_column_double(st, 3),
							      sqlite3_column_int64(st, 4)));
	}
	sqlite3_finalize(st);
	ta_op_cover_free(&ops);
	ta_intern_free(keys);
	if (ta_db_done(db, rc, err) < 0) {
		free(g);
		return -1;
	}
	for (i = 0; i < ng; i++) {
		const char *x = label_of(label, g[i].name);

		g[i].name_s = x ? ta_xstrdup(x) : NULL;
		x = g[i].op >= 0 ? label_of(label, g[i].op) : NULL;
		g[i].op_s = x ? ta_xstrdup(x) : NULL;
	}
	ta_qsort(g, ng, sizeof(*g), by_total);
	for (i = 0; i < ng; i++) {
		const struct agg *a = &g[i].a;
		size_t r = ta_table_add_row(t);
		const char *name = g[i].name_s;

		ta_table_set_int(t, r, 0, rank);
		ta_table_set_text(t, r, 1, name);
		ta_table_set_text(t, r, 12, name && ta_is_tensor_core(name) ? "yes" : "no");
		if (g[i].op >= 0)
			ta_table_set_text(t, r, 2, g[i].op_s);
		ta_table_set_int(t, r, 3, a->count);
		ta_table_set_real(t, r, 4, a->sum / 1000.0);
		ta_table_set_real(t, r, 5, a->max / 1000.0);
		ta_table_set_real(t, r, 6, a->min / 1000.0);
		ta_table_set_real(t, r, 7, ta_agg_std(a) / 1000.0);
		ta_table_set_real(t, r, 8, a->mean / 1000.0);
		if (a->bpsm_ns > 0)
			ta_table_set_real(t, r, 9, a->bpsm_sum / a->bpsm_ns);
		if (a->occ_ns > 0)
			ta_table_set_real(t, r, 10, a->occ_sum / a->occ_ns);
		ta_table_set_int(t, r, 11, a->occ_unknown);
	}
	for (i = 0; i < ng; i++) {
		free(g[i].name_s);
		free(g[i].op_s);
	}
	free(g);
	return 0;
}

int ta_kernels_by_op_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
			 struct ta_error *err)
{
	sqlite3_stmt *st = NULL, *label = NULL;
	struct ta_table *t;
	int rc;

	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV | TA_NEED_HOST, err) < 0 ||
	    ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?1", &label, err) < 0)
		return -1;
	if (ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank", &st, err) < 0) {
		sqlite3_finalize(label);
		return -1;
	}
	t = ta_table_new("GPU kernels by launching op", cols, NCOLS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (one_rank(db, sqlite3_column_int64(st, 0), t, label, err) < 0) {
			sqlite3_finalize(st);
			sqlite3_finalize(label);
			ta_table_free(t);
			return -1;
		}
	sqlite3_finalize(st);
	sqlite3_finalize(label);
	if (ta_db_done(db, rc, err) < 0) {
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}
