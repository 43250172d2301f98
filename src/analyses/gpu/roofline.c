/* roofline: how close each op's GPU time came to what the GPU can do.
 * Work per call from its shapes (flops.c), the kernels it launched
 * (roofline_walk.c), the GPU's peaks from its name (the model's
 * peaks.c); per op, per step (MFU) or per kernel. The roof at an
 * intensity I (FLOPs per byte) is min(peak FLOP/s, I x peak bandwidth);
 * peak_pct is achieved FLOP/s over that roof, bound which side of the
 * ridge (peak FLOP/s / bandwidth) I lies on. */
#include "roofline_int.h"
#include "ta_command.h"
#include "ta_analyses.h"
#include "ta_model.h"
#include "ta_people.h"
#include "analyses/common/intervals.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BY_OP TA_ROOF_BY_OP
#define BY_STEP TA_ROOF_BY_STEP
#define BY_KERNEL TA_ROOF_BY_KERNEL
#define roof_opts ta_roofline_opts

/* A rank's GPU and its peaks (known: a table entry or both overrides). */
struct rank_gpu {
	int64_t rank;
	int known;
	char name[96];
	struct ta_peaks p;
};

struct ctx {
	const struct roof_opts *o;
	struct ta_roof r;
	struct rank_gpu *gpus;
	size_t ngpus;
};

static const char *const bounds[] = { "compute", "memory", NULL };

/* ---- peaks ---- */

static const struct rank_gpu *gpu_of(const struct ctx *c, int64_t rank)
{
	size_t i;

	for (i = 0; i < c->ngpus; i++)
		if (c->gpus[i].rank == rank)
			return &c->gpus[i];
	return NULL;
}

static void override(struct rank_gpu *g, const struct roof_opts *o)
{
	int k;

	if (o->peak_tflops > 0)
		for (k = 0; k < TA_DT_N; k++)
			g->p.tflops[k] = o->peak_tflops;
	if (o->peak_gbps > 0)
		g->p.gbps = o->peak_gbps;
	if (!g->known && o->peak_tflops > 0 && o->peak_gbps > 0)
		g->known = 1;
}

/* Each selected rank's GPU; one warning names those not in the table. */
static int load_gpus(sqlite3 *db, struct ctx *c, struct ta_table *t,
		     struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct ta_buf unknown = { 0 };
	int rc;

	if (ta_db_prepare(db, "SELECT s.rank, d.name, d.mem_bytes FROM sel_ranks s"
			  " LEFT JOIN gpu_device d ON d.rank = s.rank"
			  " GROUP BY s.rank ORDER BY s.rank", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rank_gpu *g;
		const char *name = (const char *)sqlite3_column_text(st, 1);

		c->gpus = ta_xrealloc(c->gpus, (c->ngpus + 1) * sizeof(*c->gpus));
		g = &c->gpus[c->ngpus++];
		memset(g, 0, sizeof(*g));
		g->rank = sqlite3_column_int64(st, 0);
		snprintf(g->name, sizeof(g->name), "%s", name ? name : "");
		g->known = ta_peaks_lookup(name, sqlite3_column_int64(st, 2), &g->p) == 0;
		override(g, c->o);
		if (!g->known && !strstr(unknown.s ? unknown.s : "", g->name[0] ? g->name : "?"))
			ta_buf_addf(&unknown, "%s'%s'", unknown.len ? ", " : "",
				    g->name[0] ? g->name : "?");
	}
	sqlite3_finalize(st);
	if (unknown.len)
		ta_table_warn(t, "GPU %s not in the table of peaks (a trace without "
			      "deviceProperties, or a GPU traceanalyze does not know): "
			      "peak_pct and bound are empty; give --peak-tflops and "
			      "--peak-gbps", unknown.s);
	free(unknown.s);
	return ta_db_done(db, rc, err);
}

/* The roof in FLOP/s at intensity i for dtype on g; 0 if unknown. */
static double roof(const struct rank_gpu *g, const char *dtype, double i,
		   double *peak)
{
	int k = ta_peaks_dtype(dtype);
	double p, b;

	*peak = 0;
	if (!g || !g->known || k < 0 || g->p.tflops[k] <= 0 || g->p.gbps <= 0)
		return 0;
	p = g->p.tflops[k] * 1e12, b = g->p.gbps * 1e9;
	*peak = p;
	return i * b < p ? i * b : p;
}

/* ---- one row's measures ---- */

/* From column col: intensity, gpu_us, tflops, gbps, peak_pct, bound. */
static void set_measures(struct ta_table *t, size_t r, size_t col, double flops,
			 double bytes, int known, int64_t gpu_ns, const char *dtype,
			 const struct rank_gpu *g)
{
	double i, peak, at;

	ta_table_set_real(t, r, col + 1, (double)gpu_ns / 1e3);
	if (!known || bytes <= 0)
		return;
	i = flops / bytes;
	ta_table_set_real(t, r, col, i);
	if (gpu_ns <= 0)
		return;
	ta_table_set_real(t, r, col + 2, flops / (double)gpu_ns / 1e3);
	ta_table_set_real(t, r, col + 3, bytes / (double)gpu_ns);
	at = roof(g, dtype, i, &peak);
	if (at <= 0)
		return;
	ta_table_set_real(t, r, col + 4, 100 * flops / ((double)gpu_ns * 1e-9) / at);
	ta_table_set_text(t, r, col + 5, i < peak / (g->p.gbps * 1e9) ?
			  "memory" : "compute");
}

/* ---- per op (and shape) ---- */

static const struct ta_col op_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "op", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "dtype", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "flops", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "bytes", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "intensity", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "gpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "tflops", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "peak_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "bound", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};
/* --group-by shape: shape after dtype */
static const struct ta_col shape_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "op", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "dtype", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "shape", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "flops", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "bytes", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "intensity", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "gpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "tflops", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "peak_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "bound", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};

static const char *dtype_or_empty(const struct ta_roof_call *c)
{
	return c->known ? c->work.dtype : "";
}

static int shapes_on;  /* qsort has no context: --group-by shape */

static int cmp_call(const void *a, const void *b)
{
	const struct ta_roof_call *x = a, *y = b;
	int d;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if ((d = strcmp(x->op, y->op)) != 0)
		return d;
	if ((d = strcmp(dtype_or_empty(x), dtype_or_empty(y))) != 0)
		return d;
	return shapes_on ? strcmp(x->shape, y->shape) : 0;
}

static int same_group(const struct ta_roof_call *x, const struct ta_roof_call *y)
{
	return cmp_call(x, y) == 0 && x->known == y->known;
}

/* rank, then GPU time, most first */
static int cmp_rows(const struct ta_table *t, size_t a, size_t b)
{
	const struct ta_cell *ra = ta_table_cell(t, a, 0), *rb = ta_table_cell(t, b, 0);
	size_t g = t->ncols - 5;
	double ga, gb;

	if (ra->i != rb->i)
		return ra->i < rb->i ? -1 : 1;
	ga = ta_table_cell(t, a, g)->d, gb = ta_table_cell(t, b, g)->d;
	return ga > gb ? -1 : ga < gb;
}

static struct ta_table *by_op(struct ctx *c)
{
	struct ta_roof *r = &c->r;
	int sh = c->o->shapes;
	struct ta_table *t = ta_table_new(sh ? "Roofline per op and shape" :
					  "Roofline per op", sh ? shape_cols : op_cols,
					  sh ? 13 : 12);
	size_t i = 0, j;

	shapes_on = sh;
	qsort(r->calls, r->ncalls, sizeof(*r->calls), cmp_call);
	while (i < r->ncalls) {
		const struct ta_roof_call *f = &r->calls[i];
		double flops = 0, bytes = 0;
		int64_t gpu = 0;
		size_t row = ta_table_add_row(t), col = 2;

		for (j = i; j < r->ncalls && same_group(f, &r->calls[j]); j++)
			flops += r->calls[j].work.flops, bytes += r->calls[j].work.bytes,
			gpu += r->calls[j].gpu_ns;
		ta_table_set_int(t, row, 0, f->rank);
		ta_table_set_text(t, row, 1, f->op);
		if (f->known)
			ta_table_set_text(t, row, 2, f->work.dtype);
		if (sh)
			ta_table_set_text(t, row, ++col, f->shape);
		ta_table_set_int(t, row, col + 1, (int64_t)(j - i));
		if (f->known) {
			ta_table_set_int(t, row, col + 2, llround(flops));
			ta_table_set_int(t, row, col + 3, llround(bytes));
		}
		set_measures(t, row, col + 4, flops, bytes, f->known, gpu, f->work.dtype,
			     gpu_of(c, f->rank));
		i = j;
	}
	ta_table_set_values(t, t->ncols - 1, bounds);
	ta_table_sort(t, cmp_rows);
	return t;
}

/* ---- per step: MFU ---- */

static const struct ta_col step_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "flops", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "tflops", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "mfu_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "gpu_busy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};

/* What a step (or any stretch of a rank's host time) did: its known
 * FLOPs, the type that did most of them, calls without shapes. */
struct stretch {
	double flops, by_type[TA_DT_N];
	size_t unknown;
};

static void sum_calls(const struct ctx *c, int64_t rank, int64_t ts, int64_t end,
		      struct stretch *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < c->r.ncalls; i++) {
		const struct ta_roof_call *k = &c->r.calls[i];
		int d;

		if (k->rank != rank || k->ts < ts || k->ts >= end)
			continue;
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
static double main_peak(const struct rank_gpu *g, const struct stretch *s, int *type)
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

/* The GPU's busy time inside [ts, end): the union of its activities. */
static int64_t busy_ns(sqlite3_stmt *st, int64_t rank, int64_t ts, int64_t end)
{
	struct ta_union u = { 0 };
	int64_t n;

	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_int64(st, 2, ts);
	sqlite3_bind_int64(st, 3, end);
	while (sqlite3_step(st) == SQLITE_ROW)
		ta_union_add(&u, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
	sqlite3_reset(st);
	n = ta_union_length(&u);
	ta_union_free(&u);
	return n;
}

static const char busy_sql[] =
	"SELECT max(ts, ?2), min(ts + dur, ?3) - max(ts, ?2) FROM gpu"
	" WHERE rank = ?1 AND ts < ?3 AND ts + dur > ?2 ORDER BY ts";

/* Each kept step: its window (step_win) and the calls the host made in
 * it (step_host). */
static const char steps_sql[] =
	"SELECT w.rank, w.step, w.ts, w.end_ts, h.ts, h.end_ts FROM step_win w"
	" JOIN step_host h ON h.rank = w.rank AND h.step = w.step"
	" ORDER BY w.rank, w.step";

static void step_row(struct ctx *c, struct ta_table *t, sqlite3_stmt *st,
		     sqlite3_stmt *busy, size_t *unknown)
{
	int64_t rank = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 2);
	int64_t end = sqlite3_column_int64(st, 3);
	struct stretch s;
	size_t r = ta_table_add_row(t);
	double peak, secs = (double)(end - ts) * 1e-9;
	int type;

	sum_calls(c, rank, sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5), &s);
	*unknown += s.unknown;
	ta_table_set_int(t, r, 0, rank);
	ta_table_set_int(t, r, 1, sqlite3_column_int64(st, 1));
	ta_table_set_real(t, r, 2, (double)(end - ts) / 1e3);
	if (end <= ts)
		return;
	ta_table_set_real(t, r, 6, 100.0 * (double)busy_ns(busy, rank, ts, end) /
			  (double)(end - ts));
	if (s.flops <= 0 && s.unknown)
		return;   /* unknown, not 0 */
	ta_table_set_int(t, r, 3, llround(s.flops));
	ta_table_set_real(t, r, 4, s.flops / secs / 1e12);
	if ((peak = main_peak(gpu_of(c, rank), &s, &type)) > 0)
		ta_table_set_real(t, r, 5, 100 * s.flops / secs / peak);
}

static int by_step(sqlite3 *db, struct ctx *c, struct ta_table **out,
		   struct ta_error *err)
{
	struct ta_table *t = ta_table_new("MFU per step", step_cols, 7);
	sqlite3_stmt *st = NULL, *busy = NULL;
	size_t unknown = 0;
	int rc = SQLITE_DONE;

	if (ta_db_prepare(db, steps_sql, &st, err) < 0 ||
	    ta_db_prepare(db, busy_sql, &busy, err) < 0) {
		sqlite3_finalize(st);
		ta_table_free(t);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		step_row(c, t, st, busy, &unknown);
	sqlite3_finalize(st);
	sqlite3_finalize(busy);
	(void)unknown;
	*out = t;
	return ta_db_done(db, rc, err);
}

/* ---- per kernel ---- */

static const struct ta_col kernel_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "kernel", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "dtype", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "flops", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "bytes", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "intensity", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "gpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "tflops", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "gbps", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "peak_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "bound", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};

/* The calls and their launches as tables, so SQL joins them with the
 * kernels. */
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
		sqlite3_bind_int64(b, 1, r->launches[i].rank);
		sqlite3_bind_int64(b, 2, r->launches[i].correlation);
		sqlite3_bind_int64(b, 3, (int64_t)r->launches[i].call);
		sqlite3_step(b);
		sqlite3_reset(b);
	}
	sqlite3_finalize(a);
	sqlite3_finalize(b);
	return 0;
}

/* A call's work is its longest kernel's (the GEMM, not the layout
 * conversions and memsets around it): the others did none of its FLOPs. */
static const char kernels_sql[] =
	"WITH k AS (SELECT g.rank, g.name, g.dur, l.call, row_number() OVER"
	"  (PARTITION BY l.call ORDER BY g.dur DESC, g.ts, g.idx) AS nth"
	"  FROM roof_launch l JOIN gpu g ON g.rank = l.rank AND g.correlation = l.correlation)"
	" SELECT k.rank, n.name, c.dtype, count(*),"
	"  sum(CASE WHEN k.nth = 1 THEN c.flops ELSE 0 END),"
	"  sum(CASE WHEN k.nth = 1 THEN c.bytes ELSE 0 END), sum(k.dur), min(c.known)"
	" FROM k JOIN roof_call c ON c.id = k.call JOIN label n ON n.name_id = k.name"
	" GROUP BY k.rank, n.name, c.dtype ORDER BY k.rank, sum(k.dur) DESC, n.name";

static int by_kernel(sqlite3 *db, struct ctx *c, struct ta_table **out,
		     struct ta_error *err)
{
	struct ta_table *t = ta_table_new("Roofline per kernel", kernel_cols, 12);
	sqlite3_stmt *st = NULL;
	int rc;

	if (store_calls(db, &c->r, err) < 0 || ta_db_prepare(db, kernels_sql, &st, err) < 0) {
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
			ta_table_set_int(t, r, 4, llround(flops));
			ta_table_set_int(t, r, 5, llround(bytes));
		}
		set_measures(t, r, 6, flops, bytes, known, sqlite3_column_int64(st, 6),
			     dtype, gpu_of(c, sqlite3_column_int64(st, 0)));
	}
	sqlite3_finalize(st);
	ta_table_set_values(t, 11, bounds);
	*out = t;
	return ta_db_done(db, rc, err);
}

/* ---- the sentence per rank (text) ---- */

static const char *family(const char *op)
{
	if (strstr(op, "attention_backward"))
		return "attention backward";
	if (strstr(op, "attention"))
		return "attention";
	if (strstr(op, "convolution_backward"))
		return "convolution backward";
	return strstr(op, "conv") ? "convolutions" : "GEMMs";
}

static const char *const families[] = { "GEMMs", "attention", "attention backward",
	"convolutions", "convolution backward" };
#define NFAM (sizeof(families) / sizeof(families[0]))

/* Per family: its GPU time, the time its work needed at the roof, and
 * the time of its memory-bound calls. */
struct fam_sum {
	double gpu_s, roof_s, memory_s;
};

static void fam_sums(const struct ctx *c, int64_t rank, struct fam_sum *f, size_t *unknown)
{
	const struct rank_gpu *g = gpu_of(c, rank);
	size_t i, k;

	memset(f, 0, NFAM * sizeof(*f));
	*unknown = 0;
	for (i = 0; i < c->r.ncalls; i++) {
		const struct ta_roof_call *call = &c->r.calls[i];
		double in, at, peak;

		if (call->rank != rank)
			continue;
		if (!call->known) {
			(*unknown)++;
			continue;
		}
		for (k = 0; k < NFAM && strcmp(families[k], family(call->op)); k++)
			;
		in = call->work.bytes > 0 ? call->work.flops / call->work.bytes : 0;
		at = roof(g, call->work.dtype, in, &peak);
		f[k].gpu_s += (double)call->gpu_ns * 1e-9;
		if (at > 0) {
			f[k].roof_s += call->work.flops / at;
			if (in < peak / (g->p.gbps * 1e9))
				f[k].memory_s += (double)call->gpu_ns * 1e-9;
		}
	}
}

/* MFU over the rank's kept steps (else its span): FLOPs the host
 * launched in them over their windows' time. */
static double rank_mfu(sqlite3 *db, const struct ctx *c, int64_t rank, size_t *steps,
		       int *type, double *tflops, double *busy_share)
{
	sqlite3_stmt *st = NULL, *busy = NULL;
	struct stretch all, s;
	double secs = 0, busy_s = 0, peak;
	int k;

	memset(&all, 0, sizeof(all));
	*steps = 0;
	*tflops = 0;
	*type = -1;
	*busy_share = 1;
	if (ta_db_prepare(db, busy_sql, &busy, NULL) < 0)
		return -1;
	if (ta_db_prepare(db, "SELECT w.ts, w.end_ts, h.ts, h.end_ts FROM step_win w"
			  " JOIN step_host h ON h.rank = w.rank AND h.step = w.step"
			  " WHERE w.rank = ?1 UNION ALL SELECT ts, end_ts, -9e18, 9e18"
			  " FROM span WHERE rank = ?1 AND NOT EXISTS (SELECT 1 FROM"
			  " step_win WHERE rank = ?1)", &st, NULL) < 0) {
		sqlite3_finalize(busy);
		return -1;
	}
	sqlite3_bind_int64(st, 1, rank);
	while (sqlite3_step(st) == SQLITE_ROW) {
		sum_calls(c, rank, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3), &s);
		all.flops += s.flops;
		for (k = 0; k < TA_DT_N; k++)
			all.by_type[k] += s.by_type[k];
		secs += (double)(sqlite3_column_int64(st, 1) - sqlite3_column_int64(st, 0)) * 1e-9;
		busy_s += (double)busy_ns(busy, rank, sqlite3_column_int64(st, 0),
					  sqlite3_column_int64(st, 1)) * 1e-9;
		(*steps)++;
	}
	sqlite3_finalize(st);
	sqlite3_finalize(busy);
	*tflops = secs > 0 ? all.flops / secs / 1e12 : 0;
	*busy_share = secs > 0 ? busy_s / secs : 1;
	peak = main_peak(gpu_of(c, rank), &all, type);
	return peak > 0 && secs > 0 ? 100 * all.flops / secs / peak : -1;
}

/* Per rank, what text output says of it (ta_people_roofline): a row
 * "all" (MFU over its steps, and how busy its GPU was) and one per
 * family of ops (how close to its roof, which side of the ridge). */
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
};

static void rank_summary(sqlite3 *db, const struct ctx *c, const struct rank_gpu *g,
			 struct ta_table *t)
{
	static const char *const dt[TA_DT_N] = { "fp64", "fp32", "tf32", "bf16", "fp16",
		"fp8", "int8" };
	struct fam_sum f[NFAM];
	size_t steps, unknown, k, r = ta_table_add_row(t);
	int type;
	double tflops, busy, mfu = rank_mfu(db, c, g->rank, &steps, &type, &tflops, &busy);

	fam_sums(c, g->rank, f, &unknown);
	ta_table_set_int(t, r, 0, g->rank);
	ta_table_set_text(t, r, 1, "all");
	if (g->name[0])
		ta_table_set_text(t, r, 2, g->name);
	ta_table_set_int(t, r, 3, (int64_t)steps);
	if (tflops > 0 || !unknown)
		ta_table_set_real(t, r, 4, tflops);
	if (mfu >= 0 && type >= 0) {
		ta_table_set_real(t, r, 5, mfu);
		ta_table_set_text(t, r, 6, dt[type]);
		ta_table_set_real(t, r, 7, g->p.tflops[type]);
	}
	ta_table_set_real(t, r, 8, 100 * busy);
	ta_table_set_int(t, r, 12, (int64_t)unknown);
	if (g->known)
		ta_table_set_real(t, r, 13, g->p.gbps);
	for (k = 0; k < NFAM; k++) {
		if (f[k].gpu_s <= 0)
			continue;
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, 0, g->rank);
		ta_table_set_text(t, r, 1, families[k]);
		ta_table_set_real(t, r, 9, f[k].gpu_s * 1e6);
		if (f[k].roof_s > 0) {
			ta_table_set_real(t, r, 10, 100 * f[k].roof_s / f[k].gpu_s);
			ta_table_set_text(t, r, 11, f[k].memory_s * 2 > f[k].gpu_s ?
					  "memory" : "compute");
		}
	}
}

/* ---- the analysis ---- */

/* Calls whose shapes were not recorded (or fit no formula) have unknown
 * work: empty, never 0, and said once whatever the format. */
static void warn_unknown(struct ta_table *t, const struct ta_roof *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->ncalls; i++)
		n += !r->calls[i].known;
	if (n)
		ta_table_warn(t, "%zu of %zu calls have no usable shapes (record_shapes "
			      "off?): their FLOPs are unknown, left empty", n, r->ncalls);
}

int ta_roofline_run(sqlite3 *db, const struct ta_query *q, const struct roof_opts *o,
		    struct ta_table **out, struct ta_error *err)
{
	struct ctx c;
	struct ta_table *warn = ta_table_new("", op_cols, 1);
	struct ta_table *sum = ta_table_new("Roofline per rank", summary_cols, 14);
	size_t i;
	int rc;

	memset(&c, 0, sizeof(c));
	c.o = o;
	*out = NULL;
	rc = ta_model_prepare(db, q, TA_NEED_THREAD | TA_NEED_DEV, err);
	if (rc == 0)
		rc = load_gpus(db, &c, warn, err);
	if (rc == 0)
		rc = ta_roof_walk(db, &c.r, err);
	for (i = 0; rc == 0 && i < c.ngpus; i++)
		rank_summary(db, &c, &c.gpus[i], sum);
	if (rc == 0)
		rc = o->by == BY_STEP ? by_step(db, &c, out, err) :
		     o->by == BY_KERNEL ? by_kernel(db, &c, out, err) :
		     ((*out = by_op(&c)), 0);
	if (rc == 0) {
		(*out)->also = sum;
		sum = NULL;
		if (warn->warnings.len)
			ta_buf_adds(&(*out)->warnings, warn->warnings.s);
		warn_unknown(*out, &c.r);
	}
	ta_table_free(sum);
	ta_table_free(warn);
	ta_roof_free(&c.r);
	free(c.gpus);
	return rc;
}

/* ---- the command ---- */

enum { OPT_BY = 1, OPT_GROUP, OPT_TFLOPS, OPT_GBPS };

static const struct ta_opt opts[] = {
	{ "by", 1, OPT_BY, "WHAT", "op (default): per op and type; step: MFU per step; "
	  "kernel: per kernel" },
	{ "group-by", 1, OPT_GROUP, "shape", "split each op's row by its input shapes" },
	{ "peak-tflops", 1, OPT_TFLOPS, "N", "the GPU's peak TFLOP/s, for every type "
	  "(else from its name)" },
	{ "peak-gbps", 1, OPT_GBPS, "N", "the GPU's memory bandwidth in GB/s (else from "
	  "its name)" },
	{ NULL, 0, 0, NULL, NULL }
};

static struct roof_opts options;

static int positive(const char *arg, double *v)
{
	char *end;

	*v = strtod(arg, &end);
	return end != arg && !*end && isfinite(*v) && *v > 0 ? 0 : -1;
}

static int on_opt(void *ctx, int key, const char *arg)
{
	struct roof_opts *o = ctx;

	switch (key) {
	case OPT_BY:
		if (strcmp(arg, "op") == 0)
			o->by = BY_OP;
		else if (strcmp(arg, "step") == 0)
			o->by = BY_STEP;
		else if (strcmp(arg, "kernel") == 0)
			o->by = BY_KERNEL;
		else
			return -1;
		return 0;
	case OPT_GROUP:
		o->shapes = 1;
		return strcmp(arg, "shape") == 0 ? 0 : -1;
	case OPT_TFLOPS:
		return positive(arg, &o->peak_tflops);
	case OPT_GBPS:
		return positive(arg, &o->peak_gbps);
	default:
		return -1;
	}
}

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	return ta_roofline_run(db, q, ctx, out, err);
}

static void present(struct ta_table *t, void *ctx)
{
	(void)ctx;
	ta_people_roofline(t, t->also);
}

static const struct ta_cmd_info info = {
	"roofline", "[options] PATH",
	"FLOPs, bytes and achieved rates per rank and op, against the GPU's peaks\n"
	"(a roofline): from the shapes record_shapes writes, counted once per call\n"
	"at the op that does the work (mm, addmm, bmm, baddbmm, convolutions, fused\n"
	"attention, their backward); gpu_us is its kernels' time, peak_pct its\n"
	"achieved FLOP/s over the roof at its intensity. --by step: MFU per step;\n"
	"--by kernel: per kernel.",
	opts, on_opt, &options, present,
	run
};

const struct ta_command ta_command_roofline = {
	"roofline", NULL, "FLOPs, bytes and efficiency per op and step against the GPU's peaks",
	TA_SPREAD_PER_RANK, NULL, 1, TA_COMPAT_REFUSED, &info
};
