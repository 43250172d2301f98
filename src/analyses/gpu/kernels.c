/* GPU kernel breakdown (hta-semantics §9.3, §9.4): time per kernel type,
 * overlaps included, and per kernel name with the long tail in "others". */
#include "analyses/common/intervals.h"
#include "analyses/common/topk.h"
#include "analyses/common/stats.h"
#include "ta_analyses.h"
#include "ta_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_kernels_opts ta_kernels_defaults = { 0, 10, 0.8, 1 };

static const char *kind_name(int kind)
{
	switch (kind) {
	case TA_KIND_COMPUTE: return "COMPUTATION";
	case TA_KIND_COMM: return "COMMUNICATION";
	case TA_KIND_MEMORY: return "MEMORY";
	default: return "OTHER";
	}
}

/* "COMPUTATION overlapping COMMUNICATION": set bits, in bit order. */
static void label_text(int bits, char *buf, size_t len)
{
	int b;

	buf[0] = '\0';
	for (b = 1; b <= TA_KIND_MEMORY; b <<= 1) {
		if (!(bits & b))
			continue;
		if (buf[0])
			strncat(buf, " overlapping ", len - strlen(buf) - 1);
		strncat(buf, kind_name(b), len - strlen(buf) - 1);
	}
}

static const struct ta_col type_cols[] = {
	{ "kernel_type", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "total_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};

static int kind_slot(int kind)
{
	return kind == TA_KIND_COMPUTE ? 0 : kind == TA_KIND_COMM ? 1 :
	       kind == TA_KIND_MEMORY ? 2 : -1;
}

static struct ta_table *type_table(const struct ta_sweep *acc, int digits)
{
	struct ta_table *t = ta_table_new("GPU time by kernel type", type_cols, 3);
	int64_t total = 0;
	int order[TA_SWEEP_LABELS], n = 0, i, j;

	for (i = 1; i < TA_SWEEP_LABELS; i++)
		if (acc->seen[i]) {
			order[n++] = i;
			total += acc->dur[i];
		}
	for (i = 1; i < n; i++) /* by time, descending; stable */
		for (j = i; j > 0 && acc->dur[order[j]] > acc->dur[order[j - 1]]; j--) {
			int tmp = order[j];

			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	for (i = 0; i < n; i++) {
		size_t r = ta_table_add_row(t);
		char label[128];
		double share = total ? (double)acc->dur[order[i]] / (double)total : NAN;

		label_text(order[i], label, sizeof(label));
		ta_table_set_text(t, r, 0, label);
		ta_table_set_real(t, r, 1, (double)acc->dur[order[i]] / 1000.0);
		ta_table_set_real(t, r, 2, ta_round(share * 100, digits));
	}
	return t;
}

static int run_by_type(sqlite3 *db, const struct ta_kernels_opts *o,
		       const struct ta_rules *R, struct ta_table **out,
		       struct ta_error *err)
{
	static const int bits[] = { TA_KIND_COMPUTE, TA_KIND_COMM, TA_KIND_MEMORY };
	struct ta_sweeper sw;
	sqlite3_stmt *st = NULL;
	int nkinds = o->include_memory ? 3 : 2, rc;
	int64_t rank = 0;
	int have = 0;

	/* over each rank's analysis window, as temporal */
	if (ta_db_prepare(db, "SELECT rank, ts, dur, kind FROM dev_win"
			  " ORDER BY rank, sort_ts", &st, err) < 0)
		return -1;
	/* one sweep per rank, their label times added up */
	ta_sweeper_init(&sw, bits, (size_t)nkinds, R->sweep_trunc_us,
			!ta_model_negative_dur(db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int slot = kind_slot(sqlite3_column_int(st, 3));

		if (have && sqlite3_column_int64(st, 0) != rank)
			ta_sweeper_reset(&sw);
		rank = sqlite3_column_int64(st, 0);
		have = 1;
		if (slot >= 0 && slot < nkinds)
			ta_sweeper_add(&sw, (size_t)slot, sqlite3_column_int64(st, 1),
				       sqlite3_column_int64(st, 2));
	}
	ta_sweeper_finish(&sw);
	sqlite3_finalize(st);
	ta_sweeper_free(&sw);
	if (rc != SQLITE_DONE) {
		ta_db_failed(db, err);
		return -1;
	}
	*out = type_table(&sw.out, R->hta_arithmetic ? 1 : 2);
	return 0;
}

struct ta_table *ta_kernels_types_join(struct ta_table *t, void *ctx)
{
	struct ta_sweep acc;
	struct ta_table *joined;
	char label[128];
	size_t r;
	int i;

	(void)ctx;
	memset(&acc, 0, sizeof(acc));
	for (r = 0; r < t->nrows; r++) {
		const char *name = ta_table_cell(t, r, 0)->s;
		double us = ta_table_cell(t, r, 1)->d;

		for (i = 1; i < TA_SWEEP_LABELS; i++) {
			label_text(i, label, sizeof(label));
			if (name && strcmp(label, name) == 0)
				break;
		}
		if (i == TA_SWEEP_LABELS)
			continue;
		/* us is ns / 1000.0: times 1000, rounded, gives the ns back */
		acc.dur[i] += llround(us * 1000.0);
		acc.seen[i] = 1;
	}
	joined = type_table(&acc, 2); /* shards: the default rules */
	ta_buf_add(&joined->notes, t->notes.s ? t->notes.s : "", t->notes.len);
	ta_buf_add(&joined->warnings, t->warnings.s ? t->warnings.s : "", t->warnings.len);
	ta_table_free(t);
	return joined;
}

static int cmp_out(const void *x, const void *y)
{
	const struct out_row *a = x, *b = y;
	int c = strcmp(kind_name(a->kind), kind_name(b->kind));

	if (c == 0)
		c = strcmp(a->a.name, b->a.name);
	if (c == 0 && a->rank != b->rank)
		c = a->rank < b->rank ? -1 : 1;
	if (c == 0)
		c = a->seq < b->seq ? -1 : a->seq > b->seq;
	return c;
}

/* Default: the order text shows, in every format: by rank and type, the
 * costliest first, by name among equals, "others" last. */
static int cmp_shown(const void *x, const void *y)
{
	const struct out_row *a = x, *b = y;
	int oa = strcmp(a->a.name, "others") == 0, ob = strcmp(b->a.name, "others") == 0;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (oa != ob)
		return oa - ob;
	if (a->a.sum != b->a.sum)
		return a->a.sum > b->a.sum ? -1 : 1;
	return strcmp(a->a.name, b->a.name);
}

/* HTA's columns; then, by default, the TensorBoard plugin's kernel view:
 * blocks per SM and est. achieved occupancy (Kineto's, each weighted by
 * the time of the calls it is known for; calls whose occupancy Kineto
 * could not compute are counted, not averaged in as 0) and whether the
 * name is a tensor-core kernel ("others": empty) */
static const struct ta_col kernel_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "kernel_type", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
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
#define HTA_KERNEL_COLS 9
#define NKERNEL_COLS (sizeof(kernel_cols) / sizeof(*kernel_cols))

static void launch_stats(struct ta_table *t, size_t r, const struct out_row *w)
{
	const struct agg *a = &w->a;

	if (a->bpsm_ns > 0)
		ta_table_set_real(t, r, 9, a->bpsm_sum / a->bpsm_ns);
	if (a->occ_ns > 0)
		ta_table_set_real(t, r, 10, a->occ_sum / a->occ_ns);
	ta_table_set_int(t, r, 11, a->occ_unknown);
	if (strcmp(a->name, "others") != 0)
		ta_table_set_text(t, r, 12, w->kind == TA_KIND_MEMORY ? "n/a" :
				  ta_is_tensor_core(a->name) ? "yes" : "no");
}

static struct ta_table *kernel_table(struct out_rows *o, int hta_order, int launch)
{
	struct ta_table *t = ta_table_new("GPU kernels", kernel_cols,
					  launch ? NKERNEL_COLS : HTA_KERNEL_COLS);
	size_t i;

	ta_qsort(o->v, o->n, sizeof(*o->v), hta_order ? cmp_out : cmp_shown);
	for (i = 0; i < o->n; i++) {
		const struct out_row *w = &o->v[i];
		size_t r = ta_table_add_row(t);

		ta_table_set_int(t, r, 0, w->rank);
		ta_table_set_text(t, r, 1, kind_name(w->kind));
		ta_table_set_text(t, r, 2, w->a.name);
		ta_topk_set_stats(t, r, 3, w);
		if (launch)
			launch_stats(t, r, w);
		free(w->a.name);
	}
	free(o->v);
	return t;
}

/* One call into its name's statistics, with its launch figures (not
 * for copies and sets); an absent occupancy is neither known nor not. */
static void launch_row(struct agg *a, int kind, sqlite3_stmt *st)
{
	double dur = (double)sqlite3_column_int64(st, 3);
	int has_occ = sqlite3_column_type(st, 5) != SQLITE_NULL;

	ta_agg_add(a, dur);
	if (kind != TA_KIND_MEMORY)
		ta_agg_launch(a, dur, sqlite3_column_double(st, 4), has_occ,
			      sqlite3_column_double(st, 5),
			      has_occ && ta_occupancy_unknown(sqlite3_column_double(st, 5),
							      sqlite3_column_int64(st, 6)));
}

struct name_list {
	struct agg_list l;
	int64_t rank;
	int kind;
};

static void flush_names(struct name_list *l, const struct ta_kernels_opts *o,
			int totals, struct out_rows *out)
{
	if (l->l.n)
		ta_topk_group(l->l.v, l->l.n, l->rank, l->kind, o->top,
			      o->duration_ratio, totals, out);
	ta_agg_list_clear(&l->l);
}

static int run_by_kernel(sqlite3 *db, const struct ta_kernels_opts *o,
			 const struct ta_rules *R, struct ta_table **out,
			 struct ta_error *err)
{
	struct name_list l = { { NULL, 0, 0 }, 0, 0 };
	struct out_rows rows = { 0 };
	sqlite3_stmt *st = NULL;
	int rc;

	/* type order COMPUTATION, COMMUNICATION, MEMORY = kind 1, 2, 4 */
	if (ta_db_prepare(db, "SELECT d.rank, d.kind, n.name, d.dur, d.blocks_per_sm,"
			  " d.occupancy, d.shared_mem FROM dev_win d"
			  " JOIN label n ON n.name_id = d.name"
			  " WHERE d.kind IN (" TA_SQL(TA_KIND_COMPUTE) ", " TA_SQL(TA_KIND_COMM) ", ?)"
			  " ORDER BY d.rank, d.kind, n.name",
			  &st, err) < 0)
		return -1;
	sqlite3_bind_int(st, 1, o->include_memory ? TA_KIND_MEMORY : 1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);
		int kind = sqlite3_column_int(st, 1);
		const char *name = (const char *)sqlite3_column_text(st, 2);

		if (l.l.n && (rank != l.rank || kind != l.kind))
			flush_names(&l, o, R->topk_totals, &rows);
		l.rank = rank;
		l.kind = kind;
		launch_row(ta_agg_list_name(&l.l, name), kind, st);
	}
	flush_names(&l, o, R->topk_totals, &rows);
	free(l.l.v);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ta_db_failed(db, err);
		for (size_t i = 0; i < rows.n; i++)
			free(rows.v[i].a.name);
		free(rows.v);
		return -1;
	}
	*out = kernel_table(&rows, R->hta_order, R->kernel_launch_stats);
	return 0;
}

int ta_kernels_run(sqlite3 *db, const struct ta_query *q,
		   const struct ta_kernels_opts *o, struct ta_table **out,
		   struct ta_error *err)
{
	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV, err) < 0)
		return -1;
	if (o->by_type)
		return run_by_type(db, o, ta_rules(q), out, err);
	return run_by_kernel(db, o, ta_rules(q), out, err);
}
