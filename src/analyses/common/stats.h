/* Descriptive statistics as pandas' describe() computes them. */
#ifndef TA_STATS_H
#define TA_STATS_H

#include <stddef.h>

struct ta_stats {
	size_t count;
	double sum, mean, std, min, p25, p50, p75, max;  /* NaN where undefined */
};

/* Sorts v in place. std is the sample std (n-1); NaN for one value. */
void ta_stats_compute(double *v, size_t n, struct ta_stats *s);
struct ta_table;
/* count, mean, std, min, p25, p50, p75, max into row r from column col. */
void ta_stats_set_row(struct ta_table *t, size_t r, size_t col,
		      const struct ta_stats *s);
/* numpy's linear percentile of sorted values (hta-semantics §10.2). */
double ta_percentile(const double *sorted, size_t n, double q);

/* A growable array of doubles. */
struct ta_dvec {
	double *v;
	size_t n, cap;
};
void ta_dvec_push(struct ta_dvec *d, double x);
void ta_dvec_free(struct ta_dvec *d);

#endif
