/* The interval union behind temporal, kernel-type and overlap analyses. */
#include "intervals.h"

#include <math.h>
#include <stdlib.h>

void ta_union_add(struct ta_union *u, int64_t ts, int64_t dur)
{
	int64_t end = ts + dur;
	int first = u->n == 0;

	if (first || ts > u->cummax) {
		if (u->n == u->cap) {
			u->cap = u->cap ? u->cap * 2 : 64;
			u->v = ta_xrealloc(u->v, u->cap * sizeof(*u->v));
		}
		u->v[u->n].start = ts;
		u->v[u->n].end = end;
		u->n++;
	} else if (end > u->v[u->n - 1].end) {
		u->v[u->n - 1].end = end;
	}
	if (first || end > u->cummax)
		u->cummax = end;
}

int64_t ta_union_length(const struct ta_union *u)
{
	int64_t len = 0;
	size_t i;

	for (i = 0; i < u->n; i++)
		len += u->v[i].end - u->v[i].start;
	return len;
}

void ta_union_reset(struct ta_union *u)
{
	u->n = 0;
	u->cummax = 0;
}

void ta_union_free(struct ta_union *u)
{
	free(u->v);
	u->v = NULL;
	u->n = u->cap = 0;
}

double ta_round(double x, int n)
{
	double p = pow(10.0, n);

	return nearbyint(x * p) / p;
}
