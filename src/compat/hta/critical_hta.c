/* critical-path --hta-compat: HTA's critical path of one annotation
 * instance per rank (cpgraph.c), as its summary() reports it (the path's
 * edge weights by what bounds them, in % of the path), and the graph's
 * and path's sizes by edge type, as HTA's own tests count them. */
#include "cpgraph.h"
#include "ta_analyses.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

/* HTA's BoundType values and "" for dependencies, in its (sorted) order */
enum bound { B_NONE, B_CPU, B_COMM, B_COMPUTE, B_KERNEL_KERNEL, B_LAUNCH,
	     NBOUNDS };

static const char *const bound_names[NBOUNDS + 1] = { "", "cpu_bound",
	"gpu_communication_bound", "gpu_compute_bound",
	"gpu_kernel_kernel_overhead", "gpu_kernel_launch_overhead", NULL };

static const char *const type_names[CP_NTYPES] = { "operator", "dependency",
	"kernel_launch_delay", "kernel_kernel_delay", "sync_dependency" };

static const char *const item_names[] = { "nodes", "events", "edges",
	"operator", "dependency", "kernel_launch_delay", "kernel_kernel_delay",
	"sync_dependency", NULL };

static const struct ta_col summary_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "bound_by", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "path_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "path_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};

static const struct ta_col graph_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "item", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "in_graph", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "on_path", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "path_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

/* HTA's bound_by: an op's or kernel's time by the event it belongs to. */
static enum bound bound_of(sqlite3_stmt *name_st, const struct cp_graph *g,
			   const struct cp_edge *e)
{
	const char *name;
	enum bound b;
	long r;

	switch (e->type) {
	case CP_KERNEL_DELAY:
		return B_KERNEL_KERNEL;
	case CP_LAUNCH_DELAY:
		return B_LAUNCH;
	case CP_DEPENDENCY:
	case CP_SYNC:
	case CP_NTYPES:
		return B_NONE;
	case CP_OPERATOR:
		break;
	}
	r = e->attr == CP_NO_EVENT ? -1 : cp_graph_row(g, e->attr);
	if (r < 0 || g->rows[r].stream < 0)
		return B_CPU;
	sqlite3_bind_int64(name_st, 1, g->rows[r].name);
	name = sqlite3_step(name_st) == SQLITE_ROW ?
	       (const char *)sqlite3_column_text(name_st, 0) : NULL;
	b = name && cp_is_comm(name) ? B_COMM : B_COMPUTE;
	sqlite3_reset(name_st);
	return b;
}

static void add_item(struct ta_table *t, int64_t rank, const char *item,
		     int64_t in_graph, int64_t on_path, double path_us, int has_us)
{
	size_t r = ta_table_add_row(t);

	ta_table_set_int(t, r, 0, rank);
	ta_table_set_text(t, r, 1, item);
	ta_table_set_int(t, r, 2, in_graph);
	ta_table_set_int(t, r, 3, on_path);
	if (has_us)
		ta_table_set_real(t, r, 4, path_us);
}

/* The distinct events of the path's nodes. */
static size_t path_events(const struct cp_graph *g, int64_t *ev)
{
	size_t i, n = 0, k = 0;

	for (i = 0; i < g->npath; i++)
		ev[n++] = g->rows[g->nodes[g->path[i]].row].idx;
	ta_qsort(ev, n, sizeof(*ev), ta_cmp_i64);
	for (i = 0; i < n; i++)
		if (k == 0 || ev[k - 1] != ev[i])
			ev[k++] = ev[i];
	return k;
}

static long edge_between(const struct cp_graph *g, long u, long v)
{
	long e;

	for (e = g->nodes[u].out; e >= 0; e = g->edges[e].next_out)
		if (g->edges[e].v == v)
			return e;
	return -1;
}

static void add_node(struct ta_path_nodes *n, int64_t step,
		     const struct cp_row *r, int64_t ts)
{
	if (n->n == n->cap) {
		n->cap = n->cap ? 2 * n->cap : 256;
		n->v = ta_xrealloc(n->v, n->cap * sizeof(*n->v));
	}
	n->v[n->n++] = (struct ta_path_node){ step, r->idx, ts, r->pid, r->tid,
					      r->ids };
}

/* --trace: the path's events marked, and a flow along each of its edges
 * of the kinds HTA draws by default (dependencies, launches, syncs). */
static void overlay_nodes(const struct cp_graph *g, const int64_t *ev,
			  size_t nev, struct ta_path_nodes *out)
{
	int64_t flow = 1;
	size_t i;

	for (i = 0; i < nev; i++) {
		long r = cp_graph_row(g, ev[i]);

		/* a step of its own each: no flows between them */
		if (r >= 0)
			add_node(out, -(int64_t)i - 1, &g->rows[r], g->rows[r].ts);
	}
	for (i = 0; i + 1 < g->npath; i++) {
		long e = edge_between(g, g->path[i], g->path[i + 1]);
		const struct cp_edge *x;
		int k;

		if (e < 0)
			continue;
		x = &g->edges[e];
		if (x->type != CP_DEPENDENCY && x->type != CP_LAUNCH_DELAY &&
		    x->type != CP_SYNC)
			continue;
		for (k = 0; k < 2; k++) {
			const struct cp_node *nd = &g->nodes[k ? x->v : x->u];

			add_node(out, flow, &g->rows[nd->row], nd->ts);
		}
		flow++;
	}
}

static int one_rank(sqlite3 *db, int64_t rank, const struct ta_critical_opts *o,
		    struct ta_table *sum, struct ta_table *graph,
		    struct ta_error *err)
{
	struct cp_graph g;
	int64_t by_bound[NBOUNDS] = { 0 }, total = 0;
	int64_t w_type[CP_NTYPES] = { 0 };
	size_t in_type[CP_NTYPES] = { 0 }, on_type[CP_NTYPES] = { 0 };
	size_t i, graph_events = 0, nev;
	int seen[NBOUNDS] = { 0 };
	sqlite3_stmt *name_st = NULL;
	int64_t *ev;

	if (ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?",
			  &name_st, err) < 0)
		return -1;
	if (cp_graph_build(db, rank, o->annotation, o->instance_first,
			   o->instance_last, &g, err) < 0) {
		sqlite3_finalize(name_st);
		cp_graph_free(&g);
		return -1;
	}
	for (i = 0; i < g.nedges; i++)
		in_type[g.edges[i].type]++;
	for (i = 0; i + 1 < g.npath; i++) {
		long e = edge_between(&g, g.path[i], g.path[i + 1]);
		enum bound b;

		if (e < 0)
			continue;
		b = bound_of(name_st, &g, &g.edges[e]);
		by_bound[b] = ta_add_sat(by_bound[b], g.edges[e].w);
		seen[b] = 1;
		total = ta_add_sat(total, g.edges[e].w);
		on_type[g.edges[e].type]++;
		w_type[g.edges[e].type] = ta_add_sat(w_type[g.edges[e].type], g.edges[e].w);
	}
	for (i = 0; i < NBOUNDS; i++) {
		size_t r;

		if (!seen[i])
			continue;
		r = ta_table_add_row(sum);
		ta_table_set_int(sum, r, 0, rank);
		ta_table_set_text(sum, r, 1, bound_names[i]);
		ta_table_set_real(sum, r, 2, by_bound[i] / 1000.0);
		if (total != 0)
			ta_table_set_real(sum, r, 3, 100.0 * by_bound[i] / total);
	}
	for (i = 0; i < g.nnodes; i++)   /* an event with either node in it */
		graph_events += g.nodes[i].in_graph && (!g.nodes[i].is_start ||
			!g.nodes[g.rows[g.nodes[i].row].end].in_graph);
	ev = ta_xcalloc(g.npath + 1, sizeof(*ev));
	nev = path_events(&g, ev);
	add_item(graph, rank, "nodes", (int64_t)g.ngraph, (int64_t)g.npath, 0, 0);
	add_item(graph, rank, "events", (int64_t)graph_events, (int64_t)nev, 0, 0);
	add_item(graph, rank, "edges", (int64_t)g.nedges,
		 g.npath ? (int64_t)g.npath - 1 : 0, total / 1000.0, 1);
	for (i = 0; i < CP_NTYPES; i++)
		add_item(graph, rank, type_names[i], (int64_t)in_type[i],
			 (int64_t)on_type[i], w_type[i] / 1000.0, 1);
	if (o->nodes && o->nodes->rank == rank)
		overlay_nodes(&g, ev, nev, o->nodes);
	free(ev);
	sqlite3_finalize(name_st);
	cp_graph_free(&g);
	return 0;
}

int ta_critical_hta_run(sqlite3 *db, const struct ta_query *q,
			const struct ta_critical_opts *o, struct ta_table **out,
			struct ta_table **graph, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct ta_table *s, *g;
	int rc;

	*out = *graph = NULL;
	if (ta_model_prepare(db, q, TA_NEED_DEV, err) < 0 ||
	    ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY 1", &st, err) < 0)
		return -1;
	s = ta_table_new("Critical path (HTA), by what bounds it", summary_cols, 4);
	g = ta_table_new("Critical path graph (HTA)", graph_cols, 5);
	ta_table_set_values(s, 1, bound_names);
	ta_table_set_values(g, 1, item_names);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (one_rank(db, sqlite3_column_int64(st, 0), o, s, g, err) < 0) {
			rc = -1;
			break;
		}
	sqlite3_finalize(st);
	if (rc == -1 || ta_db_done(db, rc, err) < 0) {
		ta_table_free(s);
		ta_table_free(g);
		return -1;
	}
	*out = s;
	*graph = g;
	return 0;
}
