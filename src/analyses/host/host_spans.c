/* A rank's host spans in memory and the two searches over them
 * (host_spans.h). They answer what host.c's SQL searches answered, row
 * for row: the order is events_cpu's, so ties go the same way. */
#include "host_spans.h"
#include "analyses/common/ids.h"
#include "ta_model.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Its rows in events_cpu's order. Which are steps, which names exist
 * and which categories are ranges is decided here, from sets read once:
 * SQL's tests a row (a step-name set, a name lookup, two subqueries)
 * tripled the pass. */
static const char spans_sql[] =
	"SELECT e.ts, e.dur, e.name, e.idx, e.cat, e.tid, e.pid FROM host e WHERE e.rank = ?1"
	" ORDER BY e.ts, e.dur, e.idx";

static void add(struct ta_host_spans *s, struct ta_host_span sp)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = ta_xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = sp;
}

/* prev: the nearest earlier span that ends later. A span between the two
 * ends no later than this one, so a search for one ending at b or later
 * that finds this one too short can jump there. */
void ta_host_spans_link(struct ta_host_spans *s)
{
	long *stack = ta_xcalloc(s->n + 1, sizeof(*stack));
	size_t i, top = 0;

	for (i = 0; i < s->n; i++) {
		int64_t own = !s->v[i].ranged || s->v[i].python ? s->v[i].end : INT64_MIN;

		while (top && s->v[stack[top - 1]].end <= s->v[i].end)
			top--;
		s->v[i].prev = top ? stack[top - 1] : -1;
		stack[top++] = (long)i;
		s->v[i].reach = i && s->v[i - 1].reach > own ? s->v[i - 1].reach : own;
	}
	free(stack);
}

/* The sets a load reads first: the names, the step names (as the
 * searches' NOT IN excluded them), the range categories' and Python's
 * (as TA_CAT_ID finds them: the first such label). */
struct sets {
	struct ta_ids names, steps, engine, unscale, update;
	int64_t ann, py;
	int have_ann, have_py;
};

/* A category's id (a TA_CAT_* subquery), if the trace has it. */
static int read_cat(sqlite3 *db, const char *sql, int64_t *id, int *have,
		    struct ta_error *err)
{
	struct ta_ids one;

	if (ta_ids_read(db, sql, &one, err) < 0)
		return -1;
	*have = one.n > 0;
	*id = one.n ? one.v[0] : 0;
	free(one.v);
	return 0;
}

static int read_sets(sqlite3 *db, struct sets *t, struct ta_error *err)
{
	memset(t, 0, sizeof(*t));
	return ta_ids_read(db, "SELECT name_id FROM label", &t->names, err) < 0 ||
	       ta_ids_read(db, "SELECT name_id FROM label WHERE name GLOB"
			" 'ProfilerStep*'", &t->steps, err) < 0 ||
	       ta_ids_read(db, "SELECT name_id FROM label WHERE name GLOB"
			" 'autograd::engine::evaluate_function: *'", &t->engine, err) < 0 ||
	       ta_ids_read(db, "SELECT name_id FROM label WHERE name ="
			" 'aten::_amp_foreach_non_finite_check_and_unscale_'",
			&t->unscale, err) < 0 ||
	       ta_ids_read(db, "SELECT name_id FROM label WHERE name ="
			" 'aten::_amp_update_scale_'", &t->update, err) < 0 ||
	       read_cat(db, "SELECT " TA_CAT_USER_ANN, &t->ann, &t->have_ann, err) < 0 ||
	       read_cat(db, "SELECT " TA_CAT_PYTHON, &t->py, &t->have_py, err) < 0 ?
		-1 : 0;
}

static void unthread(struct ta_host_spans *s)
{
	free(s->by_thread);
	free(s->place);
	free(s->tprev);
	free(s->segs);
	s->by_thread = NULL;
	s->place = s->tprev = NULL;
	s->segs = NULL;
	s->nsegs = 0;
}

int ta_host_spans_load(sqlite3 *db, int64_t rank, struct ta_host_spans *s,
		       struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct sets t;
	int rc = SQLITE_ERROR, have_max = 0;

	s->n = 0;
	s->max_dur = 0;
	s->max_engine = 0;
	s->loaded = 1;
	unthread(s);
	if (read_sets(db, &t, err) < 0 || ta_db_prepare(db, spans_sql, &st, err) < 0)
		goto out;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(st, 0), dur, end, name, cat;
		int ranged, py, engine, is_id = sqlite3_column_type(st, 2) == SQLITE_INTEGER;

		/* NULL names pass no NOT IN; the longest counts the rest (a
		 * name that is no integer is no step, and no label either) */
		name = sqlite3_column_int64(st, 2);
		if (sqlite3_column_type(st, 2) == SQLITE_NULL ||
		    (is_id && ta_ids_has(&t.steps, name)) ||
		    sqlite3_column_type(st, 1) == SQLITE_NULL)
			continue;
		dur = sqlite3_column_int64(st, 1);
		if (!have_max || dur > s->max_dur)
			s->max_dur = dur, have_max = 1;
		if (sqlite3_column_type(st, 0) == SQLITE_NULL || !is_id ||
		    !ta_ids_has(&t.names, name))
			continue;
		/* past int64, SQL's sum went on as a double: as far as it goes */
		if (__builtin_add_overflow(ts, dur, &end))
			end = dur > 0 ? INT64_MAX : INT64_MIN;
		cat = sqlite3_column_int64(st, 4);
		py = sqlite3_column_type(st, 4) != SQLITE_NULL && t.have_py && cat == t.py;
		ranged = py || (sqlite3_column_type(st, 4) != SQLITE_NULL &&
				t.have_ann && cat == t.ann);
		engine = !ranged && ta_ids_has(&t.engine, name);
		if (engine && dur > s->max_engine)
			s->max_engine = dur;
		add(s, (struct ta_host_span){ ts, end, dur, name,
			sqlite3_column_int64(st, 3), -1, ranged, py, engine,
			ta_ids_has(&t.unscale, name) ? AMP_UNSCALE :
			ta_ids_has(&t.update, name) ? AMP_UPDATE : 0,
			sqlite3_column_type(st, 6) == SQLITE_INTEGER ?
			sqlite3_column_int64(st, 6) : TA_NO_THREAD,
			sqlite3_column_type(st, 5) == SQLITE_INTEGER ?
			sqlite3_column_int64(st, 5) : TA_NO_THREAD, INT64_MIN });
	}
	ta_host_spans_link(s);
out:
	sqlite3_finalize(st);
	free(t.names.v);
	free(t.steps.v);
	free(t.engine.v);
	free(t.unscale.v);
	free(t.update.v);
	return st ? ta_db_done(db, rc, err) : -1;
}

void ta_host_spans_free(struct ta_host_spans *s)
{
	unthread(s);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* The first span that starts at t or later (after, when past). */
static size_t first_from(const struct ta_host_spans *s, int64_t t, int past)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (s->v[m].ts < t || (past && s->v[m].ts == t))
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

long ta_host_spans_covering(const struct ta_host_spans *s, int64_t a, int64_t b)
{
	long i = (long)first_from(s, a, 1) - 1;
	int64_t from;

	if (__builtin_sub_overflow(a, s->max_dur, &from))
		from = a < 0 ? INT64_MIN : INT64_MAX;
	while (i >= 0 && s->v[i].end < b)
		i = s->v[i].prev;
	return i >= 0 && s->v[i].ts >= from ? i : -1;
}

/* Where no one range is over half of [a, b]: the record_function
 * ranges of one name that together are (two back-to-back gradient hooks
 * in one hole, 440 and 420 us of 1095): the one of them over most of it
 * (the caller names its part, then the rest, where the other is over
 * half); -1 if none. Python frames are not summed: they nest, and one of
 * them over a part is no name for the hole. */
#define RECUR_NAMES 32

struct name_sum {
	int64_t name, in, best_in;
	long best;
};

static long recurring(const struct ta_host_spans *s, int64_t a, int64_t b,
		      int64_t from, int64_t most, size_t end)
{
	struct name_sum seen[RECUR_NAMES];
	size_t i, n = 0, k;
	long top = -1;

	for (i = first_from(s, from, 0); i < end; i++) {
		const struct ta_host_span *x = &s->v[i];
		int64_t lo = x->ts > a ? x->ts : a, hi = x->end < b ? x->end : b;

		if (!x->ranged || x->python || x->dur > most || hi <= lo)
			continue;
		for (k = 0; k < n && seen[k].name != x->name; k++)
			;
		if (k == n) {
			if (n == RECUR_NAMES)
				continue;
			seen[n++] = (struct name_sum){ x->name, 0, 0, -1 };
		}
		seen[k].in += hi - lo;
		if (hi - lo > seen[k].best_in)
			seen[k].best = (long)i, seen[k].best_in = hi - lo;
	}
	for (k = 0; k < n; k++)
		if (2 * seen[k].in >= b - a && (top < 0 || seen[k].in > seen[top].in))
			top = (long)k;
	return top < 0 ? -1 : seen[top].best;
}

long ta_host_spans_overlapping(const struct ta_host_spans *s, int64_t a,
			       int64_t b)
{
	int64_t len, most, from, half;
	long best = -1;
	size_t i, end;

	/* 4 times a length past int64 reaches every span: SQL's doubles */
	if (__builtin_sub_overflow(b, a, &len))
		return -1;
	if (__builtin_mul_overflow(len, 4, &most))
		most = len < 0 ? INT64_MIN : INT64_MAX;
	if (__builtin_sub_overflow(a, most, &from))
		from = most > 0 ? INT64_MIN : INT64_MAX;
	half = len / 2;
	end = first_from(s, b, 0);
	for (i = first_from(s, from, 0); i < end; i++) {
		const struct ta_host_span *x = &s->v[i], *o;
		int64_t lo = x->ts > a ? x->ts : a, hi = x->end < b ? x->end : b, in;

		if (!x->ranged || x->dur > most ||
		    __builtin_sub_overflow(hi, lo, &in) || in < half)
			continue;
		o = best < 0 ? NULL : &s->v[best];
		if (!o || x->python < o->python ||
		    (x->python == o->python && (x->dur < o->dur ||
		     (x->dur == o->dur && x->idx > o->idx))))
			best = (long)i;
	}
	return best >= 0 ? best : recurring(s, a, b, from, most, end);
}

/* The time in [upto, b] the spans from i on (by start, up to b; at most
 * most of them) cover: engine tasks, or ops and Python frames. */
static int64_t covered_from(const struct ta_host_spans *s, size_t i, int64_t upto,
			    int64_t b, int engine, size_t most)
{
	size_t end = first_from(s, b, 0), seen = 0;
	int64_t in = 0;

	for (; i < end && seen++ < most; i++) {
		const struct ta_host_span *x = &s->v[i];
		int64_t lo = x->ts > upto ? x->ts : upto, hi = x->end < b ? x->end : b;

		if ((engine ? x->engine : !x->ranged || x->python) && hi > lo)
			in += hi - lo, upto = hi;
	}
	return in;
}

int ta_host_spans_in_backward(const struct ta_host_spans *s, int64_t a, int64_t b)
{
	int64_t from;

	if (!s->max_engine || b <= a || __builtin_sub_overflow(a, s->max_engine, &from))
		return 0;
	/* tasks by start, one thread's (nested ones counted once) */
	return covered_from(s, first_from(s, from, 0), a, b, 1, SIZE_MAX) >=
	       (b - a) - (b - a) / 2;
}

/* How many spans begun in [a, b] are read */
#define OP_IN 65536

int64_t ta_host_spans_op_time(const struct ta_host_spans *s, int64_t a, int64_t b)
{
	size_t i = first_from(s, a, 0);
	int64_t upto = a;

	/* begun before a: they cover it up to the latest end among them */
	if (i > 0 && s->v[i - 1].reach > a)
		upto = s->v[i - 1].reach < b ? s->v[i - 1].reach : b;
	return upto - a + covered_from(s, i, upto, b, 0, OP_IN);
}

/* How far back from a sync its unscale is looked for: GradScaler.step
 * reads the check right after it (a clip_grad_norm_ between runs a few
 * hundred ops) */
#define UNSCALE_SCAN 4096

int64_t ta_host_spans_after_unscale(const struct ta_host_spans *s, int64_t tid,
				    int64_t t)
{
	size_t i = first_from(s, t, 0), seen = 0;

	while (i-- > 0 && seen++ < UNSCALE_SCAN)
		if (s->v[i].amp && s->v[i].tid == tid)
			return s->v[i].amp == AMP_UNSCALE && s->v[i].end <= t ?
			       s->v[i].end : INT64_MIN;
	return INT64_MIN;
}

/* ---- by thread: what ta_host_spans_enclosing searches ---- */

struct key {
	int64_t pid, tid;
	long i;
};

static int cmp_key(const void *x, const void *y)
{
	const struct key *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* by_thread, place and tprev: a stack per thread, as ta_host_spans_link
 * over all, but an earlier span that ends with this one stays (a frame
 * that ends with its range must not hide the range) */
static void thread(struct ta_host_spans *s)
{
	struct key *k = ta_xcalloc(s->n + 1, sizeof(*k));
	long *stack = ta_xcalloc(s->n + 1, sizeof(*stack));
	size_t i, top = 0;

	for (i = 0; i < s->n; i++)
		k[i] = (struct key){ s->v[i].pid, s->v[i].tid, (long)i };
	ta_qsort(k, s->n, sizeof(*k), cmp_key);
	s->by_thread = ta_xcalloc(s->n + 1, sizeof(*s->by_thread));
	s->place = ta_xcalloc(s->n + 1, sizeof(long));
	s->tprev = ta_xcalloc(s->n + 1, sizeof(long));
	s->segs = ta_xcalloc(s->n + 1, sizeof(size_t));
	s->nsegs = 0;
	for (i = 0; i < s->n; i++) {
		long x = k[i].i;

		if (!i || k[i].pid != k[i - 1].pid || k[i].tid != k[i - 1].tid) {
			top = 0;
			s->segs[s->nsegs++] = i;
		}
		while (top && s->v[stack[top - 1]].end < s->v[x].end)
			top--;
		s->tprev[x] = top ? stack[top - 1] : -1;
		stack[top++] = x;
		s->by_thread[i] = x;
		s->place[x] = (long)i;
	}
	s->segs[s->nsegs] = s->n;
	free(stack);
	free(k);
}

/* Span x and the shorter ones of its thread that start with it: the
 * shortest ranged one of the kind asked over [a, b], not over all of
 * [oa, ob]; else best. */
static long shortest_at(const struct ta_host_spans *s, long x, int64_t a,
			int64_t b, int python, int64_t oa, int64_t ob, long best)
{
	long p;

	for (p = s->place[x]; p >= 0; p--) {
		const struct ta_host_span *y = &s->v[s->by_thread[p]];

		if (y->ts != s->v[x].ts || y->pid != s->v[x].pid || y->tid != s->v[x].tid)
			break;
		if (y->ranged && y->python == python && y->ts <= a && y->end >= b &&
		    !(y->ts <= oa && y->end >= ob) &&
		    (best < 0 || y->dur < s->v[best].dur))
			best = (long)s->by_thread[p];
	}
	return best;
}

long ta_host_spans_enclosing(struct ta_host_spans *s, int64_t a, int64_t b,
			     const struct ta_ids *tids, int64_t outer_a,
			     int64_t outer_b)
{
	long range = -1, python = -1;
	int64_t before;
	size_t g;

	if (!s->by_thread && s->n)
		thread(s);
	before = (int64_t)first_from(s, a, 1);   /* the spans that start by a */
	for (g = 0; g < s->nsegs; g++) {
		size_t lo = s->segs[g], hi = s->segs[g + 1];
		long x, r = -1, py = -1;

		x = (long)s->by_thread[lo];
		if (s->v[x].tid == TA_NO_THREAD || !tids || !ta_ids_has(tids, s->v[x].tid))
			continue;
		/* the thread's last span that starts by a */
		lo += ta_lower_i64(s->by_thread + lo, hi - lo, before);
		if (lo == s->segs[g])
			continue;
		x = (long)s->by_thread[lo - 1];
		/* outwards: the latest that reaches b, then those around it */
		while (x >= 0 && s->v[x].end < b)
			x = s->tprev[x];
		for (; x >= 0 && r < 0; x = s->tprev[x]) {
			r = shortest_at(s, x, a, b, 0, outer_a, outer_b, -1);
			if (py < 0)
				py = shortest_at(s, x, a, b, 1, outer_a, outer_b, -1);
		}
		if (r >= 0 && (range < 0 || s->v[r].dur < s->v[range].dur))
			range = r;
		if (py >= 0 && (python < 0 || s->v[py].dur < s->v[python].dur))
			python = py;
	}
	return range >= 0 ? range : python;
}
