/* Which rank holds the others back, by how much, and why. Per rank and
 * step: the step's window and GPU busy share and the rank's own main
 * cause (diagnose's), its matched collectives' time, how long they waited
 * for the last member to arrive (coll_wait) and how far behind the first
 * member it arrived (arrival), both hidden or not (peers.c); then what
 * the step lost: the time it waited for a late peer with nothing else to
 * do (wait: diagnose's wait_for_peer, overlap's wait_us), the peer it
 * lost the most of it to (waited_for) and how much (waited_for_us), and
 * the most any rank lost to it (late). The straggler of a step is the
 * rank with the largest late, when that is at least late_pct of its
 * step. Each rank's wait is split by peer, collective by collective, but
 * only its largest share leaves the rank (the join sees rows): a rank
 * that is no one's largest reads late 0 where it cost a little; the
 * step's straggler and its late are exact, as the waiter that lost the
 * most to any peer lost the most to it.
 *
 * Why exposed waits: in bucketed DDP each all-reduce starts as its bucket
 * is ready, and the rank whose buckets come a little later is last to
 * every collective; its peers' NCCL kernels wait under their backward
 * pass, which the wait does not lengthen (a balanced two-GPU job: 7.7 ms
 * of arrival a step, 0.17 ms of it exposed, steps equal to 0.02 ms). */
#include "peers.h"
#include "ta_analyses.h"

#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_stragglers_opts ta_stragglers_defaults = { 10, NULL, 0 };

enum {
	C_RANK, C_STEP, C_STEP_US, C_BUSY, C_COMM, C_COLL_WAIT, C_WAIT, C_WAITED_FOR,
	C_WAITED_FOR_US, C_ARRIVAL, C_LATE, C_LAST, C_STRAGGLER, C_CAUSE
};

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "busy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "comm_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "coll_wait_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "wait_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "waited_for", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "waited_for_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "arrival_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "late_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "arrived_last", TA_COL_REAL, TA_UNIT_RATIO, 0 },
	{ "straggler", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "cause", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};

/* One rank's step: a wait (diagnose's finding: for peer, -1 not named)
 * or what it was late by. */
struct key_val {
	int64_t rank, step;
	int has_step;
	double v;
	int64_t peer;
};

static int cmp_key_val(const void *x, const void *y)
{
	const struct key_val *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->has_step != b->has_step)
		return a->has_step - b->has_step;
	return a->step < b->step ? -1 : a->step > b->step;
}

/* The entries of (rank, step) in v sorted: their first, *n how many. */
static const struct key_val *find_all(const struct key_val *v, size_t nv, int64_t rank,
				      const struct ta_cell *step, size_t *n)
{
	struct key_val k = { rank, step->null ? 0 : step->i, !step->null, 0, -1 };
	size_t lo = 0, hi = nv, e;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_key_val(&v[mid], &k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (e = lo; e < nv && cmp_key_val(&v[e], &k) == 0; e++)
		;
	*n = e - lo;
	return v + lo;
}

/* Diagnose's wait_for_peer findings, by rank and step: one per peer
 * waited for ("rank 3", and its cause after it). */
static struct key_val *peer_waits(const struct ta_table *f, size_t *n)
{
	struct key_val *v = ta_xcalloc(f->nrows + 1, sizeof(*v));
	size_t i;

	*n = 0;
	for (i = 0; i < f->nrows; i++) {
		const struct ta_cell *step = ta_table_cell(f, i, 1);
		long long peer;

		if (strcmp(ta_table_cell(f, i, 2)->s, "wait_for_peer") != 0)
			continue;
		if (sscanf(ta_table_cell(f, i, 5)->s, "rank %lld", &peer) != 1)
			peer = -1;
		v[(*n)++] = (struct key_val){ ta_table_cell(f, i, 0)->i,
					      step->null ? 0 : step->i, !step->null,
					      ta_table_cell(f, i, 3)->d, peer };
	}
	ta_qsort(v, *n, sizeof(*v), cmp_key_val);
	return v;
}

/* What row i's rank itself lost waiting for peers in its step (0 where
 * not measured). */
static double own_wait(const struct ta_table *t, size_t i)
{
	const struct ta_cell *w = ta_table_cell(t, i, C_WAIT);

	return w->null ? 0 : w->d;
}

/* late and straggler from every row's wait and waited_for: t holds every
 * rank (one run, or the shards' rows joined). The straggler of a step is
 * one rank among those whose late is at least late_pct of their step:
 * the one whose late exceeds its own wait the most. In a pipeline a
 * slow stage's delay reaches every later stage, each waiting for the
 * one before as long as it was itself held up: each passes on about what
 * it waited, and only the slow stage's late is not a wait of its own (a
 * 4-stage NCCL pipeline with stage 0 slow: late 13.7 ms for stage 0,
 * which waited 6.2, and 17.9 for stage 2, which waited 17.8). Where two ranks wait for
 * each other (a data-loading stall on each), the larger late is still
 * the larger difference. */
static void mark_stragglers(struct ta_table *t, double late_pct)
{
	struct key_val *by_peer = ta_xcalloc(t->nrows + 1, sizeof(*by_peer));
	struct key_val *most = ta_xcalloc(t->nrows + 1, sizeof(*most));
	struct key_val *unmeasured = ta_xcalloc(t->nrows + 1, sizeof(*unmeasured));
	size_t i, j, n = 0, nmost = 0, nun = 0, k;

	for (i = 0; i < t->nrows; i++) {
		const struct ta_cell *step = ta_table_cell(t, i, C_STEP);
		const struct ta_cell *peer = ta_table_cell(t, i, C_WAITED_FOR);
		const struct ta_cell *wait = ta_table_cell(t, i, C_WAITED_FOR_US);

		if (!peer->null && !wait->null && wait->d > 0)
			by_peer[n++] = (struct key_val){ peer->i, step->null ? 0 : step->i,
							 !step->null, wait->d, -1 };
	}
	ta_qsort(by_peer, n, sizeof(*by_peer), cmp_key_val);
	/* the ranks of each step whose wait was not measured (collectives
	 * with no length): they may have waited for anyone */
	for (i = 0; i < t->nrows; i++) {
		const struct ta_cell *step = ta_table_cell(t, i, C_STEP);

		if (ta_table_cell(t, i, C_WAIT)->null && !ta_table_cell(t, i, C_ARRIVAL)->null)
			unmeasured[nun++] = (struct key_val){ 0, step->null ? 0 : step->i,
				!step->null, 0, ta_table_cell(t, i, C_RANK)->i };
	}
	ta_qsort(unmeasured, nun, sizeof(*unmeasured), cmp_key_val);
	for (i = 0; i < t->nrows; i++) {
		const struct ta_cell *step = ta_table_cell(t, i, C_STEP);
		int64_t rank = ta_table_cell(t, i, C_RANK)->i;
		const struct key_val *w, *u;
		double late = 0;
		size_t others;

		if (ta_table_cell(t, i, C_ARRIVAL)->null) /* not measured: gloo */
			continue;
		w = find_all(by_peer, n, rank, step, &k);
		for (j = 0; j < k; j++)
			if (w[j].v > late)
				late = w[j].v;
		/* what the others lost to it is at least late; 0 is not
		 * known where one of them has no measured wait (it passed
		 * a gate) */
		u = find_all(unmeasured, nun, 0, step, &k);
		for (j = 0, others = 0; j < k; j++)
			others += u[j].peer != rank;
		if (late <= 0 && others) {
			/* (a shard's own rows were marked before the join) */
			ta_table_set_null(t, i, C_LATE);
			ta_table_set_null(t, i, C_STRAGGLER);
			continue;
		}
		ta_table_set_real(t, i, C_LATE, late);
		/* a candidate of its step (key: rank 0, the step): what it
		 * passed on that it did not itself wait for */
		if (late > 0 && late >= late_pct / 100 * ta_table_cell(t, i, C_STEP_US)->d)
			most[nmost++] = (struct key_val){ 0, step->null ? 0 : step->i,
				!step->null, late - own_wait(t, i), rank };
	}
	ta_qsort(most, nmost, sizeof(*most), cmp_key_val);
	for (i = 0; i < t->nrows; i++) {
		const struct ta_cell *step = ta_table_cell(t, i, C_STEP);
		const struct key_val *m = find_all(most, nmost, 0, step, &k);
		int64_t best = -1;
		double top = 0;

		/* the step's one straggler (ties: the lower rank) */
		for (j = 0; j < k; j++)
			if (best < 0 || m[j].v > top || (m[j].v == top && m[j].peer < best))
				top = m[j].v, best = m[j].peer;
		if (ta_table_cell(t, i, C_LATE)->null)   /* not measured (gloo): no verdict, not 0 */
			continue;
		ta_table_set_int(t, i, C_STRAGGLER, best >= 0 &&
				 ta_table_cell(t, i, C_RANK)->i == best);
	}
	free(by_peer);
	free(most);
	free(unmeasured);
}

/* A row of a rank asked for (o->ranks, sorted: the query's). */
static int shown(const struct ta_table *t, size_t row, void *ctx)
{
	const struct ta_stragglers_opts *o = ctx;
	int64_t rank = ta_table_cell(t, row, C_RANK)->i;
	size_t lo = 0, hi = o->nranks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->ranks[mid] == rank)
			return 1;
		if (o->ranks[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int ta_stragglers_run(sqlite3 *db, const struct ta_query *q,
		      const struct ta_stragglers_opts *o, struct ta_table **out,
		      struct ta_error *err)
{
	struct ta_diagnose_opts dopts = ta_diagnose_defaults;
	struct ta_table *verdicts = NULL, *findings = NULL, *t;
	struct ta_query every = *q;
	struct key_val *waits;
	struct ta_peers p;
	size_t i, nwaits;

	dopts.path = 0; /* the verdicts and their findings alone */
	dopts.findings = 0;
	every.ranks = NULL;
	every.nranks = 0;
	*out = NULL;
	/* a rank asked for that is not in the trace: said, as everywhere (a
	 * shard holds one rank: the merged way, or the join, says it) */
	if (!ta_model_gathered(db) && ta_model_prepare(db, q, TA_NEED_GPU, err) < 0)
		return -1;
	if (ta_diagnose_run(db, &every, &dopts, &verdicts, &findings, err) < 0)
		return -1;
	if (ta_peers_match(db, &every, &p, err) < 0) {
		ta_table_free(verdicts);
		ta_table_free(findings);
		return -1;
	}
	waits = peer_waits(findings, &nwaits);
	ta_table_free(findings);
	t = ta_table_new("Stragglers per rank and step", cols,
			 sizeof(cols) / sizeof(*cols));
	for (i = 0; i < verdicts->nrows; i++) {
		const struct ta_cell *step = ta_table_cell(verdicts, i, 1);
		int64_t rank = ta_table_cell(verdicts, i, 0)->i;
		const struct ta_peer_step *x = step->null ? NULL :
			ta_peers_find(&p, rank, step->i);
		struct ta_peer_step all;   /* --window span: the rank's steps together */
		const struct key_val *w;
		size_t r = ta_table_add_row(t), latest = 0, k, j;
		double wait = 0, most = 0;
		int64_t peer = -1;

		if (step->null) {
			ta_peers_rank_total(&p, rank, &all, &latest);
			x = &all;
		}
		ta_table_set_int(t, r, C_RANK, rank);
		if (!step->null)
			ta_table_set_int(t, r, C_STEP, step->i);
		ta_table_set_real(t, r, C_STEP_US, ta_table_cell(verdicts, i, 2)->d);
		if (!ta_table_cell(verdicts, i, 3)->null)   /* an empty window has none */
			ta_table_set_real(t, r, C_BUSY, ta_table_cell(verdicts, i, 3)->d);
		ta_table_set_text(t, r, C_CAUSE, ta_table_cell(verdicts, i, 5)->s);
		/* nothing matched (gloo's CPU collectives, sizes or steps that
		 * disagree, no collective kernel): nothing measured,
		 * not zero */
		if (!p.matched)
			continue;
		/* the peer it lost the most to (ties: the lower rank) */
		w = find_all(waits, nwaits, rank, step, &k);
		for (j = 0; j < k; j++) {
			wait += w[j].v;
			if (w[j].peer >= 0 && (w[j].v > most ||
					       (w[j].v == most && w[j].peer < peer)))
				most = w[j].v, peer = w[j].peer;
		}
		if (peer < 0 && x && x->peer >= 0) /* waited under its own work */
			peer = x->peer;
		ta_table_set_real(t, r, C_ARRIVAL, x ? (double)x->late_ns / 1e3 : 0);
		ta_table_set_real(t, r, C_LAST, x && x->ncoll ?
				  (double)x->nlast / (double)x->ncoll : 0);
		/* a collective of its step had no length (damaged): when it
		 * came is known, how long it waited is not */
		if (x && x->nuntimed)
			continue;
		ta_table_set_real(t, r, C_COMM, x ? (double)x->comm_ns / 1e3 : 0);
		ta_table_set_real(t, r, C_COLL_WAIT, x ? (double)x->wait_ns / 1e3 : 0);
		ta_table_set_real(t, r, C_WAIT, wait);
		if (peer >= 0)
			ta_table_set_int(t, r, C_WAITED_FOR, peer);
		ta_table_set_real(t, r, C_WAITED_FOR_US, most);
	}
	/* on a shard: every row, for the join (ta_stragglers_join) */
	if (ta_model_gathered(db))
		mark_stragglers(t, o->late_pct);
	else if ((mark_stragglers(t, o->late_pct), o->ranks))
		ta_table_keep(t, shown, (void *)o);
	free(waits);
	ta_peers_say(t, &p);
	ta_peers_free(&p);
	ta_table_free(verdicts);
	*out = t;
	return 0;
}

struct ta_table *ta_stragglers_join(struct ta_table *t, void *ctx)
{
	const struct ta_stragglers_opts *o = ctx;

	mark_stragglers(t, o->late_pct);
	ta_name_late_peers(t, C_RANK, C_STEP, C_CAUSE);  /* before: a peer's row goes */
	if (o->ranks)
		ta_table_keep(t, shown, (void *)o);
	return t;
}
