/* The profiler's key_averages table rebuilt from a saved trace: per
 * operator (CPU op, record_function range, runtime call), calls, self and
 * total CPU time, self and total GPU time.
 *
 * Per thread, host rows nest by time; an op's self CPU time is its duration
 * minus its direct children's. GPU time reaches an op through the runtime
 * calls inside it: the GPU activity with the call's correlation id (all the
 * kernels of a cudaGraphLaunch) is self time of the op that directly
 * contains the call, and total time of that op and all its ancestors.
 * Python frames (with_stack) are not ops: they only name call sites.
 *
 * Memory (profile_memory=True), as the profiler's _parse_kineto_results:
 * an op's memory is every [memory] event within its time, inclusive, on
 * any thread, CPU and device apart (bytes: + allocated, - freed); its self
 * memory that less its children's. */
#include "ta_intern.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "analyses/common/gpu_corr.h"
#include "analyses/common/ids.h"

#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_ops_opts ta_ops_defaults = { TA_OPS_SORT_SELF_DEVICE, 0, 0, 0, 0, -1 };

/* bytes by device type: CPU, device */
enum { MEM_CPU, MEM_DEV, NMEM };

struct op_agg {
	char *name, *shapes, *stack;
	int64_t rank, calls, self_cpu, cpu, self_dev, dev;
	int64_t self_tc, tc;   /* of self_dev and dev: on the tensor cores */
	int64_t self_mem[NMEM], mem[NMEM];
	int is_kernel;   /* --kernels' row: no memory of its own */
};

struct aggs {
	size_t mem_skipped;  /* [memory] events of more than MEM_MAX bytes */
	int mem_range;       /* a sum past int64: no memory column is true */
	struct ta_intern *keys;
	struct op_agg *v;
	size_t n, cap;
};

/* What a node on a thread's stack is. */
enum node_kind { NODE_OP, NODE_LAUNCH, NODE_PYTHON };

/* What a finished op adds to its row of the table. */
struct op_done {
	const char *name;
	char *shapes, *stack;
	int64_t self_cpu, cpu, self_dev, dev, self_tc, tc;
	int in_window;
	int64_t self_mem[NMEM], mem[NMEM];
};

struct node {
	int64_t ts, end, children, gpu_self, gpu_total, tc_self, tc_total;
	int64_t mem[NMEM], child_mem[NMEM];
	enum node_kind kind;
	const char *name;      /* the names cache's, or a static string */
	char *shapes, *stack;  /* NULL unless asked for */
	int nchildren;         /* ops and launch calls finished inside it */
	int has_dup;           /* dup holds its first child, of its own name */
	struct op_done dup;
};

/* Every name of the database by id, read once: rows carry ids. */
struct names {
	char **v;
	size_t n;
};

/* --step: each rank's own ProfilerStep#N (ranks' clocks differ: one
 * window over them all would take in another rank's step). */
struct step_win {
	int64_t rank, ts, end;
};

/* A rank's [memory] events by time, with running sums per device type:
 * the bytes within [a, b] are two binary searches away. */
struct mem_sums {
	int64_t *ts, (*sum)[NMEM];   /* sum[i]: the events before i */
	size_t n, cap, skipped;
	int range;                   /* a sum went past int64 */
};

/* An event of more than a PiB is damage, not an allocation. */
#define MEM_MAX ((int64_t)1 << 50)

/* a + b, or the nearest end of int64 with *range set: damaged sizes
 * must not wrap into plausible numbers */
static int64_t add_sat(int64_t a, int64_t b, int *range)
{
	int64_t r;

	if (!__builtin_add_overflow(a, b, &r))
		return r;
	*range = 1;
	return b > 0 ? INT64_MAX : INT64_MIN;
}

static int64_t sub_sat(int64_t a, int64_t b, int *range)
{
	int64_t r;

	if (!__builtin_sub_overflow(a, b, &r))
		return r;
	*range = 1;
	return b < 0 ? INT64_MAX : INT64_MIN;
}

struct walker {
	const struct ta_ops_opts *o;
	struct mem_sums mem;
	struct aggs *aggs;
	struct node *stack;
	size_t depth, cap;
	int64_t rank;
	int64_t step_ts, step_end;   /* the rank's --step window, or all */
	const struct step_win *wins; /* --step: by rank; NULL: the whole trace */
	size_t nwins;
};

/* An op's key in aggs->keys: rank's bytes, then the texts (\x01 never
 * occurs in them). */
static void agg_key(struct ta_buf *key, int64_t rank, const char *name,
		    const char *shapes, const char *stack)
{
	ta_buf_add(key, &rank, sizeof(rank));
	ta_buf_adds(key, name);
	ta_buf_addc(key, '\x01');
	ta_buf_adds(key, shapes ? shapes : "");
	ta_buf_addc(key, '\x01');
	ta_buf_adds(key, stack ? stack : "");
}

static struct op_agg *agg_for(struct aggs *a, int64_t rank, const char *name,
			      const char *shapes, const char *stack)
{
	struct ta_buf key = { 0 };
	int is_new;
	int64_t id;

	agg_key(&key, rank, name, shapes, stack);
	id = ta_intern(a->keys, key.s, key.len, &is_new);
	ta_buf_free(&key);
	if (is_new) {
		if (a->n == a->cap) {
			a->cap = a->cap ? a->cap * 2 : 256;
			a->v = ta_xrealloc(a->v, a->cap * sizeof(*a->v));
		}
		memset(&a->v[a->n], 0, sizeof(a->v[a->n]));
		a->v[a->n].rank = rank;
		a->v[a->n].name = ta_xstrdup(name);
		a->v[a->n].shapes = shapes ? ta_xstrdup(shapes) : NULL;
		a->v[a->n].stack = stack ? ta_xstrdup(stack) : NULL;
		a->n++;
	}
	return &a->v[id - 1];
}

static void commit(struct walker *w, struct op_done *d)
{
	if (d->in_window) {
		struct op_agg *a = agg_for(w->aggs, w->rank, d->name,
					   w->o->group_shape ? d->shapes : NULL,
					   w->o->stack_depth ? d->stack : NULL);

		a->calls++;
		a->self_cpu = ta_add_sat(a->self_cpu, d->self_cpu);
		a->cpu = ta_add_sat(a->cpu, d->cpu);
		a->self_dev = ta_add_sat(a->self_dev, d->self_dev);
		a->dev = ta_add_sat(a->dev, d->dev);
		a->self_tc = ta_add_sat(a->self_tc, d->self_tc);
		a->tc = ta_add_sat(a->tc, d->tc);
		for (int k = 0; k < NMEM; k++) {
			a->self_mem[k] = add_sat(a->self_mem[k], d->self_mem[k],
						 &w->mem.range);
			a->mem[k] = add_sat(a->mem[k], d->mem[k], &w->mem.range);
		}
	}
	free(d->shapes);
	free(d->stack);
}

/* An op leaves the stack: count it, and hand its GPU time to its parent.
 * As the profiler's _remove_dup_nodes: an op whose parent has its name
 * and no other child (autocast records aten::layer_norm inside
 * aten::layer_norm) is no call of its own; its self time and kernels go
 * to the parent. So a child of the parent's name waits in the parent
 * until a second child, or the parent's end, decides. */
static void finish(struct walker *w)
{
	struct node *n = &w->stack[--w->depth];
	struct node *parent = NULL;
	struct op_done d;
	size_t i;

	for (i = w->depth; i-- > 0;)
		if (w->stack[i].kind != NODE_PYTHON) {
			parent = &w->stack[i];
			break;
		}
	if (n->kind == NODE_PYTHON) {
		free(n->shapes);
		free(n->stack);
		return;
	}
	d = (struct op_done){ n->name, n->shapes, n->stack,
		n->end - n->ts - n->children, n->end - n->ts, n->gpu_self,
		n->kind == NODE_LAUNCH ? 0 : n->gpu_total, n->tc_self,
		n->kind == NODE_LAUNCH ? 0 : n->tc_total,
		n->ts >= w->step_ts && n->end <= w->step_end,
		{ sub_sat(n->mem[MEM_CPU], n->child_mem[MEM_CPU], &w->mem.range),
		  sub_sat(n->mem[MEM_DEV], n->child_mem[MEM_DEV], &w->mem.range) },
		{ n->mem[MEM_CPU], n->mem[MEM_DEV] } };
	if (n->has_dup && n->nchildren == 1) { /* its only child was itself */
		d.self_cpu += n->dup.self_cpu;
		d.self_dev += n->dup.self_dev;
		d.self_tc += n->dup.self_tc;
		for (i = 0; i < NMEM; i++)
			d.self_mem[i] = add_sat(d.self_mem[i], n->dup.self_mem[i],
						&w->mem.range);
		free(n->dup.shapes);
		free(n->dup.stack);
	} else if (n->has_dup) {
		commit(w, &n->dup);
	}
	if (parent) {
		parent->children = ta_add_sat(parent->children, n->end - n->ts);
		parent->gpu_total = ta_add_sat(parent->gpu_total, n->gpu_total);
		parent->tc_total = ta_add_sat(parent->tc_total, n->tc_total);
		for (i = 0; i < NMEM; i++)
			parent->child_mem[i] = add_sat(parent->child_mem[i], n->mem[i],
						       &w->mem.range);
		if (n->kind == NODE_LAUNCH) { /* its GPU work is the op's own */
			parent->gpu_self = ta_add_sat(parent->gpu_self, n->gpu_total);
			parent->tc_self = ta_add_sat(parent->tc_self, n->tc_total);
			d.dev = 0;
			d.tc = 0;
		}
		if (++parent->nchildren == 1 && n->kind == NODE_OP &&
		    parent->kind == NODE_OP && strcmp(parent->name, n->name) == 0) {
			parent->has_dup = 1;
			parent->dup = d;
			return;
		}
		if (parent->has_dup && parent->nchildren == 2) {
			commit(w, &parent->dup); /* a second child: no dup */
			parent->has_dup = 0; /* counted: not again at its end */
		}
	}
	commit(w, &d);
}

/* Shapes as the profiler prints them: an argument that is a list of
 * tensors ("[[4, 8], [8]]" inside the list) shows as "[]", and no shapes
 * at all as "". */
static char *profiler_shapes(const char *in)
{
	struct ta_buf b = { 0 };
	const char *p = in;
	int depth = 0;

	if (!in || strcmp(in, "[]") == 0)
		return ta_xstrdup("");
	for (; *p; p++) {
		if (depth == 1 && *p == '[' && p[1] == '[') {
			int d = 0;

			do { /* skip the nested element */
				d += *p == '[';
				d -= *p == ']';
				p++;
			} while (*p && d > 0);
			ta_buf_adds(&b, "[]");
			p--;
			continue;
		}
		depth += *p == '[';
		depth -= *p == ']';
		ta_buf_addc(&b, *p);
	}
	if (!b.s)
		ta_buf_adds(&b, "");
	return b.s;
}

/* The innermost stack_depth Python frames, innermost first. */
static char *python_stack(struct walker *w)
{
	struct ta_buf b = { 0 };
	size_t i;
	int got = 0;

	for (i = w->depth; i-- > 0 && got < w->o->stack_depth;)
		if (w->stack[i].kind == NODE_PYTHON) {
			if (got++)
				ta_buf_adds(&b, " <- ");
			ta_buf_adds(&b, w->stack[i].name);
		}
	if (!b.s)
		ta_buf_adds(&b, "");
	return b.s;
}

/* The first event at or after ts (after: past ts too). */
static size_t mem_at(const struct mem_sums *m, int64_t ts, int after)
{
	if (after && ts == INT64_MAX)
		return m->n;
	return ta_lower_i64(m->ts, m->n, after ? ts + 1 : ts);
}

static void push(struct walker *w, int64_t ts, int64_t dur, enum node_kind kind,
		 const char *name, const char *shapes, int64_t gpu, int64_t tc)
{
	struct node *n;

	while (w->depth && !(ts + dur <= w->stack[w->depth - 1].end &&
			     ts >= w->stack[w->depth - 1].ts))
		finish(w);
	if (w->depth == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 64;
		w->stack = ta_xrealloc(w->stack, w->cap * sizeof(*w->stack));
	}
	n = &w->stack[w->depth];
	memset(n, 0, sizeof(*n));
	n->ts = ts;
	n->end = ts + dur;
	n->kind = kind;
	n->gpu_total = gpu;
	n->tc_total = tc;
	n->name = name;
	if (w->mem.n && kind != NODE_PYTHON) {
		size_t a = mem_at(&w->mem, ts, 0), b = mem_at(&w->mem, ts + dur, 1);

		for (int k = 0; k < NMEM; k++)
			n->mem[k] = sub_sat(w->mem.sum[b][k], w->mem.sum[a][k],
					    &w->mem.range);
	}
	n->shapes = w->o->group_shape ? profiler_shapes(shapes) : NULL;
	if (w->o->stack_depth && kind != NODE_PYTHON)
		n->stack = python_stack(w);
	w->depth++;
}

/* The host side (ops, CPU annotations, runtime calls, Python frames)
 * per thread, parents before children: the order of the model's
 * host_thread (its index holds every column read but input_dims).
 * ?1: python_function's name id. */
static const char host_sql[] =
	"SELECT e.rank, e.pid, e.tid, e.ts, max(e.dur, 0), e.role,"
	"  e.name, %s, g.ns, e.cat IS ?1, g.tc_ns, g.correlation"
	" FROM host_thread e LEFT JOIN gpu_corr g ON e.role = " TA_SQL(TA_ROLE_RUNTIME)
	"  AND g.rank = e.rank AND g.correlation = e.correlation"
	" WHERE (%d OR e.cat IS NOT ?1)"
	" ORDER BY e.rank, e.pid, e.tid, e.ts, e.dur DESC, e.idx";

static int load_names(sqlite3 *db, struct names *nm, int64_t *python,
		      struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	int64_t max_id;

	*python = -1;
	if (ta_db_get_int(db, "SELECT max(name_id) FROM label", 0, &max_id,
			  err) < 0)
		return -1;
	nm->n = (size_t)max_id + 1;
	nm->v = ta_xcalloc(nm->n, sizeof(*nm->v));
	if (ta_db_prepare(db, "SELECT name_id, name FROM label", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *s = (const char *)sqlite3_column_text(st, 1);

		if (id < 0 || (size_t)id >= nm->n || !s)
			continue;
		nm->v[id] = ta_xstrdup(s);
		if (strcmp(s, "python_function") == 0)
			*python = id;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

static const char *name_of(const struct names *nm, int64_t id)
{
	return id >= 0 && (size_t)id < nm->n && nm->v[id] ? nm->v[id] : "";
}

static void free_names(struct names *nm)
{
	size_t i;

	for (i = 0; i < nm->n; i++)
		free(nm->v[i]);
	free(nm->v);
}

static const char kernels_sql[] =
	"SELECT g.rank, n.name, count(*), ta_sum(g.dur) FROM gpu g"
	" JOIN label n ON n.name_id = g.name GROUP BY g.rank, n.name";
/* --step N: launched in the rank's own step (its call there; work with
 * no correlation: started there; with one and no call, launched before
 * the trace began: in no step), as the op rows take the device time of
 * their launches: by the GPU's time, a GPU behind the host gave one
 * step's table the kernels of the step before (helper-63: gpt2_train's
 * GEMMs 1 call each beside aten::mm's 19) */
static const char step_kernels_sql[] =
	"SELECT g.rank, n.name, count(*), ta_sum(g.dur) FROM gpu g"
	" JOIN label n ON n.name_id = g.name"
	" JOIN (SELECT rank, min(ts) AS ts, max(end_ts) AS end_ts FROM steps"
	"  WHERE step = ? GROUP BY rank) w ON w.rank = g.rank"
	" WHERE CASE WHEN g.correlation != -1 THEN (SELECT c.ts FROM launch c"
	"   WHERE c.rank = g.rank AND c.correlation = g.correlation) ELSE g.ts END"
	"  BETWEEN w.ts AND w.end_ts GROUP BY g.rank, n.name";

static const char step_sql[] =
	"SELECT rank, min(ts), max(end_ts) FROM steps WHERE step = ?"
	" GROUP BY rank ORDER BY rank";

/* --step N: each rank's window; an error when no rank has that step. */
static int step_windows(sqlite3 *db, const struct ta_ops_opts *o,
			struct step_win **wins, size_t *n, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*wins = NULL;
	*n = 0;
	if (o->step < 0)
		return 0;
	if (ta_db_prepare(db, step_sql, &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, o->step);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*wins = ta_xrealloc(*wins, (*n + 1) * sizeof(**wins));
		(*wins)[(*n)++] = (struct step_win){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2) };
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	if (*n == 0) {
		ta_error_set(err, TA_EXIT_INPUT, "no ProfilerStep#%lld in the trace",
			     (long long)o->step);
		return -1;
	}
	return 0;
}

/* The rank's window: its step, none if it has not that step, or all. */
static void rank_window(struct walker *w, int64_t rank)
{
	size_t i;

	w->step_ts = INT64_MIN;
	w->step_end = INT64_MAX;
	if (!w->wins)
		return;
	w->step_ts = INT64_MAX;
	w->step_end = INT64_MIN;
	for (i = 0; i < w->nwins; i++)
		if (w->wins[i].rank == rank) {
			w->step_ts = w->wins[i].ts;
			w->step_end = w->wins[i].end;
		}
}

static const struct ta_col base_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "self_cpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "cpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "self_device_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "device_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "input_shapes", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "stack", TA_COL_TEXT, TA_UNIT_NONE, 1 },
};

static const struct ta_ops_opts *sort_opts;

static int64_t sort_value(const struct op_agg *a)
{
	switch (sort_opts->sort) {
	case TA_OPS_SORT_DEVICE: return a->dev;
	case TA_OPS_SORT_SELF_CPU: return a->self_cpu;
	case TA_OPS_SORT_CPU: return a->cpu;
	case TA_OPS_SORT_CALLS: return a->calls;
	case TA_OPS_SORT_SELF_CPU_MEM: return a->self_mem[MEM_CPU];
	case TA_OPS_SORT_CPU_MEM: return a->mem[MEM_CPU];
	case TA_OPS_SORT_SELF_DEVICE_MEM: return a->self_mem[MEM_DEV];
	case TA_OPS_SORT_DEVICE_MEM: return a->mem[MEM_DEV];
	default: return a->self_dev;
	}
}

static int cmp_rows(const void *x, const void *y)
{
	const struct op_agg *a = *(const struct op_agg *const *)x;
	const struct op_agg *b = *(const struct op_agg *const *)y;
	int64_t va = sort_value(a), vb = sort_value(b);

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (va != vb)
		return va > vb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static const struct ta_col pct_cols[] = {
	{ "self_cpu_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "self_device_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};

/* Per rank, the sums the profiler's "Self CPU %" and "Self CUDA %" are
 * shares of. */
static void rank_totals(const struct aggs *a, int64_t rank, double *cpu,
			double *dev)
{
	size_t i;

	*cpu = *dev = 0;
	for (i = 0; i < a->n; i++) {
		if (a->v[i].rank != rank)
			continue;
		*cpu += (double)a->v[i].self_cpu;
		*dev += (double)a->v[i].self_dev;
	}
}

static const struct ta_col mem_cols[] = {
	{ "self_cpu_mem_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "cpu_mem_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "self_device_mem_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "device_mem_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
};

/* The plugin's operator view's tensor-core columns, last (a script that
 * reads the columns before by position keeps working): whether the op
 * does work tensor cores are for, and the share of its self and total
 * device time on tensor-core kernels (classify.c's list; empty without
 * device time). */
static const struct ta_col tc_cols[] = {
	{ "tc_eligible", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "tc_self_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "tc_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};

/* has_mem: the trace has [memory] events (else no memory columns: the
 * profiler's table has none without profile_memory either) */
static struct ta_table *to_table(struct aggs *a, const struct ta_ops_opts *o,
				 int has_mem)
{
	size_t nbase = 7 + (o->group_shape ? 1 : 0) + (o->stack_depth ? 1 : 0);
	size_t ntc = nbase + 2 + (has_mem ? 4 : 0);
	size_t ncols = ntc + 3;
	double tot_cpu = 0, tot_dev = 0;
	struct ta_col *cols = ta_xmalloc(ncols * sizeof(*cols));
	const struct op_agg **refs = ta_xmalloc((a->n ? a->n : 1) * sizeof(*refs));
	struct ta_table *t;
	size_t i, k = 0, shown = 0;
	int64_t last_rank = -1;

	memcpy(cols, base_cols, 7 * sizeof(*cols));
	if (o->group_shape)
		cols[7] = base_cols[7];
	if (o->stack_depth)
		cols[nbase - 1] = base_cols[8];
	memcpy(cols + nbase, pct_cols, sizeof(pct_cols));
	if (has_mem)
		memcpy(cols + nbase + 2, mem_cols, sizeof(mem_cols));
	memcpy(cols + ntc, tc_cols, sizeof(tc_cols));
	t = ta_table_new("Operators (as the profiler's key_averages)", cols, ncols);
	t->owned_cols = cols;
	for (i = 0; i < a->n; i++)
		refs[i] = &a->v[i];
	sort_opts = o;
	ta_qsort(refs, a->n, sizeof(*refs), cmp_rows);
	for (i = 0; i < a->n; i++) {
		const struct op_agg *g = refs[i];
		size_t r;

		if (g->rank != last_rank) {
			shown = 0, last_rank = g->rank;
			rank_totals(a, last_rank, &tot_cpu, &tot_dev);
		}
		if (o->top > 0 && shown++ >= (size_t)o->top)
			continue;
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, 0, g->rank);
		ta_table_set_text(t, r, 1, g->name);
		ta_table_set_int(t, r, 2, g->calls);
		ta_table_set_real(t, r, 3, (double)g->self_cpu / 1000.0);
		ta_table_set_real(t, r, 4, (double)g->cpu / 1000.0);
		ta_table_set_real(t, r, 5, (double)g->self_dev / 1000.0);
		ta_table_set_real(t, r, 6, (double)g->dev / 1000.0);
		k = 7;
		if (o->group_shape)
			ta_table_set_text(t, r, k++, g->shapes ? g->shapes : "");
		if (o->stack_depth)
			ta_table_set_text(t, r, k++, g->stack ? g->stack : "");
		ta_table_set_real(t, r, k, tot_cpu > 0 ?
				  100.0 * (double)g->self_cpu / tot_cpu : 0);
		ta_table_set_real(t, r, k + 1, tot_dev > 0 ?
				  100.0 * (double)g->self_dev / tot_dev : 0);
		if (has_mem && !g->is_kernel && !a->mem_range) {
			ta_table_set_int(t, r, k + 2, g->self_mem[MEM_CPU]);
			ta_table_set_int(t, r, k + 3, g->mem[MEM_CPU]);
			ta_table_set_int(t, r, k + 4, g->self_mem[MEM_DEV]);
			ta_table_set_int(t, r, k + 5, g->mem[MEM_DEV]);
		}
		if (!g->is_kernel)
			ta_table_set_int(t, r, ntc, ta_op_tensor_core_eligible(g->name));
		if (g->self_dev > 0)
			ta_table_set_real(t, r, ntc + 1, 100.0 * (double)g->self_tc / (double)g->self_dev);
		if (g->dev > 0)
			ta_table_set_real(t, r, ntc + 2, 100.0 * (double)g->tc / (double)g->dev);
	}
	free(refs);
	return t;
}

/* The profiler's device types: CPU, MKLDNN and IDEEP are CPU memory;
 * CUDA, HIP and PrivateUse1 device memory (c10's DeviceType). */
static int mem_kind(int64_t dev_type)
{
	if (dev_type == 0 || dev_type == 2 || dev_type == 5)
		return MEM_CPU;
	if (dev_type == 1 || dev_type == 6 || dev_type == 20)
		return MEM_DEV;
	return -1;
}

static const char mem_sql[] =
	"SELECT ts, dev_type, bytes FROM mem WHERE rank = ? ORDER BY ts";

/* The rank's [memory] events into w->mem. */
static int load_mem(sqlite3 *db, int64_t rank, struct mem_sums *m,
		    struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	m->n = 0;
	if (ta_db_prepare(db, mem_sql, &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	if (!m->cap) {
		m->cap = 1024;
		m->ts = ta_xmalloc(m->cap * sizeof(*m->ts));
		m->sum = ta_xmalloc((m->cap + 1) * sizeof(*m->sum));
	}
	m->sum[0][MEM_CPU] = m->sum[0][MEM_DEV] = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int kind = mem_kind(sqlite3_column_int64(st, 1));
		int64_t bytes = sqlite3_column_int64(st, 2);

		if (m->n == m->cap) {
			m->cap *= 2;
			m->ts = ta_xrealloc(m->ts, m->cap * sizeof(*m->ts));
			m->sum = ta_xrealloc(m->sum, (m->cap + 1) * sizeof(*m->sum));
		}
		m->ts[m->n] = sqlite3_column_int64(st, 0);
		m->sum[m->n + 1][MEM_CPU] = m->sum[m->n][MEM_CPU];
		m->sum[m->n + 1][MEM_DEV] = m->sum[m->n][MEM_DEV];
		if (kind >= 0 && (bytes > MEM_MAX || bytes < -MEM_MAX ||
				  sqlite3_column_type(st, 2) == SQLITE_FLOAT))
			m->skipped++, kind = -1;
		if (kind >= 0)
			m->sum[m->n + 1][kind] = add_sat(m->sum[m->n + 1][kind], bytes,
							 &m->range);
		m->n++;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

/* Whether the row's GPU time (a launch call's, column 8) is the first
 * given for its correlation on the rank; a row without any is. (A call
 * recorded twice, in a damaged trace, counted its kernels twice.) */
static int first_launch(struct ta_pairs *credited, sqlite3_stmt *st)
{
	return sqlite3_column_type(st, 8) == SQLITE_NULL ||
	       ta_pairs_add(credited, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 11));
}

static int walk(sqlite3 *db, const struct ta_ops_opts *o, struct aggs *aggs,
		const struct step_win *wins, size_t nwins, int has_mem,
		struct ta_error *err)
{
	struct walker w = { o, { NULL, NULL, 0, 0, 0, 0 }, aggs, NULL, 0, 0, 0, INT64_MIN,
			    INT64_MAX, wins, nwins };
	struct names nm = { NULL, 0 };
	sqlite3_stmt *st = NULL;
	char sql[sizeof(host_sql) + 32];
	int64_t pid_tid_key[2] = { 0, 0 }, python;
	int rc, first = 1;
	struct ta_pairs credited = { NULL, NULL, 0, 0 };   /* launches given GPU time */

	snprintf(sql, sizeof(sql), host_sql,
		 o->group_shape ? "e.input_dims" : "NULL", o->stack_depth > 0);
	if (load_names(db, &nm, &python, err) < 0 ||
	    ta_db_prepare(db, sql, &st, err) < 0) {
		free_names(&nm);
		return -1;
	}
	sqlite3_bind_int64(st, 1, python);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);
		int64_t pid = sqlite3_column_int64(st, 1), tid = sqlite3_column_int64(st, 2);
		enum node_kind kind = sqlite3_column_int(st, 9) ? NODE_PYTHON :
			sqlite3_column_int(st, 5) == TA_ROLE_RUNTIME ? NODE_LAUNCH :
			NODE_OP;
		const char *op;
		int64_t gpu, tc;

		if (first || rank != w.rank || pid != pid_tid_key[0] ||
		    tid != pid_tid_key[1])
			while (w.depth)
				finish(&w); /* a new thread */
		if (first || rank != w.rank) {
			rank_window(&w, rank);
			if (has_mem && load_mem(db, rank, &w.mem, err) < 0) {
				rc = SQLITE_ERROR;
				break;
			}
		}
		first = 0;
		w.rank = rank;
		pid_tid_key[0] = pid, pid_tid_key[1] = tid;
		op = name_of(&nm, sqlite3_column_int64(st, 6));
		/* the profiler groups every ProfilerStep#N as one key */
		if (kind != NODE_PYTHON && strncmp(op, "ProfilerStep#", 13) == 0)
			op = "ProfilerStep*";
		gpu = sqlite3_column_int64(st, 8), tc = sqlite3_column_int64(st, 10);
		if (!first_launch(&credited, st))
			gpu = tc = 0;
		push(&w, sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4), kind,
		     op, (const char *)sqlite3_column_text(st, 7), gpu, tc);
	}
	ta_pairs_free(&credited);
	while (w.depth)
		finish(&w);
	free(w.stack);
	free(w.mem.ts);
	free(w.mem.sum);
	aggs->mem_skipped = w.mem.skipped;
	aggs->mem_range = w.mem.range;
	free_names(&nm);
	sqlite3_finalize(st);
	if (rc == SQLITE_ERROR && err->code)
		return -1;    /* load_mem said why */
	if (rc != SQLITE_DONE) {
		ta_db_failed(db, err);
		return -1;
	}
	return 0;
}

/* Whether the walk counted an op of this name on the rank (shapes and
 * stack not asked for: its key is the name alone). */
static int op_named(const struct aggs *a, int64_t rank, const char *name)
{
	struct ta_buf key = { 0 };
	int64_t id;

	agg_key(&key, rank, name, NULL, NULL);
	id = ta_intern_find(a->keys, key.s, key.len);
	ta_buf_free(&key);
	return id > 0 && !a->v[id - 1].is_kernel;
}

/* --kernels: one row per GPU activity name, as the profiler lists them. */
static int add_kernels(sqlite3 *db, struct aggs *aggs, int64_t step,
		       struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_db_prepare(db, step < 0 ? kernels_sql : step_kernels_sql, &st, err) < 0)
		return -1;
	if (step >= 0)
		sqlite3_bind_int64(st, 1, step);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		struct op_agg *a;

		/* a CPU op of the kernel's name (Inductor's launcher of a Triton
		 * kernel is one) keeps its own row, as in the profiler's table:
		 * the kernel's is named apart, so that the key names one row */
		if (name && op_named(aggs, rank, name)) {
			char *apart = ta_xmalloc(strlen(name) + sizeof(" (kernel)"));

			strcpy(apart, name);
			strcat(apart, " (kernel)");
			a = agg_for(aggs, rank, apart, NULL, NULL);
			free(apart);
		} else {
			a = agg_for(aggs, rank, name, NULL, NULL);
		}
		a->is_kernel = 1;
		a->calls += sqlite3_column_int64(st, 2);
		a->self_dev += sqlite3_column_int64(st, 3);
		a->dev += sqlite3_column_int64(st, 3);
		if (ta_is_tensor_core((const char *)sqlite3_column_text(st, 1))) {
			a->self_tc += sqlite3_column_int64(st, 3);
			a->tc += sqlite3_column_int64(st, 3);
		}
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

/* A rank that launched GPU work with no GPU activity recorded (profiled
 * without ProfilerActivity.CUDA): its device columns are not measured,
 * so empty, not 0 (helper-55: cpu_only's self_device_pct read 0 and a
 * gate on it passed), with a warning. */
static int device_unrecorded(sqlite3 *db, struct ta_table *t, struct ta_error *err)
{
	static const char *const device[] = { "self_device_us", "device_us",
		"self_device_pct", "tc_self_pct", "tc_pct", NULL };
	int64_t rank = INT64_MIN;
	int unrecorded = 0;
	struct ta_buf ranks = { 0 };
	size_t r, k, n = 0;

	for (r = 0; r < t->nrows; r++) {
		if (ta_table_cell(t, r, 0)->i != rank) {
			rank = ta_table_cell(t, r, 0)->i;
			if ((unrecorded = ta_model_gpu_unrecorded(db, rank)) < 0) {
				ta_db_failed(db, err);
				return -1;
			}
			if (unrecorded && n++ < 8)
				ta_buf_addf(&ranks, "%s%lld", n > 1 ? ", " : "", (long long)rank);
		}
		for (k = 0; unrecorded && device[k]; k++) {
			long c = ta_table_col(t, device[k]);

			if (c >= 0)
				ta_table_set_null(t, r, (size_t)c);
		}
	}
	if (n)   /* every such rank named (helper-57: only the first was) */
		ta_table_warn(t, "rank%s %s%s launched GPU work but %s no GPU "
			      "activity (profiled without ProfilerActivity.CUDA): device "
			      "time is not measured, %s columns are empty", n > 1 ? "s" : "",
			      ranks.s, n > 8 ? " and more" : "", n > 1 ? "their traces hold" :
			      "its trace holds", n > 1 ? "their" : "its");
	ta_buf_free(&ranks);
	return 0;
}

int ta_ops_run(sqlite3 *db, const struct ta_query *q, const struct ta_ops_opts *o,
	       struct ta_table **out, struct ta_error *err)
{
	struct aggs aggs = { 0, 0, ta_intern_new(), NULL, 0, 0 };
	struct step_win *wins = NULL;
	size_t i, nwins = 0;
	int64_t has_mem = 0;
	int rc;

	*out = NULL;
	rc = ta_model_prepare(db, q, TA_NEED_THREAD, err);
	if (rc == 0)
		rc = ta_gpu_corr_build(db, err);
	if (rc == 0)
		rc = step_windows(db, o, &wins, &nwins, err);
	if (rc == 0)
		rc = ta_db_get_int(db, "SELECT EXISTS (SELECT 1 FROM mem)", 0, &has_mem, err);
	if (rc == 0)
		rc = walk(db, o, &aggs, wins, nwins, has_mem, err);
	if (rc == 0 && o->kernels)
		rc = add_kernels(db, &aggs, o->step, err);
	free(wins);
	if (rc == 0 && has_mem == 0 && o->sort >= TA_OPS_SORT_SELF_CPU_MEM) {
		ta_error_set(err, TA_EXIT_USAGE, "--sort: the trace has no [memory] "
			     "events to sort by (profile with profile_memory=True)");
		rc = -1;
	}
	if (rc == 0 && aggs.mem_range && o->sort >= TA_OPS_SORT_SELF_CPU_MEM) {
		ta_error_set(err, TA_EXIT_INPUT, "--sort: the [memory] events' sizes add "
			     "up past the range of a 64-bit integer: damaged");
		rc = -1;
	}
	if (rc == 0)
		*out = to_table(&aggs, o, has_mem != 0);
	if (rc == 0)
		rc = device_unrecorded(db, *out, err);
	if (rc == 0 && aggs.mem_skipped)
		ta_table_warn(*out, "%zu [memory] event%s of more than a PiB (or not a "
			      "whole number of bytes) left out of the memory columns: "
			      "damaged", aggs.mem_skipped, aggs.mem_skipped == 1 ? "" : "s");
	if (rc == 0 && aggs.mem_range)
		ta_table_warn(*out, "the [memory] events' sizes add up past the range "
			      "of a 64-bit integer: the memory columns are left empty");
	if (rc == 0) {
		size_t negative = 0;

		for (i = 0; i < aggs.n; i++)
			negative += aggs.v[i].self_cpu < 0;
		if (negative)
			/* a record_function range entered in one function and
			 * exited after its parent's end is ordinary use
			 * (helper-52), not only damage */
			ta_table_warn(*out, "%zu row%s with a negative self_cpu_us: ops or "
				      "ranges on one thread that overlap without one holding "
				      "the other (a record_function range that outlives the "
				      "one it began in, or a damaged trace), whose time the "
				      "profiler's table takes from their parent twice, as here",
				      negative, negative == 1 ? "" : "s");
	}
	for (i = 0; i < aggs.n; i++) {
		free(aggs.v[i].name);
		free(aggs.v[i].shapes);
		free(aggs.v[i].stack);
	}
	free(aggs.v);
	ta_intern_free(aggs.keys);
	return rc;
}
