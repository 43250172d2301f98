/* traceanalyze modules: the nn.Module tree, forward and backward.
 *
 * Kineto writes each nn.Module call as a python_function frame named
 * "nn.Module: Class_N" with with_stack=True (PyTorch 2.11's with_modules
 * alone writes none for an eager model: testdata/tb_cnn). Per thread,
 * frames nest by time; a module's path is its enclosing modules' names
 * and its own ("GPT2LMHeadModel_0/GPT2Model_0/GPT2Block_1"). Per rank and
 * path, over the calls that start in a kept step (all of them when the
 * rank has no steps):
 * - calls, host time (the frames' durations) and self host time (less
 *   the direct child modules' frames);
 * - device time: the GPU work of every launch inside the frame (runtime
 *   or driver call, by correlation), self (not inside a child module) and
 *   total;
 * - backward: each fwdbwd flow leads from a forward op, inside a module,
 *   to its backward op (on the autograd thread); that op's duration and
 *   the GPU work of its launches count for the module and the modules
 *   around it. A module called inside a backward op with no module
 *   around it is activation checkpointing's recomputation: its time is
 *   that op's, so the backward of the module whose gradient ran it; it
 *   makes no row of its own (a second root Block_0 counted it twice).
 * Parts sum to the whole: a module's device time is its self time plus
 * its children's, and the roots' add up to the GPU work launched inside
 * modules. */
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_intern.h"
#include "analyses/common/gpu_corr.h"
#include "analyses/common/ids.h"

#include <stdlib.h>
#include <string.h>

#define MODULE_PREFIX "nn.Module: "

struct mod {
	int64_t rank, calls, host, self_host, dev, self_dev, bwd_host, bwd_dev;
	int64_t first;   /* its first call's start: the model's order */
	char *path;
	long parent;   /* index of the enclosing module's row, -1 at a root */
	int depth;
};

struct mods {
	struct ta_intern *keys;   /* (rank, path) -> 1 + index */
	struct mod *v;
	size_t n, cap;
};

static long mod_for(struct mods *m, int64_t rank, const char *path, long parent, int depth)
{
	struct ta_buf key = { 0 };
	int is_new;
	int64_t id;

	ta_buf_add(&key, &rank, sizeof(rank));
	ta_buf_adds(&key, path);
	id = ta_intern(m->keys, key.s, key.len, &is_new);
	ta_buf_free(&key);
	if (is_new) {
		if (m->n == m->cap) {
			m->cap = m->cap ? 2 * m->cap : 64;
			m->v = ta_xrealloc(m->v, m->cap * sizeof(*m->v));
		}
		memset(&m->v[m->n], 0, sizeof(*m->v));
		m->v[m->n].rank = rank;
		m->v[m->n].path = ta_xstrdup(path);
		m->v[m->n].parent = parent;
		m->v[m->n].depth = depth;
		m->v[m->n].first = INT64_MAX;
		m->n++;
	}
	return (long)(id - 1);
}

/* A (rank, ts) set and map: flow ends, and what was found there. */
struct at_ts {
	struct ta_intern *keys;
	long *val;        /* by key id - 1 */
	int64_t *dur, *gpu;
	size_t n;
};

static int64_t ts_key(struct ta_intern *k, int64_t rank, int64_t ts, int add)
{
	int64_t b[2] = { rank, ts };
	int is_new;

	return add ? ta_intern(k, (const char *)b, sizeof(b), &is_new) :
		     ta_intern_find(k, (const char *)b, sizeof(b));
}

struct flow { int64_t rank, s, f; };

struct walk {
	struct mods mods;
	struct at_ts fwd;     /* forward op starts -> innermost module */
	struct at_ts bwd;     /* backward op starts -> (dur, GPU time) */
	struct flow *flows;
	size_t nflows;
	int64_t (*win)[3];    /* kept steps: rank, ts, end */
	size_t nwin;
	int64_t rank, frames;
	int64_t recomputed;   /* module calls recomputed in a backward op */
};

/* whether rank has kept steps, and ts lies in one */
static int in_window(const struct walk *w, int64_t rank, int64_t ts)
{
	int any = 0;

	for (size_t i = 0; i < w->nwin; i++)
		if (w->win[i][0] == rank) {
			any = 1;
			if (ts >= w->win[i][1] && ts <= w->win[i][2])
				return 1;
		}
	return !any;
}

enum kind { K_MODULE, K_OP };

struct frame {
	enum kind kind;
	int64_t ts, end, child_host, self_dev, dev;
	long mod;
	int counted;
	int in_bwd;     /* inside a backward op (this one, or one around it) */
	int recompute;  /* a module call recomputed there: no row */
};

struct stack {
	struct frame *v;
	size_t n, cap;
};

static void finish(struct walk *w, struct stack *st)
{
	struct frame *f = &st->v[--st->n];
	struct frame *up = NULL;

	for (size_t i = st->n; i-- > 0;)
		if (st->v[i].kind == f->kind) {
			up = &st->v[i];
			break;
		}
	if (f->kind == K_MODULE && f->recompute) {
		if (up)
			up->child_host = ta_add_sat(up->child_host, f->end - f->ts);
		return;   /* its time and GPU work are the backward op's */
	}
	if (f->kind == K_OP) {
		int64_t k = ts_key(w->bwd.keys, w->rank, f->ts, 0);

		/* the outermost op starting at a flow's end takes it */
		if (k > 0 && f->end - f->ts >= w->bwd.dur[k - 1] && f->counted) {
			w->bwd.dur[k - 1] = f->end - f->ts;
			w->bwd.gpu[k - 1] = f->dev;
			w->bwd.val[k - 1] = 1;
		}
		if (up)
			up->dev = ta_add_sat(up->dev, f->dev);
		return;
	}
	if (f->counted) {
		struct mod *m = &w->mods.v[f->mod];

		m->calls++;
		m->host = ta_add_sat(m->host, f->end - f->ts);
		m->self_host = ta_add_sat(m->self_host, f->end - f->ts - f->child_host);
		m->dev = ta_add_sat(m->dev, ta_add_sat(f->dev, f->self_dev));
		m->self_dev = ta_add_sat(m->self_dev, f->self_dev);
	}
	if (up) {
		up->child_host = ta_add_sat(up->child_host, f->end - f->ts);
		up->dev = ta_add_sat(up->dev, ta_add_sat(f->dev, f->self_dev));
	}
}

static struct frame *push(struct stack *st, enum kind kind, int64_t ts, int64_t end)
{
	if (st->n == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 64;
		st->v = ta_xrealloc(st->v, st->cap * sizeof(*st->v));
	}
	memset(&st->v[st->n], 0, sizeof(*st->v));
	st->v[st->n].kind = kind;
	st->v[st->n].ts = ts;
	st->v[st->n].end = end;
	st->v[st->n].mod = -1;
	return &st->v[st->n++];
}

static long innermost(const struct stack *st)
{
	for (size_t i = st->n; i-- > 0;)
		if (st->v[i].kind == K_MODULE)
			return (long)i;
	return -1;
}

static void module_frame(struct walk *w, struct stack *st, const char *name, int64_t ts,
			 int64_t end)
{
	long up = innermost(st);
	struct ta_buf path = { 0 };
	struct frame *f;
	long parent = up >= 0 ? st->v[up].mod : -1;
	int in_bwd = st->n && st->v[st->n - 1].in_bwd;

	/* inside a backward op with no module around it, or inside such a
	 * call: a recomputation (torch.utils.checkpoint) */
	if ((up < 0 && in_bwd) || (up >= 0 && st->v[up].recompute)) {
		f = push(st, K_MODULE, ts, end);
		f->in_bwd = f->recompute = 1;
		if (up < 0 && in_window(w, w->rank, ts))
			w->recomputed++;
		w->frames++;
		return;
	}

	if (parent >= 0) {
		ta_buf_adds(&path, w->mods.v[parent].path);
		ta_buf_addc(&path, '/');
	}
	/* the path's separator, and the escape's own sign, inside a name
	 * are escaped: a name "a/b" is one module, not a parent and child */
	for (const char *c = name + strlen(MODULE_PREFIX); *c; c++)
		if (*c == '/')
			ta_buf_adds(&path, "%2F");
		else if (*c == '%')
			ta_buf_adds(&path, "%25");
		else
			ta_buf_addc(&path, *c);
	f = push(st, K_MODULE, ts, end);
	/* "nn.Module: " alone names a module "" (no text: no buffer) */
	f->mod = mod_for(&w->mods, w->rank, path.s ? path.s : "", parent,
			 parent >= 0 ? w->mods.v[parent].depth + 1 : 0);
	f->counted = in_window(w, w->rank, ts);
	if (f->counted && ts < w->mods.v[f->mod].first)
		w->mods.v[f->mod].first = ts;
	ta_buf_free(&path);
	w->frames++;
}

/* The rows of every thread, parents first: modules, ops and launches.
 * Python frames other than modules name call sites only and are left
 * out in SQL (half the rows); a name is read as text only for a module,
 * and a launch's GPU time only when a frame is open (a join of every
 * row with its name and with gpu_corr was most of the walk). */
static const char rows_sql[] =
	"SELECT e.rank, e.pid, e.tid, e.ts, max(e.dur, 0), e.role, e.name,"
	"  e.cat IS " TA_CAT_PYTHON ", e.correlation"
	" FROM host_thread e WHERE e.cat IS NOT " TA_CAT_PYTHON
	"  OR e.name IN (SELECT name_id FROM label WHERE name GLOB '"
	MODULE_PREFIX "*')"
	" ORDER BY e.rank, e.pid, e.tid, e.ts, e.dur DESC, e.idx";

struct lookups {
	sqlite3_stmt *name, *gpu;
};

/* The name of id into buf ("" if none); -1 on a database error. */
static int name_of(sqlite3_stmt *st, int64_t id, struct ta_buf *buf)
{
	int rc;

	sqlite3_bind_int64(st, 1, id);
	ta_buf_reset(buf);
	ta_buf_adds(buf, "");   /* a text even when none is found */
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		ta_buf_adds(buf, (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* The GPU time of a launch call (gpu_corr), into *ns (0 if none, or if
 * another call of its correlation had it: a call recorded twice, in a
 * damaged trace, must not count its kernels twice). */
static int gpu_of(sqlite3_stmt *st, struct ta_pairs *credited, int64_t rank, int64_t corr,
		  int64_t *ns)
{
	int rc;

	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_int64(st, 2, corr);
	*ns = (rc = sqlite3_step(st)) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_reset(st);
	if (rc == SQLITE_ROW && !ta_pairs_add(credited, rank, corr))
		*ns = 0;
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static int walk_rows(sqlite3 *db, struct walk *w, struct ta_error *err)
{
	sqlite3_stmt *q = NULL;
	struct lookups lk = { NULL, NULL };
	struct stack st = { NULL, 0, 0 };
	struct ta_buf name = { 0 };
	struct ta_ids named = { NULL, 0 };   /* a row of no name is none (a join) */
	struct ta_pairs credited = { NULL, NULL, 0, 0 };   /* launches given GPU time */
	int64_t pid = 0, tid = 0;
	int rc, first = 1;

	if (ta_ids_read(db, "SELECT name_id FROM label", &named, err) < 0)
		return -1;
	if (ta_db_prepare(db, rows_sql, &q, err) < 0 ||
	    ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?1", &lk.name,
			  err) < 0 ||
	    ta_db_prepare(db, "SELECT ns FROM gpu_corr WHERE rank = ?1 AND"
			  " correlation = ?2", &lk.gpu, err) < 0) {
		sqlite3_finalize(q);
		sqlite3_finalize(lk.name);
		free(named.v);
		return -1;
	}
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(q, 0), ts = sqlite3_column_int64(q, 3);
		int64_t end = ts + sqlite3_column_int64(q, 4);
		int role = sqlite3_column_int(q, 5), python = sqlite3_column_int(q, 7);

		if (sqlite3_column_type(q, 6) != SQLITE_INTEGER ||
		    !ta_ids_has(&named, sqlite3_column_int64(q, 6)))
			continue;
		if (first || rank != w->rank || sqlite3_column_int64(q, 1) != pid ||
		    sqlite3_column_int64(q, 2) != tid)
			while (st.n)
				finish(w, &st);
		first = 0;
		w->rank = rank;
		pid = sqlite3_column_int64(q, 1);
		tid = sqlite3_column_int64(q, 2);
		if (python && name_of(lk.name, sqlite3_column_int64(q, 6), &name) < 0)
			break;
		while (st.n && !(ts >= st.v[st.n - 1].ts && end <= st.v[st.n - 1].end))
			finish(w, &st);
		if (python) {
			module_frame(w, &st, name.s, ts, end);
		} else if (role == TA_ROLE_RUNTIME) {
			int64_t ns = 0;
			long m = innermost(&st);

			if (!st.n)
				continue;   /* no frame to give its time to */
			if (gpu_of(lk.gpu, &credited, rank, sqlite3_column_int64(q, 8), &ns) < 0)
				break;
			for (size_t i = st.n; i-- > 0;)
				if (st.v[i].kind == K_OP) {
					st.v[i].dev = ta_add_sat(st.v[i].dev, ns);
					break;
				}
			if (m >= 0)
				st.v[m].self_dev = ta_add_sat(st.v[m].self_dev, ns);
		} else {
			int in_bwd = st.n && st.v[st.n - 1].in_bwd;
			struct frame *f = push(&st, K_OP, ts, end);
			long m = innermost(&st);
			int64_t k = ts_key(w->fwd.keys, rank, ts, 0);

			f->in_bwd = in_bwd || ts_key(w->bwd.keys, rank, ts, 0) > 0;
			f->counted = in_window(w, rank, ts);
			if (k > 0 && m >= 0 && w->fwd.val[k - 1] < 0)
				w->fwd.val[k - 1] = st.v[m].mod;
		}
	}
	while (st.n)
		finish(w, &st);
	free(st.v);
	ta_pairs_free(&credited);
	ta_buf_free(&name);
	free(named.v);
	sqlite3_finalize(q);
	sqlite3_finalize(lk.name);
	sqlite3_finalize(lk.gpu);
	return ta_db_done(db, rc == SQLITE_ROW ? SQLITE_ERROR : rc, err);
}

static void at_ts_init(struct at_ts *a, size_t n)
{
	a->keys = ta_intern_new();
	a->val = ta_xmalloc((n + 1) * sizeof(*a->val));
	a->dur = ta_xcalloc(n + 1, sizeof(*a->dur));
	a->gpu = ta_xcalloc(n + 1, sizeof(*a->gpu));
	for (size_t i = 0; i <= n; i++)
		a->val[i] = -1;
	a->n = n;
}

static void at_ts_free(struct at_ts *a)
{
	if (a->keys)
		ta_intern_free(a->keys);
	free(a->val);
	free(a->dur);
	free(a->gpu);
}

/* The fwdbwd flows of the selected ranks, a start and an end each, and
 * the kept steps. */
static int load(sqlite3 *db, struct walk *w, struct ta_error *err)
{
	sqlite3_stmt *q = NULL;
	int rc;

	if (ta_db_prepare(db, "SELECT s.rank, s.ts, f.ts FROM trace_flow s JOIN trace_flow f"
			  " ON f.rank = s.rank AND f.id = s.id AND f.ph = 'f'"
			  " WHERE s.ph = 's' GROUP BY s.rank, s.id", &q, err) < 0)
		return -1;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		w->flows = ta_xrealloc(w->flows, (w->nflows + 1) * sizeof(*w->flows));
		w->flows[w->nflows++] = (struct flow){ sqlite3_column_int64(q, 0),
			sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2) };
	}
	sqlite3_finalize(q);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	at_ts_init(&w->fwd, w->nflows);
	at_ts_init(&w->bwd, w->nflows);
	for (size_t i = 0; i < w->nflows; i++) {
		ts_key(w->fwd.keys, w->flows[i].rank, w->flows[i].s, 1);
		ts_key(w->bwd.keys, w->flows[i].rank, w->flows[i].f, 1);
	}
	if (ta_db_prepare(db, "SELECT rank, ts, end_ts FROM step_host", &q, err) < 0)
		return -1;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		w->win = ta_xrealloc(w->win, (w->nwin + 1) * sizeof(*w->win));
		w->win[w->nwin][0] = sqlite3_column_int64(q, 0);
		w->win[w->nwin][1] = sqlite3_column_int64(q, 1);
		w->win[w->nwin++][2] = sqlite3_column_int64(q, 2);
	}
	sqlite3_finalize(q);
	return ta_db_done(db, rc, err);
}

/* Each flow's backward op, to the module of its forward op and the
 * modules around it. */
static void backward(struct walk *w)
{
	for (size_t i = 0; i < w->nflows; i++) {
		int64_t a = ts_key(w->fwd.keys, w->flows[i].rank, w->flows[i].s, 0);
		int64_t b = ts_key(w->bwd.keys, w->flows[i].rank, w->flows[i].f, 0);
		long m = a > 0 ? w->fwd.val[a - 1] : -1;

		if (m < 0 || b <= 0 || w->bwd.val[b - 1] < 0)
			continue;
		for (; m >= 0; m = w->mods.v[m].parent) {
			w->mods.v[m].bwd_host = ta_add_sat(w->mods.v[m].bwd_host, w->bwd.dur[b - 1]);
			w->mods.v[m].bwd_dev = ta_add_sat(w->mods.v[m].bwd_dev, w->bwd.gpu[b - 1]);
		}
	}
}

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "module", TA_COL_TEXT, TA_UNIT_TREE, 1 },
	{ "depth", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "host_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "self_host_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "device_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "self_device_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "bwd_host_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "bwd_device_us", TA_COL_REAL, TA_UNIT_US, 0 },
};
#define NCOLS (sizeof(cols) / sizeof(*cols))

/* rank, then the order the model runs them: a module after its parent,
 * siblings by their first call */
static int by_rank_first(const void *x, const void *y, void *ctx)
{
	const struct mod *v = ctx, *a = &v[*(const size_t *)x], *b = &v[*(const size_t *)y];

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return strcmp(a->path, b->path);
}

static void emit(struct walk *w, struct ta_table *t)
{
	size_t n = w->mods.n, *by = ta_xcalloc(n + 1, sizeof(*by));
	size_t *stack = ta_xcalloc(n + 1, sizeof(*stack)), sp = 0;
	long *head = ta_xmalloc((n + 1) * sizeof(*head)), *next = ta_xmalloc((n + 1) * sizeof(*next));

	/* every module in first-call order; each one's children listed in
	 * that order; then depth first from each root */
	for (size_t i = 0; i < n; i++) {
		by[i] = i;
		head[i] = -1;
	}
	if (n > 1)
		qsort_r(by, n, sizeof(*by), by_rank_first, w->mods.v);
	for (size_t i = n; i-- > 0;) {
		long p = w->mods.v[by[i]].parent;

		if (p >= 0) {
			next[by[i]] = head[p];
			head[p] = (long)by[i];
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (w->mods.v[by[i]].parent >= 0)
			continue;
		stack[sp++] = by[i];
		while (sp) {
			size_t m = stack[--sp], k = 0;
			const struct mod *v = &w->mods.v[m];
			long c;

			if (v->calls) {   /* a module seen only outside the steps: none */
				size_t r = ta_table_add_row(t);

				ta_table_set_int(t, r, 0, v->rank);
				ta_table_set_text(t, r, 1, v->path);
				ta_table_set_int(t, r, 2, v->depth);
				ta_table_set_int(t, r, 3, v->calls);
				ta_table_set_real(t, r, 4, (double)v->host / 1000.0);
				ta_table_set_real(t, r, 5, (double)v->self_host / 1000.0);
				ta_table_set_real(t, r, 6, (double)v->dev / 1000.0);
				ta_table_set_real(t, r, 7, (double)v->self_dev / 1000.0);
				ta_table_set_real(t, r, 8, (double)v->bwd_host / 1000.0);
				ta_table_set_real(t, r, 9, (double)v->bwd_dev / 1000.0);
			}
			/* its children, the first-called on top of the stack */
			for (c = head[m]; c >= 0; c = next[c])
				k++;
			for (c = head[m]; c >= 0; c = next[c])
				stack[sp + --k] = (size_t)c;
			for (c = head[m]; c >= 0; c = next[c])
				sp++;
		}
	}
	free(by);
	free(stack);
	free(head);
	free(next);
}

/* Selected ranks with no module call counted: said, and a gate on the
 * table trips (their rows are missing, not zero). */
static int say_missing(sqlite3 *db, const struct walk *w, struct ta_table *t,
		       struct ta_error *err)
{
	sqlite3_stmt *q = NULL;
	int rc;

	if (ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank", &q, err) < 0)
		return -1;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(q, 0);
		size_t i;

		for (i = 0; i < w->mods.n && !(w->mods.v[i].rank == rank && w->mods.v[i].calls); i++)
			;
		if (i < w->mods.n)
			continue;
		if (w->frames)   /* else said once, for the whole trace */
			ta_table_warn(t, "rank %lld: no nn.Module frames in its kept steps: "
				      "it has no rows", (long long)rank);
		t->ranks_empty++;
	}
	sqlite3_finalize(q);
	return ta_db_done(db, rc, err);
}

int ta_modules_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		   struct ta_error *err)
{
	struct walk w;
	struct ta_table *t;
	int rc;

	*out = NULL;
	memset(&w, 0, sizeof(w));
	w.mods.keys = ta_intern_new();
	rc = ta_model_prepare(db, q, TA_NEED_THREAD | TA_NEED_DEV | TA_NEED_FLOW, err);
	if (rc == 0)
		rc = ta_gpu_corr_build(db, err);
	if (rc == 0)
		rc = load(db, &w, err);
	if (rc == 0)
		rc = walk_rows(db, &w, err);
	if (rc == 0) {
		backward(&w);
		t = ta_table_new("nn.Module tree", cols, NCOLS);
		emit(&w, t);
		rc = say_missing(db, &w, t, err);
		if (!w.frames)
			ta_table_warn(t, "no nn.Module frames in the trace: profile with "
				      "torch.profiler.profile(with_stack=True) (with_modules=True "
				      "gives them for TorchScript models only)");
		else if (!w.nflows)
			ta_table_warn(t, "no fwdbwd flows: backward time is not attributed");
		if (w.recomputed)
			ta_table_note(t, "%lld module call%s recomputed inside backward ops "
				      "(activation checkpointing): counted in the backward of "
				      "the module whose gradient ran %s, not as calls",
				      (long long)w.recomputed, w.recomputed == 1 ? "" : "s",
				      w.recomputed == 1 ? "it" : "them");
		*out = t;
	}
	for (size_t i = 0; i < w.mods.n; i++)
		free(w.mods.v[i].path);
	free(w.mods.v);
	ta_intern_free(w.mods.keys);
	at_ts_free(&w.fwd);
	at_ts_free(&w.bwd);
	free(w.flows);
	free(w.win);
	return rc;
}
