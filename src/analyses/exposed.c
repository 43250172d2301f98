/* Exposed communication is what computation waits for, not communication
 * with no computation at the same instant: in a DDP step whose compute
 * stream is idle for the host's reasons while buckets are reduced, the
 * reduction costs nothing (measured: the same step time without gradient
 * sync), though nothing computes beside it.
 *
 * A stretch of communication without computation is exposed when it ends
 * with the communication and computation resumes within resume_ns, or
 * when the next such stretch follows within resume_ns (collectives back to
 * back, copies between them) and is exposed itself. */
#include "exposed.h"

#include <stdlib.h>

struct stretch {
	int64_t a, b;
	int64_t next_comp;  /* the next computation's start, INT64_MAX: none */
	int ends_with_comm;
};

/* Length of [a, b] covered by the groups of u, from *k on (moves *k). */
static int64_t covered(const struct ta_union *u, size_t *k, int64_t a, int64_t b)
{
	int64_t len = 0;
	size_t i;

	while (*k < u->n && u->v[*k].end <= a)
		(*k)++;
	for (i = *k; i < u->n && u->v[i].start < b; i++) {
		int64_t x = u->v[i].start > a ? u->v[i].start : a;
		int64_t y = u->v[i].end < b ? u->v[i].end : b;

		if (y > x)
			len += y - x;
	}
	return len;
}

/* The stretches of comm not under comp, in order. */
static struct stretch *stretches(const struct ta_union *comm,
				 const struct ta_union *comp, size_t *n)
{
	struct stretch *s = NULL;
	size_t i, k = 0, cap = 0;

	*n = 0;
	for (i = 0; i < comm->n; i++) {
		int64_t x = comm->v[i].start, ce = comm->v[i].end;

		while (x < ce) {
			int64_t y = ce;

			while (k < comp->n && comp->v[k].end <= x)
				k++;
			if (k < comp->n && comp->v[k].start <= x) {
				x = comp->v[k].end; /* under computation: hidden */
				continue;
			}
			if (k < comp->n && comp->v[k].start < ce)
				y = comp->v[k].start;
			if (*n == cap) {
				cap = cap ? 2 * cap : 64;
				s = realloc(s, cap * sizeof(*s));
				if (!s)
					abort();
			}
			s[(*n)++] = (struct stretch){ x, y,
				k < comp->n ? comp->v[k].start : INT64_MAX, y == ce };
			x = y;
		}
	}
	return s;
}

void ta_exposed_comm(const struct ta_union *comm, const struct ta_union *comp,
		     const struct ta_union *waits, int64_t resume_ns,
		     struct ta_exposed *out,
		     void (*other)(void *ctx, int64_t a, int64_t b), void *ctx)
{
	size_t n, i, w = 0;
	struct stretch *s = stretches(comm, comp, &n);
	char *exposed = calloc(n + 1, 1);

	if (!exposed)
		abort();
	for (i = n; i-- > 0;) { /* from the end: a chain is exposed by its last */
		if (!s[i].ends_with_comm)
			continue;
		if (s[i].next_comp - s[i].b <= resume_ns)
			exposed[i] = 1;
		else if (i + 1 < n && exposed[i + 1] && s[i + 1].a - s[i].b <= resume_ns &&
			 s[i].next_comp >= s[i + 1].a)
			exposed[i] = 1;
	}
	out->exposed = out->wait = 0;
	for (i = 0; i < n; i++) {
		if (exposed[i]) {
			out->exposed += s[i].b - s[i].a;
			out->wait += covered(waits, &w, s[i].a, s[i].b);
		} else if (other) {
			other(ctx, s[i].a, s[i].b);
		}
	}
	free(exposed);
	free(s);
}
