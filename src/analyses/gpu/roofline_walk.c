/* The roofline's calls: each call of an op whose work is counted
 * (flops.h), with the kernels it launched. Per thread, host rows nest by
 * time; a counted op inside another (autocast's aten::addmm on float
 * inside the one on bf16 it casts to; aten::_convolution inside
 * aten::convolution) is counted once, at the innermost, whose arguments
 * are what ran, under the outermost's name (FlopCounterMode's key). Its
 * GPU time is its launches' kernels: the casts around it are not its. */
#include "roofline_int.h"
#include "ta_model.h"

#include <stdlib.h>
#include <string.h>

struct node {
	int64_t ts, end;
	int counted;          /* a counted op */
	int inner;            /* has a counted op inside */
	int64_t name;
	int64_t gpu_ns;       /* its launches' kernels */
	int tf32;             /* one of them was a TF32 kernel */
	int64_t main, main_ns;  /* its longest kernel (name id) and its time */
	size_t first_launch;  /* its launches: launches[first_launch..] */
	char *dims, *types, *conc;
};

struct walk {
	struct ta_roof *r;
	struct node *stack;
	size_t depth, cap;
	int64_t rank;
	/* launches of the counted ops open on the stack */
	struct ta_roof_launch *pending;
	size_t npending, cap_pending;
	sqlite3_stmt *inputs;   /* a counted op's operands, by its row */
	sqlite3_stmt *kernels;  /* a launch's kernels (roof_corr), by call */
};

static const char *counted_name(const struct walk *w, int64_t id)
{
	return id >= 0 && (size_t)id < w->r->nnames ? w->r->names[id] : NULL;
}

static void add_call(struct walk *w, const struct node *n, const char *label)
{
	struct ta_roof *r = w->r;
	struct ta_roof_call *c;
	struct ta_op_args a;
	size_t i;

	if (r->ncalls == r->cap_calls) {
		r->cap_calls = r->cap_calls ? 2 * r->cap_calls : 256;
		r->calls = ta_xrealloc(r->calls, r->cap_calls * sizeof(*r->calls));
	}
	c = &r->calls[r->ncalls];
	memset(c, 0, sizeof(*c));
	c->rank = w->rank;
	c->ts = n->ts;
	c->op = label;
	c->gpu_ns = n->gpu_ns;
	c->kernel = n->main_ns > 0 ? n->main : -1;
	c->shape = ta_xstrdup(n->dims ? n->dims : "");
	c->known = ta_op_args_parse(&a, n->dims, n->types, n->conc) == 0 &&
		   ta_flops_work(counted_name(w, n->name), &a, &c->work) == 0;
	if (c->known && n->tf32 && strcmp(c->work.dtype, "fp32") == 0)
		c->work.dtype = "tf32";   /* fp32 data on the tensor cores */
	for (i = n->first_launch; i < w->npending; i++)
		w->pending[i].call = r->ncalls;
	r->ncalls++;
}

/* Whether two calls' first two operands have one shape: the dispatcher
 * re-recording one call (autocast, convolution's _convolution), not a
 * call inside another (which a damaged duration could make of two). */
static int same_operands(const char *a, const char *b)
{
	int closed = 0;

	if (!a || !b)   /* no shapes to tell: nested is the same call */
		return !a && !b;
	for (; *a && *a == *b; a++, b++)
		if (*a == ']' && ++closed == 2)
			return 1;
	return 0;
}

/* The outermost counted op on the stack below the top that is the same
 * call: the name. */
static const char *label_of(const struct walk *w)
{
	const struct node *top = &w->stack[w->depth - 1];
	size_t i;

	for (i = 0; i + 1 < w->depth; i++)
		if (w->stack[i].counted && same_operands(w->stack[i].dims, top->dims))
			return counted_name(w, w->stack[i].name);
	return counted_name(w, top->name);
}

static void keep_launches(struct walk *w, size_t from)
{
	struct ta_roof *r = w->r;
	size_t i;

	for (i = from; i < w->npending; i++) {
		if (r->nlaunches == r->cap_launches) {
			r->cap_launches = r->cap_launches ? 2 * r->cap_launches : 256;
			r->launches = ta_xrealloc(r->launches,
						  r->cap_launches * sizeof(*r->launches));
		}
		r->launches[r->nlaunches++] = w->pending[i];
	}
}

static void finish(struct walk *w)
{
	struct node *n = &w->stack[w->depth - 1];
	size_t i;

	if (n->counted && !n->inner) {
		add_call(w, n, label_of(w));
		keep_launches(w, n->first_launch);
		for (i = 0; i + 1 < w->depth; i++)
			w->stack[i].inner |= w->stack[i].counted &&
					     same_operands(w->stack[i].dims, n->dims);
	}
	if (n->counted)
		w->npending = n->first_launch;  /* an outer op's own: casts */
	free(n->dims);
	free(n->types);
	free(n->conc);
	w->depth--;
}

static char *dup_or_null(sqlite3_stmt *st, int col)
{
	const char *s = (const char *)sqlite3_column_text(st, col);

	return s ? ta_xstrdup(s) : NULL;
}

/* A counted op's operands: read by its row for the few ops counted, so
 * that the walk over every row reads only the index. */
static int read_inputs(struct walk *w, struct node *n, int64_t row)
{
	sqlite3_stmt *in = w->inputs;
	int rc;

	sqlite3_bind_int64(in, 1, row);
	if ((rc = sqlite3_step(in)) == SQLITE_ROW) {
		n->dims = dup_or_null(in, 0);
		n->types = dup_or_null(in, 1);
		n->conc = dup_or_null(in, 2);
	}
	sqlite3_reset(in);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static int push(struct walk *w, sqlite3_stmt *st, int64_t ts, int64_t end)
{
	struct node *n;

	if (w->depth == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		w->stack = ta_xrealloc(w->stack, w->cap * sizeof(*w->stack));
	}
	n = &w->stack[w->depth++];
	memset(n, 0, sizeof(*n));
	n->ts = ts, n->end = end;
	n->name = sqlite3_column_int64(st, 6);
	n->counted = counted_name(w, n->name) != NULL;
	n->first_launch = w->npending;
	n->main = -1;
	return n->counted ? read_inputs(w, n, sqlite3_column_int64(st, 7)) : 0;
}

/* A launch call: its kernels are the innermost open counted op's. They
 * are looked up only then (a join on every row cost the walk half its
 * time). */
static int launch(struct walk *w, sqlite3_stmt *st)
{
	sqlite3_stmt *k = w->kernels;
	int64_t corr = sqlite3_column_int64(st, 8);
	size_t i = w->depth;
	struct node *n;
	int rc;

	while (i > 0 && !w->stack[i - 1].counted)
		i--;
	if (i == 0)
		return 0;
	n = &w->stack[i - 1];
	sqlite3_bind_int64(k, 1, w->rank);
	sqlite3_bind_int64(k, 2, corr);
	if ((rc = sqlite3_step(k)) == SQLITE_ROW) {
		n->gpu_ns += sqlite3_column_int64(k, 0);
		n->tf32 |= sqlite3_column_int(k, 1);
		if (sqlite3_column_int64(k, 3) > n->main_ns) {
			n->main = sqlite3_column_int64(k, 2);
			n->main_ns = sqlite3_column_int64(k, 3);
		}
		if (w->npending == w->cap_pending) {
			w->cap_pending = w->cap_pending ? 2 * w->cap_pending : 64;
			w->pending = ta_xrealloc(w->pending,
						 w->cap_pending * sizeof(*w->pending));
		}
		w->pending[w->npending++] = (struct ta_roof_launch){ w->rank,
			corr, 0 };
	}
	sqlite3_reset(k);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* Per launch: its kernels' time, whether one ran fp32 data on the tensor
 * cores (TF32: cuBLAS's and CUTLASS's names say so: tf32, tensorop_s1688,
 * wgmma; cuBLAS's xmma kernels with ffma in their name are the CUDA
 * cores'), and its longest kernel. */
static const char corr_sql[] =
	"DROP TABLE IF EXISTS temp.roof_corr;"
	"CREATE TEMP TABLE roof_corr (rank INTEGER, correlation INTEGER, ns INTEGER,"
	"  tf32 INTEGER, main INTEGER, main_ns INTEGER, PRIMARY KEY (rank, correlation));"
	/* each kernel name tested once, not once a kernel */
	"WITH tc_name AS MATERIALIZED (SELECT name_id,"
	"  (name GLOB '*tf32*' OR name GLOB '*tensorop*' OR name GLOB '*gmma*'"
	"   OR name GLOB '*s1688*' OR name GLOB '*s16816*') AND name NOT GLOB '*ffma*' AS tc"
	"  FROM label WHERE name_id IN (SELECT name FROM gpu))"
	"INSERT INTO roof_corr SELECT rank, correlation, sum(dur), max(tc),"
	"  max(CASE WHEN nth = 1 THEN name END), max(dur)"
	" FROM (SELECT g.rank, g.correlation, g.dur, g.name, n.tc,"
	"  row_number() OVER (PARTITION BY g.rank, g.correlation ORDER BY g.dur DESC, g.idx)"
	"   AS nth"
	"  FROM gpu g JOIN tc_name n ON n.name_id = g.name WHERE g.correlation != -1)"
	" GROUP BY rank, correlation;";

/* Every host row per thread, parents first (host_thread's order). */
static const char host_sql[] =
	"SELECT e.rank, e.pid, e.tid, e.ts, max(e.dur, 0),"
	"  e.role = " TA_SQL(TA_ROLE_RUNTIME) ", e.name, e.row,"
	"  e.correlation FROM host_thread e ORDER BY e.rank, e.pid, e.tid, e.ts, e.dur DESC, e.idx";

static int load_names(sqlite3 *db, struct walk *w, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	char **v;
	int64_t max_id;
	int rc;

	if (ta_db_get_int(db, "SELECT max(name_id) FROM label", 0, &max_id, err) < 0 ||
	    ta_db_prepare(db, "SELECT name_id, name FROM label", &st, err) < 0)
		return -1;
	w->r->nnames = max_id >= 0 ? (size_t)max_id + 1 : 0;
	v = ta_xcalloc(w->r->nnames + 1, sizeof(*v));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *s = (const char *)sqlite3_column_text(st, 1);

		if (id >= 0 && (size_t)id < w->r->nnames && ta_flops_counted(s))
			v[id] = ta_xstrdup(s);
	}
	sqlite3_finalize(st);
	w->r->names = v;
	return ta_db_done(db, rc, err);
}

static void free_walk(struct walk *w)
{
	while (w->depth)
		finish(w);
	free(w->stack);
	free(w->pending);
}

static int walk_rows(sqlite3 *db, struct walk *w, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int64_t pid = 0, tid = 0;
	int rc, first = 1;

	if (ta_db_prepare(db, host_sql, &st, err) < 0)
		return -1;
	if (ta_db_prepare(db, "SELECT input_dims, input_types, concrete_inputs"
			  " FROM op_inputs WHERE row = ?", &w->inputs, err) < 0 ||
	    ta_db_prepare(db, "SELECT ns, tf32, main, main_ns FROM roof_corr"
			  " WHERE rank = ? AND correlation = ?", &w->kernels,
			  err) < 0) {
		sqlite3_finalize(st);
		sqlite3_finalize(w->inputs);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 3);
		int64_t end = ts + sqlite3_column_int64(st, 4);

		if (first || rank != w->rank || sqlite3_column_int64(st, 1) != pid ||
		    sqlite3_column_int64(st, 2) != tid)
			while (w->depth)
				finish(w);   /* a new thread */
		first = 0;
		w->rank = rank;
		pid = sqlite3_column_int64(st, 1), tid = sqlite3_column_int64(st, 2);
		while (w->depth && !(end <= w->stack[w->depth - 1].end &&
				     ts >= w->stack[w->depth - 1].ts))
			finish(w);
		if (sqlite3_column_int(st, 5) ? launch(w, st) < 0 :
		    push(w, st, ts, end) < 0) {
			rc = SQLITE_ERROR;
			break;
		}
	}
	sqlite3_finalize(st);
	sqlite3_finalize(w->inputs);
	sqlite3_finalize(w->kernels);
	w->inputs = w->kernels = NULL;
	return ta_db_done(db, rc, err);
}

/* The last walk, kept for the next one on the same ranks of the same
 * database: report --html and diagnose walk three times (the roofline
 * section, its steps, the findings), 2.6 s of 6 on a cached 200 MB trace.
 * The key: the connection, its file, the selected ranks and the traces'
 * paths and times (a connection freed and another opened at the same
 * address holds other traces). The memo owns the names calls point to. */
static struct {
	sqlite3 *db;
	char *key;
	struct ta_roof r;
} memo;

static char *walk_key(sqlite3 *db, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	char *key = NULL;
	int rc;

	if (ta_db_prepare(db, "SELECT (SELECT group_concat(rank) FROM temp.sel_ranks),"
			  " (SELECT group_concat(path || ':' || mtime_ns || ':' || rank, '|')"
			  "  FROM inputs)", &st, err) < 0)
		return NULL;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *file = sqlite3_db_filename(db, "main");
		const char *a = (const char *)sqlite3_column_text(st, 0);
		const char *b = (const char *)sqlite3_column_text(st, 1);

		struct ta_buf k = { 0 };

		ta_buf_addf(&k, "%s\x1f%s\x1f%s", file ? file : "", a ? a : "", b ? b : "");
		key = ta_xstrdup(k.s ? k.s : "");
		ta_buf_free(&k);
	}
	sqlite3_finalize(st);
	if (!key)
		ta_db_done(db, rc == SQLITE_ROW ? SQLITE_ERROR : rc, err);
	return key;
}

/* A copy of src's calls and launches; its ops still point to src's names,
 * which it does not own (nnames 0). */
static void copy_roof(struct ta_roof *dst, const struct ta_roof *src)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	dst->ncalls = dst->cap_calls = src->ncalls;
	dst->calls = ta_xcalloc(src->ncalls + 1, sizeof(*dst->calls));
	if (src->ncalls)   /* (no calls: NULL, which memcpy may not take) */
		memcpy(dst->calls, src->calls, src->ncalls * sizeof(*dst->calls));
	for (i = 0; i < src->ncalls; i++)
		dst->calls[i].shape = src->calls[i].shape ? ta_xstrdup(src->calls[i].shape) : NULL;
	dst->nlaunches = dst->cap_launches = src->nlaunches;
	dst->launches = ta_xcalloc(src->nlaunches + 1, sizeof(*dst->launches));
	if (src->nlaunches)
		memcpy(dst->launches, src->launches, src->nlaunches * sizeof(*dst->launches));
}

static void free_roof(struct ta_roof *r)
{
	size_t i;

	for (i = 0; i < r->ncalls; i++)
		free(r->calls[i].shape);
	for (i = 0; i < r->nnames; i++)
		free(r->names[i]);
	free(r->names);
	free(r->calls);
	free(r->launches);
	memset(r, 0, sizeof(*r));
}

int ta_roof_walk(sqlite3 *db, struct ta_roof *r, struct ta_error *err)
{
	struct walk w;
	char *key = walk_key(db, err);
	int rc;

	if (!key)
		return -1;
	if (memo.key && memo.db == db && strcmp(memo.key, key) == 0) {
		free(key);
		copy_roof(r, &memo.r);
		return 0;
	}
	memset(&w, 0, sizeof(w));
	w.r = r;
	rc = ta_db_exec(db, corr_sql, err);
	if (rc == 0)
		rc = load_names(db, &w, err);
	if (rc == 0)
		rc = walk_rows(db, &w, err);
	free_walk(&w);
	if (rc < 0) {
		free(key);
		return rc;
	}
	/* the memo takes the walk (and its names); the caller a copy */
	free_roof(&memo.r);
	free(memo.key);
	memo.db = db;
	memo.key = key;
	memo.r = *r;
	copy_roof(r, &memo.r);
	return 0;
}

void ta_roof_free(struct ta_roof *r)
{
	free_roof(r);   /* a copy: no names of its own */
}
