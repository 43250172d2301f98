/* diagnose's low_efficiency findings: the op groups (op, type) of each
 * rank whose GPU time is furthest beyond what their roof allows, from
 * roofline's rows, over the whole trace (no step: roofline counts every
 * call). Their where names the op, the type and the side of the ridge,
 * no numbers, so a baseline keys them across runs; and, for GEMMs below
 * the ridge's compute side, which of the usual causes the trace rules
 * out: its kernels sharing the GPU with collectives most of their time
 * (the shapes are then not known to be the cause), or shapes already
 * multiples of 64 (padding them would not help). */
#include "ta_analyses.h"
#include "analyses/host/advice.h"

#include <stdio.h>
#include <string.h>

/* roofline's columns: rank, op, dtype, calls, flops, bytes, intensity,
 * gpu_us, tflops, gbps, peak_pct, bound, peak_tflops, peak_gbps, kernel;
 * with --group-by shape, shape after dtype */
enum { C_RANK, C_OP, C_DTYPE, C_CALLS, C_GPU = 7, C_PCT = 10, C_BOUND = 11,
       C_KERNEL = 14 };

/* The share of its main kernel's time that ran beside collectives from
 * which they, not its shapes, are named: aten::mm's main kernel ran 79 %
 * of its time beside them on ddp_straggler's rank 0 (it waits for a late
 * peer in every all-reduce), 97 % on fsdp2's rank 0, 10 % on its rank 1. */
#define BESIDE_SHARE 0.5

/* 1 when every dimension above 1 of a shape ("[[2048, 512], [512],
 * []]") is a multiple of 64, 0 when one is not, -1 when there is none. */
static int shape_aligned(const char *s)
{
	int any = 0;

	while (s && *s) {
		long long d = 0;

		if (*s < '0' || *s > '9') {
			s++;
			continue;
		}
		for (; *s >= '0' && *s <= '9' && d < (1LL << 40); s++)
			d = d * 10 + (*s - '0');
		if (d > 1 && d % 64)
			return 0;
		any |= d > 1;
	}
	return any ? 1 : -1;
}

/* Whether every shape of (rank, op, dtype) in the by-shape table is
 * aligned (shape_aligned); 0 or -1 as soon as one is not known to be. */
static int group_aligned(const struct ta_table *shapes, int64_t rank, const char *op,
			 const char *dtype)
{
	size_t r;
	int all = -1;

	for (r = 0; shapes && r < shapes->nrows; r++) {
		const struct ta_cell *sh = ta_table_cell(shapes, r, 3);
		int a;

		if (ta_table_cell(shapes, r, C_RANK)->i != rank ||
		    strcmp(ta_table_cell(shapes, r, C_OP)->s, op) != 0 ||
		    ta_table_cell(shapes, r, C_DTYPE)->null != !dtype ||
		    (dtype && strcmp(ta_table_cell(shapes, r, C_DTYPE)->s, dtype) != 0))
			continue;
		a = sh->null ? -1 : shape_aligned(sh->s);
		if (a <= 0)
			return a;
		all = 1;
	}
	return all;
}

/* The share of the row's main kernel's time on its rank that ran beside
 * collectives. */
static double beside_share(sqlite3 *db, const struct ta_table *t, size_t r,
			   const struct ta_beside *beside)
{
	const struct ta_cell *k = ta_table_cell(t, r, C_KERNEL);
	sqlite3_stmt *st = NULL;
	double share = 0;

	if (!beside || !beside->n || k->null ||
	    sqlite3_prepare_v2(db, "SELECT name_id FROM label WHERE name = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, k->s, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		share = ta_beside_share(beside, ta_table_cell(t, r, C_RANK)->i,
					sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	return share;
}

static void add_row(struct ta_table *f, const struct ta_table *t, size_t r,
		    double excess_us, const char *why, const struct ta_traits *run)
{
	char where[300];
	size_t row = ta_table_add_row(f);

	snprintf(where, sizeof(where), "%s (%s, %s-bound%s%s)", ta_table_cell(t, r, C_OP)->s,
		 ta_table_cell(t, r, C_DTYPE)->s, ta_table_cell(t, r, C_BOUND)->s,
		 why ? ", " : "", why ? why : "");
	ta_table_set_int(f, row, 0, ta_table_cell(t, r, C_RANK)->i);
	ta_table_set_text(f, row, 2, ta_finding_names[F_LOW_EFF]);
	ta_table_set_real(f, row, 3, excess_us);
	ta_table_set_int(f, row, 4, ta_table_cell(t, r, C_CALLS)->i);
	ta_table_set_text(f, row, 5, where);
	ta_table_set_text(f, row, 6, ta_advice(F_LOW_EFF, where, run));
}

/* Which cause the trace rules out for a compute-bound group (*why; NULL:
 * none), the by-shape table made the first time one is asked (*shapes);
 * -1 if that failed. */
static int why_low(sqlite3 *db, const struct ta_query *q, const struct ta_table *t,
		   size_t r, struct ta_table **shapes, const struct ta_beside *beside,
		   const char **why, struct ta_error *err)
{
	struct ta_roofline_opts o = { TA_ROOF_BY_OP, 1, 0, 0 };
	const struct ta_cell *dtype = ta_table_cell(t, r, C_DTYPE);
	const char *op = ta_table_cell(t, r, C_OP)->s;

	*why = NULL;
	if (strcmp(ta_table_cell(t, r, C_BOUND)->s, "compute") != 0)
		return 0;
	if (beside_share(db, t, r, beside) >= BESIDE_SHARE) {
		*why = "beside communication";
		return 0;
	}
	/* (attention's and convolutions' cures are their own: advice.c) */
	if (strstr(op, "attention") || strstr(op, "conv"))
		return 0;
	if (!*shapes && ta_roofline_run(db, q, &o, shapes, err) < 0)
		return -1;
	if (group_aligned(*shapes, ta_table_cell(t, r, C_RANK)->i, op,
			  dtype->null ? NULL : dtype->s) == 1)
		*why = "aligned shapes";
	return 0;
}

int ta_roofline_findings(sqlite3 *db, const struct ta_query *q, struct ta_table *f,
			 const struct ta_traits *run, const struct ta_beside *beside,
			 struct ta_error *err)
{
	struct ta_roofline_opts o = { TA_ROOF_BY_OP, 0, 0, 0 };
	struct ta_table *t, *shapes = NULL;
	const char *why;
	size_t r;

	if (ta_roofline_run(db, q, &o, &t, err) < 0)
		return -1;
	for (r = 0; r < t->nrows; r++) {
		const struct ta_cell *pct = ta_table_cell(t, r, C_PCT);
		double gpu = ta_table_cell(t, r, C_GPU)->d, excess;

		if (pct->null || pct->d >= TA_ROOF_LOW_PCT)
			continue;
		/* beyond the time at the attainable share of the roof */
		excess = gpu * (1 - pct->d / 100 / TA_ROOF_ATTAINABLE);
		if (excess < 500)
			continue;
		if (why_low(db, q, t, r, &shapes, beside, &why, err) < 0) {
			ta_table_free(shapes);
			ta_table_free(t);
			return -1;
		}
		add_row(f, t, r, excess, why, run);
	}
	ta_table_free(shapes);
	ta_table_free(t);
	return 0;
}
