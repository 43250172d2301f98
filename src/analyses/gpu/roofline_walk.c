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
	int kernel;           /* one of them is a kernel (not all copies) */
	int tf32;             /* one of them was a TF32 kernel */
	int64_t main, main_ns;  /* its longest kernel (name id) and its time */
	size_t first_launch;  /* its launches: launches[first_launch..] */
	int64_t calls_before; /* the walk's launch calls when it began */
	int crossed;          /* closed by a row that began inside it and
			       * ended after it: its launches may come yet */
	char *dims, *types, *conc;
	/* stack indexes + 1 (0: none), so that a launch and a finished op
	 * go to the ops they concern straight, not down the whole stack
	 * (50 k nested ranges, or nested ops of 50 k shapes, made the walk
	 * quadratic): the innermost counted op at or below it; for a
	 * counted op, the nearest counted op below it that is the same call
	 * (same_operands), and the label of the outermost such */
	size_t counted_at, same_up;
	int64_t label;
	size_t key;           /* its operands' entry in the walk's keys + 1 */
};

/* The innermost open counted op of each operands' key (same_operands:
 * the first two operands' text; ops without shapes share one entry), a
 * scope table restored as ops finish. Entries stay once made. */
struct same_key {
	char *key;            /* NULL: the ops without shapes */
	uint64_t hash;
	size_t top;           /* stack index + 1; 0: none open */
};

/* A launch's kernels: their time, whether one ran fp32 data on the tensor
 * cores, and the longest (its name id and time). */
struct corr {
	int64_t rank, correlation, ns, main, main_ns;
	int tf32;
	int kernel;           /* one is a kernel, not a copy or memset */
};

struct walk {
	struct ta_roof *r;
	struct node *stack;
	size_t depth, cap;
	int64_t rank;
	int64_t calls;          /* launch calls walked so far */
	/* launches of the counted ops open on the stack */
	struct ta_roof_launch *pending;
	size_t npending, cap_pending;
	sqlite3_stmt *inputs;   /* a counted op's operands, by its row, */
	int inputs_rc;          /* and what its step said when it failed */
	struct corr *corr;      /* each launch's kernels, by rank and call */
	size_t ncorr;
	struct same_key *keys;  /* the entries, in the order made */
	size_t nkeys, cap_keys;
	size_t *slots;          /* keys' index + 1 by hash, open addressing */
	size_t nslots;          /* a power of two */
};

static const char *counted_name(const struct walk *w, int64_t id)
{
	return id >= 0 && (size_t)id < w->r->nnames ? w->r->names[id] : NULL;
}

size_t ta_roof_add_call(struct ta_roof *r, const struct ta_roof_raw *raw)
{
	struct ta_roof_call *c;
	struct ta_op_args a;

	if (r->ncalls == r->cap_calls) {
		r->cap_calls = r->cap_calls ? 2 * r->cap_calls : 256;
		r->calls = ta_xrealloc(r->calls, r->cap_calls * sizeof(*r->calls));
	}
	c = &r->calls[r->ncalls];
	memset(c, 0, sizeof(*c));
	c->rank = raw->rank;
	c->ts = raw->ts;
	c->op_id = raw->op;
	c->op = r->names[raw->op];
	c->gpu_ns = raw->gpu_ns;
	c->kernel = raw->kernel;
	c->tf32 = raw->tf32;
	c->shape = ta_xstrdup(raw->dims ? raw->dims : "");
	c->no_dims = !raw->dims;
	c->types = raw->types ? ta_xstrdup(raw->types) : NULL;
	c->conc = raw->conc ? ta_xstrdup(raw->conc) : NULL;
	c->known = ta_op_args_parse(&a, raw->dims, raw->types, raw->conc) == 0 &&
		   ta_flops_work(c->op, &a, &c->work) == 0;
	if (c->known && raw->tf32 && strcmp(c->work.dtype, "fp32") == 0)
		c->work.dtype = "tf32";   /* fp32 data on the tensor cores */
	return r->ncalls++;
}

/* A call that launched copies or memsets alone has no kernel found: a
 * GEMM whose kernel a sampled trace lost kept its 3 us memset, and its
 * FLOPs over those 3 us read 2708 TFLOP/s (helper-63). */
static void add_call(struct walk *w, const struct node *n, int64_t label)
{
	struct ta_roof_raw raw = { w->rank, n->ts, label, n->kernel ? n->gpu_ns : 0,
				   n->kernel && n->main_ns > 0 ? n->main : -1, n->tf32,
				   n->dims, n->types, n->conc };
	size_t i;

	for (i = n->first_launch; i < w->npending; i++)
		w->pending[i].call = w->r->ncalls;
	ta_roof_add_call(w->r, &raw);
}

/* The part of a call's operands that tells whether two nested calls are
 * one: the first two operands' shapes, to the second ']' (the dispatcher
 * re-recording one call, autocast or convolution's _convolution; not a
 * call inside another, which a damaged duration could make of two). Its
 * length, or 0 where there are not two operands (no call is the same as
 * such a one); ops without shapes are all the same call (len -1). */
static long operands_key(const char *dims)
{
	const char *p;
	int closed = 0;

	if (!dims)
		return -1;
	for (p = dims; *p; p++)
		if (*p == ']' && ++closed == 2)
			return p + 1 - dims;
	return 0;
}

static uint64_t key_hash(const char *s, long len)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */
	long i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static void grow_slots(struct walk *w)
{
	size_t i, j;

	free(w->slots);
	w->nslots = w->nslots ? 2 * w->nslots : 64;
	w->slots = ta_xcalloc(w->nslots, sizeof(*w->slots));
	for (i = 0; i < w->nkeys; i++) {
		for (j = w->keys[i].hash & (w->nslots - 1); w->slots[j];
		     j = (j + 1) & (w->nslots - 1))
			;
		w->slots[j] = i + 1;
	}
}

/* A counted op's key in the walk's table: its index + 1; 0 where it has
 * none (len 0). */
static size_t key_of(struct walk *w, const char *dims)
{
	long len = operands_key(dims);
	uint64_t h;
	size_t j;

	if (len == 0)
		return 0;
	if (2 * (w->nkeys + 1) > w->nslots)
		grow_slots(w);
	h = len < 0 ? 1 : key_hash(dims, len);
	for (j = h & (w->nslots - 1); w->slots[j]; j = (j + 1) & (w->nslots - 1)) {
		const struct same_key *k = &w->keys[w->slots[j] - 1];

		if (k->hash == h && (len < 0 ? !k->key :
				     k->key && strncmp(k->key, dims, (size_t)len) == 0 &&
				     !k->key[len]))
			return w->slots[j];
	}
	if (w->nkeys == w->cap_keys) {
		w->cap_keys = w->cap_keys ? 2 * w->cap_keys : 64;
		w->keys = ta_xrealloc(w->keys, w->cap_keys * sizeof(*w->keys));
	}
	w->keys[w->nkeys] = (struct same_key){
		len < 0 ? NULL : ta_xstrndup(dims, (size_t)len), h, 0 };
	return w->slots[j] = ++w->nkeys;
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

	/* a call during which its thread launched nothing did no GPU work:
	 * a recomputation that activation checkpointing's early stop cut off
	 * (its addmm recorded, shapes and all; FlopCounterMode never sees
	 * it), an op on CPU tensors. (One a crossing row closed counts: its
	 * launches, given to no op, may come after.) */
	if (n->counted && !n->inner && (w->calls > n->calls_before || n->crossed)) {
		add_call(w, n, n->label);
		keep_launches(w, n->first_launch);
	}
	/* the same call below holds one inside (it, in turn, the next) */
	if (n->same_up)
		w->stack[n->same_up - 1].inner = 1;
	if (n->key)
		w->keys[n->key - 1].top = n->same_up;
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
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
	w->inputs_rc = rc;
	return -1;
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
	n->calls_before = w->calls;
	n->main = -1;
	n->counted_at = n->counted ? w->depth :
			w->depth > 1 ? w->stack[w->depth - 2].counted_at : 0;
	n->label = n->name;
	if (!n->counted)
		return 0;
	if (read_inputs(w, n, sqlite3_column_int64(st, 7)) < 0)
		return -1;
	if ((n->key = key_of(w, n->dims))) {
		n->same_up = w->keys[n->key - 1].top;
		w->keys[n->key - 1].top = w->depth;
		if (n->same_up)   /* the outermost same call's name */
			n->label = w->stack[n->same_up - 1].label;
	}
	return 0;
}

static int cmp_corr(const void *x, const void *y)
{
	const struct corr *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->correlation < b->correlation ? -1 : a->correlation > b->correlation;
}

static const struct corr *find_corr(const struct walk *w, int64_t rank, int64_t c)
{
	struct corr key = { rank, c, 0, 0, 0, 0, 0 };

	return w->ncorr ? bsearch(&key, w->corr, w->ncorr, sizeof(key), cmp_corr) : NULL;
}

/* A launch call: its kernels are the innermost open counted op's. They
 * are looked up only then (a join on every row cost the walk half its
 * time). */
static void launch(struct walk *w, sqlite3_stmt *st)
{
	int64_t corr = sqlite3_column_int64(st, 8);
	const struct corr *k;
	size_t i = w->depth ? w->stack[w->depth - 1].counted_at : 0;
	struct node *n;

	w->calls++;
	if (i == 0 || !(k = find_corr(w, w->rank, corr)))
		return;
	n = &w->stack[i - 1];
	n->gpu_ns = ta_add_sat(n->gpu_ns, k->ns);
	n->kernel |= k->kernel;
	n->tf32 |= k->tf32;
	if (k->main_ns > n->main_ns) {
		n->main = k->main;
		n->main_ns = k->main_ns;
	}
	if (w->npending == w->cap_pending) {
		w->cap_pending = w->cap_pending ? 2 * w->cap_pending : 64;
		w->pending = ta_xrealloc(w->pending, w->cap_pending * sizeof(*w->pending));
	}
	w->pending[w->npending++] = (struct ta_roof_launch){ w->rank, corr, 0 };
}

/* Per launch: its kernels' time, whether one ran fp32 data on the tensor
 * cores (TF32: cuBLAS's and CUTLASS's names say so: tf32, tensorop_s1688,
 * wgmma; cuBLAS's xmma kernels with ffma in their name are the CUDA
 * cores'), and its longest kernel (ties: the first written). Built in
 * memory from the GPU rows in index order: a temporary table of it, by
 * SQL's window and grouping, was a fifth of diagnose on a DDP trace. */
static int tc_name(const char *name)
{
	return name && (strstr(name, "tf32") || strstr(name, "tensorop") ||
			strstr(name, "gmma") || strstr(name, "s1688") ||
			strstr(name, "s16816")) && !strstr(name, "ffma");
}

/* A kernel name's tensor-core test, once a name: 1 or 0; -1 for an id
 * that is no label's (such kernels are left out, as a join did); -2 when
 * the database failed. */
struct tc_memo {
	signed char *v;       /* by name id: 2 not yet known, else the answer */
	size_t n;
	sqlite3_stmt *name;
};

static int tc_of(struct tc_memo *m, int64_t id)
{
	int tc = -1, rc;

	if (id >= 0 && (size_t)id < m->n && m->v[id] != 2)
		return m->v[id];
	sqlite3_bind_int64(m->name, 1, id);
	if ((rc = sqlite3_step(m->name)) == SQLITE_ROW)
		tc = tc_name((const char *)sqlite3_column_text(m->name, 0));
	sqlite3_reset(m->name);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return -2;
	if (id >= 0 && (size_t)id < m->n)
		m->v[id] = (signed char)tc;
	return tc;
}

static void add_kernel(struct walk *w, size_t *cap, int64_t rank, int64_t c, int64_t ns,
		       int64_t name, int tc, int kernel)
{
	struct corr *k = w->ncorr ? &w->corr[w->ncorr - 1] : NULL;

	if (!k || k->rank != rank || k->correlation != c) {
		if (w->ncorr == *cap) {
			*cap = *cap ? 2 * *cap : 1024;
			w->corr = ta_xrealloc(w->corr, *cap * sizeof(*w->corr));
		}
		k = &w->corr[w->ncorr++];
		*k = (struct corr){ rank, c, 0, name, ns, tc, kernel };
	} else {
		k->kernel |= kernel;
		k->tf32 |= tc;
		if (ns > k->main_ns)
			k->main = name, k->main_ns = ns;
	}
	/* held at INT64_MAX, as ta_sum() in SQL */
	k->ns = ta_add_sat(k->ns, ns);
}

/* The kernels by rank, call, then longest first and file order: the
 * first of a call is its longest. */
struct kernel_row {
	int64_t rank, correlation, ns, idx, name;
	int tc, kernel;
};

static int cmp_kernel_row(const void *x, const void *y)
{
	const struct kernel_row *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->correlation != b->correlation)
		return a->correlation < b->correlation ? -1 : 1;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int load_corr(sqlite3 *db, struct walk *w, struct ta_error *err)
{
	struct tc_memo m = { NULL, 0, NULL };
	struct kernel_row *k = NULL;
	sqlite3_stmt *st = NULL;
	size_t n = 0, cap = 0, i;
	int rc;

	if (ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?", &m.name, err) < 0)
		return -1;
	/* ids as load_names counted them (read first) */
	m.n = w->r->nnames < (1 << 26) ? w->r->nnames : 0;
	m.v = ta_xcalloc(m.n + 1, 1);
	memset(m.v, 2, m.n);
	if (ta_db_prepare(db, "SELECT g.rank, g.correlation, g.dur, g.name, g.idx,"
			  " COALESCE(ta_kind_known(g.name, g.cat, 0), ta_kind_learn(g.name,"
			  " g.cat, 0, (SELECT name FROM label WHERE name_id = g.name),"
			  " (SELECT name FROM label WHERE name_id = g.cat))) != "
			  TA_SQL(TA_KIND_MEMORY) " FROM gpu g WHERE g.correlation != -1",
			  &st, err) < 0) {
		sqlite3_finalize(m.name);
		free(m.v);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t name = sqlite3_column_int64(st, 3);
		int tc;

		/* a name or correlation that is not an integer matches no
		 * label or call (SQL's join and lookup did not) */
		if (sqlite3_column_type(st, 3) != SQLITE_INTEGER ||
		    sqlite3_column_type(st, 1) != SQLITE_INTEGER)
			continue;
		if ((tc = tc_of(&m, name)) == -2) {
			rc = SQLITE_ERROR;
			break;
		}
		if (tc < 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			k = ta_xrealloc(k, cap * sizeof(*k));
		}
		k[n++] = (struct kernel_row){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			sqlite3_column_int64(st, 4), name, tc, sqlite3_column_int(st, 5) };
	}
	sqlite3_finalize(st);
	sqlite3_finalize(m.name);
	free(m.v);
	if (ta_db_done(db, rc, err) < 0) {
		free(k);
		return -1;
	}
	ta_qsort(k, n, sizeof(*k), cmp_kernel_row);
	cap = 0;
	for (i = 0; i < n; i++)
		add_kernel(w, &cap, k[i].rank, k[i].correlation, k[i].ns, k[i].name, k[i].tc,
			   k[i].kernel);
	free(k);
	return 0;
}

/* Every host row per thread, parents first (host_thread's order). */
static const char host_sql[] =
	"SELECT e.rank, e.pid, e.tid, e.ts, max(e.dur, 0),"
	"  e.role = " TA_SQL(TA_ROLE_RUNTIME) ", e.name, e.row,"
	"  e.correlation FROM host_thread e ORDER BY e.rank, e.pid, e.tid, e.ts, e.dur DESC, e.idx";

int ta_roof_load_names(sqlite3 *db, struct ta_roof *r, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	char **v;
	int64_t max_id;
	int rc;

	if (ta_db_get_int(db, "SELECT max(name_id) FROM label", 0, &max_id, err) < 0 ||
	    ta_db_prepare(db, "SELECT name_id, name FROM label", &st, err) < 0)
		return -1;
	r->nnames = max_id >= 0 ? (size_t)max_id + 1 : 0;
	v = ta_xcalloc(r->nnames + 1, sizeof(*v));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *s = (const char *)sqlite3_column_text(st, 1);

		if (id >= 0 && (size_t)id < r->nnames && ta_flops_counted(s))
			v[id] = ta_xstrdup(s);
	}
	sqlite3_finalize(st);
	r->names = v;
	return ta_db_done(db, rc, err);
}

static void free_walk(struct walk *w)
{
	size_t i;

	while (w->depth)
		finish(w);
	for (i = 0; i < w->nkeys; i++)
		free(w->keys[i].key);
	free(w->keys);
	free(w->slots);
	free(w->stack);
	free(w->pending);
	free(w->corr);
}

static int walk_rows(sqlite3 *db, struct walk *w, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int64_t pid = 0, tid = 0;
	int rc, first = 1;

	if (ta_db_prepare(db, host_sql, &st, err) < 0)
		return -1;
	if (ta_db_prepare(db, "SELECT input_dims, input_types, concrete_inputs"
			  " FROM op_inputs WHERE row = ?", &w->inputs, err) < 0) {
		sqlite3_finalize(st);
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
				     ts >= w->stack[w->depth - 1].ts)) {
			w->stack[w->depth - 1].crossed |= ts < w->stack[w->depth - 1].end;
			finish(w);
		}
		if (sqlite3_column_int(st, 5))
			launch(w, st);
		else if (push(w, st, ts, end) < 0) {
			rc = w->inputs_rc;   /* a damaged page's code, not a generic one */
			break;
		}
	}
	sqlite3_finalize(st);
	sqlite3_finalize(w->inputs);
	w->inputs = NULL;
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
	for (i = 0; i < src->ncalls; i++) {
		const struct ta_roof_call *c = &src->calls[i];

		dst->calls[i].shape = c->shape ? ta_xstrdup(c->shape) : NULL;
		dst->calls[i].types = c->types ? ta_xstrdup(c->types) : NULL;
		dst->calls[i].conc = c->conc ? ta_xstrdup(c->conc) : NULL;
	}
	dst->nlaunches = dst->cap_launches = src->nlaunches;
	dst->launches = ta_xcalloc(src->nlaunches + 1, sizeof(*dst->launches));
	if (src->nlaunches)
		memcpy(dst->launches, src->launches, src->nlaunches * sizeof(*dst->launches));
}

static void free_roof(struct ta_roof *r)
{
	size_t i;

	for (i = 0; i < r->ncalls; i++) {
		free(r->calls[i].shape);
		free(r->calls[i].types);
		free(r->calls[i].conc);
	}
	for (i = 0; i < r->nnames; i++)
		free(r->names[i]);
	free(r->names);
	free(r->calls);
	free(r->launches);
	memset(r, 0, sizeof(*r));
}

int ta_roof_walk(sqlite3 *db, int every, struct ta_roof *r, struct ta_error *err)
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
	/* a cache entry keeps the walk of every rank from its first run:
	 * two fifths of a cached diagnose, the same every run */
	rc = ta_roof_kept(db, r, err);
	if (rc == 0 || rc == 2) {
		int replace = rc == 2;   /* kept, but not holding together */

		free_roof(r);
		rc = ta_roof_load_names(db, r, err);
		if (rc == 0)
			rc = load_corr(db, &w, err);
		if (rc == 0)
			rc = walk_rows(db, &w, err);
		if (rc == 0 && every)
			ta_roof_keep(db, r, replace);
	} else if (rc > 0) {
		rc = 0;
	}
	free_walk(&w);
	if (rc < 0) {
		free_roof(r);
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
