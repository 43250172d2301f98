/* The interval union behind temporal, kernel-type and overlap analyses. */
#include "intervals.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ta_union_add(struct ta_union *u, int64_t ts, int64_t dur)
{
	/* held at int64's ends: an edited database's times may be any */
	int64_t end = ta_add_sat(ts, dur);
	int first = u->n == 0;

	if (u->streaming && (first || ts > u->cummax)) {
		if (first) {
			u->first = ts;
			u->v = u->v ? u->v : ta_xmalloc(sizeof(*u->v));
			u->cap = 1;
			u->n = 1;
		} else {
			u->closed = ta_add_sat(u->closed,
					       ta_sub_sat(u->v[0].end, u->v[0].start));
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
		len = ta_add_sat(len, ta_sub_sat(u->v[i].end, u->v[i].start));
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

void ta_sweeper_init(struct ta_sweeper *s, const int *bits, size_t n,
		     int trunc_us, int stream)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->trunc_us = trunc_us;
	s->stream = stream;
	for (i = 0; i < n; i++)
		s->bits[i] = bits[i];
}

/* The next point of union i in sweep order, if there is one before
 * `limit`: its start cursor first, then its end cursor; ends of open
 * groups only when `all`. */
static int next_point(const struct ta_sweeper *s, size_t i, int64_t limit,
		      int all, int64_t *t, int *is_end)
{
	const struct ta_union *u = &s->u[i];
	size_t closed = all ? u->n : (u->n ? u->n - 1 : 0);
	int have_s = s->next_start[i] < u->n, have_e = s->next_end[i] < closed;
	int64_t ts = have_s ? u->v[s->next_start[i]].start : 0;
	int64_t te = have_e ? u->v[s->next_end[i]].end : 0;

	/* within a union, ties go starts first (ta_sweep_run's order) */
	if (have_s && (!have_e || ts <= te)) {
		*t = ts;
		*is_end = 0;
	} else if (have_e) {
		*t = te;
		*is_end = 1;
	} else {
		return 0;
	}
	return all || *t < limit;
}

static void sweep_point(struct ta_sweeper *s, int64_t t, int delta)
{
	if (s->started && s->running > 0 && s->running < TA_SWEEP_LABELS) {
		int64_t seg = t - s->last_t;

		if (s->trunc_us)
			seg = seg / 1000 * 1000;
		s->out.dur[s->running] += seg;
		s->out.seen[s->running] = 1;
	}
	s->started = 1;
	s->running += delta;
	s->last_t = t;
}

/* Drops groups whose both points are swept. */
static void compact(struct ta_sweeper *s, size_t i)
{
	struct ta_union *u = &s->u[i];
	size_t k, done = s->next_end[i];

	if (done == 0 || (done < 256 && done * 2 < u->n))
		return;
	for (k = 0; k < done; k++)
		s->dropped[i] = ta_add_sat(s->dropped[i], ta_sub_sat(u->v[k].end, u->v[k].start));
	memmove(u->v, u->v + done, (u->n - done) * sizeof(*u->v));
	u->n -= done;
	s->next_start[i] -= done;
	s->next_end[i] = 0;
}

/* Sweeps every point before limit (all: every point), in ta_sweep_run's
 * order: by time, then union, then start before end. */
static void sweep_until(struct ta_sweeper *s, int64_t limit, int all)
{
	size_t i;

	for (;;) {
		int64_t best_t = 0, t;
		size_t best = 0;
		int found = 0, best_end = 0, is_end;

		for (i = 0; i < s->n; i++)
			if (next_point(s, i, limit, all, &t, &is_end) &&
			    (!found || t < best_t)) {
				best_t = t, best = i, best_end = is_end;
				found = 1;
			}
		if (!found)
			break;
		if (best_end)
			s->next_end[best]++;
		else
			s->next_start[best]++;
		sweep_point(s, best_t, best_end ? -s->bits[best] : s->bits[best]);
	}
	for (i = 0; i < s->n; i++)
		compact(s, i);
}

void ta_sweeper_add(struct ta_sweeper *s, size_t which, int64_t ts,
		    int64_t dur)
{
	int64_t limit = ts;
	size_t i, pending = 0;

	if (dur < 0 && !s->started)
		s->stream = 0; /* later, too late: callers say so at init */
	s->finished = 0;
	ta_union_add(&s->u[which], ts, dur);
	for (i = 0; i < s->n; i++)
		pending += s->u[i].n;
	if (!s->stream || pending < 512)
		return;
	/* later rows start at ts or after, and an open group's end is at
	 * least its start: nothing still to come lies before the earliest
	 * open start */
	for (i = 0; i < s->n; i++)
		if (s->u[i].n && s->u[i].v[s->u[i].n - 1].start < limit)
			limit = s->u[i].v[s->u[i].n - 1].start;
	sweep_until(s, limit, 0);
}

void ta_sweeper_finish(struct ta_sweeper *s)
{
	struct ta_union *list[TA_SWEEPER_MAX];
	struct ta_sweep one;
	size_t i;
	int l;

	if (s->finished)
		return;
	s->finished = 1;
	if (s->stream) {
		sweep_until(s, 0, 1);
		return;
	}
	/* everything was kept: ends need not be in order, so sort them all */
	for (i = 0; i < s->n; i++)
		list[i] = &s->u[i];
	ta_sweep_run(list, s->bits, s->n, s->trunc_us, &one);
	for (l = 0; l < TA_SWEEP_LABELS; l++) {
		s->out.dur[l] += one.dur[l];
		s->out.seen[l] |= one.seen[l];
	}
	for (i = 0; i < s->n; i++)
		s->next_start[i] = s->next_end[i] = s->u[i].n;
}

int64_t ta_sweeper_length(const struct ta_sweeper *s, size_t which)
{
	return s->dropped[which] + ta_union_length(&s->u[which]);
}

void ta_sweeper_reset(struct ta_sweeper *s)
{
	size_t i;

	ta_sweeper_finish(s);
	for (i = 0; i < s->n; i++) {
		ta_union_reset(&s->u[i]);
		s->next_start[i] = s->next_end[i] = 0;
		s->dropped[i] = 0;
	}
	s->started = s->running = 0;
	s->last_t = 0;
}

void ta_sweeper_free(struct ta_sweeper *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		ta_union_free(&s->u[i]);
}
