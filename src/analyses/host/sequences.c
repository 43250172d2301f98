/* kernels --sequences: the kernel sequences CPU ops launch again and
 * again, fusion candidates (HTA's get_frequent_cuda_kernel_sequences).
 * An op's sequence is its name and the kernels launched in its subtree of
 * its thread's call stack, by start. By default the roots are the
 * outermost CPU ops (with --op: whose names hold it) that launched at
 * least --min-len kernels, on every rank, and each sequence says what
 * fusing it could save: the gaps between its kernels. With --hta-compat,
 * HTA's call graph (the backward thread hung under the main thread's
 * steps), its roots (the candidates at the smallest depth of all), on its
 * rank, every pattern by count. */
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_intern.h"
#include "ta_model.h"

#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_sequences_opts ta_sequences_defaults = { NULL, 3, 5 };

static const struct ta_col cols[] = {
	{ "pattern", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "count", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "gpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "cpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "gap_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

struct srow {
	int64_t idx, pid, tid, ts, dur, stream, name, ic;
	int op;                     /* a cpu_op (default roots) */
	int cand;                   /* its name holds --op */
	long group;                 /* its thread, -1 if none */
	long parent;                /* row, or -(group + 2) for the root */
	int64_t depth, nk, ksum;    /* kernels in its subtree: count, time */
};

struct seqs {
	struct srow *r;
	size_t n;
	long *kernels;              /* rows of kernels (stream > 0, a launch) */
	size_t nk;
};

/* HTA's rows: every row of the rank in its order. */
static const char hta_sql[] =
	"SELECT h.idx, h.pid, h.tid, h.ts, h.dur, h.stream, h.name, h.partner,"
	" h.cat = " TA_CAT_CPU_OP ","
	" instr(n.name, ?2) > 0 FROM hta_trace h LEFT JOIN label n"
	" ON n.name_id = h.name WHERE h.rank = ?1 ORDER BY h.part, h.idx";
/* Default: the host's rows by thread, and the GPU work with its launch. */
static const char host_sql[] =
	"SELECT h.idx, h.pid, h.tid, h.ts, h.dur, -1, h.name, -1,"
	" h.cat = " TA_CAT_CPU_OP ","
	" instr(n.name, ?2) > 0 FROM host_thread h JOIN label n ON n.name_id = h.name"
	" WHERE h.rank = ?1"
	" UNION ALL SELECT d.idx, d.pid, d.tid, d.ts, d.dur, max(d.stream, 1), d.name,"
	" (SELECT max(c.idx) FROM calls c WHERE c.rank = d.rank"
	"  AND c.correlation = d.correlation), 0, 0 FROM dev d"
	" WHERE d.rank = ?1 AND d.correlation != -1";

static int load(sqlite3 *db, int64_t rank, const char *op, int hta,
		struct seqs *s, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	if (ta_db_prepare(db, hta ? hta_sql : host_sql, &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_text(st, 2, op ? op : "", -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct srow *x;

		if (s->n == cap) {
			cap = cap ? 2 * cap : 1024;
			s->r = ta_xrealloc(s->r, cap * sizeof(*s->r));
		}
		x = &s->r[s->n++];
		memset(x, 0, sizeof(*x));
		x->idx = sqlite3_column_int64(st, 0);
		x->pid = sqlite3_column_int64(st, 1);
		x->tid = sqlite3_column_int64(st, 2);
		x->ts = sqlite3_column_int64(st, 3);
		x->dur = sqlite3_column_int64(st, 4);
		x->stream = sqlite3_column_int64(st, 5);
		x->name = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 :
			  sqlite3_column_int64(st, 6);
		x->ic = sqlite3_column_int64(st, 7);
		x->op = sqlite3_column_int(st, 8);
		x->cand = op && sqlite3_column_int(st, 9);
		x->group = -1;
		x->parent = 0;
		x->depth = -1;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

struct gkey {
	int64_t pid, tid;
	size_t row;
};

static int cmp_gkey(const void *a, const void *b)
{
	const struct gkey *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

struct sev {                        /* a start or end of a CPU row */
	int64_t t, dur, idx;
	size_t row;
	int open;
};

/* HTA's _less_than over (index, dur, kind, time). */
static int sev_less(const struct sev *x, const struct sev *y)
{
	if (x->t != y->t)
		return x->t < y->t;
	if (x->idx == y->idx)
		return x->open;
	if (x->dur == 0 || y->dur == 0) {
		if (x->dur == 0 && y->dur > 0)
			return !y->open;
		if (x->dur > 0 && y->dur == 0)
			return x->open;
		if (x->open && y->open)
			return x->idx < y->idx;
		if (!x->open && !y->open)
			return x->idx > y->idx;
		return x->open;
	}
	if (!x->open && y->open)
		return 1;
	if (x->open && !y->open)
		return 0;
	if (x->dur != y->dur)
		return x->open ? x->dur > y->dur : x->dur < y->dur;
	return x->open ? x->idx < y->idx : x->idx > y->idx;
}

static int cmp_sev(const void *a, const void *b)
{
	const struct sev *x = a, *y = b;

	if (sev_less(x, y))
		return -1;
	return sev_less(y, x) ? 1 : 0;
}

/* Each thread's call stack: a row's parent is the innermost row open at
 * its start; a thread's first layer hangs under its root, -(thread + 2).
 * Returns the number of threads; gpu[g]: HTA's infer_device_type calls
 * thread g a GPU's, which has no stack. */
static size_t stacks(struct seqs *s, int hta, unsigned char **gpu)
{
	struct gkey *k = ta_xcalloc(s->n + 1, sizeof(*k));
	struct sev *ev = ta_xcalloc(2 * s->n + 1, sizeof(*ev));
	long *stack = ta_xcalloc(s->n + 1, sizeof(*stack));
	size_t n = 0, i, j, x, g = 0;

	*gpu = ta_xcalloc(s->n + 1, 1);
	for (i = 0; i < s->n; i++)
		if (s->r[i].stream == -1 || hta)
			k[n++] = (struct gkey){ s->r[i].pid, s->r[i].tid, i };
	ta_qsort(k, n, sizeof(*k), cmp_gkey);
	for (i = 0; i < n; i = j, g++) {
		int all_gpu = 1, pid0 = 1, tid0 = 1;
		size_t e = 0, top = 0;

		for (j = i; j < n && k[j].pid == k[i].pid && k[j].tid == k[i].tid; j++) {
			const struct srow *r = &s->r[k[j].row];

			all_gpu &= r->stream > 0;
			pid0 &= r->pid == 0;
			tid0 &= r->tid == 0;
		}
		if (all_gpu || (hta && (pid0 || tid0))) {
			(*gpu)[g] = 1;
			continue;
		}
		for (x = i; x < j; x++) {
			struct srow *r = &s->r[k[x].row];

			if (r->stream != -1)
				continue;
			r->group = (long)g;
			ev[e++] = (struct sev){ r->ts, r->dur, r->idx, k[x].row, 1 };
			ev[e++] = (struct sev){ r->ts + r->dur, r->dur, r->idx, k[x].row, 0 };
		}
		ta_qsort(ev, e, sizeof(*ev), cmp_sev);
		for (x = 0; x < e; x++) {
			if (ev[x].open) {
				s->r[ev[x].row].parent = top ? stack[top - 1] : -(long)g - 2;
				stack[top++] = (long)ev[x].row;
			} else if (top) {
				top--;
			}
		}
	}
	free(stack);
	free(ev);
	free(k);
	return g;
}

/* Name ids with a property, as a bitmap by id. */
static unsigned char *name_set(sqlite3 *db, const char *where, size_t *n)
{
	char sql[256];
	sqlite3_stmt *st = NULL;
	unsigned char *set;

	*n = (size_t)ta_db_int(db, "SELECT COALESCE(max(name_id), 0) FROM label", 0) + 1;
	set = ta_xcalloc(*n + 1, 1);
	snprintf(sql, sizeof(sql), "SELECT name_id FROM label WHERE %s", where);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0);

			if (id >= 0 && (size_t)id < *n)
				set[id] = 1;
		}
	sqlite3_finalize(st);
	return set;
}

static int in_set(const unsigned char *set, size_t n, int64_t id)
{
	return id >= 0 && (size_t)id < n && set[id];
}

/* HTA's _connect_stacks: with one main thread (it has the steps) and one
 * backward thread (autograd::), the backward thread's first layer goes
 * under the main thread's "## backward ##" ranges (else its steps) that
 * hold it. */
static void link_backward(sqlite3 *db, struct seqs *s, size_t ngroups,
			  const unsigned char *gpu)
{
	size_t nn, i, j, g;
	unsigned char *step = name_set(db, "name GLOB 'ProfilerStep#*'", &nn);
	unsigned char *bwd = name_set(db, "instr(name, 'autograd::') > 0", &nn);
	unsigned char *ann = name_set(db, "name GLOB '## backward ##*'", &nn);
	int *label = ta_xcalloc(ngroups + 1, sizeof(*label));  /* 1 bwd, 2 main */
	long pick[2] = { -1, -1 };
	size_t npick = 0;
	int any_ann = 0;

	for (i = 0; i < s->n; i++) {
		long gr = s->r[i].group;

		if (gr < 0)
			continue;
		if (in_set(step, nn, s->r[i].name))
			label[gr] = 2;
		else if (label[gr] == 0 && in_set(bwd, nn, s->r[i].name))
			label[gr] = 1;
	}
	/* bwd sorts before main; two of them or nothing */
	for (j = 1; j <= 2; j++)
		for (g = 0; g < ngroups; g++)
			if (!gpu[g] && label[g] == (int)j) {
				if (npick < 2)
					pick[npick] = (long)g;
				npick++;
			}
	if (npick == 2) {
		for (i = 0; i < s->n; i++)
			any_ann |= s->r[i].group == pick[1] && in_set(ann, nn, s->r[i].name);
		for (i = 0; i < s->n; i++) {
			const struct srow *a = &s->r[i];

			if (a->group != pick[1] || !(any_ann ? in_set(ann, nn, a->name) :
						      in_set(step, nn, a->name)))
				continue;
			for (j = 0; j < s->n; j++) {
				struct srow *c = &s->r[j];

				if (c->group == pick[0] && c->parent == -pick[0] - 2 &&
				    c->ts >= a->ts && c->ts + c->dur <= a->ts + a->dur)
					c->parent = (long)i;
			}
		}
	}
	free(label);
	free(step);
	free(bwd);
	free(ann);
}

static int cmp_idx_row(const void *a, const void *b)
{
	const struct gkey *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Kernels under their launches; depths; kernels and their time in each
 * row's subtree. */
static void attach(struct seqs *s)
{
	struct gkey *by = ta_xcalloc(s->n + 1, sizeof(*by));
	size_t i, nb = 0;

	for (i = 0; i < s->n; i++)
		by[nb++] = (struct gkey){ s->r[i].idx, 0, i };
	ta_qsort(by, nb, sizeof(*by), cmp_idx_row);
	s->kernels = ta_xcalloc(s->n + 1, sizeof(*s->kernels));
	for (i = 0; i < s->n; i++) {
		struct srow *k = &s->r[i];
		size_t a = 0, b = nb;

		if (k->stream <= 0 || k->ic <= 0)
			continue;
		while (a < b) {
			size_t m = a + (b - a) / 2;

			if (by[m].pid < k->ic)
				a = m + 1;
			else
				b = m;
		}
		if (a == nb || by[a].pid != k->ic || s->r[by[a].row].group < 0 ||
		    s->r[by[a].row].stream != -1)
			continue;
		k->parent = (long)by[a].row;
		k->group = s->r[by[a].row].group;
		s->kernels[s->nk++] = (long)i;
	}
	free(by);
	for (i = 0; i < s->n; i++) {      /* depth: 0 under a root */
		long p;
		int64_t d = 0;

		if (s->r[i].group < 0)
			continue;
		for (p = s->r[i].parent; p >= 0; p = s->r[p].parent)
			d++;
		s->r[i].depth = d;
	}
	for (i = 0; i < s->nk; i++) {
		const struct srow *k = &s->r[s->kernels[i]];
		long p;

		for (p = k->parent; p >= 0; p = s->r[p].parent) {
			s->r[p].nk++;
			s->r[p].ksum = ta_add_sat(s->r[p].ksum, k->dur);
		}
	}
}

struct occ {                        /* a kernel of a root's sequence */
	int64_t ts;
	long kernel, root;
};

static int cmp_occ(const void *a, const void *b)
{
	const struct occ *x = a, *y = b;

	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->kernel < y->kernel ? -1 : x->kernel > y->kernel;
}

struct pattern_acc {
	int64_t count, gpu, cpu, gap;
};

/* The sums of a pattern, zeroed the first time it is seen. */
static struct pattern_acc *acc_of(struct ta_intern *keys, const char *key,
				  size_t len, struct pattern_acc **acc,
				  size_t *nacc)
{
	int is_new;
	int64_t id = ta_intern(keys, key, len, &is_new);

	if (is_new) {
		*acc = ta_xrealloc(*acc, (size_t)id * sizeof(**acc));
		memset(&(*acc)[id - 1], 0, sizeof(**acc));
		*nacc = (size_t)id;
	}
	return &(*acc)[id - 1];
}

static const char *name_text(sqlite3_stmt *st, int64_t id)
{
	const char *t = NULL;

	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		t = (const char *)sqlite3_column_text(st, 0);
	return t ? t : "";
}

/* Default roots: the outermost of the eligible ops (CPU ops; with --op,
 * those whose names hold it). */
static int eligible(const struct srow *r, int have_op)
{
	return r->op && r->group >= 0 && r->stream == -1 && (!have_op || r->cand);
}

/* Roots, their kernels by start, and the patterns they make. */
static int patterns(sqlite3 *db, struct seqs *s, int hta, int have_op, int min_len,
		    struct ta_intern *keys, struct pattern_acc **acc, size_t *nacc,
		    struct ta_error *err)
{
	char *root = ta_xcalloc(s->n + 1, 1);
	struct occ *o = ta_xcalloc(s->nk + 1, sizeof(*o));
	sqlite3_stmt *st = NULL;
	struct ta_buf key = { 0 };
	size_t i, j, k, no = 0;
	int64_t min_depth = INT64_MAX;

	if (hta) {   /* the candidates at the smallest depth of all */
		for (i = 0; i < s->n; i++)
			if (s->r[i].cand && s->r[i].depth < min_depth)
				min_depth = s->r[i].depth;
		for (i = 0; i < s->n; i++)
			root[i] = s->r[i].cand && s->r[i].depth == min_depth &&
				  s->r[i].nk >= min_len;
	} else {
		for (i = 0; i < s->n; i++) {
			long p;

			if (!eligible(&s->r[i], have_op) || s->r[i].nk < min_len)
				continue;
			root[i] = 1;
			for (p = s->r[i].parent; p >= 0 && root[i]; p = s->r[p].parent)
				root[i] = !eligible(&s->r[p], have_op);
		}
	}
	for (i = 0; i < s->nk; i++) {
		long p;

		for (p = s->r[s->kernels[i]].parent; p >= 0; p = s->r[p].parent)
			if (root[p])
				o[no++] = (struct occ){ s->r[s->kernels[i]].ts, s->kernels[i], p };
	}
	ta_qsort(o, no, sizeof(*o), cmp_occ);
	if (ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?", &st, err) < 0) {
		free(o), free(root);
		return -1;
	}
	for (i = 0; i < no; i = j) {
		const struct srow *r = &s->r[o[i].root];
		int64_t first = INT64_MAX, last = INT64_MIN, busy = 0;
		struct pattern_acc *a;

		for (j = i; j < no && o[j].root == o[i].root; j++)
			;
		ta_buf_reset(&key);
		ta_buf_adds(&key, name_text(st, r->name));
		for (k = i; k < j; k++) {
			const struct srow *x = &s->r[o[k].kernel];

			ta_buf_addc(&key, '|');
			ta_buf_adds(&key, name_text(st, x->name));
			first = x->ts < first ? x->ts : first;
			last = x->ts + x->dur > last ? x->ts + x->dur : last;
			busy = ta_add_sat(busy, x->dur);
		}
		a = acc_of(keys, key.s, key.len, acc, nacc);
		a->count++;
		a->gpu = ta_add_sat(a->gpu, r->ksum);
		a->cpu = ta_add_sat(a->cpu, r->dur);
		if (last - first > busy)
			a->gap = ta_add_sat(a->gap, last - first - busy);
	}
	sqlite3_finalize(st);
	ta_buf_free(&key);
	free(o);
	free(root);
	return 0;
}

static int cmp_hta(const struct ta_table *t, size_t a, size_t b)
{
	int64_t x = ta_table_cell(t, a, 1)->i, y = ta_table_cell(t, b, 1)->i;

	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(ta_table_cell(t, a, 0)->s, ta_table_cell(t, b, 0)->s);
}

/* Fusion candidates: what fusing would save (the gaps) first. */
static int cmp_gap(const struct ta_table *t, size_t a, size_t b)
{
	double x = ta_table_cell(t, a, 4)->d, y = ta_table_cell(t, b, 4)->d;

	if (x != y)
		return x > y ? -1 : 1;
	return cmp_hta(t, a, b);
}

/* Every rank's patterns into keys and acc. */
static int collect(sqlite3 *db, const struct ta_query *q,
		   const struct ta_sequences_opts *o, struct ta_intern *keys,
		   struct pattern_acc **acc, size_t *nacc, struct ta_error *err)
{
	const struct ta_rules *R = ta_rules(q);
	sqlite3_stmt *st = NULL;
	int rc = 0, step_rc = SQLITE_DONE;

	if (ta_model_prepare(db, q, TA_NEED_DEV | TA_NEED_THREAD, err) < 0 ||
	    ta_db_prepare(db, R->hta_sequences ? "SELECT min(rank) FROM sel_ranks" :
			  "SELECT rank FROM sel_ranks ORDER BY 1", &st, err) < 0)
		return -1;
	while (rc == 0 && (step_rc = sqlite3_step(st)) == SQLITE_ROW &&
	       sqlite3_column_type(st, 0) != SQLITE_NULL) {
		struct seqs s = { NULL, 0, NULL, 0 };
		unsigned char *gpu = NULL;
		size_t ng;

		rc = load(db, sqlite3_column_int64(st, 0), o->op, R->trace_frame, &s,
			  err);
		if (rc == 0) {
			ng = stacks(&s, R->hta_sequences, &gpu);
			if (R->hta_sequences)
				link_backward(db, &s, ng, gpu);
			attach(&s);
			rc = patterns(db, &s, R->hta_sequences, o->op != NULL, o->min_len,
				      keys, acc, nacc, err);
		}
		free(gpu);
		free(s.r);
		free(s.kernels);
	}
	sqlite3_finalize(st);
	if (rc == 0 && step_rc != SQLITE_ROW)
		rc = ta_db_done(db, step_rc, err);
	return rc;
}

/* The table of the patterns, ranked, the top kept. */
static struct ta_table *ranked(const struct ta_intern *keys,
			       const struct pattern_acc *acc, size_t nacc,
			       int hta, int top)
{
	struct ta_table *t = ta_table_new("Frequent kernel sequences", cols, 5);
	size_t i;

	for (i = 0; i < nacc; i++) {
		size_t r = ta_table_add_row(t);

		ta_table_set_text(t, r, 0, ta_intern_str(keys, (int64_t)i + 1));
		ta_table_set_int(t, r, 1, acc[i].count);
		ta_table_set_real(t, r, 2, (double)acc[i].gpu / 1000.0);
		ta_table_set_real(t, r, 3, (double)acc[i].cpu / 1000.0);
		ta_table_set_real(t, r, 4, (double)acc[i].gap / 1000.0);
	}
	ta_table_sort(t, hta ? cmp_hta : cmp_gap);
	/* HTA returns every pattern; the default keeps the top */
	if (!hta && top > 0 && t->nrows > (size_t)top)
		t->nrows = (size_t)top;
	return t;
}

int ta_sequences_run(sqlite3 *db, const struct ta_query *q,
		     const struct ta_sequences_opts *o, struct ta_table **out,
		     struct ta_error *err)
{
	struct ta_intern *keys = ta_intern_new();
	struct pattern_acc *acc = NULL;
	size_t nacc = 0;
	int rc = collect(db, q, o, keys, &acc, &nacc, err);

	*out = rc == 0 ? ranked(keys, acc, nacc, ta_rules(q)->hta_order, o->top) : NULL;
	free(acc);
	ta_intern_free(keys);
	return rc;
}

/* On shards: each shard's every pattern with its sums in ns (exact, so
 * that adding them up gives one database's numbers), then the ranking
 * over them all. */
static const struct ta_col part_cols[] = {
	{ "pattern", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "count", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "gpu_ns", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "cpu_ns", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "gap_ns", TA_COL_INT, TA_UNIT_NONE, 0 },
};

int ta_sequences_parts(sqlite3 *db, const struct ta_query *q,
		       const struct ta_sequences_opts *o, struct ta_table **out,
		       struct ta_error *err)
{
	struct ta_intern *keys = ta_intern_new();
	struct pattern_acc *acc = NULL;
	size_t nacc = 0, i;
	int rc = collect(db, q, o, keys, &acc, &nacc, err);

	*out = NULL;
	if (rc == 0) {
		*out = ta_table_new("Kernel sequence parts", part_cols, 5);
		for (i = 0; i < nacc; i++) {
			size_t r = ta_table_add_row(*out);

			ta_table_set_text(*out, r, 0, ta_intern_str(keys, (int64_t)i + 1));
			ta_table_set_int(*out, r, 1, acc[i].count);
			ta_table_set_int(*out, r, 2, acc[i].gpu);
			ta_table_set_int(*out, r, 3, acc[i].cpu);
			ta_table_set_int(*out, r, 4, acc[i].gap);
		}
	}
	free(acc);
	ta_intern_free(keys);
	return rc;
}

struct ta_table *ta_sequences_join(struct ta_table *parts,
				   const struct ta_sequences_opts *o)
{
	struct ta_intern *keys = ta_intern_new();
	struct pattern_acc *acc = NULL;
	struct ta_table *t;
	size_t nacc = 0, r;

	for (r = 0; r < parts->nrows; r++) {
		const char *k = ta_table_cell(parts, r, 0)->s;
		struct pattern_acc *a = acc_of(keys, k, strlen(k), &acc, &nacc);

		a->count += ta_table_cell(parts, r, 1)->i;
		a->gpu += ta_table_cell(parts, r, 2)->i;
		a->cpu += ta_table_cell(parts, r, 3)->i;
		a->gap += ta_table_cell(parts, r, 4)->i;
	}
	t = ranked(keys, acc, nacc, 0, o->top);
	if (parts->notes.len)
		ta_buf_add(&t->notes, parts->notes.s, parts->notes.len);
	if (parts->warnings.len)
		ta_buf_add(&t->warnings, parts->warnings.s, parts->warnings.len);
	free(acc);
	ta_intern_free(keys);
	ta_table_free(parts);
	return t;
}
