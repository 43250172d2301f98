/* Exposed communication is what computation waits for, not communication
 * with no computation at the same instant: in a DDP step whose compute
 * stream is idle for the host's reasons while buckets are reduced, the
 * reduction costs nothing (measured: the same step time without gradient
 * sync), though nothing computes beside it.
 *
 * A stretch of communication without computation is exposed when it ends
 * with the communication and computation resumes within resume_ns, or
 * work queued before its end (launched already: the GPU, not the host,
 * held it back) starts within resume_ns of it, or when the next such
 * stretch follows within resume_ns (collectives back to back, copies
 * between them) and is exposed itself. Under a slow profiled host (one
 * bucket after backward, with_stack) the optimizer's kernels come late,
 * but the gradients' copy DDP queued behind the all-reduce starts as it
 * ends: without the queue the whole all-reduce read as hidden. A host
 * blocked in a sync that returns as the collective ends (a loss
 * all-reduced, then .item()) waited for it too, though its next kernel
 * comes only after the Python that follows. Either waited from when the
 * work was launched or the sync began: before, the host was busy with
 * something else, and an earlier end would not have been used. */
#include "exposed.h"

#include "ta.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

struct stretch {
	int64_t a, b;
	int64_t from;       /* exposed: from here to b (a, or a launch in it) */
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
			s[(*n)++] = (struct stretch){ x, y, x,
				k < comp->n ? comp->v[k].start : INT64_MAX, y == ce };
			x = y;
		}
	}
	return s;
}

/* When work of q that starts in [b, b + resume_ns] was first launched,
 * if by b (INT64_MAX: none was); *k moves on (the stretches come in
 * order). Before that launch (or sync) nothing waited for the stretch:
 * the host was doing other work. */
static int64_t waited_since(const struct ta_queued *q, size_t n, size_t *k,
			    int64_t b, int64_t resume_ns)
{
	int64_t since = INT64_MAX;
	size_t i;

	while (*k < n && q[*k].start < b)
		(*k)++;
	for (i = *k; i < n && q[i].start - b <= resume_ns; i++)
		if (q[i].launched < b && q[i].launched < since)
			since = q[i].launched;
	return since;
}

/* Whether one of ends[n] (sorted) is in [b - resume_ns, b]. */
static int ended(const int64_t *ends, size_t n, int64_t b, int64_t resume_ns)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ends[mid] < b - resume_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ends[lo] <= b;
}

/* Computation that starts as a stretch of communication ends, though
 * communication runs on: it waited for a collective that ended just
 * before, unless a copy did too (a pageable copy holds the computation
 * as often; no computation ran in the stretch to hold it otherwise). */
static int after_collective(const struct ta_queue *q, int64_t b, int64_t resume_ns)
{
	return ended(q->comm_ends, q->nends, b, resume_ns) &&
	       !ended(q->copy_ends, q->ncopies, b, resume_ns);
}

void ta_exposed_comm(const struct ta_union *comm, const struct ta_union *comp,
		     const struct ta_queue *queue,
		     const struct ta_union *waits, int64_t resume_ns,
		     struct ta_exposed *out,
		     void (*each)(void *ctx, int64_t a, int64_t b, int exposed),
		     void *ctx)
{
	size_t n, i, w = 0, q = 0;
	struct stretch *s = stretches(comm, comp, &n);
	char *exposed = calloc(n + 1, 1);

	if (!exposed)
		abort();
	for (i = 0; i < n; i++) { /* in order: the queue is searched forward */
		int64_t since = s[i].ends_with_comm ||
				after_collective(queue, s[i].b, resume_ns) ?
			waited_since(queue->v, queue->n, &q, s[i].b, resume_ns) : INT64_MAX;

		if (since == INT64_MAX)
			continue;
		exposed[i] = 1;
		if (since > s[i].a)  /* waited for from then on only */
			s[i].from = since;
	}
	for (i = n; i-- > 0;) { /* from the end: a chain is exposed by its last */
		if (!s[i].ends_with_comm || exposed[i])
			continue;
		if (s[i].next_comp != INT64_MAX && s[i].next_comp - s[i].b <= resume_ns)
			exposed[i] = 1;
		else if (i + 1 < n && exposed[i + 1] && s[i + 1].from == s[i + 1].a &&
			 s[i + 1].a - s[i].b <= resume_ns &&
			 s[i].next_comp >= s[i + 1].a)
			exposed[i] = 1;
	}
	out->exposed = out->wait = 0;
	for (i = 0; i < n; i++) {
		if (!exposed[i]) {
			if (each)
				each(ctx, s[i].a, s[i].b, 0);
			continue;
		}
		out->exposed += s[i].b - s[i].from;
		out->wait += covered(waits, &w, s[i].from, s[i].b);
		if (each && s[i].from > s[i].a)
			each(ctx, s[i].a, s[i].from, 0);
		if (each)
			each(ctx, s[i].from, s[i].b, 1);
	}
	free(exposed);
	free(s);
}

static void push_end(int64_t **v, size_t *n, size_t *cap, int64_t end)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*v = ta_xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = end;
}

void ta_queue_add(struct ta_queue *q, int64_t stream, int kind,
		  int64_t start, int64_t end, int64_t launched)
{
	size_t i;

	if (kind == TA_KIND_MEMORY)
		push_end(&q->copy_ends, &q->ncopies, &q->capcopies, end);
	if (kind == TA_KIND_COMM) {
		push_end(&q->comm_ends, &q->nends, &q->capends, end);
		for (i = 0; i < q->ncomm; i++)
			if (q->comm_streams[i] == stream)
				return;
		if (q->ncomm == q->capcomm) {
			q->capcomm = q->capcomm ? 2 * q->capcomm : 8;
			q->comm_streams = ta_xrealloc(q->comm_streams,
						      q->capcomm * sizeof(*q->comm_streams));
		}
		q->comm_streams[q->ncomm++] = stream;
		return;
	}
	if (q->n == q->cap) {
		q->cap = q->cap ? 2 * q->cap : 1024;
		q->v = ta_xrealloc(q->v, q->cap * sizeof(*q->v));
		q->stream = ta_xrealloc(q->stream, q->cap * sizeof(*q->stream));
	}
	q->v[q->n] = (struct ta_queued){ start, launched };
	q->stream[q->n++] = stream;
}

void ta_queue_add_host(struct ta_queue *q, int64_t returned, int64_t began)
{
	if (q->nhost == q->caphost) {
		q->caphost = q->caphost ? 2 * q->caphost : 64;
		q->host = ta_xrealloc(q->host, q->caphost * sizeof(*q->host));
	}
	q->host[q->nhost++] = (struct ta_queued){ returned, began };
}

static int cmp_queued(const void *x, const void *y)
{
	const struct ta_queued *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

void ta_queue_finish(struct ta_queue *q)
{
	size_t i, j, k = 0, n;

	ta_qsort(q->comm_ends, q->nends, sizeof(*q->comm_ends), ta_cmp_i64);
	ta_qsort(q->copy_ends, q->ncopies, sizeof(*q->copy_ends), ta_cmp_i64);
	for (i = 0; i < q->n; i++) {
		for (j = 0; j < q->ncomm && q->comm_streams[j] != q->stream[i]; j++)
			;
		if (j == q->ncomm)
			q->v[k] = q->v[i], q->stream[k++] = q->stream[i];
	}
	q->n = k;
	if (!q->nhost)
		return;
	/* the host's waits (few) merged in from the end, by start */
	ta_qsort(q->host, q->nhost, sizeof(*q->host), cmp_queued);
	n = q->n + q->nhost;
	if (n > q->cap) {
		q->cap = n;
		q->v = ta_xrealloc(q->v, q->cap * sizeof(*q->v));
		q->stream = ta_xrealloc(q->stream, q->cap * sizeof(*q->stream));
	}
	i = q->n;
	j = q->nhost;
	for (k = n; k-- > 0;) {
		if (j && (!i || q->host[j - 1].start >= q->v[i - 1].start))
			q->v[k] = q->host[--j], q->stream[k] = -1;
		else
			q->v[k] = q->v[i - 1], q->stream[k] = q->stream[i - 1], i--;
	}
	q->n = n;
	q->nhost = 0;
}

void ta_queue_reset(struct ta_queue *q)
{
	q->n = 0;
	q->ncomm = 0;
	q->nhost = 0;
	q->nends = 0;
	q->ncopies = 0;
}

void ta_queue_free(struct ta_queue *q)
{
	free(q->v);
	free(q->stream);
	free(q->comm_streams);
	free(q->host);
	free(q->comm_ends);
	free(q->copy_ends);
	memset(q, 0, sizeof(*q));
}

/* Length of [a, b) covered by comm, a union by start (binary search:
 * kernels of several streams come out of order of their ends). */
static int64_t overlapped(const struct ta_union *comm, int64_t a, int64_t b)
{
	size_t lo = 0, hi = comm->n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (comm->v[m].end <= a)
			lo = m + 1;
		else
			hi = m;
	}
	return covered(comm, &lo, a, b);
}

static int cmp_kernel(const void *x, const void *y)
{
	const struct ta_comp_kernel *a = x, *b = y;

	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	if ((a->over > 0) != (b->over > 0))
		return a->over > 0 ? 1 : -1;   /* those alone first */
	return a->dur < b->dur ? -1 : a->dur > b->dur;
}

int64_t ta_comm_slowdown(struct ta_comp_kernel *k, size_t n,
			 const struct ta_union *comm)
{
	size_t i, j, alone;
	int64_t total = 0;

	for (i = 0; i < n; i++) {
		k[i].over = comm->n ? overlapped(comm, k[i].ts, k[i].ts + k[i].dur) : 0;
		k[i].slowed = 0;
	}
	ta_qsort(k, n, sizeof(*k), cmp_kernel);
	for (i = 0; i < n; i = j) {
		int64_t median;

		for (alone = i; alone < n && k[alone].name == k[i].name &&
		     k[alone].over == 0; alone++)
			;
		for (j = alone; j < n && k[j].name == k[i].name; j++)
			;
		if (alone == i)
			continue; /* never alone: nothing to compare with */
		median = k[i + (alone - i) / 2].dur;
		for (size_t x = alone; x < j; x++)
			if (k[x].dur > median && k[x].dur > 0) {
				k[x].slowed = (int64_t)((double)(k[x].dur - median) *
							(double)k[x].over / (double)k[x].dur);
				total += k[x].slowed;
			}
	}
	return total;
}

static int cmp_op(const void *x, const void *y)
{
	const int64_t *a = x, *b = y;

	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	if (a[1] != b[1])
		return a[1] < b[1] ? -1 : 1;
	return a[2] < b[2] ? -1 : a[2] > b[2];
}

int ta_sync_ops_load(sqlite3 *db, struct ta_sync_ops *o, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	memset(o, 0, sizeof(*o));
	/* a trace without them costs no scan of the host's ops */
	if (!ta_db_int(db, "SELECT EXISTS (SELECT 1 FROM label WHERE name GLOB"
		       " 'torch::distributed::*')", 0))
		return 0;
	if (ta_db_prepare(db, "SELECT h.rank, h.ts, h.ts + h.dur FROM host h"
			  " WHERE h.name IN (SELECT name_id FROM label WHERE name GLOB"
			  " 'torch::distributed::*') AND h.dur > 0"
			  " AND h.rank IN (SELECT rank FROM sel_ranks)", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (o->n == cap) {
			cap = cap ? 2 * cap : 64;
			o->v = ta_xrealloc(o->v, 3 * cap * sizeof(*o->v));
		}
		for (int c = 0; c < 3; c++)
			o->v[3 * o->n + (size_t)c] = sqlite3_column_int64(st, c);
		o->n++;
	}
	sqlite3_finalize(st);
	/* by rank and start, as numbers (SQL's order put a text start after
	 * every number), then one search a launch, not a scan of every op before
	 * it (a DDP trace's 150 steps of bucket ops: 16 % of diagnose) */
	ta_qsort(o->v, o->n, 3 * sizeof(*o->v), cmp_op);
	o->reach = ta_xcalloc(o->n + 1, sizeof(*o->reach));
	for (size_t i = 0; i < o->n; i++)
		o->reach[i] = i && o->v[3 * i] == o->v[3 * (i - 1)] &&
			      o->reach[i - 1] > o->v[3 * i + 2] ? o->reach[i - 1] :
			      o->v[3 * i + 2];
	return ta_db_done(db, rc, err);
}

int ta_sync_ops_launched(struct ta_sync_ops *o, int64_t rank, int64_t l)
{
	size_t lo, hi;

	while (o->at < o->n && o->v[3 * o->at] < rank)
		o->at++;
	/* the rank's ops that started by l: one ends at l or later when the
	 * latest end among them does */
	lo = o->at, hi = o->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->v[3 * mid] == rank && o->v[3 * mid + 1] <= l)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > o->at && l <= o->reach[lo - 1];
}

void ta_sync_ops_free(struct ta_sync_ops *o)
{
	free(o->v);
	free(o->reach);
	memset(o, 0, sizeof(*o));
}
