/* The interval union behind temporal, kernel-type and overlap analyses. */
#include "intervals.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ta_union_add(struct ta_union *u, int64_t ts, int64_t dur)
{
	int64_t end = ts + dur;
	int first = u->n == 0;

	if (u->streaming && (first || ts > u->cummax)) {
		if (first) {
			u->first = ts;
			u->v = u->v ? u->v : ta_xmalloc(sizeof(*u->v));
			u->cap = 1;
			u->n = 1;
		} else {
			u->closed += u->v[0].end - u->v[0].start;
		}
		u->v[0].start = ts;
		u->v[0].end = end;
	} else if (first || ts > u->cummax) {
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

int64_t ta_union_first_start(const struct ta_union *u)
{
	return u->streaming ? u->first : u->v[0].start;
}

int64_t ta_union_last_end(const struct ta_union *u)
{
	return u->v[u->n - 1].end;
}

int64_t ta_union_length(const struct ta_union *u)
{
	int64_t len = u->streaming ? u->closed : 0;
	size_t i;

	for (i = 0; i < u->n; i++)
		len += u->v[i].end - u->v[i].start;
	return len;
}

void ta_union_reset(struct ta_union *u)
{
	u->n = 0;
	u->cummax = 0;
	u->closed = 0;
	u->first = 0;
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

struct point {
	int64_t t;
	int delta;
	size_t order;
};

static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

void ta_sweep_run(struct ta_union *const *u, const int *bits, size_t n,
		  int trunc_us, struct ta_sweep *out)
{
	size_t total = 0, k = 0, i, j;
	struct point *p;
	int running = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++)
		total += 2 * u[i]->n;
	p = ta_xmalloc((total ? total : 1) * sizeof(*p));
	for (i = 0; i < n; i++) {
		for (j = 0; j < u[i]->n; j++, k++)
			p[k] = (struct point){ u[i]->v[j].start, bits[i], k };
		for (j = 0; j < u[i]->n; j++, k++)
			p[k] = (struct point){ u[i]->v[j].end, -bits[i], k };
	}
	ta_qsort(p, total, sizeof(*p), cmp_point);
	for (k = 0; k + 1 < total; k++) {
		int64_t seg = p[k + 1].t - p[k].t;

		running += p[k].delta;
		if (running <= 0 || running >= TA_SWEEP_LABELS)
			continue;
		if (trunc_us)
			seg = seg / 1000 * 1000;
		out->dur[running] += seg;
		out->seen[running] = 1;
	}
	free(p);
}
