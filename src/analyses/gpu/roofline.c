/* roofline: how close each op's GPU time came to what the GPU can do.
 * Work per call from its shapes (flops.c), the kernels it launched
 * (roofline_walk.c), the GPU's peaks from its name (the model's
 * peaks.c); per op, kernel (roofline_rows.c) or step (roofline_mfu.c).
 * The roof at an intensity I (FLOPs per byte) is min(peak FLOP/s,
 * I x peak bandwidth); peak_pct is achieved FLOP/s over that roof, bound
 * the side of the ridge (peak FLOP/s / bandwidth) I lies on. */
#include "roofline_int.h"
#include "ta_command.h"
#include "ta_people.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const ta_roof_bounds[] = { "compute", "memory", NULL };

/* ---- peaks ---- */

const struct ta_roof_gpu *ta_roof_gpu_of(const struct ta_roof_ctx *c, int64_t rank)
{
	size_t lo = 0, hi = c->ngpus;

	while (lo < hi) {   /* gpus are by rank */
		size_t mid = lo + (hi - lo) / 2;

		if (c->gpus[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ngpus && c->gpus[lo].rank == rank ? &c->gpus[lo] : NULL;
}

double ta_roof_at(const struct ta_roof_gpu *g, const char *dtype, double i, double *peak)
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

static void override(struct ta_roof_gpu *g, const struct ta_roofline_opts *o)
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

/* What one warning says of the ranks whose peaks are unknown. */
static void warn_gpus(struct ta_table *t, const struct ta_roof_ctx *c)
{
	struct ta_buf names = { 0 };
	size_t i, absent = 0;

	for (i = 0; i < c->ngpus; i++) {
		const struct ta_roof_gpu *g = &c->gpus[i];

		if (g->known)
			continue;
		if (!g->found)
			absent++;
		else if (!names.s || !strstr(names.s, g->name))
			ta_buf_addf(&names, "%s'%s'", names.len ? ", " : "", g->name);
	}
	if (names.len)
		ta_table_warn(t, "GPU %s not in the table of peaks (or a MIG slice of "
			      "one): peak_pct, bound and MFU are empty; give --peak-tflops "
			      "and --peak-gbps", names.s);
	if (absent)
		ta_table_warn_sum(t, absent, 0, "{n} rank{s} without deviceProperties in the "
				  "trace (its GPU unknown): peak_pct, bound and MFU are empty; "
				  "give --peak-tflops and --peak-gbps");
	free(names.s);
}

/* Each selected rank's GPU, by rank. */
static int load_gpus(sqlite3 *db, struct ta_roof_ctx *c, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t k;
	int rc;

	if (ta_db_prepare(db, "SELECT s.rank, d.name, d.mem_bytes FROM sel_ranks s"
			  " LEFT JOIN gpu_device d ON d.rank = s.rank"
			  " GROUP BY s.rank ORDER BY s.rank", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ta_roof_gpu *g;
		const char *name = (const char *)sqlite3_column_text(st, 1);

		c->gpus = ta_xrealloc(c->gpus, (c->ngpus + 1) * sizeof(*c->gpus));
		g = &c->gpus[c->ngpus++];
		memset(g, 0, sizeof(*g));
		g->rank = sqlite3_column_int64(st, 0);
		g->found = name != NULL;
		snprintf(g->name, sizeof(g->name), "%s", name ? name : "");
		for (k = 0; g->name[k]; k++)   /* it goes to a terminal */
			if ((unsigned char)g->name[k] < 0x20 || g->name[k] == 0x7f)
				g->name[k] = '?';
		/* a MIG slice has a share of the GPU's SMs and memory: not
		 * the peaks of the whole */
		g->known = !strstr(g->name, "MIG") &&
			   ta_peaks_lookup(name, sqlite3_column_int64(st, 2), &g->p) == 0;
		override(g, c->o);
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

/* ---- the calls by time, and which are in the window ---- */

static int cmp_time(const void *a, const void *b)
{
	const struct ta_roof_call *x = *(const struct ta_roof_call *const *)a;
	const struct ta_roof_call *y = *(const struct ta_roof_call *const *)b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void index_by_time(struct ta_roof_ctx *c)
{
	size_t i;

	c->by_time = ta_xcalloc(c->r.ncalls + 1, sizeof(*c->by_time));
	for (i = 0; i < c->r.ncalls; i++)
		c->by_time[i] = &c->r.calls[i];
	qsort(c->by_time, c->r.ncalls, sizeof(*c->by_time), cmp_time);
}

size_t ta_roof_first_at(const struct ta_roof_ctx *c, int64_t rank, int64_t ts)
{
	size_t lo = 0, hi = c->r.ncalls;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ta_roof_call *k = c->by_time[mid];

		if (k->rank < rank || (k->rank == rank && k->ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A call counts when the host launched it in a kept step (the last,
 * cut-short step is not: as for every other command); a rank without
 * kept steps (none recorded, --window span) counts every call. */
static int mark_window(sqlite3 *db, struct ta_roof_ctx *c, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	char *stepped = ta_xcalloc(c->ngpus + 1, 1);
	size_t i;
	int rc;

	if (ta_db_prepare(db, "SELECT rank, ts, end_ts FROM step_host", &st, err) < 0) {
		free(stepped);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 2);
		const struct ta_roof_gpu *g = ta_roof_gpu_of(c, rank);

		if (g)
			stepped[g - c->gpus] = 1;
		for (i = ta_roof_first_at(c, rank, sqlite3_column_int64(st, 1));
		     i < c->r.ncalls && c->by_time[i]->rank == rank && c->by_time[i]->ts < end; i++)
			((struct ta_roof_call *)c->by_time[i])->in_window = 1;
	}
	sqlite3_finalize(st);
	for (i = 0; i < c->r.ncalls; i++) {
		const struct ta_roof_gpu *g = ta_roof_gpu_of(c, c->r.calls[i].rank);

		if (!g || !stepped[g - c->gpus])
			c->r.calls[i].in_window = 1;
	}
	free(stepped);
	return ta_db_done(db, rc, err);
}

/* ---- what is said whatever the format ---- */

static void warn_calls(struct ta_table *t, const struct ta_roof_ctx *c)
{
	size_t i, k, unknown = 0, counted = 0, over = 0, lost = 0;

	for (i = 0; i < c->r.ncalls; i++)
		if (c->r.calls[i].in_window) {
			counted++;
			unknown += !c->r.calls[i].known;
			lost += c->r.calls[i].gpu_ns <= 0;
		}
	if (!counted)
		ta_table_warn(t, "no op with a FLOP formula (mm, addmm, bmm, baddbmm, "
			      "convolutions, fused attention) in the analysis window: a "
			      "CUDA graph's replay records no ops, and a trace without "
			      "record_shapes=True no shapes");
	else   /* said whatever n (its {of} counts in the shards' sum), 0 not shown */
		ta_table_warn_sum(t, unknown, counted, "{n} of {of} calls have no usable "
				  "shapes (record_shapes off?): their FLOPs are unknown, left "
				  "empty");
	if (counted && strcmp(t->cols[1].name, "op") == 0)
		ta_table_warn_sum(t, lost, counted, "{n} of {of} calls launched no kernel "
				  "found in the trace (lost from it, or copies and memsets "
				  "alone): left out of these rows");
	/* per op and kernel: of its roof; per step: MFU, of the GPU's peak */
	for (k = 0; k < t->ncols && strcmp(t->cols[k].name, "peak_pct") &&
	     strcmp(t->cols[k].name, "mfu_pct"); k++)
		;
	for (i = 0; k < t->ncols && i < t->nrows; i++) {
		const struct ta_cell *p = ta_table_cell(t, i, k);

		over += !p->null && p->d > 100;
	}
	if (over)
		ta_table_warn(t, "%zu rows above 100 %% of their roof: the peak of their "
			      "type is not what ran (fp32 data on tensor cores not "
			      "recognised as TF32?); give --peak-tflops", over);
}

/* ---- the analysis ---- */

int ta_roofline_run(sqlite3 *db, const struct ta_query *q, const struct ta_roofline_opts *o,
		    struct ta_table **out, struct ta_error *err)
{
	struct ta_roof_ctx c;
	struct ta_table *sum = NULL;
	int rc;

	memset(&c, 0, sizeof(c));
	c.o = o;
	*out = NULL;
	rc = ta_model_prepare(db, q, TA_NEED_THREAD | TA_NEED_DEV | TA_NEED_GPU, err);
	if (rc == 0)
		rc = load_gpus(db, &c, err);
	if (rc == 0)
		rc = ta_roof_walk(db, !q->ranks, &c.r, err);
	if (rc == 0) {
		index_by_time(&c);
		rc = mark_window(db, &c, err);
	}
	if (rc == 0)
		rc = ta_roof_summary(db, &c, &sum, err);
	if (rc == 0)   /* by_op reorders the calls: last */
		rc = o->by == TA_ROOF_BY_STEP ? ta_roof_by_step(db, &c, out, err) :
		     o->by == TA_ROOF_BY_KERNEL ? ta_roof_by_kernel(db, &c, out, err) :
		     ((*out = ta_roof_by_op(db, &c)), 0);
	if (rc == 0) {
		warn_gpus(*out, &c);
		warn_calls(*out, &c);
		(*out)->also = sum;
		sum = NULL;
	}
	ta_table_free(sum);
	ta_roof_free(&c.r);
	free(c.by_time);
	free(c.gpus);
	return rc;
}

/* ---- the command ---- */

const struct ta_roofline_opts ta_roofline_defaults = { TA_ROOF_BY_OP, 0, 0, 0 };

enum { OPT_GROUP = 1 };

static int on_opt(void *ctx, int key, const char *arg)
{
	struct ta_roofline_opts *o = ctx;

	o->shapes = 1;
	return key == OPT_GROUP && strcmp(arg, "shape") == 0 ? 0 : -1;
}

#define O struct ta_roofline_opts
static const struct ta_opt opts[] = {
	TA_CHOICE("by", "WHAT", O, by, "op|step|kernel", "op (default): per op and type; step: MFU per step; "
		  "kernel: per kernel"),
	TA_CALL("group-by", "shape", OPT_GROUP, "split each op's row by its input shapes"),
	TA_REAL("peak-tflops", "N", O, peak_tflops, 1e-9, 1e9, "the GPU's peak TFLOP/s, for every type "
		"(else from its name)"),
	TA_REAL("peak-gbps", "N", O, peak_gbps, 1e-9, 1e9, "the GPU's memory bandwidth in GB/s (else from "
		"its name)"),
	TA_OPT_END
};
#undef O

static struct ta_roofline_opts options;

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
	"attention, their backward; a causal attention at the share of the scores\n"
	"its mask keeps), in the kept steps. bytes: each operand read and the\n"
	"result written once (the least traffic, not measured); gpu_us: the time of\n"
	"the kernels it launched; peak_pct: achieved FLOP/s over the roof at its\n"
	"intensity. --by step: MFU per step; --by kernel: per kernel.",
	opts, on_opt, &options, present,
	run, { NULL }
};

const struct ta_command ta_command_roofline = {
	"roofline", NULL, "FLOPs, bytes and efficiency per op and step against the GPU's peaks",
	TA_SPREAD_PER_RANK, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_REFUSED }, &info
};
