/* HTA's critical path graph (cpgraph.h), rule by rule in HTA's order:
 * the order decides which edge networkx keeps when one is added twice and
 * which of equally long paths it returns. */
#include "cpgraph.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

enum {
	F_OP_OR_RUNTIME = 1 << 0,  /* cat cpu_op, cuda_runtime, cuda_driver */
	F_LOCK = 1 << 1,           /* takes the CUDA runtime lock */
	F_BLOCKING = 1 << 2,       /* a blocking call: its time weighs 0 */
	F_LAUNCH = 1 << 3,         /* a kernel or copy launch call */
	F_SYNC_CAT = 1 << 4,       /* cat cuda_sync */
	F_ANNOTATION = 1 << 5,     /* its name holds the annotation */
	F_FORWARD = 1 << 6,        /* its name holds "forward" */
	F_AUTOGRAD = 1 << 7,       /* its name holds "autograd" */
	F_OP_OR_ANN = 1 << 8,      /* cat cpu_op or user_annotation */
	F_STREAM_WAIT = 1 << 9,    /* "Stream Wait Event" */
	F_EVENT_SYNC = 1 << 10,    /* "Event Sync" */
	F_CONTEXT_SYNC = 1 << 11,  /* "Context Sync" */
	F_STREAM_SYNC = 1 << 12,   /* "Stream Sync" */
	F_RECORD = 1 << 13,        /* cudaEventRecord */
	F_WAIT_CALL = 1 << 14,     /* cudaStreamWaitEvent */
};

/* HTA's lists: CUDA_RUNTIME_EVENTS, BLOCKING_SYNC_CALLS and the launch
 * calls of get_runtime_launch_events_mask. */
static const char *const lock_names[] = { "cudaHostAlloc", "cudaLaunchKernel",
	"cudaMemcpyAsync", NULL };
static const char *const blocking_names[] = { "cudaDeviceSynchronize",
	"cudaStreamSynchronize", "cudaEventQuery", "cudaEventSynchronize",
	"cudaMemcpy", "cudaMemcpyAsync", NULL };
static const char *const launch_names[] = { "cudaMemsetAsync",
	"cudaMemcpyAsync", "cudaLaunchKernel", "cudaLaunchKernelExC",
	"cuLaunchKernel", "runFunction - job_prep_and_submit_for_execution",
	"hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemcpyAsync",
	"hipMemsetAsync", "hipMemcpyWithStream", "cuLaunchKernelEx", NULL };

/* KERNEL_KERNEL_DELAY_THRESHOLD_US */
#define KERNEL_DELAY_NS 1500000

struct flags {
	unsigned *by_id;            /* names.name_id -> F_* */
	size_t n;
	int has_record, has_wait;   /* the names cudaEventRecord, ... exist */
};

static int flag_names(sqlite3 *db, struct flags *f, const char *sql,
		      const char *arg, unsigned bit, int *found,
		      struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_db_prepare(db, sql, &st, err) < 0)
		return -1;
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		if (id >= 0 && (size_t)id < f->n)
			f->by_id[id] |= bit;
		if (found)
			*found = 1;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

static int flag_list(sqlite3 *db, struct flags *f, const char *const *names,
		     unsigned bit, struct ta_error *err)
{
	for (; *names; names++)
		if (flag_names(db, f, "SELECT name_id FROM label WHERE name = ?",
			       *names, bit, NULL, err) < 0)
			return -1;
	return 0;
}

/* HTA matches annotations, "forward" and "autograd" by substring against
 * every name in its symbol table. */
static int load_flags(sqlite3 *db, const char *annotation, struct flags *f,
		      int *have_ann, struct ta_error *err)
{
	static const char by_name[] = "SELECT name_id FROM label WHERE name = ?";
	static const char part[] = "SELECT name_id FROM label WHERE instr(name, ?) > 0";
	int64_t max;

	if (ta_db_get_int(db, "SELECT COALESCE(max(name_id), 0) FROM label", 0,
			  &max, err) < 0)
		return -1;
	f->n = (size_t)max + 1;
	f->by_id = ta_xcalloc(f->n, sizeof(*f->by_id));
	*have_ann = 0;
	if (flag_names(db, f, "SELECT name_id FROM label WHERE name IN"
		       " ('cpu_op', 'cuda_runtime', 'cuda_driver')", NULL,
		       F_OP_OR_RUNTIME, NULL, err) < 0 ||
	    flag_names(db, f, "SELECT name_id FROM label WHERE name IN"
		       " ('cpu_op', 'user_annotation')", NULL, F_OP_OR_ANN, NULL,
		       err) < 0 ||
	    flag_names(db, f, by_name, "cuda_sync", F_SYNC_CAT, NULL, err) < 0 ||
	    flag_list(db, f, lock_names, F_LOCK, err) < 0 ||
	    flag_list(db, f, blocking_names, F_BLOCKING, err) < 0 ||
	    flag_list(db, f, launch_names, F_LAUNCH, err) < 0 ||
	    flag_names(db, f, by_name, "Stream Wait Event", F_STREAM_WAIT,
		       &f->has_wait, err) < 0 ||
	    flag_names(db, f, by_name, "Event Sync", F_EVENT_SYNC, NULL, err) < 0 ||
	    flag_names(db, f, by_name, "Context Sync", F_CONTEXT_SYNC, NULL, err) < 0 ||
	    flag_names(db, f, by_name, "Stream Sync", F_STREAM_SYNC, NULL, err) < 0 ||
	    flag_names(db, f, by_name, "cudaEventRecord", F_RECORD,
		       &f->has_record, err) < 0 ||
	    flag_names(db, f, by_name, "cudaStreamWaitEvent", F_WAIT_CALL, NULL,
		       err) < 0 ||
	    flag_names(db, f, part, "forward", F_FORWARD, NULL, err) < 0 ||
	    flag_names(db, f, part, "autograd", F_AUTOGRAD, NULL, err) < 0 ||
	    (*annotation && flag_names(db, f, part, annotation, F_ANNOTATION,
				       have_ann, err) < 0))
		return -1;
	/* both sync names must exist for HTA to look at stream waits */
	if (f->has_wait) {
		int64_t n;

		if (ta_db_get_int(db, "SELECT count(*) FROM label WHERE name ="
				  " 'cudaStreamWaitEvent'", 0, &n, err) < 0)
			return -1;
		f->has_wait = n > 0;
	}
	return 0;
}

static unsigned flags_of(const struct flags *f, int64_t id)
{
	return id >= 0 && (size_t)id < f->n ? f->by_id[id] : 0;
}

static int load_rows(sqlite3 *db, int64_t rank, const struct flags *f,
		     struct cp_graph *g, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	if (ta_db_prepare(db, "SELECT idx, cat, name, pid, tid, ts, dur, stream,"
			  " correlation, is_gpu, partner, wait_on_stream, wait_corr"
			  " FROM hta_trace WHERE rank = ? ORDER BY part, idx",
			  &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cp_row *r;

		if (g->nrows == cap) {
			cap = cap ? 2 * cap : 1024;
			g->rows = ta_xrealloc(g->rows, cap * sizeof(*g->rows));
		}
		r = &g->rows[g->nrows++];
		memset(r, 0, sizeof(*r));
		r->idx = sqlite3_column_int64(st, 0);
		r->cat = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 :
			 sqlite3_column_int64(st, 1);
		r->name = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 :
			  sqlite3_column_int64(st, 2);
		r->ids = sqlite3_column_type(st, 3) == SQLITE_INTEGER &&
			 sqlite3_column_type(st, 4) == SQLITE_INTEGER;
		r->pid = sqlite3_column_int64(st, 3);
		r->tid = sqlite3_column_int64(st, 4);
		r->ts = sqlite3_column_int64(st, 5);
		r->dur = sqlite3_column_int64(st, 6);
		r->stream = sqlite3_column_int64(st, 7);
		r->corr = sqlite3_column_int64(st, 8);
		r->gpu = sqlite3_column_int(st, 9);
		r->ic = sqlite3_column_int64(st, 10);
		r->wait_stream = sqlite3_column_int64(st, 11);
		r->wait_corr = sqlite3_column_int64(st, 12);
		r->fl = flags_of(f, r->name) |
			(flags_of(f, r->cat) & (F_OP_OR_RUNTIME | F_OP_OR_ANN |
						 F_SYNC_CAT));
		/* the name flags must not come from a category */
		r->fl &= ~((flags_of(f, r->name) & (F_OP_OR_RUNTIME | F_OP_OR_ANN |
						     F_SYNC_CAT)) &
			   ~flags_of(f, r->cat));
		r->start = r->end = r->parent = -1;
		r->child = r->last_child = r->sib = -1;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

/* Row lookup by event index (or rows by correlation). */
#define by_idx cp_by_idx

static int cmp_by_idx(const void *a, const void *b)
{
	const struct by_idx *x = a, *y = b;

	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static size_t lower_bound(const struct by_idx *v, size_t n, int64_t idx)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (v[m].idx < idx)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

static long find_row(const struct by_idx *v, size_t n, int64_t idx)
{
	size_t a = lower_bound(v, n, idx);

	return a < n && v[a].idx == idx ? v[a].row : -1;
}

/* §4: a CPU row's partner is the last GPU row of its correlation, 0 when
 * it has none; GPU rows got theirs from the model. */
static void link_cpu_rows(struct cp_graph *g)
{
	struct by_idx *gpu = ta_xcalloc(g->nrows + 1, sizeof(*gpu));
	size_t n = 0, i;

	for (i = 0; i < g->nrows; i++)
		if (g->rows[i].gpu && g->rows[i].corr != -1) {
			gpu[n].idx = g->rows[i].corr;  /* sorted by corr, then idx */
			gpu[n++].row = (long)i;
		}
	ta_qsort(gpu, n, sizeof(*gpu), cmp_by_idx);
	for (i = 0; i < g->nrows; i++) {
		struct cp_row *r = &g->rows[i];
		size_t a = 0, b = n;
		int64_t best = 0;

		if (r->gpu)
			continue;
		if (r->corr == -1) {
			r->ic = -1;
			continue;
		}
		while (a < b) {
			size_t m = a + (b - a) / 2;

			if (gpu[m].idx <= r->corr)
				a = m + 1;
			else
				b = m;
		}
		for (; a > 0 && gpu[a - 1].idx == r->corr; a--)
			if (g->rows[gpu[a - 1].row].idx > best)
				best = g->rows[gpu[a - 1].row].idx;
		r->ic = best;
	}
	free(gpu);
}

/* The analysis window: instances [first, last] of the annotation, in row
 * order; annotation "": everything. */
static int window(struct cp_graph *g, const char *annotation, long first,
		  long last, struct ta_error *err)
{
	long k = 0;
	size_t i;
	int any = 0;

	if (!*annotation) {
		g->win_ts = INT64_MAX;
		g->win_end = INT64_MAX;
		for (i = 0; i < g->nrows; i++)
			if (g->rows[i].ts < g->win_ts)
				g->win_ts = g->rows[i].ts;
		return 0;
	}
	for (i = 0; i < g->nrows; i++) {
		const struct cp_row *r = &g->rows[i];

		if (!(r->fl & F_ANNOTATION))
			continue;
		if (k >= first && k <= last) {
			if (!any || r->ts < g->win_ts)
				g->win_ts = r->ts;
			if (!any || r->ts + r->dur > g->win_end)
				g->win_end = r->ts + r->dur;
			any = 1;
		}
		k++;
	}
	if (!any) {
		ta_error_set(err, TA_EXIT_USAGE, "rank %lld has %ld instance%s of "
			     "annotation '%s': no instance %ld", (long long)g->rank,
			     k, k == 1 ? "" : "s", annotation, first);
		return -1;
	}
	return 0;
}

/* HTA's clipped table: CPU rows that start in the window with a positive
 * duration, GPU rows whose launch does, and every "Stream Wait Event". */
static void clip(struct cp_graph *g, const struct by_idx *ix)
{
	size_t i;

	for (i = 0; i < g->nrows; i++) {
		struct cp_row *r = &g->rows[i];
		long k;

		if (r->stream != -1) {
			if (r->fl & F_STREAM_WAIT)
				r->clip = 1;
			continue;
		}
		if (r->ts < g->win_ts || r->ts > g->win_end || r->dur <= 0)
			continue;
		r->clip = 1;
		if (r->ic > 0 && (k = find_row(ix, g->nrows, r->ic)) >= 0 &&
		    g->rows[k].stream != -1)
			g->rows[k].clip = 1;
	}
}

static int cmp_node(const void *a, const void *b)
{
	const struct cp_node *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;  /* rows are in idx order here */
	return y->is_start - x->is_start;
}

/* A start and an end node for each op, runtime call and GPU event of the
 * clipped table, by time then event (_create_event_nodes). */
static void make_nodes(struct cp_graph *g, long *by_idx_order)
{
	size_t i, n = 0;

	g->nodes = ta_xcalloc(2 * g->nrows + 1, sizeof(*g->nodes));
	for (i = 0; i < g->nrows; i++) {
		long ri = by_idx_order[i];
		const struct cp_row *r = &g->rows[ri];

		if (!r->clip || !((r->fl & F_OP_OR_RUNTIME) ||
				  (r->stream != -1 && r->ic >= 0)))
			continue;
		g->nodes[n].ts = r->ts;
		g->nodes[n].row = (long)i;       /* the idx order, for sorting */
		g->nodes[n++].is_start = 1;
		g->nodes[n].ts = r->ts + r->dur;
		g->nodes[n].row = (long)i;
		g->nodes[n++].is_start = 0;
	}
	ta_qsort(g->nodes, n, sizeof(*g->nodes), cmp_node);
	g->nnodes = n;
	g->graph_nodes = ta_xcalloc(n + 1, sizeof(*g->graph_nodes));
	for (i = 0; i < n; i++) {
		struct cp_node *nd = &g->nodes[i];

		nd->row = by_idx_order[nd->row];
		nd->out = nd->in = nd->out_last = nd->in_last = -1;
		if (nd->is_start)
			g->rows[nd->row].start = (long)i;
		else
			g->rows[nd->row].end = (long)i;
	}
}

static size_t hash_uv(long u, long v, size_t cap)
{
	uint64_t h = (uint64_t)u * 0x9E3779B97F4A7C15ull ^ (uint64_t)v;

	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

static long *slot(struct cp_graph *g, long u, long v)
{
	size_t i = hash_uv(u, v, g->hcap);

	while (g->hash[i] >= 0 && (g->edges[g->hash[i]].u != u ||
				   g->edges[g->hash[i]].v != v))
		i = (i + 1) & (g->hcap - 1);
	return &g->hash[i];
}

static void grow_hash(struct cp_graph *g)
{
	size_t i;

	free(g->hash);
	g->hcap = g->hcap ? 2 * g->hcap : 1024;
	g->hash = ta_xmalloc(g->hcap * sizeof(*g->hash));
	for (i = 0; i < g->hcap; i++)
		g->hash[i] = -1;
	for (i = 0; i < g->nedges; i++)
		*slot(g, g->edges[i].u, g->edges[i].v) = (long)i;
}

/* networkx's add_edge: a second edge between the same nodes replaces the
 * first's weight and type but keeps its place in the adjacency order. */
static long add_edge(struct cp_graph *g, long u, long v, enum cp_edge_type t,
		     int zero)
{
	struct cp_edge *e;
	long *s;

	if (2 * (g->nedges + 1) > g->hcap)
		grow_hash(g);
	s = slot(g, u, v);
	if (*s < 0) {
		if (g->nedges == g->cap) {
			g->cap = g->cap ? 2 * g->cap : 1024;
			g->edges = ta_xrealloc(g->edges, g->cap * sizeof(*g->edges));
		}
		*s = (long)g->nedges;
		/* networkx adds the nodes of an edge as it comes: their order
		 * is the topological sort's */
		if (!g->nodes[u].in_graph)
			g->graph_nodes[g->ngraph++] = u, g->nodes[u].in_graph = 1;
		if (!g->nodes[v].in_graph)
			g->graph_nodes[g->ngraph++] = v, g->nodes[v].in_graph = 1;
		e = &g->edges[g->nedges++];
		e->u = u;
		e->v = v;
		e->attr = CP_NO_EVENT;
		e->next_out = e->next_in = -1;
		if (g->nodes[u].out_last < 0)
			g->nodes[u].out = *s;
		else
			g->edges[g->nodes[u].out_last].next_out = *s;
		g->nodes[u].out_last = *s;
		if (g->nodes[v].in_last < 0)
			g->nodes[v].in = *s;
		else
			g->edges[g->nodes[v].in_last].next_in = *s;
		g->nodes[v].in_last = *s;
	}
	e = &g->edges[*s];
	e->type = t;
	e->w = t == CP_DEPENDENCY || t == CP_SYNC || zero ? 0 :
	       g->nodes[v].ts - g->nodes[u].ts;
	return *s;
}

/* _attribute_edge: an op's or kernel's time belongs to the event it lies
 * in; between two ops at one level, to their parent. */
static void attribute(struct cp_graph *g, long e, int64_t src_parent)
{
	struct cp_edge *x = &g->edges[e];
	const struct cp_node *s = &g->nodes[x->u], *d = &g->nodes[x->v];

	if (x->type != CP_OPERATOR && x->type != CP_KERNEL_DELAY)
		return;
	if (x->type == CP_KERNEL_DELAY || s->is_start)
		x->attr = g->rows[s->row].idx;
	else if (!d->is_start)
		x->attr = g->rows[d->row].idx;
	else
		x->attr = src_parent;
}

/* _construct_graph_from_cuda_runtime_events: calls that take the runtime
 * lock are ordered across threads by when they ended. */
static void runtime_lock_edges(struct cp_graph *g)
{
	long *starts = ta_xcalloc(g->nnodes + 1, sizeof(*starts));
	size_t ns = 0, i;
	long last = -1;

	for (i = 0; i < g->nnodes; i++) {
		const struct cp_node *nd = &g->nodes[i];

		if (!(g->rows[nd->row].fl & F_LOCK))
			continue;
		if (nd->is_start) {
			starts[ns++] = (long)i;
		} else {
			while (ns > 0) {
				long p = starts[--ns];

				if (g->nodes[p].row == nd->row)
					attribute(g, add_edge(g, p, (long)i,
							      CP_OPERATOR, 0),
						  g->rows[nd->row].idx);
				else
					add_edge(g, p, (long)i, CP_DEPENDENCY, 0);
			}
			if (last >= 0 && !g->nodes[last].is_start)
				add_edge(g, last, (long)i, CP_DEPENDENCY, 0);
		}
		last = (long)i;
	}
	free(starts);
}

static int shares_lock(const struct cp_graph *g, long a, long b)
{
	return (g->rows[g->nodes[a].row].fl & F_LOCK) &&
	       (g->rows[g->nodes[b].row].fl & F_LOCK) &&
	       (g->nodes[a].is_start || !g->nodes[b].is_start);
}

/* HTA's _get_tid_for_event: the one thread with ops or annotations whose
 * names hold the word, or none. */
static int thread_of(const struct cp_graph *g, unsigned bit, int64_t *tid)
{
	size_t i;
	int n = 0;

	for (i = 0; i < g->nrows; i++) {
		const struct cp_row *r = &g->rows[i];

		if (!r->clip || !(r->fl & bit) || !(r->fl & F_OP_OR_ANN))
			continue;
		if (n == 0 || r->tid != *tid) {
			if (n++ > 0)
				return 0;
			*tid = r->tid;
		}
	}
	return n == 1;
}

struct cs_event {               /* call stack events: compare_events */
	int64_t t, dur, idx;
	long row;
	int start;
};

static int cmp_cs(const void *a, const void *b)
{
	const struct cs_event *x = a, *y = b;

	if (x->idx == y->idx)
		return y->start - x->start;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->start == y->start) {
		if (x->dur == y->dur)
			return x->start ? (x->idx < y->idx ? -1 : 1) :
					  (x->idx < y->idx ? 1 : -1);
		if (x->start)
			return x->dur < y->dur ? 1 : -1;
		return x->dur < y->dur ? -1 : 1;
	}
	if (x->dur > 0 && y->dur > 0)
		return x->start ? 1 : -1;
	if (x->dur == 0 && y->dur == 0)
		return x->idx < y->idx ? -1 : 1;
	return x->start ? -1 : 1;
}

struct thread_key {
	int64_t pid, tid;
	long row;
};

static int cmp_thread(const void *a, const void *b)
{
	const struct thread_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* One thread's call stack (CallStackGraph): parents by a stack of starts,
 * children in start order; root's children returned in *first. */
static long build_stack(struct cp_graph *g, const struct thread_key *k,
			size_t n, struct cs_event *ev)
{
	long *stack = ta_xcalloc(n + 1, sizeof(*stack));
	long first = -1, last = -1;
	size_t i, ne = 0, depth = 0;

	for (i = 0; i < n; i++) {
		const struct cp_row *r = &g->rows[k[i].row];
		int64_t dur = r->dur > 0 ? r->dur : 0;

		ev[ne++] = (struct cs_event){ r->ts, dur, r->idx, k[i].row, 1 };
		ev[ne++] = (struct cs_event){ r->ts + dur, dur, r->idx, k[i].row, 0 };
	}
	ta_qsort(ev, ne, sizeof(*ev), cmp_cs);
	for (i = 0; i < ne; i++) {
		struct cp_row *r = &g->rows[ev[i].row];

		if (!ev[i].start) {
			if (depth > 0)
				depth--;
			continue;
		}
		r->parent = depth ? stack[depth - 1] : -1;
		if (r->parent < 0) {
			if (last < 0)
				first = ev[i].row;
			else
				g->rows[last].sib = ev[i].row;
			last = ev[i].row;
		} else {
			struct cp_row *p = &g->rows[r->parent];

			if (p->last_child < 0)
				p->child = ev[i].row;
			else
				g->rows[p->last_child].sib = ev[i].row;
			p->last_child = ev[i].row;
		}
		stack[depth++] = ev[i].row;
	}
	free(stack);
	return first;
}

struct walk {                   /* _construct_graph_from_call_stack's state */
	long last;              /* last node, -1 */
	int depth;              /* ops entered, not left */
	int64_t parent;         /* event of the last node's parent, -1: root */
};

static void enter(struct cp_graph *g, struct walk *w, long ri)
{
	const struct cp_row *r = &g->rows[ri];
	long e;

	if (r->start < 0 || r->end < 0)
		return;
	if (w->last >= 0 && !shares_lock(g, w->last, r->start)) {
		e = add_edge(g, w->last, r->start,
			     w->depth == 0 ? CP_DEPENDENCY : CP_OPERATOR, 0);
		attribute(g, e, w->parent);
	}
	w->last = r->start;
	w->parent = r->parent >= 0 ? g->rows[r->parent].idx : -1;
	w->depth++;
}

static void leave(struct cp_graph *g, struct walk *w, long ri)
{
	const struct cp_row *r = &g->rows[ri];
	long e;

	if (r->start < 0 || r->end < 0)
		return;
	if (w->last >= 0 && !shares_lock(g, w->last, r->end)) {
		e = add_edge(g, w->last, r->end, CP_OPERATOR,
			     (r->fl & F_BLOCKING) != 0);
		attribute(g, e, w->parent);
	}
	w->last = r->end;
	w->parent = r->parent >= 0 ? g->rows[r->parent].idx : -1;
	w->depth--;
}

/* Depth first, without recursion: a deep stack must not overflow ours. */
static void traverse(struct cp_graph *g, long first, long *todo)
{
	struct walk w = { -1, 0, -1 };
	size_t n = 0;
	long at = first;

	while (at >= 0 || n > 0) {
		if (at >= 0) {
			enter(g, &w, at);
			todo[n++] = at;
			at = g->rows[at].child;
			continue;
		}
		at = todo[--n];
		leave(g, &w, at);
		at = g->rows[at].sib;
	}
}

/* _construct_graph_from_call_stacks: each CPU thread's ops in call order;
 * the backward thread counts as the forward one when both are known. */
static void call_stack_edges(struct cp_graph *g)
{
	struct thread_key *k = ta_xcalloc(g->nrows + 1, sizeof(*k));
	struct cs_event *ev = ta_xcalloc(2 * g->nrows + 1, sizeof(*ev));
	long *todo = ta_xcalloc(g->nrows + 1, sizeof(*todo));
	int64_t fwd = 0, bwd = 0;
	int remap;
	size_t n = 0, i, j;

	remap = thread_of(g, F_FORWARD, &fwd) && thread_of(g, F_AUTOGRAD, &bwd) &&
		fwd && bwd && fwd != bwd;
	for (i = 0; i < g->nrows; i++)
		if (g->rows[i].clip) {
			k[n].pid = g->rows[i].pid;
			k[n].tid = remap && g->rows[i].tid == bwd ? fwd : g->rows[i].tid;
			k[n++].row = (long)i;
		}
	ta_qsort(k, n, sizeof(*k), cmp_thread);
	for (i = 0; i < n; i = j) {
		int gpu = 0, cpu = 1;

		for (j = i; j < n && k[j].pid == k[i].pid && k[j].tid == k[i].tid; j++) {
			gpu |= g->rows[k[j].row].stream > 0;
			cpu &= g->rows[k[j].row].stream < 0;
		}
		/* a thread with GPU rows is a stream; one with stream 0 is
		 * neither CPU nor GPU to HTA: no stack either way */
		if (gpu || !cpu)
			continue;
		traverse(g, build_stack(g, k + i, j - i, ev), todo);
	}
	free(todo);
	free(ev);
	free(k);
}

struct queue_point {
	int64_t stream, ts, idx;
	long order;
	int sign;
};

static int cmp_point(const void *a, const void *b)
{
	const struct queue_point *x = a, *y = b;

	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Queue length (§9.8) after each launch call and GPU row, over the whole
 * trace, in a stable order; by_ev[row]: that length, or -1. */
static void queue_lengths(const struct cp_graph *g, const struct by_idx *corr,
			  size_t ncorr, int64_t *by_row)
{
	struct queue_point *p;
	char *launched = ta_xcalloc(g->nrows + 1, 1), *first = NULL;
	size_t n = 0, i, pairs = 0;
	int64_t len = 0;

	/* HTA's merge pairs every launch with every device row of its
	 * correlation: k launches sharing one id with k kernels make k^2
	 * points (a damaged trace). Past 2 a row, only the first launch of
	 * each id is paired, so memory stays linear. */
	for (i = 0; i < g->nrows; i++) {
		const struct cp_row *r = &g->rows[i];
		size_t a;

		if (!(r->fl & F_LAUNCH) || r->ic <= 0)
			continue;
		for (a = lower_bound(corr, ncorr, r->corr); a < ncorr && corr[a].idx == r->corr; a++)
			pairs++;
	}
	if (pairs > 2 * g->nrows)
		first = ta_xcalloc(ncorr + 1, 1);
	p = ta_xcalloc((first ? ncorr : pairs) + g->nrows + 1, sizeof(*p));
	for (i = 0; i < g->nrows; i++)
		by_row[i] = -1;
	for (i = 0; i < g->nrows; i++) {
		const struct cp_row *r = &g->rows[i];
		size_t a;

		if (!(r->fl & F_LAUNCH) || r->ic <= 0)
			continue;
		a = lower_bound(corr, ncorr, r->corr);
		if (first && a < ncorr && corr[a].idx == r->corr) {
			if (first[a])
				continue;
			first[a] = 1;
		}
		/* every device row of its correlation, in row order */
		for (; a < ncorr && corr[a].idx == r->corr; a++) {
			p[n++] = (struct queue_point){ g->rows[corr[a].row].stream,
				r->ts, (long)i, (long)n, 1 };
			launched[corr[a].row] = 1;
		}
	}
	for (i = 0; i < g->nrows; i++)
		if (launched[i])
			p[n++] = (struct queue_point){ g->rows[i].stream,
				g->rows[i].ts, (long)i, (long)n, -1 };
	ta_qsort(p, n, sizeof(*p), cmp_point);
	for (i = 0; i < n; i++) {
		if (i == 0 || p[i].stream != p[i - 1].stream)
			len = 0;
		len += p[i].sign;
		by_row[p[i].idx] = len;
	}
	free(first);
	free(launched);
	free(p);
}

/* Launch calls with their kernel's stream and GPU, in time order: HTA's
 * _get_cuda_runtime_calls_df. */
struct launch {
	int64_t ts, stream, gpu, pid, tid;
	long row, order;
	int kind;                   /* 0 launch, 1 the call looked up */
};

static int cmp_launch(const void *a, const void *b)
{
	const struct launch *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind - y->kind;   /* launches first, as HTA concatenates */
	return x->order < y->order ? -1 : x->order > y->order;
}

static size_t launches(const struct cp_graph *g, const struct by_idx *ix,
		       struct launch *l)
{
	size_t i, n = 0;

	for (i = 0; i < g->nrows; i++) {
		const struct cp_row *r = &g->rows[i];
		long k;

		if (!(r->fl & F_LAUNCH) || r->ic <= 0 ||
		    (k = find_row(ix, g->nrows, r->ic)) < 0 ||
		    g->rows[k].stream == -1 || g->rows[k].ic <= 0)
			continue;
		l[n] = (struct launch){ r->ts, g->rows[k].stream, g->rows[k].pid,
			r->pid, r->tid, (long)i, (long)n, 0 };
		n++;
	}
	return n;
}

/* The last (or next) launch seen per stream and GPU, or stream and
 * thread: a few streams, so a list. */
struct streams {
	int64_t *key;               /* 3 per entry */
	long *row;
	size_t n, cap;
};

static long *last_launch(struct streams *s, int64_t a, int64_t b, int64_t c)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->key[3 * i] == a && s->key[3 * i + 1] == b &&
		    s->key[3 * i + 2] == c)
			return &s->row[i];
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->key = ta_xrealloc(s->key, 3 * s->cap * sizeof(*s->key));
		s->row = ta_xrealloc(s->row, s->cap * sizeof(*s->row));
	}
	s->key[3 * s->n] = a;
	s->key[3 * s->n + 1] = b;
	s->key[3 * s->n + 2] = c;
	s->row[s->n] = -1;
	return &s->row[s->n++];
}

/* _get_cuda_event_record_df: for each cudaEventRecord whose event a sync
 * waits on, the last launch on the recorded stream before it. prev[row]:
 * that launch's row, for the record's correlation; -1 if none. Returns
 * whether HTA would have the table at all. */
struct record {
	int64_t corr;
	long launch;
};

static int cmp_record(const void *a, const void *b)
{
	const struct record *x = a, *y = b;

	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static size_t event_records(const struct cp_graph *g, const struct by_idx *ix,
			    struct record **out)
{
	struct launch *l = ta_xcalloc(2 * g->nrows + 1, sizeof(*l));
	struct record *rec = ta_xcalloc(g->nrows + 1, sizeof(*rec));
	struct launch *waits = ta_xcalloc(g->nrows + 1, sizeof(*waits));
	struct streams seen = { NULL, NULL, 0, 0 };
	size_t n = launches(g, ix, l), nw = 0, nr = 0, i, j;

	/* the stream and GPU each recorded event is waited on for */
	for (i = 0; i < g->nrows; i++)
		if (g->rows[i].wait_stream > -1)
			waits[nw++] = (struct launch){ g->rows[i].wait_corr,
				g->rows[i].wait_stream, g->rows[i].pid, 0, 0,
				(long)i, (long)nw, 0 };
	ta_qsort(waits, nw, sizeof(*waits), cmp_launch);
	for (i = 0; i < g->nrows; i++) {
		const struct cp_row *r = &g->rows[i];

		size_t a = 0, b = nw;

		if (!(r->fl & F_RECORD))
			continue;
		while (a < b) {             /* the first wait on it, in row order */
			j = a + (b - a) / 2;
			if (waits[j].ts < r->corr)
				a = j + 1;
			else
				b = j;
		}
		if (a == nw || waits[a].ts != r->corr)
			continue;
		j = a;
		l[n] = (struct launch){ r->ts, waits[j].stream, waits[j].gpu,
			r->pid, r->tid, (long)i, (long)n, 1 };
		n++;
	}
	ta_qsort(l, n, sizeof(*l), cmp_launch);
	for (i = 0; i < n; i++) {
		long *last = last_launch(&seen, l[i].stream, l[i].gpu, 0);

		if (l[i].kind == 0) {
			*last = l[i].row;
			continue;
		}
		rec[nr].corr = g->rows[l[i].row].corr;
		rec[nr++].launch = *last;
	}
	free(seen.key);
	free(seen.row);
	ta_qsort(rec, nr, sizeof(*rec), cmp_record);
	free(waits);
	free(l);
	*out = rec;
	return nr;
}

static long record_launch(const struct record *rec, size_t n, int64_t corr)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (rec[m].corr < corr)
			a = m + 1;
		else
			b = m;
	}
	return a < n && rec[a].corr == corr ? rec[a].launch : -1;
}

/* _get_cuda_stream_wait_event_df: for each cudaStreamWaitEvent, the next
 * launch from its thread onto its stream. next[row]: that launch's row,
 * -1 if none, -2 for rows that are no such call. */
static void stream_waits(const struct cp_graph *g, const struct by_idx *ix,
			 long *next)
{
	struct launch *l = ta_xcalloc(2 * g->nrows + 1, sizeof(*l));
	struct streams seen = { NULL, NULL, 0, 0 };
	size_t n = launches(g, ix, l), i;

	for (i = 0; i < g->nrows; i++)
		next[i] = -2;
	for (i = 0; i < g->nrows; i++) {
		const struct cp_row *r = &g->rows[i];
		long k;

		if (!(r->fl & F_WAIT_CALL) || r->ic <= 0 ||
		    (k = find_row(ix, g->nrows, r->ic)) < 0 ||
		    g->rows[k].stream == -1 || g->rows[k].ic <= 0)
			continue;
		l[n] = (struct launch){ r->ts, g->rows[k].stream, 0, r->pid,
			r->tid, (long)i, (long)n, 1 };
		n++;
	}
	ta_qsort(l, n, sizeof(*l), cmp_launch);
	for (i = n; i-- > 0;) {
		long *first = last_launch(&seen, l[i].stream, l[i].pid, l[i].tid);

		if (l[i].kind == 0)
			*first = l[i].row;
		else
			next[l[i].row] = *first;
	}
	free(seen.key);
	free(seen.row);
	free(l);
}

struct kernel_order {
	int64_t key;
	long row;
};

static int cmp_kernel_order(const void *a, const void *b)
{
	const struct kernel_order *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

struct gpu_state {
	int64_t *stream;            /* last_node, in first-seen stream order */
	long *node;
	size_t n;
	long *sync_src;             /* kernel_sync: row -> row it waits for */
};

static long *last_on(struct gpu_state *s, int64_t stream, int add)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->stream[i] == stream)
			return &s->node[i];
	if (!add)
		return NULL;
	s->stream[s->n] = stream;
	s->node[s->n] = -1;
	return &s->node[s->n++];
}

static void sync_edge(struct cp_graph *g, long gpu_node, const struct by_idx *ix,
		      int64_t call)
{
	long k = find_row(ix, g->nrows, call);

	if (gpu_node >= 0 && k >= 0 && g->rows[k].end >= 0)
		add_edge(g, gpu_node, g->rows[k].end, CP_SYNC, 0);
}

/* handle_cuda_sync: a stream wait makes the next kernel of its stream wait
 * for the recorded one; host syncs end after what they waited for. */
static void cuda_sync(struct cp_graph *g, struct gpu_state *s,
		      const struct cp_row *r, const struct by_idx *ix,
		      const struct record *rec, size_t nrec, int have_rec,
		      const long *next)
{
	size_t i;

	if (r->fl & (F_STREAM_WAIT | F_EVENT_SYNC)) {
		long launch = have_rec ? record_launch(rec, nrec, r->wait_corr) : -1;
		long src, dest, k;

		if (launch < 0)
			return;
		src = find_row(ix, g->nrows, g->rows[launch].ic);
		if (r->fl & F_STREAM_WAIT) {
			k = find_row(ix, g->nrows, r->ic);
			if (k < 0 || next[k] < 0)
				return;
			dest = find_row(ix, g->nrows, g->rows[next[k]].ic);
			if (dest >= 0)
				s->sync_src[dest] = src;
		} else if (src >= 0) {
			sync_edge(g, g->rows[src].end, ix, r->ic);
		}
		return;
	}
	if (r->fl & F_CONTEXT_SYNC) {
		for (i = 0; i < s->n; i++)
			sync_edge(g, s->node[i], ix, r->ic);
	} else if (r->fl & F_STREAM_SYNC) {
		long *last = last_on(s, r->stream, 0);

		sync_edge(g, last ? *last : -1, ix, r->ic);
	}
}

static void kernel(struct cp_graph *g, struct gpu_state *s, long ri,
		   const struct by_idx *ix, const int64_t *queue)
{
	const struct cp_row *r = &g->rows[ri];
	long *last = last_on(s, r->stream, 1);
	long launch = find_row(ix, g->nrows, r->ic);
	long sync_end = -1, e;
	int64_t launch_ts;

	if (r->start < 0 || r->end < 0)
		return;
	attribute(g, add_edge(g, r->start, r->end, CP_OPERATOR, 0), -1);
	if (s->sync_src[ri] >= 0) {
		sync_end = g->rows[s->sync_src[ri]].end;
		if (sync_end >= 0)
			add_edge(g, sync_end, r->start, CP_SYNC, 0);
		s->sync_src[ri] = -1;
	}
	launch_ts = launch >= 0 ? g->rows[launch].ts : INT64_MIN;
	if (launch >= 0 && queue[launch] == 1 && queue[ri] == 0 &&
	    (*last < 0 || g->nodes[*last].ts < launch_ts) &&
	    (sync_end < 0 || g->nodes[sync_end].ts < launch_ts)) {
		if (g->rows[launch].start >= 0)
			add_edge(g, g->rows[launch].start, r->start,
				 CP_LAUNCH_DELAY, 0);
	} else if (*last >= 0 &&
		   g->nodes[r->start].ts - g->nodes[*last].ts < KERNEL_DELAY_NS &&
		   (sync_end < 0 || g->nodes[sync_end].ts < g->nodes[*last].ts)) {
		e = add_edge(g, *last, r->start, CP_KERNEL_DELAY, 0);
		attribute(g, e, -1);
	}
	*last = r->end;
}

/* _construct_graph_from_kernels: GPU rows by start (syncs by end), each
 * kernel's time, then what it waited for: its launch when the stream was
 * empty, else the kernel before it; syncs as they come. */
static void kernel_edges(struct cp_graph *g, const struct by_idx *ix,
			 const struct flags *f)
{
	struct kernel_order *o = ta_xcalloc(g->nrows + 1, sizeof(*o));
	struct by_idx *corr = ta_xcalloc(g->nrows + 1, sizeof(*corr));
	int64_t *queue = ta_xcalloc(g->nrows + 1, sizeof(*queue));
	long *next = ta_xcalloc(g->nrows + 1, sizeof(*next));
	struct gpu_state s = { ta_xcalloc(g->nrows + 1, sizeof(int64_t)),
			       ta_xcalloc(g->nrows + 1, sizeof(long)), 0,
			       ta_xcalloc(g->nrows + 1, sizeof(long)) };
	struct record *rec = NULL;
	size_t n = 0, nc = 0, nrec = 0, i;
	int have_rec = 0;

	for (i = 0; i < g->nrows; i++) {
		s.sync_src[i] = -1;
		if (g->rows[i].stream != -1) {
			corr[nc].idx = g->rows[i].corr;
			corr[nc++].row = (long)i;
		}
	}
	ta_qsort(corr, nc, sizeof(*corr), cmp_by_idx);
	queue_lengths(g, corr, nc, queue);
	if (f->has_record) {
		nrec = event_records(g, ix, &rec);
		have_rec = nrec > 0;
	}
	if (f->has_wait)
		stream_waits(g, ix, next);
	else
		for (i = 0; i < g->nrows; i++)
			next[i] = -2;
	for (i = 0; i < g->nrows; i++) {
		const struct cp_row *r = &g->rows[i];

		if (!r->clip || r->ic < 0 || (r->stream == -1 &&
		    !(r->fl & (F_EVENT_SYNC | F_CONTEXT_SYNC))))
			continue;
		o[n].key = r->fl & F_SYNC_CAT ? r->ts + r->dur : r->ts;
		o[n++].row = (long)i;
	}
	/* these are all GPU rows: HTA's order is idx order for them */
	ta_qsort(o, n, sizeof(*o), cmp_kernel_order);
	for (i = 0; i < n; i++) {
		const struct cp_row *r = &g->rows[o[i].row];

		if (r->fl & F_SYNC_CAT)
			cuda_sync(g, &s, r, ix, rec, nrec, have_rec, next);
		else
			kernel(g, &s, o[i].row, ix, queue);
	}
	free(rec);
	free(s.stream);
	free(s.node);
	free(s.sync_src);
	free(next);
	free(queue);
	free(corr);
	free(o);
}

/* _validate_graph: HTA sets weights of -1 µs or less to 0 for the path
 * (the edge keeps its own), and refuses a sync between two kernels of
 * one stream. */
static int64_t path_weight(const struct cp_edge *e)
{
	return e->w <= -1000 ? 0 : e->w;
}

static int validate(const struct cp_graph *g, struct ta_error *err)
{
	size_t i;

	for (i = 0; i < g->nedges; i++) {
		const struct cp_edge *e = &g->edges[i];
		int64_t a = g->rows[g->nodes[e->u].row].stream;
		int64_t b = g->rows[g->nodes[e->v].row].stream;

		if (e->type == CP_SYNC && a != -1 && a == b) {
			ta_error_set(err, TA_EXIT_INPUT, "rank %lld: HTA's graph is "
				     "not valid: a sync between two kernels of "
				     "stream %lld (events %lld and %lld)",
				     (long long)g->rank, (long long)a,
				     (long long)g->rows[g->nodes[e->u].row].idx,
				     (long long)g->rows[g->nodes[e->v].row].idx);
			return -1;
		}
	}
	return 0;
}

/* networkx 2.8's dag_longest_path: topological order by generations
 * (nodes, then successors, in the order they were added), each node's
 * first best predecessor, the first node of the greatest distance. */
static int longest_path(struct cp_graph *g, struct ta_error *err)
{
	size_t n = g->nnodes, i, head, tail = 0, at;
	long *indeg = ta_xcalloc(n + 1, sizeof(*indeg));
	long *order = ta_xcalloc(n + 1, sizeof(*order));
	long *pred = ta_xcalloc(n + 1, sizeof(*pred));
	int64_t *dist = ta_xcalloc(n + 1, sizeof(*dist));
	long best = -1, v;

	for (i = 0; i < g->nedges; i++)
		indeg[g->edges[i].v]++;
	for (i = 0; i < g->ngraph; i++)
		if (indeg[g->graph_nodes[i]] == 0)
			order[tail++] = g->graph_nodes[i];
	/* a FIFO over generations visits nodes in the same order */
	for (head = 0; head < tail; head++) {
		long e;

		for (e = g->nodes[order[head]].out; e >= 0; e = g->edges[e].next_out)
			if (--indeg[g->edges[e].v] == 0)
				order[tail++] = g->edges[e].v;
	}
	if (tail != g->ngraph) {
		ta_error_set(err, TA_EXIT_INPUT, "rank %lld: HTA's graph has a "
			     "cycle", (long long)g->rank);
		free(indeg), free(order), free(pred), free(dist);
		return -1;
	}
	for (at = 0; at < tail; at++) {
		long e, u = -1;
		int64_t d = 0;

		v = order[at];
		for (e = g->nodes[v].in; e >= 0; e = g->edges[e].next_in) {
			int64_t c = ta_add_sat(dist[g->edges[e].u], path_weight(&g->edges[e]));

			if (u < 0 || c > d)
				d = c, u = g->edges[e].u;
		}
		if (u < 0 || d < 0)
			d = 0, u = v;
		dist[v] = d;
		pred[v] = u;
		if (best < 0 || d > dist[best])
			best = v;
	}
	g->path = ta_xcalloc(n + 1, sizeof(*g->path));
	for (v = best; v >= 0; v = pred[v]) {
		g->path[g->npath++] = v;
		if (pred[v] == v)
			break;
	}
	for (i = 0; i < g->npath / 2; i++) {
		long t = g->path[i];

		g->path[i] = g->path[g->npath - 1 - i];
		g->path[g->npath - 1 - i] = t;
	}
	free(indeg), free(order), free(pred), free(dist);
	return 0;
}

long cp_graph_row(const struct cp_graph *g, int64_t idx)
{
	return find_row(g->ix, g->nrows, idx);
}

int cp_is_comm(const char *name)
{
	return strncmp(name, "nccl", 4) == 0 || strncmp(name, "hip", 3) == 0 ||
	       strncmp(name, "hccl", 4) == 0 || strstr(name, "ncclKernel") != NULL;
}

void cp_graph_free(struct cp_graph *g)
{
	free(g->rows);
	free(g->ix);
	free(g->nodes);
	free(g->graph_nodes);
	free(g->edges);
	free(g->hash);
	free(g->path);
	memset(g, 0, sizeof(*g));
}

int cp_graph_build(sqlite3 *db, int64_t rank, const char *annotation,
		   long first, long last, struct cp_graph *g,
		   struct ta_error *err)
{
	struct flags f = { NULL, 0, 0, 0 };
	struct by_idx *ix;
	long *order = NULL;
	size_t i;
	int have_ann, rc = -1;

	memset(g, 0, sizeof(*g));
	g->rank = rank;
	if (load_flags(db, annotation, &f, &have_ann, err) < 0 ||
	    load_rows(db, rank, &f, g, err) < 0)
		goto out;
	if (*annotation && !have_ann) {
		ta_error_set(err, TA_EXIT_USAGE, "no annotation '%s' in the trace",
			     annotation);
		goto out;
	}
	ix = g->ix = ta_xcalloc(g->nrows + 1, sizeof(*ix));
	order = ta_xcalloc(g->nrows + 1, sizeof(*order));
	for (i = 0; i < g->nrows; i++) {
		ix[i].idx = g->rows[i].idx;
		ix[i].row = (long)i;
	}
	ta_qsort(ix, g->nrows, sizeof(*ix), cmp_by_idx);
	for (i = 0; i < g->nrows; i++)
		order[i] = ix[i].row;
	link_cpu_rows(g);
	if (window(g, annotation, first, last, err) < 0)
		goto out;
	clip(g, ix);
	make_nodes(g, order);
	runtime_lock_edges(g);
	call_stack_edges(g);
	kernel_edges(g, ix, &f);
	if (validate(g, err) < 0 || longest_path(g, err) < 0)
		goto out;
	rc = 0;
out:
	free(order);
	free(f.by_id);
	return rc;
}
