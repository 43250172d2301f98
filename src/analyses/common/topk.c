/* HTA's top-k rule for breakdown tables. */
#include "topk.h"
#include "stats.h"
#include "ta_table.h"

#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Per-name statistics, pooled with Chan's formula for "others". */

void ta_agg_add(struct agg *a, double x)
{
	double d = x - a->mean;

	if (a->count == 0 || x > a->max)
		a->max = x;
	if (a->count == 0 || x < a->min)
		a->min = x;
	a->count++;
	a->sum += x;
	a->mean += d / (double)a->count;
	a->m2 += d * (x - a->mean);
}

void ta_agg_launch(struct agg *a, double dur, double bpsm, int has_occ,
		   double occ, int unknown)
{
	if (bpsm > 0 && isfinite(bpsm)) {
		a->bpsm_sum += bpsm * dur;
		a->bpsm_ns += dur;
	}
	if (unknown)
		a->occ_unknown++;
	else if (has_occ && occ >= 0 && occ <= 100) {
		a->occ_sum += occ * dur;
		a->occ_ns += dur;
	}
}

static void agg_merge(struct agg *a, const struct agg *b)
{
	double n = (double)(a->count + b->count), d = b->mean - a->mean;

	if (b->count == 0)
		return;
	if (a->count == 0) {
		char *name = a->name;

		*a = *b;
		a->name = name;
		return;
	}
	a->m2 += b->m2 + d * d * (double)a->count * (double)b->count / n;
	a->mean += d * (double)b->count / n;
	a->max = fmax(a->max, b->max);
	a->min = fmin(a->min, b->min);
	a->sum += b->sum;
	a->count += b->count;
	a->bpsm_sum += b->bpsm_sum;
	a->bpsm_ns += b->bpsm_ns;
	a->occ_sum += b->occ_sum;
	a->occ_ns += b->occ_ns;
	a->occ_unknown += b->occ_unknown;
}

/* std of one value is 0 in HTA's kernel tables, not NaN */
double ta_agg_std(const struct agg *a)
{
	return a->count > 1 ? sqrt(a->m2 / (double)(a->count - 1)) : 0;
}



void ta_topk_emit(struct out_rows *o, int64_t rank, int kind,
		 const struct agg *a, double std)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 64;
		o->v = ta_xrealloc(o->v, o->cap * sizeof(*o->v));
	}
	o->v[o->n] = (struct out_row){ rank, kind, *a, std, o->n };
	o->v[o->n].a.name = ta_xstrdup(a->name);
	o->n++;
}

static int cmp_sum_desc(const void *x, const void *y)
{
	const struct agg *a = *(struct agg *const *)x, *b = *(struct agg *const *)y;

	if (a->sum != b->sum)
		return a->sum > b->sum ? -1 : 1;
	return strcmp(a->name, b->name); /* stable over name order */
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Top-k with HTA's rule (§9.4 step 3): a name goes to "others" if its
 * running total passes the duration_ratio percentile of running totals,
 * or it is past the first top names. HTA then keeps only per-name totals
 * (a named row's max = min = mean = sum) and exempts negative sums; the
 * default keeps per-launch statistics for named rows and "others". */
void ta_topk_group(struct agg *names, size_t n, int64_t rank, int kind,
		   int top, double ratio, int totals, struct out_rows *out)
{
	struct agg **by = ta_xmalloc((n ? n : 1) * sizeof(*by));
	double *cum = ta_xmalloc((n ? n : 1) * sizeof(*cum));
	struct agg others = { .name = "others" };
	struct agg per_name = { .name = "others" };
	double q, run = 0;
	size_t i;

	for (i = 0; i < n; i++)
		by[i] = &names[i];
	/* --top 0: no limit but the duration ratio (HTA: everything to others) */
	if (top == 0 && !totals)
		top = INT_MAX;
	if (n <= (size_t)top) {
		for (i = 0; i < n; i++)
			ta_topk_emit(out, rank, kind, by[i], ta_agg_std(by[i]));
		goto done;
	}
	ta_qsort(by, n, sizeof(*by), cmp_sum_desc);
	for (i = 0; i < n; i++)
		cum[i] = run += by[i]->sum;
	{
		double *sorted = ta_xmalloc(n * sizeof(*sorted));

		memcpy(sorted, cum, n * sizeof(*sorted));
		ta_qsort(sorted, n, sizeof(*sorted), cmp_double);
		q = ta_percentile(sorted, n, ratio);
		free(sorted);
	}
	for (i = 0; i < n; i++) {
		int to_others = cum[i] > q || i >= (size_t)top;

		if (totals && by[i]->sum < 0)
			to_others = 0; /* HTA's inverted keep mask */
		if (!to_others) {
			struct agg one = *by[i];

			if (totals) { /* HTA keeps only the per-name total */
				one.max = one.min = one.mean = one.sum;
				one.m2 = 0;
			}
			ta_topk_emit(out, rank, kind, &one, totals ? 0 : ta_agg_std(by[i]));
			continue;
		}
		agg_merge(&others, by[i]);
		ta_agg_add(&per_name, by[i]->sum);
	}
	if (others.count == 0)
		goto done;
	if (totals) { /* statistics of the absorbed per-name totals */
		double sd = ta_agg_std(&per_name);

		per_name.count = others.count; /* shown: launches absorbed */
		ta_topk_emit(out, rank, kind, &per_name, sd);
	} else {
		ta_topk_emit(out, rank, kind, &others, ta_agg_std(&others));
	}
done:
	free(by);
	free(cum);
}


void ta_topk_set_stats(struct ta_table *t, size_t row, size_t col,
		       const struct out_row *w)
{
	ta_table_set_int(t, row, col, w->a.count);
	ta_table_set_real(t, row, col + 1, w->a.sum / 1000.0);
	ta_table_set_real(t, row, col + 2, w->a.max / 1000.0);
	ta_table_set_real(t, row, col + 3, w->a.min / 1000.0);
	ta_table_set_real(t, row, col + 4, w->std / 1000.0);
	ta_table_set_real(t, row, col + 5, w->a.mean / 1000.0);
}

struct agg *ta_agg_list_name(struct agg_list *l, const char *name)
{
	if (l->n && strcmp(l->v[l->n - 1].name, name) == 0)
		return &l->v[l->n - 1];
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = ta_xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
	l->v[l->n].name = ta_xstrdup(name);
	return &l->v[l->n++];
}

void ta_agg_list_clear(struct agg_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].name);
	l->n = 0;
}
