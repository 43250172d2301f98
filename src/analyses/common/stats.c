/* count, mean, std, min, percentiles, max: pandas describe(). */
#include "stats.h"
#include "ta_table.h"
#include "ta.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double ta_percentile(const double *a, size_t n, double q)
{
	double h, t, d;
	size_t lo;

	if (n == 0)
		return NAN;
	h = (double)(n - 1) * q;
	if (h >= (double)(n - 1))
		return a[n - 1];
	lo = (size_t)floor(h);
	t = h - (double)lo;
	d = a[lo + 1] - a[lo];
	return t < 0.5 ? a[lo] + d * t : a[lo + 1] - d * (1 - t);
}

void ta_stats_compute(double *v, size_t n, struct ta_stats *s)
{
	double ss = 0;
	size_t i;

	s->count = n;
	s->sum = 0;
	s->mean = s->std = s->min = s->p25 = s->p50 = s->p75 = s->max = NAN;
	if (n == 0)
		return;
	ta_qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		s->sum += v[i];
	s->mean = s->sum / (double)n;
	for (i = 0; i < n; i++)
		ss += (v[i] - s->mean) * (v[i] - s->mean);
	if (n > 1)
		s->std = sqrt(ss / (double)(n - 1));
	s->min = v[0];
	s->max = v[n - 1];
	s->p25 = ta_percentile(v, n, 0.25);
	s->p50 = ta_percentile(v, n, 0.5);
	s->p75 = ta_percentile(v, n, 0.75);
}

void ta_dvec_push(struct ta_dvec *d, double x)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 16;
		d->v = ta_xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	d->v[d->n++] = x;
}

void ta_dvec_free(struct ta_dvec *d)
{
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}

void ta_stats_set_row(struct ta_table *t, size_t r, size_t col,
		      const struct ta_stats *s)
{
	const double v[7] = { s->mean, s->std, s->min, s->p25, s->p50, s->p75, s->max };
	size_t k;

	ta_table_set_int(t, r, col, (int64_t)s->count);
	for (k = 0; k < 7; k++)
		ta_table_set_real(t, r, col + 1 + k, v[k]);
}
