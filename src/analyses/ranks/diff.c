/* diff BASE TEST: per name (CPU op, record_function range, Python frame,
 * GPU kernel) the count and time per step of each run and the change; per
 * rank the steps side by side. Each side is read from its own database
 * through its own model; names meet as text. */
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_intern.h"
#include "ta_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff_int.h"
#include "analyses/common/intervals.h"

static const char *const change_names[] = { "added", "deleted", "increased",
	"decreased", "unchanged", NULL };
static const char *const kind_names[] = { "cpu", "annotation", "python", "gpu",
	"all", NULL };

static const struct ta_col name_cols[] = {
	{ "kind", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "base_count", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "test_count", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "base_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "test_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "diff_count", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "diff_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "diff_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "change", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "flag", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "diff_self_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

static const struct ta_col step_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "base_steps", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "test_steps", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "base_step_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "test_step_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "diff_step_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "diff_step_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "base_busy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "test_busy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "base_idle_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "test_idle_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "base_verdict", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "test_verdict", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "base_host_wait_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "test_host_wait_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};

void ta_diff_add(struct diff_names *d, int side, int kind, const char *name,
		 double count, int64_t ns, int64_t self)
{
	struct ta_buf key = { 0 };
	int64_t id;
	int is_new;

	ta_buf_addf(&key, "%d\x1f%s", kind, name);
	id = ta_intern(d->keys, key.s, key.len, &is_new);
	ta_buf_free(&key);
	if (is_new) {
		if ((size_t)id > d->cap) {
			d->cap = d->cap ? 2 * d->cap : 1024;
			d->v = ta_xrealloc(d->v, d->cap * sizeof(*d->v));
		}
		memset(&d->v[id - 1], 0, sizeof(*d->v));
		d->v[id - 1].kind = kind;
		d->n = (size_t)id;
	}
	d->v[id - 1].count[side] += count;
	d->v[id - 1].ns[side] += ns;
	d->v[id - 1].self[side] += self;
}

/* What one side ran, by (kind, name id): names are looked up once. */
struct by_id {
	struct ta_intern *keys;      /* "kind:name_id" */
	struct { double count; int64_t ns, self; } *v;
	size_t n, cap;
};

/* Returns the entry's index. */
static size_t by_id_add(struct by_id *b, int kind, int64_t name, int64_t ns)
{
	char key[48];
	int len = snprintf(key, sizeof(key), "%d:%lld", kind, (long long)name);
	int is_new;
	int64_t id = ta_intern(b->keys, key, (size_t)len, &is_new);

	if (is_new) {
		if ((size_t)id > b->cap) {
			b->cap = b->cap ? 2 * b->cap : 1024;
			b->v = ta_xrealloc(b->v, b->cap * sizeof(*b->v));
		}
		b->v[id - 1].count = 0;
		b->v[id - 1].ns = 0;
		b->v[id - 1].self = 0;
		b->n = (size_t)id;
	}
	b->v[id - 1].count += 1;
	b->v[id - 1].ns = ta_add_sat(b->v[id - 1].ns, ns);
	b->v[id - 1].self = ta_add_sat(b->v[id - 1].self, ns);
	return (size_t)id - 1;
}

/* Into the names both sides share: names as text, shortened on demand. */
static int flush(sqlite3 *db, struct by_id *b, struct diff_names *d,
		 int side, int by_short, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct ta_buf s = { 0 };
	size_t i;

	if (ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?", &st, err) < 0)
		return -1;
	for (i = 0; i < b->n; i++) {
		const char *key = ta_intern_str(b->keys, (int64_t)i + 1);
		const char *name = NULL;
		int kind = atoi(key);

		sqlite3_bind_int64(st, 1, strtoll(strchr(key, ':') + 1, NULL, 10));
		if (sqlite3_step(st) == SQLITE_ROW)
			name = (const char *)sqlite3_column_text(st, 0);
		if (!name)
			name = "";
		/* the address differs from run to run, the frame does not */
		if (kind == DIFF_PYTHON && strstr(name, " at 0x")) {
			ta_buf_reset(&s);
			ta_buf_adds(&s, name);
			name = ta_no_addresses(s.s);
		}
		if (by_short) {
			struct ta_buf t = { 0 };

			ta_short_name(name, &t);
			ta_buf_reset(&s);
			ta_buf_adds(&s, t.s ? t.s : "");
			ta_buf_free(&t);
			name = s.s ? s.s : "";
		}
		ta_diff_add(d, side, kind, name, b->v[i].count, b->v[i].ns,
			    b->v[i].self);
		sqlite3_reset(st);
	}
	ta_buf_free(&s);
	sqlite3_finalize(st);
	return 0;
}

struct window {
	int64_t ts, end;
};

static int cmp_window(const void *a, const void *b)
{
	const struct window *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The window holding t, or -1 (windows sorted, not overlapping). */
static long window_of(const struct window *w, size_t n, int64_t t)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (w[m].ts <= t)
			a = m + 1;
		else
			b = m;
	}
	return a > 0 && t < w[a - 1].end ? (long)a - 1 : -1;
}

/* One rank's chosen steps, as the ProfilerStep ranges on the CPU (a
 * GPU-bound run's host is a step ahead of its GPU: what the host did in
 * step N is in its range, and the GPU work it launched there), or its
 * analysis window when it has none. */
static int windows_of(sqlite3 *db, int64_t rank, const struct ta_diff_side *s,
		      struct window **w, size_t *n, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*n = 0;
	if (ta_db_prepare(db, "SELECT ts, end_ts FROM step_host WHERE rank = ?1"
			  " AND (?2 < 0 OR step BETWEEN ?2 AND ?3)"
			  " UNION ALL SELECT ts, end_ts FROM span WHERE rank = ?1"
			  " AND ?2 < 0 AND NOT EXISTS (SELECT 1 FROM step_win"
			  " WHERE rank = ?1)", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_int64(st, 2, s->step_lo);
	sqlite3_bind_int64(st, 3, s->step_hi);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*w = ta_xrealloc(*w, (*n + 1) * sizeof(**w));
		(*w)[*n].ts = sqlite3_column_int64(st, 0);
		(*w)[(*n)++].end = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	ta_qsort(*w, *n, sizeof(**w), cmp_window);
	return 0;
}

/* Host rows by kind: CPU ops, record_function ranges (not the steps), and
 * Python frames; GPU work by when it was launched. */
static int rank_rows(sqlite3 *db, int64_t rank, const struct window *w,
		     size_t nw, enum ta_diff_kind kinds, struct by_id *b,
		     struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (kinds & TA_DIFF_CPU) {
		/* by thread and start, outer first: what nests in a row is not
		 * its self time */
		struct open { int64_t end; long entry; } *stack = NULL;
		size_t depth = 0, cap = 0;
		int64_t tid = 0;

		if (ta_db_prepare(db, "SELECT h.ts, h.dur, h.name, CASE h.cat"
				  " WHEN " TA_CAT_CPU_OP " THEN 0 WHEN " TA_CAT_USER_ANN
				  " THEN 1 WHEN " TA_CAT_PYTHON " THEN 2 ELSE -1 END,"
				  " h.tid FROM host h WHERE h.rank = ? AND h.ts IS NOT NULL AND h.dur IS NOT NULL"
				  " AND h.name NOT IN (SELECT name_id FROM label"
				  "  WHERE name GLOB 'ProfilerStep#*')"
				  " ORDER BY h.tid, h.ts, h.dur DESC", &st, err) < 0)
			return -1;
		sqlite3_bind_int64(st, 1, rank);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int kind = sqlite3_column_int(st, 3);
			int64_t ts = sqlite3_column_int64(st, 0);
			int64_t dur = sqlite3_column_int64(st, 1);
			long entry = -1;

			if (depth && sqlite3_column_int64(st, 4) != tid)
				depth = 0;
			tid = sqlite3_column_int64(st, 4);
			/* a range opened inside a Python frame outlives it
			 * (record_function's __enter__): its parent is the
			 * innermost row that holds all of it */
			while (depth && stack[depth - 1].end < ts + dur)
				depth--;
			if (kind >= 0 && window_of(w, nw, ts) >= 0)
				entry = (long)by_id_add(b, kind, sqlite3_column_int64(st, 2), dur);
			/* a nested row is not its parent's self time, counted
			 * or not (a frame may start a step before its children) */
			if (depth && stack[depth - 1].entry >= 0)
				b->v[stack[depth - 1].entry].self -= dur;
			if (depth == cap) {
				cap = cap ? 2 * cap : 64;
				stack = ta_xrealloc(stack, cap * sizeof(*stack));
			}
			stack[depth].end = ts + dur;
			stack[depth++].entry = entry;
		}
		free(stack);
		sqlite3_finalize(st);
		if (ta_db_done(db, rc, err) < 0)
			return -1;
	}
	if (kinds & TA_DIFF_GPU) {
		/* work with no launch call and a correlation before the
		 * rank's first call (none: no rule; a sync's correlation 0
		 * is not a first launch) was launched before the trace began (by
		 * a step not chosen): not counted by its start, which falls
		 * in the first step's range on a GPU-bound run (a profile
		 * with warmup=0 read 6 GEMMs a step where its step
		 * launched 3) */
		if (ta_db_prepare(db, "SELECT COALESCE(launch_ts, ts), dur, name FROM dev"
				  " WHERE rank = ?1 AND NOT (launch_ts IS NULL AND correlation >= 0"
				  " AND correlation < COALESCE((SELECT min(c.correlation) FROM calls c"
				  "  WHERE c.rank = ?1 AND c.correlation > 0), -1))", &st, err) < 0)
			return -1;
		sqlite3_bind_int64(st, 1, rank);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			if (window_of(w, nw, sqlite3_column_int64(st, 0)) >= 0)
				by_id_add(b, DIFF_GPU, sqlite3_column_int64(st, 2),
					  sqlite3_column_int64(st, 1));
		sqlite3_finalize(st);
		if (ta_db_done(db, rc, err) < 0)
			return -1;
	}
	return 0;
}

static int collect(sqlite3 *db, const struct ta_query *q, const struct ta_diff_opts *o,
		   int side, struct diff_names *d, struct ta_error *err)
{
	const struct ta_diff_side *s = side ? &o->test : &o->base;
	struct ta_query sq = *q;
	struct by_id b = { ta_intern_new(), NULL, 0, 0 };
	struct window *w = NULL;
	sqlite3_stmt *st = NULL;
	size_t nw;
	int rc = 0, step_rc;

	sq.ranks = s->ranks;
	sq.nranks = s->nranks;
	sq.sink = NULL;
	if (ta_model_prepare(db, &sq, TA_NEED_DEV | TA_NEED_HOST, err) < 0 ||
	    (s->step_lo >= 0 && ta_model_steps_kept(db, s->step_lo, s->step_hi, err) < 0) ||
	    ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY 1", &st, err) < 0) {
		if (s->step_lo >= 0 && err->code == TA_EXIT_INPUT) {
			char msg[sizeof(err->msg)];

			snprintf(msg, sizeof(msg), "%s", err->msg);
			ta_error_set(err, TA_EXIT_INPUT, "%s: %s", side ? "TEST" : "BASE", msg);
		}
		ta_intern_free(b.keys);
		return -1;
	}
	while (rc == 0 && (step_rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);

		rc = windows_of(db, rank, s, &w, &nw, err);
		if (rc == 0)
			rc = rank_rows(db, rank, w, nw, o->kinds, &b, err);
		d->units[side] += (int64_t)nw;
	}
	sqlite3_finalize(st);
	if (rc == 0)
		rc = ta_db_done(db, step_rc, err);
	if (rc == 0)
		rc = flush(db, &b, d, side, o->by_short, err);
	free(w);
	free(b.v);
	ta_intern_free(b.keys);
	return rc;
}

/* A change worth a person's attention: a name new or gone, or a change
 * in time beyond every noise floor: its own time's, the step's, and an
 * absolute one. Counts alone are not: two identical runs chose different
 * GEMM kernels up to 2 calls a step apart (see the man page). */
static int beyond_noise(const struct ta_diff_opts *o, double base_us,
			double diff_us, const char *change, double step_us)
{
	if (change == change_names[0] || change == change_names[1])
		return 1;
	return fabs(diff_us) >= o->noise_us &&
	       fabs(diff_us) >= o->noise_pct / 100.0 * base_us &&
	       fabs(diff_us) >= o->noise_step_pct / 100.0 * step_us;
}

static const char *change_of(double base, double test)
{
	if (base == 0 && test > 0)
		return change_names[0];
	if (base > 0 && test == 0)
		return change_names[1];
	if (fabs(test - base) < 1e-9)
		return change_names[4];
	return test > base ? change_names[2] : change_names[3];
}

static int cmp_rows(const struct ta_table *t, size_t a, size_t b)
{
	double x = fabs(ta_table_cell(t, a, 7)->d), y = fabs(ta_table_cell(t, b, 7)->d);
	int c;

	if (x != y)
		return x > y ? -1 : 1;
	c = strcmp(ta_table_cell(t, a, 0)->s, ta_table_cell(t, b, 0)->s);
	return c ? c : strcmp(ta_table_cell(t, a, 1)->s, ta_table_cell(t, b, 1)->s);
}

/* The names table: per step (HTA: totals), by the size of the change. */
struct ta_table *ta_diff_table(const struct diff_names *d,
			       const struct ta_diff_opts *o, int per_step,
			       double step_us)
{
	struct ta_table *t = ta_table_new("What changed, per step", name_cols, 12);
	size_t i;

	ta_table_set_values(t, 0, kind_names);
	ta_table_set_values(t, 9, change_names);
	for (i = 0; i < d->n; i++) {
		const struct diff_name *v = &d->v[i];
		const char *key = ta_intern_str(d->keys, (int64_t)i + 1);
		double bn = per_step && d->units[0] ? (double)d->units[0] : 1;
		double tn = per_step && d->units[1] ? (double)d->units[1] : 1;
		double bc = v->count[0] / bn, tc = v->count[1] / tn;
		double bu = (double)v->ns[0] / 1000.0 / bn, tu = (double)v->ns[1] / 1000.0 / tn;
		size_t r = ta_table_add_row(t);

		ta_table_set_text(t, r, 0, kind_names[v->kind]);
		ta_table_set_text(t, r, 1, strchr(key, '\x1f') + 1);
		ta_table_set_real(t, r, 2, ta_round(bc, 3));
		ta_table_set_real(t, r, 3, ta_round(tc, 3));
		ta_table_set_real(t, r, 4, ta_round(bu, 3));
		ta_table_set_real(t, r, 5, ta_round(tu, 3));
		ta_table_set_real(t, r, 6, ta_round(tc - bc, 3));
		ta_table_set_real(t, r, 7, ta_round(tu - bu, 3));
		if (bu != 0)
			ta_table_set_real(t, r, 8, ta_round(100 * (tu - bu) / bu, 2));
		ta_table_set_text(t, r, 9, change_of(bc, tc));
		ta_table_set_int(t, r, 10, beyond_noise(o, bu, tu - bu,
							change_of(bc, tc), step_us));
		ta_table_set_real(t, r, 11, ta_round(((double)v->self[1] / tn -
						       (double)v->self[0] / bn) / 1000.0, 3));
	}
	ta_table_sort(t, cmp_rows);
	return t;
}

/* Per rank: diagnose's steps of each side, averaged: busy as the share of
 * the steps' time (a mean of the steps' percentages weighs a 1 ms step as
 * much as a 35 ms one). */
struct rank_steps {
	int64_t rank, n;
	double step_us, busy;         /* summed: µs, busy µs; then the means */
	double idle_us, host_wait_us;  /* idle's, over the analysis window */
	const char *verdict;          /* the one of most step time, owned by
				       * its table */
};

/* The idle time's host-wait share of each rank in out (idle's
 * categories, over the analysis window). */
static int idle_split(sqlite3 *db, const struct ta_query *q,
		      struct rank_steps *out, size_t n, struct ta_error *err)
{
	struct ta_idle_opts o = { 30000, NULL, 0, 0 };
	struct ta_table *t;
	size_t r, i;

	if (ta_idle_run(db, q, &o, &t, err) < 0)
		return -1;
	for (r = 0; r < t->nrows; r++) {
		double us = ta_table_cell(t, r, 3)->d;

		/* the whole GPU's rows (stream NULL) are the rank's idle
		 * time (its streams overlap) */
		if (!ta_table_cell(t, r, 1)->null)
			continue;
		for (i = 0; i < n; i++)
			if (out[i].rank == ta_table_cell(t, r, 0)->i) {
				out[i].idle_us += us;
				if (strcmp(ta_table_cell(t, r, 2)->s, "host_wait") == 0)
					out[i].host_wait_us += us;
			}
	}
	ta_table_free(t);
	return 0;
}

/* Whether diagnose's row r is of a step the side compares. */
static int side_has(const struct ta_diff_side *s, const struct ta_table *t, size_t r)
{
	const struct ta_cell *step = ta_table_cell(t, r, 1);

	return s->step_lo < 0 || (!step->null && step->i >= s->step_lo &&
				  step->i <= s->step_hi);
}

static int side_steps(sqlite3 *db, const struct ta_query *q,
		      const struct ta_diff_side *s, struct ta_table **held,
		      struct rank_steps **out, size_t *n, struct ta_error *err)
{
	struct ta_diagnose_opts o = ta_diagnose_defaults;
	struct ta_query sq = *q;
	struct ta_table *f = NULL;
	size_t r, i, j;

	o.path = 0; /* the verdicts alone */
	o.findings = 0;
	sq.ranks = s->ranks;
	sq.nranks = s->nranks;
	sq.sink = NULL;
	*n = 0;
	if (ta_diagnose_run(db, &sq, &o, held, &f, err) < 0)
		return -1;
	ta_table_free(f);
	*out = ta_xcalloc((*held)->nrows + 1, sizeof(**out));
	for (r = 0; r < (*held)->nrows; r++) {
		int64_t rank = ta_table_cell(*held, r, 0)->i;
		struct rank_steps *x;
		double us = ta_table_cell(*held, r, 2)->d;

		if (!side_has(s, *held, r))
			continue;
		for (i = 0; i < *n && (*out)[i].rank != rank; i++)
			;
		x = &(*out)[i];
		if (i == *n)
			(*n)++, x->rank = rank;
		x->n++;
		x->step_us += us;
		x->busy += us * ta_table_cell(*held, r, 3)->d / 100;
	}
	for (i = 0; i < *n; i++) {     /* the verdict of most time, first if tied */
		double best = -1;

		for (r = 0; r < (*held)->nrows; r++) {
			const char *v = ta_table_cell(*held, r, 4)->s;
			double c = 0;

			if (ta_table_cell(*held, r, 0)->i != (*out)[i].rank ||
			    !side_has(s, *held, r))
				continue;
			for (j = 0; j < (*held)->nrows; j++)
				if (ta_table_cell(*held, j, 0)->i == (*out)[i].rank &&
				    side_has(s, *held, j) &&
				    strcmp(ta_table_cell(*held, j, 4)->s, v) == 0)
					c += ta_table_cell(*held, j, 2)->d;
			if (c > best)
				best = c, (*out)[i].verdict = v;
		}
		/* busy first: a share of the steps' summed time (none of
		 * steps with empty windows alone: -1) */
		(*out)[i].busy = (*out)[i].step_us > 0 ?
				 100 * (*out)[i].busy / (*out)[i].step_us : -1;
		(*out)[i].step_us /= (double)(*out)[i].n;
	}
	return idle_split(db, &sq, *out, *n, err);
}

static void set_side(struct ta_table *t, size_t r, int side, const struct rank_steps *x)
{
	ta_table_set_int(t, r, 1 + side, x->n);
	ta_table_set_real(t, r, 3 + side, ta_round(x->step_us, 3));
	if (x->busy >= 0)
		ta_table_set_real(t, r, 7 + side, ta_round(x->busy, 2));
	ta_table_set_real(t, r, 9 + side, x->busy >= 0 ?
			  ta_round(x->step_us * (1 - x->busy / 100), 3) : 0);
	if (x->verdict)
		ta_table_set_text(t, r, 11 + side, x->verdict);
	if (x->idle_us > 0)
		ta_table_set_real(t, r, 13 + side, ta_round(100 * x->host_wait_us /
							 x->idle_us, 2));
}

static struct ta_table *steps_table(const struct rank_steps *b, size_t nb,
				    const struct rank_steps *t, size_t nt)
{
	struct ta_table *out = ta_table_new("Steps, side by side", step_cols, 15);
	size_t i, j;

	for (i = 0; i < nb; i++) {
		size_t r = ta_table_add_row(out);

		ta_table_set_int(out, r, 0, b[i].rank);
		set_side(out, r, 0, &b[i]);
		for (j = 0; j < nt && t[j].rank != b[i].rank; j++)
			;
		if (j == nt)
			continue;
		set_side(out, r, 1, &t[j]);
		ta_table_set_real(out, r, 5, ta_round(t[j].step_us - b[i].step_us, 3));
		if (b[i].step_us > 0)
			ta_table_set_real(out, r, 6, ta_round(100 * (t[j].step_us -
				b[i].step_us) / b[i].step_us, 2));
	}
	for (j = 0; j < nt; j++) {
		for (i = 0; i < nb && b[i].rank != t[j].rank; i++)
			;
		if (i == nb) {
			size_t r = ta_table_add_row(out);

			ta_table_set_int(out, r, 0, t[j].rank);
			set_side(out, r, 1, &t[j]);
		}
	}
	return out;
}

int ta_diff_run(sqlite3 *base, sqlite3 *db, const struct ta_query *q,
		const struct ta_diff_opts *o, struct ta_table **out,
		struct ta_table **steps, struct ta_error *err)
{
	struct diff_names d = { ta_intern_new(), NULL, 0, 0, { 0, 0 } };
	struct ta_table *hb = NULL, *ht = NULL;
	struct rank_steps *sb = NULL, *st = NULL;
	size_t nb = 0, nt = 0;
	int rc;

	*out = *steps = NULL;
	rc = collect(base, q, o, 0, &d, err);
	if (rc == 0)
		rc = collect(db, q, o, 1, &d, err);
	if (rc == 0)
		rc = side_steps(base, q, &o->base, &hb, &sb, &nb, err);
	if (rc == 0)
		rc = side_steps(db, q, &o->test, &ht, &st, &nt, err);
	if (rc == 0) {
		double sum = 0, n = 0;
		size_t i;

		for (i = 0; i < nb; i++)      /* BASE's mean step */
			sum += sb[i].step_us * (double)sb[i].n, n += (double)sb[i].n;
		*out = ta_diff_table(&d, o, 1, n > 0 ? sum / n : 0);
		*steps = steps_table(sb, nb, st, nt);
		rc = ta_diff_roofline(base, db, q, &(*steps)->also, err);
		if (rc < 0) {
			ta_table_free(*out);
			ta_table_free(*steps);
			*out = *steps = NULL;
		}
	}
	free(sb);
	free(st);
	ta_table_free(hb);
	ta_table_free(ht);
	free(d.v);
	ta_intern_free(d.keys);
	return rc;
}
