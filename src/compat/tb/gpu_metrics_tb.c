/* overview --tb-compat --summary: the TensorBoard plugin's GPU Summary
 * (gpu_metrics_parser.py, tensor_cores_parser.py, kernel_parser.py,
 * run_generator.py:57-63 and 413-431; kineto 790be856), number for
 * number, in the long form tb_oracle.py writes: per rank and GPU (a
 * kernel's args.device, ascending), the device's name, memory and compute
 * capability (its deviceProperties entry at the index of its id), then
 * - GPU Utilization: the merged kernel ranges inside the steps window
 *   (first step's start to last step's end, as the step parser leaves
 *   them) over the window;
 * - Est. SM Efficiency: the kernels' blocks per SM (those above 0) summed
 *   where they overlap and capped at 1, over the window (idle counts 0);
 *   shown when some lie inside it;
 * - Est. Achieved Occupancy: the occupancies (those of 0 or more) weighted
 *   by the part of each kernel inside the window, idle not counted;
 * - Kernel Time using Tensor Cores: over the kernels of operators' own
 *   runtime calls (optree_tb.c), by the plugin's 2019 name list;
 * and the counts of kernels with a blocks per SM and an occupancy; then
 * for the rank, the Kernel view's tensor-core share of all kernels (when
 * it has a kernel not a collective's), the eligible ops' ratio the
 * recommendations read, and the tooltip row. value is what the page
 * shows (Python's str of the rounded float), raw the number behind it. */
#include "ta_analyses.h"
#include "ta_db.h"
#include "optree_tb.h"
#include "overview_tb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "gpu", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "title", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "value", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "raw", TA_COL_REAL, TA_UNIT_NONE, 0 },
};
#define NCOLS (sizeof(cols) / sizeof(*cols))

/* Python's repr of a float: the shortest digits that read back as x,
 * fixed notation from 1e-4 to 1e16, else an exponent of two digits or
 * more; an integral value keeps its ".0". */
static void py_repr(double x, char *out, size_t cap)
{
	char b[64], digits[32];
	int p, e, nd = 0, neg = x < 0;
	const char *c;
	size_t o = 0;

	if (!isfinite(x)) {
		snprintf(out, cap, "%s", isnan(x) ? "nan" : x < 0 ? "-inf" : "inf");
		return;
	}
	if (x == 0) {
		snprintf(out, cap, "%s", signbit(x) ? "-0.0" : "0.0");
		return;
	}
	for (p = 0; p < 17; p++) {
		snprintf(b, sizeof(b), "%.*e", p, fabs(x));
		if (strtod(b, NULL) == fabs(x))
			break;
	}
	for (c = b; *c && *c != 'e'; c++)
		if (*c >= '0' && *c <= '9')
			digits[nd++] = *c;
	e = atoi(c + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
#define PUT(ch) do { if (o + 1 < cap) out[o++] = (ch); } while (0)
	if (neg)
		PUT('-');
	if (e >= -4 && e < 16) {
		if (e >= 0) {
			for (int i = 0; i <= e; i++)
				PUT(i < nd ? digits[i] : '0');
			PUT('.');
			if (nd > e + 1)
				for (int i = e + 1; i < nd; i++)
					PUT(digits[i]);
			else
				PUT('0');
		} else {
			PUT('0');
			PUT('.');
			for (int i = 0; i < -e - 1; i++)
				PUT('0');
			for (int i = 0; i < nd; i++)
				PUT(digits[i]);
		}
		out[o] = '\0';
	} else {
		PUT(digits[0]);
		if (nd > 1) {
			PUT('.');
			for (int i = 1; i < nd; i++)
				PUT(digits[i]);
		}
		out[o] = '\0';
		snprintf(out + o, cap > o ? cap - o : 0, "e%c%02d", e < 0 ? '-' : '+', abs(e));
	}
#undef PUT
}

static void row(struct ta_table *t, int64_t rank, const char *gpu, const char *title,
		const char *value, int has_raw, double raw)
{
	size_t r = ta_table_add_row(t);

	ta_table_set_int(t, r, 0, rank);
	ta_table_set_text(t, r, 1, gpu);
	ta_table_set_text(t, r, 2, title);
	ta_table_set_text(t, r, 3, value);
	if (has_raw)
		ta_table_set_real(t, r, 4, raw);
}

/* a percentage as the page shows it: '{} %'.format(round(x, 2)) */
static void pct_row(struct ta_table *t, int64_t rank, const char *gpu, const char *title,
		    double shown, double raw)
{
	char v[64], s[80];

	py_repr(tb_round2(shown), v, sizeof(v));
	snprintf(s, sizeof(s), "%s %%", v);
	row(t, rank, gpu, title, s, 1, raw);
}

/* ---- one GPU's kernels ---- */

struct span { double a, b, v; size_t at; };

struct gpu {
	int64_t id;
	struct span *k, *bpsm, *occ;    /* all kernels; with a blocks per SM
					 * above 0; with an occupancy >= 0 */
	size_t nk, nb, no, ck, cb, co;
};

static void add_span(struct span **v, size_t *n, size_t *cap, double a, double b, double val)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*v = ta_xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[*n] = (struct span){ a, b, val, *n };
	(*n)++;
}

static int by_start(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

/* merge_ranges then intersection with [s, e], summed */
static double busy(struct span *k, size_t n, double s, double e)
{
	double sum = 0, ma = 0, mb = 0;
	int open = 0;

	ta_qsort(k, n, sizeof(*k), by_start);
	for (size_t i = 0; i <= n; i++) {
		if (i < n && open && k[i].b <= mb)
			continue;
		if (i < n && open && k[i].a <= mb) {
			mb = k[i].b;
			continue;
		}
		if (open && fmin(mb, e) > fmax(ma, s))
			sum += fmin(mb, e) - fmax(ma, s);
		if (i < n)
			ma = k[i].a, mb = k[i].b, open = 1;
	}
	return sum;
}

struct endpoint { double t; int end; double v; size_t at; };

static int by_time(const void *x, const void *y)
{
	const struct endpoint *a = x, *b = y;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->end != b->end)
		return a->end - b->end;
	return a->at < b->at ? -1 : a->at > b->at;
}

/* merge_ranges_with_value, each merged piece clipped to [s, e]
 * (intersection_ranges_lists_with_value with one range) and weighted;
 * *any: a piece lay inside */
static double sm_efficiency(const struct span *k, size_t n, double s, double e, int *any)
{
	struct endpoint *p = ta_xmalloc((2 * n + 1) * sizeof(*p));
	double last_t, last_v, sum = 0;

	*any = 0;
	if (!n) {
		free(p);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		p[2 * i] = (struct endpoint){ k[i].a, 0, k[i].v, 2 * i };
		p[2 * i + 1] = (struct endpoint){ k[i].b, 1, k[i].v, 2 * i + 1 };
	}
	ta_qsort(p, 2 * n, sizeof(*p), by_time);
	last_t = p[0].t;
	last_v = p[0].v;
	for (size_t i = 1; i < 2 * n; i++) {
		if (p[i].t > last_t && last_v > 0.0) {
			double a = fmax(last_t, s), b = fmin(p[i].t, e);

			/* the intersection keeps a piece overlapping the window,
			 * clipped; one just touching it is not kept */
			if (p[i].t > s && last_t < e && b > a) {
				sum += fmin(last_v, 1.0) * (b - a);
				*any = 1;
			}
		}
		last_t = p[i].t;
		last_v += p[i].end ? -p[i].v : p[i].v;
	}
	free(p);
	return sum / (e - s);
}

static int occupancy(const struct span *k, size_t n, double s, double e, double *avg)
{
	double total = 0, sum = 0;

	for (size_t i = 0; i < n; i++) {
		double a = fmax(k[i].a, s), b = fmin(k[i].b, e);

		if (a < b) {
			sum += k[i].v * (b - a);
			total += b - a;
		}
	}
	if (total > 0)
		*avg = sum / total;
	return total > 0;
}

/* ---- one rank ---- */

struct rank_gpus {
	struct gpu *g;
	size_t n;
	double tc_all, all;   /* the Kernel view's pie */
};

static struct gpu *gpu_of(struct rank_gpus *r, int64_t id)
{
	size_t i;

	for (i = 0; i < r->n && r->g[i].id != id; i++)
		;
	if (i == r->n) {
		r->g = ta_xrealloc(r->g, (r->n + 1) * sizeof(*r->g));
		memset(&r->g[r->n], 0, sizeof(*r->g));
		r->g[r->n++].id = id;
	}
	return &r->g[i];
}

static int by_id(const void *x, const void *y)
{
	const struct gpu *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

static int load(sqlite3 *db, int64_t rank, struct rank_gpus *r, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_db_prepare(db, "SELECT ts, dur, device, blocks_per_sm, occupancy, name"
			  " FROM trace_x WHERE rank = ?1 AND lower(cat) = 'kernel'"
			  " ORDER BY ts, idx", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		double a = (double)sqlite3_column_int64(st, 0) / 1000.0;
		double b = a + (double)sqlite3_column_int64(st, 1) / 1000.0;
		const char *name = (const char *)sqlite3_column_text(st, 5);
		struct gpu *g;

		double dur = (double)sqlite3_column_int64(st, 1) / 1000.0;

		/* the Kernel view sums the durations as written, not end - start */
		r->all += dur;
		r->tc_all += name && tb_tc_kernel(name) ? dur : 0;
		if (sqlite3_column_type(st, 2) != SQLITE_INTEGER)
			continue;   /* no args.device: no GPU of its own */
		g = gpu_of(r, sqlite3_column_int64(st, 2));
		add_span(&g->k, &g->nk, &g->ck, a, b, 0);
		if (sqlite3_column_type(st, 3) != SQLITE_NULL && sqlite3_column_double(st, 3) > 0)
			add_span(&g->bpsm, &g->nb, &g->cb, a, b, sqlite3_column_double(st, 3));
		if (sqlite3_column_type(st, 4) != SQLITE_NULL && sqlite3_column_double(st, 4) >= 0)
			add_span(&g->occ, &g->no, &g->co, a, b, sqlite3_column_double(st, 4));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ta_db_failed(db, err);
		return -1;
	}
	ta_qsort(r->g, r->n, sizeof(*r->g), by_id);
	return 0;
}

static void device_rows(sqlite3 *db, struct ta_table *t, int64_t rank, const char *gpu,
			int64_t id)
{
	sqlite3_stmt *st = NULL;
	struct ta_error e = { 0 };

	if (ta_db_prepare(db, "SELECT name, mem_bytes, cc_major, cc_minor FROM device_props"
			  " WHERE rank = ?1 AND pos = ?2", &st, &e) < 0)
		return;
	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_int64(st, 2, id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		char v[96], m[64];

		if (sqlite3_column_type(st, 0) != SQLITE_NULL)
			row(t, rank, gpu, "Name", (const char *)sqlite3_column_text(st, 0), 0, 0);
		if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
			py_repr(tb_round2(sqlite3_column_double(st, 1) / 1073741824.0), m, sizeof(m));
			snprintf(v, sizeof(v), "%s GB", m);
			row(t, rank, gpu, "Memory", v, 0, 0);
		}
		if (sqlite3_column_type(st, 2) != SQLITE_NULL &&
		    sqlite3_column_type(st, 3) != SQLITE_NULL) {
			snprintf(v, sizeof(v), "%s.%s", (const char *)sqlite3_column_text(st, 2),
				 (const char *)sqlite3_column_text(st, 3));
			row(t, rank, gpu, "Compute Capability", v, 0, 0);
		}
	}
	sqlite3_finalize(st);
}

static const struct tb_gpu_tc *tc_of(const struct tb_forest *f, int64_t id)
{
	for (size_t i = 0; i < f->ngpu_tc; i++)
		if (f->gpu_tc[i].device == id)
			return &f->gpu_tc[i];
	return NULL;
}

static int rank_rows(sqlite3 *db, struct ta_table *t, int64_t rank, void *ctx,
		     struct ta_error *err)
{
	struct rank_gpus r = { NULL, 0, 0, 0 };
	struct tb_forest f;
	double s = 0, e = 0;
	int has;
	char gpu[32], v[64];

	(void)ctx;
	if ((has = tb_steps_window(db, rank, &s, &e, err)) < 0 || load(db, rank, &r, err) < 0)
		return -1;
	if (tb_forest_build(db, rank, &f, err) < 0) {
		has = -1;
		goto done;
	}
	/* no GPU: no GPU Summary; a window of no length: the plugin divides
	 * by zero */
	if (!has || !r.n || !(e - s != 0))
		goto done_forest;
	for (size_t i = 0; i < r.n; i++) {
		struct gpu *g = &r.g[i];
		double avg = 0;
		int any;
		double sm = sm_efficiency(g->bpsm, g->nb, s, e, &any);

		snprintf(gpu, sizeof(gpu), "%lld", (long long)g->id);
		device_rows(db, t, rank, gpu, g->id);
		{
			double util = busy(g->k, g->nk, s, e) / (e - s);

			pct_row(t, rank, gpu, "GPU Utilization", util * 100, util);
		}
		if (any)
			pct_row(t, rank, gpu, "Est. SM Efficiency", sm * 100, sm);
		if (occupancy(g->occ, g->no, s, e, &avg))
			pct_row(t, rank, gpu, "Est. Achieved Occupancy", avg, avg);
		if (f.ops_have_kernel) {   /* else the plugin's ratios stay None */
			const struct tb_gpu_tc *c = tc_of(&f, g->id);
			double ratio = c && c->total > 0 ? c->tc / c->total : 0.0;

			pct_row(t, rank, gpu, "Kernel Time using Tensor Cores", ratio * 100, ratio);
		}
	}
	for (size_t i = 0; i < r.n; i++) {
		snprintf(gpu, sizeof(gpu), "%lld", (long long)r.g[i].id);
		snprintf(v, sizeof(v), "%zu", r.g[i].nb);
		row(t, rank, gpu, "kernels with 'blocks per SM' (count)", v, 1, (double)r.g[i].nb);
		snprintf(v, sizeof(v), "%zu", r.g[i].no);
		row(t, rank, gpu, "kernels with 'est. achieved occupancy %' (count)", v, 1,
		    (double)r.g[i].no);
	}
	if (f.has_kernel) {
		double ratio = r.all > 0 ? r.tc_all / r.all : 0.0;

		pct_row(t, rank, "all", "Kernel view: Tensor Cores Utilization pie "
			"(Using Tensor Cores)", 100 * ratio, ratio);
	}
	{
		double ratio = f.ops_kernel_us > 0 ? f.bottom_eligible_us / f.ops_kernel_us : 0.0;

		pct_row(t, rank, "all", "TC-eligible ops kernel ratio (recommendation input)",
			100 * ratio, ratio);
	}
	row(t, rank, "all", "tooltip", "", 0, 0);
done_forest:
	tb_forest_free(&f);
done:
	for (size_t i = 0; i < r.n; i++) {
		free(r.g[i].k);
		free(r.g[i].bpsm);
		free(r.g[i].occ);
	}
	free(r.g);
	return has < 0 ? -1 : 0;
}

int ta_gpu_metrics_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
			  struct ta_error *err)
{
	return tb_each_rank(db, q, ta_table_new("GPU Summary (the TensorBoard plugin's Overview)",
						cols, NCOLS), rank_rows, NULL, out, err);
}
