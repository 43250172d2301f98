/* The TensorBoard plugin's backward regrouping (op_tree.py's build_tree
 * from _set_main_tid on; kineto 790be856), run on the trees that
 * optree_tb.c built and filled. Where a rank has fwdbwd flows and
 * nn.Module nodes under its roots (or their ProfilerSteps):
 * - every "autograd::engine::evaluate_function: ..." node there leaves its
 *   parent; AccumulateGrad ones join the group of the one before;
 * - each flow's backward op climbs to its group's head, and the group is
 *   filed under the flow's forward op start;
 * - each module gets a "NAME.backward" node holding, for each operator
 *   under the module, the group filed under its start, and its
 *   submodules' backward nodes, timed from its first child to its last;
 * - those nodes go into the main thread's tree where their times fall;
 *   groups no module took are gone, and so are roots left childless.
 * Operators' own numbers do not change: only which are walked, in which
 * order. Where the plugin would raise (a flow into a group already taken,
 * no head above an AccumulateGrad) or loop for ever (a parent that
 * starts with its child), that flow or node is passed over instead. */
#include "optree_int.h"

#include "ta.h"
#include "ta_intern.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BACKWARD_PREFIX "autograd::engine::evaluate_function:"
#define ACCUMULATE_GRAD "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"

static int is_backward_root(const struct node *n)
{
	return strncmp(n->name, BACKWARD_PREFIX, strlen(BACKWARD_PREFIX)) == 0;
}

/* _set_main_tid, where no thread has a ProfilerStep: one root, else the
 * longest (a root's times: its first child's start to its last child's
 * end, NaN without children) but the backward thread's; -1 when the
 * plugin would fail */
static long main_of(const struct state *s, const struct idx *roots)
{
	long back = -1, best = -1;
	double longest = 0;

	if (roots->n == 1)
		return (long)roots->v[0];
	for (size_t i = 0; i < roots->n && back < 0; i++) {
		const struct node *r = &s->o[roots->v[i]];

		for (size_t k = 0; k < r->kids.n; k++)
			if (is_backward_root(&s->o[r->kids.v[k]])) {
				back = (long)i;
				break;
			}
	}
	for (size_t i = 0; i < roots->n; i++) {
		const struct node *r = &s->o[roots->v[i]];
		double len;

		if ((long)i == back || isnan(r->ts))
			continue;   /* no child: None - None, which the plugin raises on */
		len = r->end - r->ts;
		if (best < 0 || len > longest)
			best = (long)roots->v[i], longest = len;
	}
	return best;
}

struct found {
	struct idx modules;        /* top-level nn.Module nodes, in order */
	struct idx backward;       /* evaluate_function nodes, by parent */
};

/* _get_modules: modules and backward roots under each root, through
 * ProfilerSteps; the backward roots leave their parents when there are
 * modules. */
static void find(struct state *s, const struct idx *roots, struct found *f)
{
	struct idx parents = { NULL, 0, 0 }, work = { NULL, 0, 0 };

	for (size_t i = 0; i < roots->n; i++) {
		/* (parent, child) pairs in pre-order */
		size_t root = roots->v[i];

		for (size_t k = s->o[root].kids.n; k-- > 0;) {
			tb_push(&work, root);
			tb_push(&work, s->o[root].kids.v[k]);
		}
		while (work.n) {
			size_t node = work.v[--work.n], parent = work.v[--work.n];
			const struct node *n = &s->o[node];

			if (n->kind == K_MODULE) {
				tb_push(&f->modules, node);
			} else if (n->kind == K_STEP) {
				for (size_t k = n->kids.n; k-- > 0;) {
					tb_push(&work, node);
					tb_push(&work, n->kids.v[k]);
				}
			} else if (is_backward_root(n)) {
				tb_push(&parents, parent);
				tb_push(&f->backward, node);
			}
		}
	}
	/* the dict of lists by parent: flattened parent by parent, in the
	 * order each parent was first met */
	if (f->modules.n && f->backward.n) {
		struct idx flat = { NULL, 0, 0 };
		char *done = ta_xcalloc(f->backward.n + 1, 1);

		for (size_t i = 0; i < f->backward.n; i++) {
			if (done[i])
				continue;   /* its parent's list is out already */
			for (size_t j = i; j < f->backward.n; j++)
				if (!done[j] && parents.v[j] == parents.v[i]) {
					tb_push(&flat, f->backward.v[j]);
					done[j] = 1;
				}
		}
		free(done);
		for (size_t i = 0; i < f->backward.n; i++) {
			struct idx *kids = &s->o[parents.v[i]].kids;
			size_t w = 0;

			for (size_t k = 0; k < kids->n; k++)
				if (kids->v[k] != f->backward.v[i])
					kids->v[w++] = kids->v[k];
			kids->n = w;
		}
		free(f->backward.v);
		f->backward = flat;
	}
	free(parents.v);
	free(work.v);
}

/* BackwardNode.fill_stats, for its times and tensor-core eligibility:
 * its children sorted (stably, by their list order among equals), from
 * the first's start to the last's end */
struct keyed { size_t node, at; const struct state *s; };

static int keyed_order(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;
	const struct node *p = &a->s->o[a->node], *q = &a->s->o[b->node];

	if (p->ts != q->ts)
		return p->ts < q->ts ? -1 : 1;
	if (p->end != q->end)
		return p->end > q->end ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

static void stable_sort_kids(struct state *s, struct idx *kids)
{
	struct keyed *k = ta_xmalloc((kids->n + 1) * sizeof(*k));

	for (size_t i = 0; i < kids->n; i++)
		k[i] = (struct keyed){ kids->v[i], i, s };
	ta_qsort(k, kids->n, sizeof(*k), keyed_order);
	for (size_t i = 0; i < kids->n; i++)
		kids->v[i] = k[i].node;
	free(k);
}

static void backward_times(struct state *s, size_t b)
{
	struct node *n = &s->o[b];

	stable_sort_kids(s, &n->kids);
	n->ts = s->o[n->kids.v[0]].ts;
	n->end = s->o[n->kids.v[n->kids.n - 1]].end;
	for (size_t k = 0; k < n->kids.n; k++)   /* eligible if a child is */
		n->tc_eligible |= s->o[n->kids.v[k]].tc_eligible;
}

/* The groups, filed by forward start: group g is heads[g]'s list. */
struct groups {
	struct idx *lists;
	size_t n;
	struct tb_map head;    /* head node -> group, -1 once taken */
	struct tb_map by_fwd;  /* forward start (ns) -> group */
};

static void group(struct state *s, const struct idx *backward, struct groups *g)
{
	g->lists = ta_xcalloc(backward->n + 1, sizeof(*g->lists));
	tb_map_init(&g->head, backward->n);
	for (size_t i = 0; i < backward->n; i++) {
		size_t node = backward->v[i];

		if (g->n && strcmp(s->o[node].name, ACCUMULATE_GRAD) == 0) {
			tb_push(&g->lists[g->n - 1], node);
			continue;
		}
		tb_push(&g->lists[g->n], node);
		*tb_map_at(&g->head, (int64_t)node) = (long)g->n++;
	}
}

/* _get_node_parents (start -> the first parent seen of a node starting
 * then) and _get_backward_roots */
static void file_groups(struct state *s, const struct idx *backward, struct groups *g,
			const struct tb_flow *flows, size_t nflows)
{
	struct tb_map parent;
	struct idx work = { NULL, 0, 0 };
	size_t total = 0;

	for (size_t i = 0; i < s->no; i++)
		total += s->o[i].kids.n;
	tb_map_init(&parent, total + 1);
	/* (parent, node) pairs in pre-order: a child's parent is set as the
	 * recursion reaches it, the first one for its start kept */
	for (size_t i = backward->n; i-- > 0;) {
		tb_push(&work, (size_t)-1);
		tb_push(&work, backward->v[i]);
	}
	while (work.n) {
		size_t node = work.v[--work.n], up = work.v[--work.n];
		const struct node *n = &s->o[node];

		if (up != (size_t)-1) {
			long *p = tb_map_at(&parent, n->ts_ns);

			if (*p < 0)
				*p = (long)up;
		}
		for (size_t k = n->kids.n; k-- > 0;) {
			tb_push(&work, node);
			tb_push(&work, n->kids.v[k]);
		}
	}
	tb_map_init(&g->by_fwd, nflows);
	for (size_t i = 0; i < nflows; i++) {
		long p = *tb_map_at(&parent, flows[i].bwd), *gi;
		size_t steps = 0;

		while (p >= 0 && !is_backward_root(&s->o[p]) && steps++ <= s->no) {
			long up = *tb_map_at(&parent, s->o[p].ts_ns);

			p = up == p ? -1 : up;   /* the plugin loops for ever */
		}
		if (p < 0 || !is_backward_root(&s->o[p]))
			continue;
		gi = tb_map_at(&g->head, (int64_t)p);
		if (*gi < 0)
			continue;   /* the plugin's pop raises */
		*tb_map_at(&g->by_fwd, flows[i].fwd) = *gi;
		*gi = TB_TAKEN;
	}
	tb_map_free(&parent);
	free(work.v);
}

static const char *backward_name(struct state *s, const char *module)
{
	struct ta_buf b = { 0 };
	int is_new;
	int64_t id;

	ta_buf_addf(&b, "%s.backward", module);
	id = ta_intern(s->strings, b.s, b.len, &is_new);
	ta_buf_free(&b);
	return ta_intern_str(s->strings, id);
}

/* _build_backward_module for one top-level module, without recursion:
 * frames of (node, the backward node its children go to, next child) */
static void build_module(struct state *s, size_t module, struct groups *g, struct idx *result)
{
	struct idx node = { NULL, 0, 0 }, into = { NULL, 0, 0 }, next = { NULL, 0, 0 };

	tb_push(&node, module);
	tb_push(&into, (size_t)-1);
	tb_push(&next, 0);
	for (int entering = 1; node.n;) {
		size_t at = node.n - 1, n = node.v[at];

		if (entering) {
			entering = 0;
			if (s->o[n].kind == K_MODULE) {
				size_t b = tb_new_node(s);
				struct node *bn = &s->o[b];
				size_t parent = into.v[at];

				bn->kind = K_BACKWARD;
				bn->type = T_NONE;
				bn->name = backward_name(s, s->o[n].name);
				bn->ts = s->o[n].ts, bn->end = s->o[n].end;
				bn->ts_ns = s->o[n].ts_ns;
				bn->ext = TB_KEY_NONE;
				bn->pos = s->o[n].pos;
				if (parent == (size_t)-1)
					tb_push(result, b);
				else
					tb_push(&s->o[parent].kids, b);
				into.v[at] = b;
			}
		}
		if (next.v[at] < s->o[n].kids.n) {
			size_t c = s->o[n].kids.v[next.v[at]++], b = into.v[at];

			if (b != (size_t)-1 && tb_is_operator(&s->o[c])) {
				long gi = *tb_map_at(&g->by_fwd, s->o[c].ts_ns);

				for (size_t k = 0; gi >= 0 && k < g->lists[gi].n; k++)
					tb_push(&s->o[b].kids, g->lists[gi].v[k]);
			}
			tb_push(&node, c);
			tb_push(&into, b);
			tb_push(&next, 0);
			entering = 1;
			continue;
		}
		if (s->o[n].kind == K_MODULE && into.v[at] != (size_t)-1 &&
		    s->o[into.v[at]].kids.n)
			backward_times(s, into.v[at]);
		node.n--, into.n--, next.n--;
	}
	free(node.v);
	free(into.v);
	free(next.v);
}

static void insert_at(struct idx *l, size_t at, size_t v)
{
	tb_push(l, v);
	memmove(&l->v[at + 1], &l->v[at], (l->n - 1 - at) * sizeof(*l->v));
	l->v[at] = v;
}

/* _insert_backward_modules: each backward node into the innermost node
 * of the main tree that holds it, in order; ones outside it are dropped */
static void insert_modules(struct state *s, size_t root, struct idx *mods)
{
	struct idx up = { NULL, 0, 0 }, upi = { NULL, 0, 0 };
	size_t mi = 0, ci = 0, cur = root, depth = 0;

	stable_sort_kids(s, mods);
	/* a root without children has None for times: the plugin raises */
	while (mi < mods->n && !isnan(s->o[root].ts)) {
		const struct node *m = &s->o[mods->v[mi]];

		if (cur == (size_t)-1 || m->end < s->o[cur].ts) {
			mi++;
			continue;
		}
		if (m->ts > s->o[cur].end) {
			if (up.n) {
				cur = up.v[--up.n];
				ci = upi.v[--upi.n] + 1;
				depth--;
			} else {
				cur = (size_t)-1;
			}
			continue;
		}
		while (ci < s->o[cur].kids.n && depth <= s->no) {
			const struct node *c = &s->o[s->o[cur].kids.v[ci]];

			if (m->end < c->ts)
				break;
			if (m->ts >= c->end) {
				ci++;
			} else {
				tb_push(&up, cur);
				tb_push(&upi, ci);
				cur = s->o[cur].kids.v[ci];
				ci = 0;
				depth++;
			}
		}
		insert_at(&s->o[cur].kids, ci, mods->v[mi]);
		ci++;
		mi++;
	}
	free(up.v);
	free(upi.v);
}

int tb_regroup_backward(struct state *s, const struct idx *roots, long main_root,
			const struct tb_flow *flows, size_t nflows)
{
	struct found f = { { NULL, 0, 0 }, { NULL, 0, 0 } };
	struct groups g;
	struct idx result = { NULL, 0, 0 };
	int changed = 0;

	if (!nflows)
		return 0;
	if (main_root < 0)
		main_root = main_of(s, roots);
	if (main_root < 0)
		return 0;
	find(s, roots, &f);
	if (f.modules.n && f.backward.n) {
		memset(&g, 0, sizeof(g));
		group(s, &f.backward, &g);
		file_groups(s, &f.backward, &g, flows, nflows);
		for (size_t i = 0; i < f.modules.n; i++)
			build_module(s, f.modules.v[i], &g, &result);
		insert_modules(s, (size_t)main_root, &result);
		for (size_t i = 0; i < g.n; i++)
			free(g.lists[i].v);
		free(g.lists);
		tb_map_free(&g.head);
		tb_map_free(&g.by_fwd);
		changed = 1;
	}
	free(f.modules.v);
	free(f.backward.v);
	free(result.v);
	return changed;
}
