/* modules --tb-compat: the TensorBoard plugin's Module view (module_op.py,
 * run.py:442-471; kineto 790be856), number for number, in the long form
 * tb_oracle.py writes: a row per module of the hierarchy, pre-order, with
 * its place ("0/2/1": the first root's third child's second child) and
 * depth.
 * - The hierarchy (_build_module_hierarchy): from every python_function
 *   event (by Python id, last one wins, and Python parent id), each
 *   Python frame without children walks up its parents; each nn.Module
 *   frame met (one with a "Python module id") becomes the parent of the
 *   one met before; a module never given a parent is a root. Roots that
 *   are the same tree (names, ids and children) count once; roots sort by
 *   name, children keep the order they were found in. Among roots of one
 *   name the plugin's order is that of a Python set of them (it changes
 *   from run to run): here, the order they were found in.
 * - The numbers (_aggregate_modules): every nn.Module node the call trees
 *   (optree_tb.c) reach through steps, modules and operators, by name and
 *   module id: occurrences, their operator children, host time (self:
 *   less children and runtime calls, so less every call of an absent
 *   External id the first module took, as the plugin does), device time
 *   (self: its calls' and its operator children's), and the average: the
 *   device time a call, or the host time where that is 0. */
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_intern.h"
#include "optree_tb.h"
#include "tb_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* deeper module trees are cut (a hostile trace's, not a model's) */
#define MAX_DEPTH 1000

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "path", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "depth", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "occurrences", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "operators", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "host_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "self_host_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "device_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "self_device_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "module_id", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "avg_us", TA_COL_REAL, TA_UNIT_US, 0 },
};
#define NCOLS (sizeof(cols) / sizeof(*cols))

struct pyev {
	int64_t id, parent, module_id;
	int module;
	char *name;
};

/* an insertion-ordered dict: key -> slot */
struct odict {
	struct tb_map at;
	int64_t *keys;
	long *val;          /* module_parent_map's value; -1 for None... */
	int *has;           /* ...as a value; children counts otherwise */
	size_t n, cap;
};

static void od_init(struct odict *d, size_t n)
{
	memset(d, 0, sizeof(*d));
	tb_map_init(&d->at, n);
}

static size_t od_slot(struct odict *d, int64_t key, int *is_new)
{
	long *at = tb_map_at(&d->at, key);

	*is_new = *at < 0;
	if (*at < 0) {
		if (d->n == d->cap) {
			d->cap = d->cap ? 2 * d->cap : 64;
			d->keys = ta_xrealloc(d->keys, d->cap * sizeof(*d->keys));
			d->val = ta_xrealloc(d->val, d->cap * sizeof(*d->val));
			d->has = ta_xrealloc(d->has, d->cap * sizeof(*d->has));
		}
		d->keys[d->n] = key;
		d->val[d->n] = 0;
		d->has[d->n] = 0;
		*at = (long)d->n++;
	}
	return (size_t)*at;
}

static void od_free(struct odict *d)
{
	tb_map_free(&d->at);
	free(d->keys);
	free(d->val);
	free(d->has);
}

/* A module of the hierarchy. */
struct hmod {
	const char *name;
	int64_t module_id;
	size_t *kids, nkids;
};

struct forest_h {
	struct hmod *v;
	size_t n;
};

static size_t add_hmod(struct forest_h *h, const struct pyev *e)
{
	h->v = ta_xrealloc(h->v, (h->n + 1) * sizeof(*h->v));
	h->v[h->n] = (struct hmod){ e->name, e->module_id, NULL, 0 };
	return h->n++;
}

/* append_hierarchy, with the module child map as lists by slot; path:
 * the ids above (a cycle, in a damaged trace, stops where it closes; the
 * plugin recurses for ever) */
static size_t build(struct forest_h *h, const struct pyev *ev, const struct odict *by_id,
		    const struct odict *kids, size_t **lists, int64_t id, int64_t *path,
		    int depth)
{
	int is_new;
	/* the slot first: od_slot may move the arrays (an array read in the
	 * same expression could be the old one) */
	size_t slot = od_slot((struct odict *)by_id, id, &is_new);
	size_t e = (size_t)by_id->val[slot];
	size_t me = add_hmod(h, &ev[e]);

	for (int i = 0; i < depth; i++)
		if (path[i] == id)
			return me;
	if (depth >= MAX_DEPTH)
		return me;
	path[depth] = id;
	slot = od_slot((struct odict *)kids, id, &is_new);
	for (int c = 0; c < kids->has[slot]; c++) {
		size_t k = build(h, ev, by_id, kids, lists, kids->keys[lists[slot][c]], path,
				 depth + 1);

		h->v[me].kids = ta_xrealloc(h->v[me].kids, (h->v[me].nkids + 1) * sizeof(size_t));
		h->v[me].kids[h->v[me].nkids++] = k;
	}
	return me;
}

static int same_tree(const struct forest_h *h, size_t a, size_t b)
{
	const struct hmod *x = &h->v[a], *y = &h->v[b];

	if (strcmp(x->name, y->name) || x->module_id != y->module_id || x->nkids != y->nkids)
		return 0;
	for (size_t i = 0; i < x->nkids; i++)
		if (!same_tree(h, x->kids[i], y->kids[i]))
			return 0;
	return 1;
}

/* _build_module_hierarchy: the roots, deduplicated, sorted by name */
static void hierarchy(struct pyev *ev, size_t n, struct forest_h *h, size_t **roots,
		      size_t *nroots)
{
	struct odict by_id, children, parent_of, child_map;
	struct ta_intern *seen = ta_intern_new();
	int64_t *path = ta_xmalloc((MAX_DEPTH + 1) * sizeof(*path));
	size_t **lists, i;
	int is_new;

	od_init(&by_id, 2 * n);   /* the ids, and parents looked up */
	od_init(&children, 2 * n);
	for (i = 0; i < n; i++) {
		size_t s = od_slot(&by_id, ev[i].id, &is_new);

		by_id.val[s] = (long)i;   /* the last event of an id */
		od_slot(&children, ev[i].id, &is_new);
		s = od_slot(&children, ev[i].parent, &is_new);
		children.has[s]++;   /* (after od_slot: it may move the array) */
	}
	od_init(&parent_of, n);
	for (i = 0; i < children.n; i++) {
		long e;
		int64_t cur = -1;   /* the current module's event, or none */
		size_t leaf;

		if (children.has[i])
			continue;   /* not a leaf */
		leaf = od_slot(&by_id, children.keys[i], &is_new);
		e = by_id.val[leaf];
		while (e >= 0) {
			int64_t key[2];

			if (ev[e].module) {
				if (cur >= 0) {
					size_t s = od_slot(&parent_of, ev[cur].id, &is_new);

					parent_of.val[s] = (long)e;   /* the parent's event */
					parent_of.has[s] = 1;
				}
				cur = e;
				od_slot(&parent_of, ev[e].id, &is_new);
			}
			key[0] = ev[e].id, key[1] = cur;
			if (ta_intern_find(seen, (const char *)key, sizeof(key)))
				break;
			ta_intern(seen, (const char *)key, sizeof(key), &is_new);
			{   /* id_to_event.get: a lookup, no new slot */
				long *at = tb_map_at(&by_id.at, ev[e].parent);

				e = *at >= 0 ? by_id.val[*at] : -1;
			}
		}
	}
	/* module_child_map: its children in the order parent_of holds them */
	od_init(&child_map, 2 * parent_of.n + 2);
	lists = ta_xcalloc(2 * parent_of.n + 2, sizeof(*lists));
	for (i = 0; i < parent_of.n; i++) {
		int64_t pk = parent_of.has[i] ? ev[parent_of.val[i]].id : TB_KEY_NONE;
		size_t p;

		od_slot(&child_map, parent_of.keys[i], &is_new);
		p = od_slot(&child_map, pk, &is_new);
		lists[p] = ta_xrealloc(lists[p], (size_t)(child_map.has[p] + 1) * sizeof(**lists));
		lists[p][child_map.has[p]++] = (size_t)od_slot(&child_map, parent_of.keys[i], &is_new);
	}
	*roots = NULL;
	*nroots = 0;
	for (i = 0; i < parent_of.n; i++) {
		size_t r, j;

		if (parent_of.has[i])
			continue;
		r = build(h, ev, &by_id, &child_map, lists, parent_of.keys[i], path, 0);
		for (j = 0; j < *nroots && !same_tree(h, (*roots)[j], r); j++)
			;
		if (j < *nroots)
			continue;
		*roots = ta_xrealloc(*roots, (*nroots + 1) * sizeof(**roots));
		(*roots)[(*nroots)++] = r;
	}
	/* sorted by name, stably */
	for (i = 1; i < *nroots; i++)
		for (size_t j = i; j > 0 && strcmp(h->v[(*roots)[j - 1]].name,
						    h->v[(*roots)[j]].name) > 0; j--) {
			size_t t = (*roots)[j];

			(*roots)[j] = (*roots)[j - 1];
			(*roots)[j - 1] = t;
		}
	for (i = 0; i < child_map.n; i++)
		free(lists[i]);
	free(lists);
	od_free(&by_id);
	od_free(&children);
	od_free(&parent_of);
	od_free(&child_map);
	ta_intern_free(seen);
	free(path);
}

static const struct tb_module_stats *stats_of(const struct tb_forest *f, const struct hmod *m)
{
	for (size_t i = 0; i < f->nmods; i++)
		if (f->mods[i].module_id == m->module_id && strcmp(f->mods[i].name, m->name) == 0)
			return &f->mods[i];
	return NULL;
}

/* whether every module under m has its numbers (else the plugin raises) */
static int all_counted(const struct forest_h *h, size_t m, const struct tb_forest *f)
{
	if (!stats_of(f, &h->v[m]))
		return 0;
	for (size_t k = 0; k < h->v[m].nkids; k++)
		if (!all_counted(h, h->v[m].kids[k], f))
			return 0;
	return 1;
}

/* m.name.replace('nn.Module: ', '') */
static char *shown_name(const char *name)
{
	struct ta_buf b = { 0 };
	const char *p;

	while ((p = strstr(name, "nn.Module: "))) {
		ta_buf_add(&b, name, (size_t)(p - name));
		name = p + strlen("nn.Module: ");
	}
	ta_buf_adds(&b, name);
	return b.s;
}

/* the rows, pre-order (all_counted first) */
static int rows(struct ta_table *t, int64_t rank, const struct forest_h *h, size_t m,
		const char *path, int depth, const struct tb_forest *f)
{
	const struct tb_module_stats *s = stats_of(f, &h->v[m]);
	size_t r;
	char *name;

	if (!s)
		return -1;
	r = ta_table_add_row(t);
	name = shown_name(h->v[m].name);
	ta_table_set_int(t, r, 0, rank);
	ta_table_set_text(t, r, 1, path);
	ta_table_set_int(t, r, 2, depth);
	ta_table_set_text(t, r, 3, name);
	ta_table_set_int(t, r, 4, s->occurrences);
	ta_table_set_int(t, r, 5, s->operators);
	ta_table_set_real(t, r, 6, s->host);
	ta_table_set_real(t, r, 7, s->self_host);
	ta_table_set_real(t, r, 8, s->device);
	ta_table_set_real(t, r, 9, s->self_device);
	ta_table_set_int(t, r, 10, h->v[m].module_id);
	ta_table_set_real(t, r, 11, s->device / (double)s->occurrences > 0 ?
			  s->device / (double)s->occurrences : s->host / (double)s->occurrences);
	free(name);
	for (size_t k = 0; k < h->v[m].nkids; k++) {
		struct ta_buf p = { 0 };
		int rc;

		ta_buf_addf(&p, "%s/%zu", path, k);
		rc = rows(t, rank, h, h->v[m].kids[k], p.s, depth + 1, f);
		ta_buf_free(&p);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int load(sqlite3 *db, int64_t rank, struct pyev **out, size_t *n, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	if (ta_db_prepare(db, "SELECT python_id, python_parent_id, python_module_id, name"
			  " FROM trace_x WHERE rank = ?1 AND lower(cat) = 'python_function'"
			  " ORDER BY ts, idx", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct pyev *e;

		*out = ta_xrealloc(*out, (*n + 1) * sizeof(**out));
		e = &(*out)[(*n)++];
		e->id = sqlite3_column_type(st, 0) == SQLITE_INTEGER ?
			sqlite3_column_int64(st, 0) : TB_KEY_NONE;
		e->parent = sqlite3_column_type(st, 1) == SQLITE_INTEGER ?
			    sqlite3_column_int64(st, 1) : TB_KEY_NONE;
		e->module = sqlite3_column_type(st, 2) != SQLITE_NULL;
		e->module_id = sqlite3_column_int64(st, 2);
		e->name = ta_xstrdup(sqlite3_column_text(st, 3) ?
				     (const char *)sqlite3_column_text(st, 3) : "");
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

static int rank_rows(sqlite3 *db, struct ta_table *t, int64_t rank, void *ctx,
		     struct ta_error *err)
{
	struct pyev *ev = NULL;
	struct forest_h h = { NULL, 0 };
	struct tb_forest f;
	size_t n = 0, *roots = NULL, nroots = 0;

	if (load(db, rank, &ev, &n, err) < 0 || tb_forest_build(db, rank, &f, err) < 0) {
		for (size_t i = 0; i < n; i++)
			free(ev[i].name);
		free(ev);
		return -1;
	}
	hierarchy(ev, n, &h, &roots, &nroots);
	for (size_t i = 0; f.nmods && i < nroots; i++)
		if (!all_counted(&h, roots[i], &f)) {
			ta_table_warn(t, "rank %lld: a module of the hierarchy is in no call "
				      "tree (the plugin raises there): no Module view", (long long)rank);
			nroots = 0;
		}
	/* no module nodes or no hierarchy: the plugin shows no Module view */
	for (size_t i = 0; f.nmods && i < nroots; i++) {
		char p[32];

		snprintf(p, sizeof(p), "%zu", i);
		rows(t, rank, &h, roots[i], p, 0, &f);
	}
	for (size_t i = 0; i < h.n; i++)
		free(h.v[i].kids);
	free(h.v);
	free(roots);
	tb_forest_free(&f);
	for (size_t i = 0; i < n; i++)
		free(ev[i].name);
	free(ev);
	return 0;
}

int ta_modules_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		      struct ta_error *err)
{
	if (tb_each_rank(db, q, ta_table_new("Modules (the TensorBoard plugin's Module view)",
					     cols, NCOLS), rank_rows, NULL, out, err) < 0)
		return -1;
	if (!(*out)->nrows)
		ta_table_note(*out, "no nn.Module frames with a Python module id: the plugin "
			      "shows no Module view (profile with with_stack=True)");
	return 0;
}
