/* The TensorBoard profiler plugin's Memory view (memory_parser.py,
 * run.py:181-345, utils.py:101-202; kineto 790be856), quirks included.
 *
 * Statistics: each [memory] record goes, per thread, to the innermost
 * node of that thread's call tree (optree_tb.c) whose time holds it, found
 * by walking down from where the last record was left; one outside every
 * node, or whose node is not an operator, is dropped. Per device ("CPU",
 * "GPU<Device Id>") and operator name: the bytes of its own records (an
 * allocation adds, a free subtracts), of its own allocations and their
 * count, then the same with its children's, over the nodes the walk
 * reached (a node it never entered hides its children), and the calls of
 * the operators the statistics' walk met. Rows all zero are dropped.
 *
 * Curve: per device, every record with an address and both totals, by
 * time: ms since the first event the plugin reads, allocated and reserved
 * MB; past 10 240 points, LTTB-sampled as the plugin's front end gets it. */
#include "optree_int.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_intern.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's ints do not overflow; ours stop at the limit, and say so (a
 * trace's numbers may be anything): *sat set. */
static void add_sat(int64_t *a, int64_t b, int *sat)
{
	if (__builtin_add_overflow(*a, b, a)) {
		*a = b > 0 ? INT64_MAX : INT64_MIN;
		*sat = 1;
	}
}

/* ---- find_memory_nodes ---- */

struct walker {
	long node;            /* current_node; -1: None */
	size_t child;         /* child_index */
	struct idx stack_node, stack_child;
};

/* Python's repr of a float: the shortest that reads back, ".0" on a
 * whole number */
static void py_float(char *b, size_t n, double x)
{
	int p;

	for (p = 1; p <= 17; p++) {
		snprintf(b, n, "%.*g", p, x);
		if (strtod(b, NULL) == x)
			break;
	}
	if (!strpbrk(b, ".eEni"))
		strncat(b, ".0", n - strlen(b) - 1);
}

int tb_mem_dev(sqlite3_stmt *st, int type_col, int id_col, char *b, size_t n)
{
	int64_t type = sqlite3_column_int64(st, type_col);
	char id[24];

	/* DeviceType(dtype): the integers 0 and 1 only */
	if (sqlite3_column_type(st, type_col) != SQLITE_INTEGER || (type != 0 && type != 1))
		return 0;
	if (type == 0) {
		snprintf(b, n, "CPU");
		return 1;
	}
	switch (sqlite3_column_type(st, id_col)) {
	case SQLITE_INTEGER:
		snprintf(id, sizeof(id), "%lld", (long long)sqlite3_column_int64(st, id_col));
		break;
	case SQLITE_FLOAT:
		py_float(id, sizeof(id), sqlite3_column_double(st, id_col));
		break;
	case SQLITE_NULL:
		snprintf(id, sizeof(id), "None");
		break;
	default:
		snprintf(id, sizeof(id), "%.20s", (const char *)sqlite3_column_text(st, id_col));
		break;
	}
	snprintf(b, n, "GPU%s", id);
	return 1;
}

/* rec_node[i]: the operator node record i goes to, or -1 */
static void attribute(struct state *s, const struct idx *roots, int dropped,
		      const struct tb_mem_rec *r, size_t n, long *rec_node, char *processed)
{
	struct walker *w = ta_xcalloc(s->ntid + 1, sizeof(*w));
	char *started = ta_xcalloc(s->ntid + 1, 1);
	size_t i;

	for (i = 0; i < n; i++) {
		long th = *tb_map_at(&s->tid_at, r[i].tid);
		struct walker *x;

		rec_node[i] = -1;
		if (th < 0 || (size_t)th >= roots->n)
			continue;   /* tid2tree.get(tid) is None */
		x = &w[th];
		if (!started[th]) {
			size_t root = roots->v[th];

			started[th] = 1;
			x->node = dropped && !s->o[root].kids.n ? -1 : (long)root;
			if (x->node >= 0)
				processed[x->node] = 1;
		}
		for (;;) {
			const struct node *cur;

			if (x->node < 0)
				break;
			cur = &s->o[x->node];
			if (isnan(cur->ts) || isnan(cur->end) || r[i].ts < cur->ts)
				break;   /* dropped */
			if (r[i].ts >= cur->end) {   /* up to the parent, its next child */
				if (x->stack_node.n) {
					x->node = (long)x->stack_node.v[--x->stack_node.n];
					x->child = x->stack_child.v[--x->stack_child.n] + 1;
				} else {
					x->node = -1;
				}
				continue;
			}
			while (x->child < cur->kids.n) {
				const struct node *c = &s->o[cur->kids.v[x->child]];

				if (r[i].ts < c->ts)
					break;
				if (r[i].ts >= c->end) {
					x->child++;
				} else {
					size_t next = cur->kids.v[x->child];

					processed[next] = 1;
					tb_push(&x->stack_node, (size_t)x->node);
					tb_push(&x->stack_child, x->child);
					x->node = (long)next;
					x->child = 0;
					cur = &s->o[next];
				}
			}
			if (tb_is_operator(cur))
				rec_node[i] = x->node;
			break;
		}
	}
	for (i = 0; i < s->ntid; i++) {
		free(w[i].stack_node.v);
		free(w[i].stack_child.v);
	}
	free(w);
	free(started);
}

/* ---- get_memory_statistics ---- */

struct stats {
	char (*devs)[32];
	size_t ndev;
	struct ta_intern *rows;     /* "dev\tname" -> row */
	struct tb_mem_op *row;
	size_t nrow, caprow;
	struct ta_intern *names;    /* op name -> calls */
	int64_t *calls;
	size_t ncalls;
	int saturated;              /* a sum stopped at the limit */
};

static size_t dev_index(struct stats *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->ndev && strcmp(st->devs[i], name); i++)
		;
	if (i == st->ndev) {
		st->devs = ta_xrealloc(st->devs, (st->ndev + 1) * sizeof(*st->devs));
		snprintf(st->devs[st->ndev++], sizeof(*st->devs), "%s", name);
	}
	return i;
}

static void add_row(struct stats *st, size_t dev, const char *name, const int64_t *v)
{
	size_t a = strlen(st->devs[dev]), b = strlen(name), i;
	char *key = ta_xmalloc(a + b + 2);
	int is_new, k;

	memcpy(key, st->devs[dev], a);
	key[a] = '\t';
	memcpy(key + a + 1, name, b + 1);
	i = (size_t)ta_intern(st->rows, key, a + b + 1, &is_new) - 1;   /* ids from 1 */
	free(key);
	if (is_new) {
		if (st->nrow == st->caprow) {
			st->caprow = st->caprow ? st->caprow * 2 : 64;
			st->row = ta_xrealloc(st->row, st->caprow * sizeof(*st->row));
		}
		memset(&st->row[i], 0, sizeof(st->row[i]));
		snprintf(st->row[i].dev, sizeof(st->row[i].dev), "%s", st->devs[dev]);
		st->row[i].name = name;
		st->nrow++;
	}
	for (k = 0; k < 6; k++)
		add_sat(&st->row[i].v[k], v[k], &st->saturated);
}

static void count_call(struct stats *st, const char *name)
{
	int is_new;
	int64_t id = ta_intern(st->names, name, strlen(name), &is_new);

	if ((size_t)id >= st->ncalls) {
		size_t n = st->ncalls ? st->ncalls * 2 : 64;

		while (n <= (size_t)id)
			n *= 2;
		st->calls = ta_xrealloc(st->calls, n * sizeof(*st->calls));
		memset(st->calls + st->ncalls, 0, (n - st->ncalls) * sizeof(*st->calls));
		st->ncalls = n;
	}
	st->calls[id]++;
}

static int by_dev_name(const void *x, const void *y)
{
	const struct tb_mem_op *a = x, *b = y;
	int c = strcmp(a->dev, b->dev);

	return c ? c : strcmp(a->name, b->name);
}

/* traverse_node_memory's walk, iteratively: a frame per node entered,
 * its totals (per device, the six metrics) added into its parent's when
 * it ends. */
struct frames {
	size_t *node, *next, n, cap, nd;
	int64_t *acc;
};

/* Enters node i: its call counted (an operator), and, if the memory walk
 * reached it, a frame holding its own metrics. */
static void enter(struct state *s, struct frames *fr, size_t i, const char *processed,
		  const long *slot, const int64_t *self, struct stats *st)
{
	const struct node *c = &s->o[i];
	int op = tb_is_operator(c);
	size_t k, m, nd = fr->nd;
	int64_t *a;

	if (op)
		count_call(st, c->name);
	if (!processed[i])
		return;   /* not entered by the memory walk: nor are its children */
	if (fr->n == fr->cap) {
		fr->cap = fr->cap ? fr->cap * 2 : 64;
		fr->node = ta_xrealloc(fr->node, fr->cap * sizeof(*fr->node));
		fr->next = ta_xrealloc(fr->next, fr->cap * sizeof(*fr->next));
		fr->acc = ta_xrealloc(fr->acc, fr->cap * nd * 6 * sizeof(*fr->acc));
	}
	fr->node[fr->n] = i;
	fr->next[fr->n] = 0;
	a = fr->acc + fr->n * nd * 6;
	memset(a, 0, nd * 6 * sizeof(*a));
	if (op && slot[i] >= 0)
		for (k = 0; k < nd; k++)
			for (m = 0; m < 3; m++)
				a[k * 6 + m] = a[k * 6 + 3 + m] = self[((size_t)slot[i] * nd + k) * 3 + m];
	fr->n++;
}

static void traverse(struct state *s, const struct idx *roots, int dropped,
		     const char *processed, const long *slot, const int64_t *self,
		     struct stats *st)
{
	struct frames fr = { NULL, NULL, 0, 0, st->ndev ? st->ndev : 1, NULL };
	size_t r, top, k, m;

	for (r = 0; r < roots->n; r++) {
		const struct node *root = &s->o[roots->v[r]];

		if (dropped && !root->kids.n)
			continue;   /* no tree */
		for (top = 0; top < root->kids.n; top++) {
			enter(s, &fr, root->kids.v[top], processed, slot, self, st);
			while (fr.n > 0) {
				size_t d = fr.n - 1;
				const struct node *n = &s->o[fr.node[d]];
				int64_t *a = fr.acc + d * fr.nd * 6;

				if (fr.next[d] < n->kids.n) {
					enter(s, &fr, n->kids.v[fr.next[d]++], processed, slot, self, st);
					continue;
				}
				/* it ends: its row, its totals to its parent */
				if (tb_is_operator(n))
					for (k = 0; k < st->ndev; k++)
						add_row(st, k, n->name, a + k * 6);
				if (d > 0) {
					int64_t *p = fr.acc + (d - 1) * fr.nd * 6;

					for (k = 0; k < fr.nd; k++)
						for (m = 3; m < 6; m++)
							add_sat(&p[k * 6 + m], a[k * 6 + m], &st->saturated);
				}
				fr.n--;
			}
		}
	}
	free(fr.node);
	free(fr.next);
	free(fr.acc);
}

void tb_memory_stats(struct state *s, const struct idx *roots, int dropped,
		     const struct tb_mem_rec *r, size_t n, struct tb_forest *f)
{
	long *rec_node = ta_xmalloc((n + 1) * sizeof(*rec_node));
	char *processed = ta_xcalloc(s->no + 1, 1);
	long *slot = ta_xmalloc((s->no + 1) * sizeof(*slot));
	long *rec_dev = ta_xmalloc((n + 1) * sizeof(*rec_dev));
	struct stats st;
	int64_t *self = NULL;
	size_t i, nslots = 0, nd, k;

	memset(&st, 0, sizeof(st));
	st.rows = ta_intern_new();
	st.names = ta_intern_new();
	attribute(s, roots, dropped, r, n, rec_node, processed);
	for (i = 0; i < n; i++)
		rec_dev[i] = r[i].dev[0] ? (long)dev_index(&st, r[i].dev) : -1;
	nd = st.ndev ? st.ndev : 1;
	for (i = 0; i < s->no; i++)
		slot[i] = -1;
	for (i = 0; i < n; i++)
		if (rec_node[i] >= 0 && slot[rec_node[i]] < 0)
			slot[rec_node[i]] = (long)nslots++;
	self = ta_xcalloc(nslots * nd * 3 + 1, sizeof(*self));
	for (i = 0; i < n; i++) {   /* get_memory_metrics */
		int64_t *m;

		if (rec_node[i] < 0 || rec_dev[i] < 0)
			continue;
		m = self + ((size_t)slot[rec_node[i]] * nd + (size_t)rec_dev[i]) * 3;
		add_sat(&m[0], r[i].bytes, &st.saturated);
		if (r[i].bytes > 0) {
			add_sat(&m[1], r[i].bytes, &st.saturated);
			m[2]++;
		}
	}
	traverse(s, roots, dropped, processed, slot, self, &st);
	f->mem = ta_xcalloc(st.nrow + 1, sizeof(*f->mem));
	for (i = 0; i < st.nrow; i++) {
		int any = 0;

		for (k = 0; k < 6; k++)
			any |= st.row[i].v[k] != 0;
		if (!any)
			continue;
		f->mem[f->nmem] = st.row[i];
		f->mem[f->nmem].calls = st.calls[ta_intern_find(st.names, st.row[i].name,
								strlen(st.row[i].name))];
		f->nmem++;
	}
	ta_qsort(f->mem, f->nmem, sizeof(*f->mem), by_dev_name);
	f->mem_saturated = st.saturated;
	free(rec_node);
	free(processed);
	free(slot);
	free(rec_dev);
	free(self);
	free(st.devs);
	free(st.row);
	free(st.calls);
	ta_intern_free(st.rows);
	ta_intern_free(st.names);
}

/* ---- the statistics table: memory --by op --tb-compat ---- */

static const struct ta_col stat_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "device", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "increase_kb", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "self_increase_kb", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "allocs", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "self_allocs", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "alloc_kb", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "self_alloc_kb", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "increase_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "self_increase_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "alloc_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "self_alloc_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
};
#define NSTAT_COLS (sizeof(stat_cols) / sizeof(*stat_cols))

/* utils.py's DisplayRounder(2): two decimals, or one significant digit
 * below 0.01, as Python's round() gives them. */
static double display_round(double v)
{
	char b[400];
	int nd = 2;

	if (fabs(v) < 0.01 && v != 0)
		nd = (int)fabs(floor(log10(fabs(v))));
	snprintf(b, sizeof(b), "%.*f", nd, v);
	return strtod(b, NULL);
}

static int stat_rank(sqlite3 *db, struct ta_table *t, int64_t rank, void *ctx,
		     struct ta_error *err)
{
	struct tb_forest f;
	size_t i;

	(void)ctx;
	if (tb_forest_build_memory(db, rank, &f, err) < 0)
		return -1;
	if (!f.has_memory)
		ta_table_warn(t, "rank %lld: no [memory] events (profile with "
			      "profile_memory=True): the plugin shows no Memory view",
			      (long long)rank);
	if (f.mem_saturated)
		ta_table_warn(t, "rank %lld: [memory] sizes add up past 2^63 bytes (a damaged "
			      "trace): those sums are shown at the limit", (long long)rank);
	for (i = 0; i < f.nmem; i++) {
		const struct tb_mem_op *m = &f.mem[i];
		size_t row = ta_table_add_row(t);
		/* the plugin's order: increase, self increase, allocation
		 * count and self count, allocation size and self size */
		static const int kb_from[] = { 3, 0, -1, -1, 4, 1 };
		static const int count_from[] = { -1, -1, 5, 2, -1, -1 };
		int c;

		ta_table_set_int(t, row, 0, rank);
		ta_table_set_text(t, row, 1, m->dev);
		ta_table_set_text(t, row, 2, m->name);
		ta_table_set_int(t, row, 3, m->calls);
		for (c = 0; c < 6; c++) {
			if (kb_from[c] >= 0)
				ta_table_set_real(t, row, 4 + (size_t)c,
						  display_round((double)m->v[kb_from[c]] / 1024.0));
			else
				ta_table_set_int(t, row, 4 + (size_t)c, m->v[count_from[c]]);
		}
		ta_table_set_int(t, row, 10, m->v[3]);
		ta_table_set_int(t, row, 11, m->v[0]);
		ta_table_set_int(t, row, 12, m->v[4]);
		ta_table_set_int(t, row, 13, m->v[1]);
	}
	if (!f.has_memory)
		t->ranks_absent++;
	tb_forest_free(&f);
	return 0;
}

/* No rank with [memory] events: the error the default's memory gives. */
static int none_at_all(sqlite3 *db, struct ta_table **out, struct ta_error *err)
{
	if (*out && !ta_db_int(db, "SELECT EXISTS (SELECT 1 FROM mem)", 0)) {
		ta_table_free(*out);
		*out = NULL;
		return ta_memory_none(db, err);
	}
	return 0;
}

int ta_memory_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		     struct ta_error *err)
{
	if (tb_each_rank(db, q, ta_table_new("Memory statistics per operator (the "
					     "TensorBoard plugin's Memory view)", stat_cols,
					     NSTAT_COLS), stat_rank, NULL, out, err) < 0)
		return -1;
	return none_at_all(db, out, err);
}

/* ---- the curve: memory --series --tb-compat ---- */

static const struct ta_col curve_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "device", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "time_ms", TA_COL_REAL, TA_UNIT_NONE, 1 },
	{ "allocated_mb", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "reserved_mb", TA_COL_REAL, TA_UNIT_NONE, 0 },
};
#define NCURVE_COLS (sizeof(curve_cols) / sizeof(*curve_cols))

#define LTTB_OUT 10240

struct point { double t, a, r; };
struct curve { char dev[32]; struct point *p; size_t n, cap; };

/* utils.py's _areas_of_triangles for one b */
static double area(const struct point *a, const struct point *b, const struct point *c)
{
	return 0.5 * fabs((a->t - c->t) * (b->a - a->a) - (a->t - b->t) * (c->a - a->a));
}

/* utils.py's lttb_sample: the first and last points, and from each of
 * n_out - 2 bins (numpy.array_split: the first len % bins one longer) the
 * point of the largest triangle with the last one kept and the next bin's
 * mean. */
static void lttb(struct curve *c)
{
	size_t n = c->n, bins = LTTB_OUT - 2, inner = n - 2, i, j;
	struct point *out = ta_xmalloc(LTTB_OUT * sizeof(*out));
	size_t *start = ta_xmalloc((bins + 1) * sizeof(*start));

	for (i = 0, j = 1; i <= bins; i++) {
		start[i] = j;
		j += inner / bins + (i < inner % bins);
	}
	out[0] = c->p[0];
	out[LTTB_OUT - 1] = c->p[n - 1];
	for (i = 0; i < bins; i++) {
		struct point mean = { 0, 0, 0 };
		size_t a = start[i + 1], b = i + 1 < bins ? start[i + 2] : a, best = start[i];
		double best_area = -1;

		if (i + 1 >= bins) {   /* the last bin's next: the last point */
			a = n - 1;
			b = n;
		}
		for (j = a; j < b; j++) {
			mean.t += c->p[j].t;
			mean.a += c->p[j].a;
			mean.r += c->p[j].r;
		}
		mean.t /= (double)(b - a);
		mean.a /= (double)(b - a);
		mean.r /= (double)(b - a);
		for (j = start[i]; j < start[i + 1]; j++) {
			double s = area(&out[i], &c->p[j], &mean);

			if (s > best_area) {   /* argmax: the first of equals */
				best_area = s;
				best = j;
			}
		}
		out[i + 1] = c->p[best];
	}
	free(start);
	free(c->p);
	c->p = out;
	c->n = c->cap = LTTB_OUT;
}

static int by_dev(const void *x, const void *y)
{
	return strcmp(((const struct curve *)x)->dev, ((const struct curve *)y)->dev);
}

static int curve_rank(sqlite3 *db, struct ta_table *t, int64_t rank, void *ctx,
		      struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct curve *cv = NULL;
	size_t ncv = 0, i, j;
	int64_t first = 0;
	int rc, any = 0, unnamed = 0;

	(void)ctx;
	/* profiler_start_ts: the first event the plugin reads, of a known
	 * category or a [memory] record */
	if (ta_db_prepare(db, "SELECT min(m) FROM (SELECT min(ts) AS m FROM trace_x"
			  " WHERE rank = ?1 AND lower(cat) IN ('trace', 'cpu_op', 'operator',"
			  " 'runtime', 'cuda_runtime', 'mtia_runtime', 'glow_runtime', 'xpu_runtime',"
			  " 'privateuse1_runtime', 'kernel', 'memcpy', 'gpu_memcpy', 'memset',"
			  " 'gpu_memset', 'python', 'memory', 'python_function', 'user_annotation',"
			  " 'gpu_user_annotation') UNION ALL SELECT min(ts) FROM mem WHERE rank = ?1)",
			  &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	if (sqlite3_step(st) == SQLITE_ROW)
		first = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (ta_db_prepare(db, "SELECT dev_type_raw, dev_raw, ts, allocated, reserved FROM mem"
			  " WHERE rank = ?1 AND addr IS NOT NULL ORDER BY ts, idx", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char name[32];
		struct curve *c;

		any = 1;
		if (sqlite3_column_type(st, 3) == SQLITE_NULL ||
		    sqlite3_column_type(st, 4) == SQLITE_NULL)
			continue;   /* a total absent: NaN, left out */
		if (!tb_mem_dev(st, 0, 1, name, sizeof(name))) {
			unnamed = 1;
			continue;
		}
		for (i = 0; i < ncv && strcmp(cv[i].dev, name); i++)
			;
		if (i == ncv) {
			cv = ta_xrealloc(cv, (ncv + 1) * sizeof(*cv));
			memset(&cv[ncv], 0, sizeof(*cv));
			snprintf(cv[ncv++].dev, sizeof(cv->dev), "%s", name);
		}
		c = &cv[i];
		if (c->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 1024;
			c->p = ta_xrealloc(c->p, c->cap * sizeof(*c->p));
		}
		c->p[c->n++] = (struct point){
			0.001 * ((double)sqlite3_column_int64(st, 2) / 1000.0 - (double)first / 1000.0),
			sqlite3_column_double(st, 3) / 1048576.0,
			sqlite3_column_double(st, 4) / 1048576.0 };
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		for (i = 0; i < ncv; i++)
			free(cv[i].p);
		free(cv);
		ta_db_failed(db, err);
		return -1;
	}
	if (!any) {
		ta_table_warn(t, "rank %lld: no [memory] events (profile with "
			      "profile_memory=True): the plugin shows no Memory view",
			      (long long)rank);
		t->ranks_absent++;
	}
	if (unnamed)
		ta_table_warn(t, "rank %lld: [memory] records of no CPU or CUDA device left out "
			      "(the plugin fails on them)", (long long)rank);
	ta_qsort(cv, ncv, sizeof(*cv), by_dev);
	for (i = 0; i < ncv; i++) {
		if (cv[i].n > LTTB_OUT)
			lttb(&cv[i]);
		for (j = 0; j < cv[i].n; j++) {
			size_t row = ta_table_add_row(t);

			ta_table_set_int(t, row, 0, rank);
			ta_table_set_text(t, row, 1, cv[i].dev);
			ta_table_set_real(t, row, 2, cv[i].p[j].t);
			ta_table_set_real(t, row, 3, cv[i].p[j].a);
			ta_table_set_real(t, row, 4, cv[i].p[j].r);
		}
		free(cv[i].p);
	}
	free(cv);
	return 0;
}

int ta_memory_curve_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
			   struct ta_error *err)
{
	if (tb_each_rank(db, q, ta_table_new("Memory curve (the TensorBoard plugin's "
					     "Memory view)", curve_cols, NCURVE_COLS),
			 curve_rank, NULL, out, err) < 0)
		return -1;
	return none_at_all(db, out, err);
}
