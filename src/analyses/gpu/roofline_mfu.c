/* The roofline per step (MFU) and per rank (what text says of it). A
 * step's FLOPs are those of the calls the host launched in it, its time
 * its window (ANALYSIS WINDOW in the man page); MFU is against the peak
 * of the type that did most of its FLOPs. */
#include "roofline_int.h"
#include "analyses/common/intervals.h"
#include "ta_intern.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const dtype_names[TA_DT_N] = { "fp64", "fp32", "tf32", "bf16",
	"fp16", "fp8", "int8" };

/* What a stretch of a rank's host time launched: its known FLOPs, the
 * type that did most of them, its counted calls' GPU time, calls without
 * shapes. */
struct stretch {
	double flops, by_type[TA_DT_N];
	int64_t gpu_ns;
	size_t unknown;
};

static void sum_calls(const struct ta_roof_ctx *c, int64_t rank, int64_t ts,
		      int64_t end, struct stretch *s)
{
	size_t i;

	for (i = ta_roof_first_at(c, rank, ts); i < c->r.ncalls; i++) {
		const struct ta_roof_call *k = c->by_time[i];
		int d;

		if (k->rank != rank || k->ts >= end)
			break;
		s->gpu_ns = ta_add_sat(s->gpu_ns, k->gpu_ns);
		if (!k->known) {
			s->unknown++;
			continue;
		}
		s->flops += k->work.flops;
		if ((d = ta_peaks_dtype(k->work.dtype)) >= 0)
			s->by_type[d] += k->work.flops;
	}
}

/* The peak FLOP/s of the type that did most of the work; 0 unknown. */
static double main_peak(const struct ta_roof_gpu *g, const struct stretch *s, int *type)
{
	int k, best = -1;

	for (k = 0; k < TA_DT_N; k++)
		if (s->by_type[k] > 0 && (best < 0 || s->by_type[k] > s->by_type[best]))
			best = k;
	*type = best;
	if (best < 0 || !g || !g->known)
		return 0;
	return g->p.tflops[best] * 1e12;
}

/* A rank's GPU activities by start, read once (a query per step scanned
 * every row of the trace: 84 s on a 200 MB one); reach[i]: the latest end
 * of 0..i, so the first that may reach into a window is found by halving. */
struct gpu_work {
	sqlite3_stmt *st;
	int64_t rank;
	int64_t *ts, *end, *reach;
	size_t n, cap;
};

static const char gpu_sql[] = "SELECT ts, ts + dur FROM gpu WHERE rank = ? ORDER BY ts";

static void gpu_work_load(struct gpu_work *g, int64_t rank)
{
	g->n = 0;
	g->rank = rank;
	sqlite3_bind_int64(g->st, 1, rank);
	while (sqlite3_step(g->st) == SQLITE_ROW) {
		if (g->n == g->cap) {
			g->cap = g->cap ? 2 * g->cap : 1024;
			g->ts = ta_xrealloc(g->ts, g->cap * sizeof(*g->ts));
			g->end = ta_xrealloc(g->end, g->cap * sizeof(*g->end));
			g->reach = ta_xrealloc(g->reach, g->cap * sizeof(*g->reach));
		}
		g->ts[g->n] = sqlite3_column_int64(g->st, 0);
		g->end[g->n] = sqlite3_column_int64(g->st, 1);
		g->reach[g->n] = g->n && g->reach[g->n - 1] > g->end[g->n] ?
				 g->reach[g->n - 1] : g->end[g->n];
		g->n++;
	}
	sqlite3_reset(g->st);
}

static int gpu_work_open(sqlite3 *db, struct gpu_work *g, struct ta_error *err)
{
	memset(g, 0, sizeof(*g));
	g->rank = INT64_MIN;
	return ta_db_prepare(db, gpu_sql, &g->st, err);
}

static void gpu_work_close(struct gpu_work *g)
{
	sqlite3_finalize(g->st);
	free(g->ts);
	free(g->end);
	free(g->reach);
}

/* The GPU's busy time inside [a, b): the union of its activities; and
 * (kernels) the sum of their times there. */
static int64_t busy_ns(struct gpu_work *g, int64_t rank, int64_t a, int64_t b,
		       int64_t *kernels)
{
	struct ta_union u = { 0 };
	size_t lo = 0, hi, i;
	int64_t n;

	if (g->rank != rank)
		gpu_work_load(g, rank);
	for (hi = g->n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->reach[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < g->n && g->ts[i] < b; i++) {
		int64_t s = g->ts[i] > a ? g->ts[i] : a, e = g->end[i] < b ? g->end[i] : b;

		if (e <= s)
			continue;
		ta_union_add(&u, s, e - s);
		*kernels = ta_add_sat(*kernels, e - s);
	}
	n = ta_union_length(&u);
	ta_union_free(&u);
	return n;
}

/* ---- per step ---- */

static const struct ta_col step_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "flops", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "tflops", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "mfu_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "gpu_busy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "peak_tflops", TA_COL_REAL, TA_UNIT_NONE, 0 },
};

/* Each kept step: its window (step_win) and the calls the host made in
 * it (step_host). The steps are read once and each window looked up
 * (CROSS JOIN keeps that order): a step's number is computed from its
 * name, so the other way read every range of the rank for each step
 * (quadratic in steps: 1 s of report's 2.4 on 64 copies of a run). */
#define STEP_PAIRS "FROM step_host h CROSS JOIN step_win w" \
	" ON w.rank = h.rank AND w.step = h.step"
static const char steps_sql[] =
	"SELECT w.rank, w.step, w.ts, w.end_ts, h.ts, h.end_ts " STEP_PAIRS
	" ORDER BY w.rank, w.step";

/* A step's row; 1 where kernels ran and no counted op launched them. */
static int step_row(const struct ta_roof_ctx *c, struct ta_table *t, sqlite3_stmt *st,
		    struct gpu_work *busy)
{
	int64_t rank = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 2);
	int64_t end = sqlite3_column_int64(st, 3), kernels = 0;
	struct stretch s;
	size_t r = ta_table_add_row(t);
	double peak, secs = (double)(end - ts) * 1e-9;
	int type;

	memset(&s, 0, sizeof(s));
	sum_calls(c, rank, sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5), &s);
	ta_table_set_int(t, r, 0, rank);
	ta_table_set_int(t, r, 1, sqlite3_column_int64(st, 1));
	ta_table_set_real(t, r, 2, (double)(end - ts) / 1e3);
	if (end <= ts)
		return 0;
	ta_table_set_real(t, r, 6, 100.0 * (double)busy_ns(busy, rank, ts, end, &kernels) /
			  (double)(end - ts));
	if (s.flops <= 0 && s.unknown)
		return 0;   /* unknown, not 0 */
	/* kernels ran and no counted op launched them (a CUDA graph's
	 * replay records no ops): unknown, not 0 (helper-65: three graph
	 * steps read 0 FLOPs beside an eager one's 164 G) */
	if (s.flops <= 0 && kernels > 0)
		return 1;
	ta_roof_set_count(t, r, 3, s.flops);
	ta_table_set_real(t, r, 4, s.flops / secs / 1e12);
	if ((peak = main_peak(ta_roof_gpu_of(c, rank), &s, &type)) > 0) {
		ta_table_set_real(t, r, 5, 100 * s.flops / secs / peak);
		ta_table_set_real(t, r, 7, peak / 1e12);
	}
	return 0;
}

int ta_roof_by_step(sqlite3 *db, struct ta_roof_ctx *c, struct ta_table **out,
		    struct ta_error *err)
{
	struct ta_table *t = ta_table_new("MFU per step", step_cols, 8);
	sqlite3_stmt *st = NULL;
	struct gpu_work busy;
	size_t opless = 0;
	int rc;

	if (gpu_work_open(db, &busy, err) < 0 || ta_db_prepare(db, steps_sql, &st, err) < 0) {
		gpu_work_close(&busy);
		ta_table_free(t);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		opless += (size_t)step_row(c, t, st, &busy);
	sqlite3_finalize(st);
	gpu_work_close(&busy);
	ta_table_warn_sum(t, opless, 0, "{n} step{s} ran kernels that no op with a "
			  "FLOP formula launched (a CUDA graph's replay records no ops): "
			  "their FLOPs are unknown, left empty (the MFU over the steps "
			  "counts none of their work)");
	if (!t->nrows)
		ta_table_warn(t, "no kept steps (no ProfilerStep#N, or --window span): "
			      "--by step has no rows");
	*out = t;
	return ta_db_done(db, rc, err);
}

/* ---- per rank: its MFU, and each family of ops against its roof ---- */

static const char *const families[] = { "GEMMs", "attention", "attention backward",
	"convolutions", "convolution backward" };
#define NFAM (sizeof(families) / sizeof(families[0]))

static size_t family(const char *op)
{
	if (strstr(op, "attention_backward"))
		return 2;
	if (strstr(op, "attention"))
		return 1;
	if (strstr(op, "convolution_backward"))
		return 4;
	return strstr(op, "conv") ? 3 : 0;
}

/* A family's pooled work, as a row of the per-op table pools its calls. */
struct fam_sum {
	double flops, bytes, by_type[TA_DT_N];
	int64_t gpu_ns;
};

static void fam_sums(const struct ta_roof_ctx *c, int64_t rank, struct fam_sum *f)
{
	size_t i;

	memset(f, 0, NFAM * sizeof(*f));
	for (i = ta_roof_first_at(c, rank, INT64_MIN); i < c->r.ncalls; i++) {
		const struct ta_roof_call *call = c->by_time[i];
		struct fam_sum *s;
		int d;

		if (call->rank != rank)
			break;
		if (!call->known || !call->in_window || call->gpu_ns <= 0)
			continue;   /* no kernel found: not in a row (warn_calls) */
		s = &f[family(call->op)];
		s->flops += call->work.flops;
		s->bytes += call->work.bytes;
		s->gpu_ns = ta_add_sat(s->gpu_ns, call->gpu_ns);
		if ((d = ta_peaks_dtype(call->work.dtype)) >= 0)
			s->by_type[d] += call->work.flops;
	}
}

/* Over the rank's kept steps (else its span): what they launched, their
 * windows' time, the GPU's busy time and kernel time in them. */
struct rank_total {
	struct stretch s;
	double secs, busy_s, kernel_s;
	size_t steps;
};

static int rank_total(sqlite3 *db, const struct ta_roof_ctx *c, int64_t rank,
		      struct rank_total *t, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct gpu_work busy;
	int rc;

	memset(t, 0, sizeof(*t));
	if (gpu_work_open(db, &busy, err) < 0 ||
	    ta_db_prepare(db, "SELECT w.ts, w.end_ts, h.ts, h.end_ts, 1 " STEP_PAIRS
			  " WHERE h.rank = ?1 UNION ALL SELECT ts, end_ts, -9e18, 9e18, 0"
			  " FROM span WHERE rank = ?1 AND NOT EXISTS (SELECT 1 FROM"
			  " step_win WHERE rank = ?1)", &st, err) < 0) {
		gpu_work_close(&busy);
		return -1;
	}
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t kernels = 0, a = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1);

		sum_calls(c, rank, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3), &t->s);
		t->secs += (double)(b - a) * 1e-9;
		t->busy_s += (double)busy_ns(&busy, rank, a, b, &kernels) * 1e-9;
		t->kernel_s += (double)kernels * 1e-9;
		t->steps += (size_t)sqlite3_column_int(st, 4);
	}
	sqlite3_finalize(st);
	gpu_work_close(&busy);
	return ta_db_done(db, rc, err);
}

/* A row "all" per rank (MFU, how busy its GPU was, the share of its
 * kernel time the counted ops cover) and one per family of ops (its
 * pooled intensity against its roof, as the per-op rows are). */
static const struct ta_col summary_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "what", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "gpu", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "steps", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "tflops", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "mfu_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "dtype", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "peak_tflops", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "busy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "gpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "roof_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "bound", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "unknown_calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "peak_gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "coverage_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	/* the kernel of most time that no counted op launched (Inductor's
	 * and users' Triton kernels, elementwise ops): what the rest is */
	{ "uncounted_top", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "uncounted_top_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

static void family_rows(const struct ta_roof_ctx *c, const struct ta_roof_gpu *g,
			struct ta_table *t)
{
	struct fam_sum f[NFAM];
	size_t k, r;

	fam_sums(c, g->rank, f);
	for (k = 0; k < NFAM; k++) {
		struct stretch s;
		double i, peak, at;
		int type;

		if (f[k].gpu_ns <= 0)
			continue;
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, 0, g->rank);
		ta_table_set_text(t, r, 1, families[k]);
		ta_table_set_real(t, r, 9, (double)f[k].gpu_ns / 1e3);
		memcpy(s.by_type, f[k].by_type, sizeof(s.by_type));
		main_peak(g, &s, &type);
		if (type < 0 || f[k].bytes <= 0)
			continue;
		i = f[k].flops / f[k].bytes;
		if ((at = ta_roof_at(g, dtype_names[type], i, &peak)) <= 0)
			continue;
		ta_table_set_real(t, r, 10, 100 * f[k].flops / ((double)f[k].gpu_ns * 1e-9) / at);
		ta_table_set_text(t, r, 11, i < peak / (g->p.gbps * 1e9) ? "memory" : "compute");
	}
}

/* The compute kernel name in rank's window that took the most time
 * launched by no counted call (helper-64: compiled_train's Triton kernels,
 * 46 % of its GPU time, were only "the counted ops are 54 %"): row r's
 * uncounted_top and its time. */
static int uncounted_top(sqlite3 *db, const struct ta_roof_ctx *c, int64_t rank,
			 struct ta_table *t, size_t r, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct ta_intern *ids = ta_intern_new();
	int64_t *corr = NULL, *name = NULL, *ns = NULL, best = -1;
	size_t ncorr = 0, nname = 0, i;
	int rc;

	for (i = 0; i < c->r.nlaunches; i++)
		if (c->r.launches[i].rank == rank)
			ncorr++;
	corr = ta_xcalloc(ncorr + 1, sizeof(*corr));
	for (i = 0, ncorr = 0; i < c->r.nlaunches; i++)
		if (c->r.launches[i].rank == rank)
			corr[ncorr++] = c->r.launches[i].correlation;
	ta_qsort(corr, ncorr, sizeof(*corr), ta_cmp_i64);
	if (ta_db_prepare(db, "SELECT name, correlation, dur FROM dev_win WHERE rank = ?"
			  " AND kind = " TA_SQL(TA_KIND_COMPUTE) " AND name IS NOT NULL",
			  &st, err) < 0) {
		ta_intern_free(ids);
		free(corr);
		return -1;
	}
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), k = sqlite3_column_int64(st, 1);
		int is_new;

		if (k != -1 && (i = ta_lower_i64(corr, ncorr, k)) < ncorr && corr[i] == k)
			continue;
		i = (size_t)ta_intern(ids, (const char *)&id, sizeof(id), &is_new) - 1;
		if (is_new) {
			name = ta_xrealloc(name, (nname + 1) * sizeof(*name));
			ns = ta_xrealloc(ns, (nname + 1) * sizeof(*ns));
			name[nname] = id;
			ns[nname++] = 0;
		}
		ns[i] = ta_add_sat(ns[i], sqlite3_column_int64(st, 2));
		if (best < 0 || ns[i] > ns[best])
			best = (int64_t)i;
	}
	sqlite3_finalize(st);
	ta_intern_free(ids);
	free(corr);
	if (rc != SQLITE_DONE) {
		free(name);
		free(ns);
		return ta_db_done(db, rc, err);
	}
	if (best >= 0 && ns[best] > 0 &&
	    ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?", &st, err) == 0) {
		sqlite3_bind_int64(st, 1, name[best]);
		if (sqlite3_step(st) == SQLITE_ROW) {
			ta_table_set_text(t, r, 15, (const char *)sqlite3_column_text(st, 0));
			ta_table_set_real(t, r, 16, (double)ns[best] / 1e3);
		}
		sqlite3_finalize(st);
	}
	free(name);
	free(ns);
	return 0;
}

static int rank_rows(sqlite3 *db, const struct ta_roof_ctx *c, const struct ta_roof_gpu *g,
		     struct ta_table *t, struct ta_error *err)
{
	struct rank_total a;
	size_t r;
	double peak;
	int type;

	if (rank_total(db, c, g->rank, &a, err) < 0)
		return -1;
	r = ta_table_add_row(t);
	ta_table_set_int(t, r, 0, g->rank);
	ta_table_set_text(t, r, 1, "all");
	if (g->name[0])
		ta_table_set_text(t, r, 2, g->name);
	ta_table_set_int(t, r, 3, (int64_t)a.steps);
	if (a.secs > 0 && a.s.flops > 0)
		ta_table_set_real(t, r, 4, a.s.flops / a.secs / 1e12);
	if ((peak = main_peak(g, &a.s, &type)) > 0 && a.secs > 0) {
		ta_table_set_real(t, r, 5, 100 * a.s.flops / a.secs / peak);
		ta_table_set_text(t, r, 6, dtype_names[type]);
		ta_table_set_real(t, r, 7, peak / 1e12);
	}
	if (a.secs > 0)
		ta_table_set_real(t, r, 8, 100 * a.busy_s / a.secs);
	ta_table_set_int(t, r, 12, (int64_t)a.s.unknown);
	if (g->known)
		ta_table_set_real(t, r, 13, g->p.gbps);
	if (a.kernel_s > 0)
		ta_table_set_real(t, r, 14, fmin(100, 100 * (double)a.s.gpu_ns * 1e-9 / a.kernel_s));
	if (uncounted_top(db, c, g->rank, t, r, err) < 0)
		return -1;
	family_rows(c, g, t);
	return 0;
}

int ta_roof_summary(sqlite3 *db, const struct ta_roof_ctx *c, struct ta_table **out,
		    struct ta_error *err)
{
	struct ta_table *t = ta_table_new("Roofline per rank", summary_cols,
					  sizeof(summary_cols) / sizeof(summary_cols[0]));
	size_t i;

	for (i = 0; i < c->ngpus; i++)
		if (rank_rows(db, c, &c->gpus[i], t, err) < 0) {
			ta_table_free(t);
			return -1;
		}
	*out = t;
	return 0;
}
