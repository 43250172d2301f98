/* The TensorBoard plugin's operator tree, as event_parser.py's
 * NodeParserMixin.parse_nodes, op_tree.py's _build_tree and node.py's
 * fill_stats build it (kineto 790be856), quirks included:
 * - events in time order (a stable sort); a device event joins the
 *   runtime call of its correlation, whichever comes first (the last
 *   such runtime wins); runtime calls join the first operator (threads
 *   in order of their first operator, operators in time order) of their
 *   External id, an absent one being a key too (Python's None), which
 *   nn.Module nodes always have;
 * - nodes: CPU ops, "python" events, ProfilerStep#, nn.Module frames,
 *   DataLoader and Optimizer.step ranges, and nccl:/gloo: annotations;
 *   other annotations and Python frames are not nodes; a node is the
 *   child of the innermost one holding it on its thread, and one that
 *   crosses its parent's end is dropped;
 * - kernels no runtime call claimed hang from a "dummy" call under the
 *   root of every thread with a ProfilerStep (counted twice there:
 *   fill_stats runs on it twice);
 * - a node whose only child is an operator of its name takes that
 *   child's children and calls, losing its own (_remove_dup_nodes);
 * - self host time: the node's, less its children's and calls'; device
 *   time: its calls' GPU work and its children's; tensor-core
 *   eligibility by name, or inherited from a child, or from a call that
 *   ran a tensor-core kernel.
 * The walk (ModuleAggregator) lists operators after their children and
 * kernels by call, children first. Iterative throughout: a trace nested
 * a million deep is a long list, not a stack overflow. With nn.Module
 * nodes and fwdbwd flows, the backward ops are regrouped under their
 * modules first (backward_tb.c). */
#include "optree_tb.h"

#include "ta_db.h"
#include "ta_intern.h"
#include "tb_map.h"
#include "optree_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct { const char *cat; enum type t; } type_map[] = {
	{ "cpu_op", T_OPERATOR }, { "operator", T_OPERATOR },
	{ "runtime", T_RUNTIME }, { "cuda_runtime", T_RUNTIME }, { "mtia_runtime", T_RUNTIME },
	{ "glow_runtime", T_RUNTIME }, { "xpu_runtime", T_RUNTIME },
	{ "privateuse1_runtime", T_RUNTIME }, { "kernel", T_KERNEL }, { "memcpy", T_MEMCPY },
	{ "gpu_memcpy", T_MEMCPY }, { "memset", T_MEMSET }, { "gpu_memset", T_MEMSET },
	{ "python", T_PYTHON }, { "python_function", T_PYFUNC },
	{ "user_annotation", T_UA }, { "gpu_user_annotation", T_UA },
};

static const char *const comm_ops[] = { "nccl:broadcast", "nccl:reduce", "nccl:all_reduce",
	"nccl:all_gather", "nccl:reduce_scatter", "gloo:broadcast", "gloo:reduce",
	"gloo:all_reduce", "gloo:all_gather", "gloo:reduce_scatter" };

static const char *const tc_fragments[] = { "h884", "s884", "h1688", "s1688", "hmma",
	"i8816", "16816", "dgrad_1x1_stride_2x2", "first_layer_wgrad_kernel", "conv1x1",
	"conv2d_c1_k1", "direct_group", "xmma_implicit_gemm", "xmma_sparse_conv",
	"xmma_warp_specialized_implicit_gemm", "xmma_gemm", "xmma_sparse_gemm", "c1688" };

static const char *const tc_ops[] = { "aten::_convolution", "aten::conv1d", "aten::conv2d",
	"aten::conv3d", "aten::conv_tbc", "aten::conv_transpose1d", "aten::conv_transpose2d",
	"aten::conv_transpose3d", "aten::convolution", "aten::cudnn_convolution",
	"aten::cudnn_convolution_transpose", "aten::prelu", "aten::addmm", "aten::addmv",
	"aten::addr", "aten::matmul", "aten::mm", "aten::mv", "aten::linear", "aten::addbmm",
	"aten::baddbmm", "aten::bmm", "aten::chain_matmul", "aten::linalg_multi_dot",
	"aten::_thnn_fused_lstm_cell", "aten::_thnn_fused_gru_cell", "aten::lstm_cell",
	"aten::gru_cell", "aten::rnn_tanh_cell", "aten::rnn_relu_cell",
	"CudnnConvolutionBackward", "BmmBackward0", "aten::cudnn_convolution_transpose_backward",
	"CudnnConvolutionTransposeBackward", "MmBackward", "aten::cudnn_convolution_backward_weight",
	"aten::addmm_", "AddmvBackward", "MvBackward",
	"aten::cudnn_convolution_transpose_backward_weight",
	"aten::cudnn_convolution_transpose_backward_input", "AddmmBackward",
	"aten::cudnn_convolution_backward_input", "AddbmmBackward",
	"aten::cudnn_convolution_backward" };

int tb_tc_kernel(const char *name)
{
	for (size_t i = 0; i < sizeof(tc_fragments) / sizeof(*tc_fragments); i++)
		if (strstr(name, tc_fragments[i]))
			return 1;
	return 0;
}

int tb_tc_op(const char *name)
{
	for (size_t i = 0; i < sizeof(tc_ops) / sizeof(*tc_ops); i++)
		if (strcmp(name, tc_ops[i]) == 0)
			return 1;
	return 0;
}

double tb_round2(double x)
{
	char b[64];

	/* past 2^53 a double has no fraction to round (and "%.2f" of 1e308
	 * would not fit) */
	if (!isfinite(x) || fabs(x) >= 9007199254740992.0)
		return x;
	snprintf(b, sizeof(b), "%.2f", x);
	return strtod(b, NULL);
}

static const char *keep(struct state *s, const unsigned char *t)
{
	int is_new;

	if (!t)
		return NULL;
	return ta_intern_str(s->strings, ta_intern(s->strings, (const char *)t,
						   strlen((const char *)t), &is_new));
}

static size_t thread_of(struct state *s, int64_t tid)
{
	long *at = tb_map_at(&s->tid_at, tid);

	if (*at < 0) {
		if (s->ntid == s->tcap) {
			s->tcap = s->tcap ? 2 * s->tcap : 8;
			s->tids = ta_xrealloc(s->tids, s->tcap * sizeof(*s->tids));
			s->tid_nodes = ta_xrealloc(s->tid_nodes, s->tcap * sizeof(*s->tid_nodes));
			s->tid_zero = ta_xrealloc(s->tid_zero, s->tcap * sizeof(*s->tid_zero));
		}
		s->tids[s->ntid] = tid;
		memset(&s->tid_nodes[s->ntid], 0, sizeof(struct idx));
		memset(&s->tid_zero[s->ntid], 0, sizeof(struct idx));
		*at = (long)s->ntid++;
	}
	return (size_t)*at;
}

static enum type type_of(const char *cat, const char *name, int module_id)
{
	enum type t = T_NONE;

	for (size_t i = 0; cat && i < sizeof(type_map) / sizeof(*type_map); i++)
		if (strcasecmp(cat, type_map[i].cat) == 0) {
			t = type_map[i].t;
			break;
		}
	if ((t == T_UA || t == T_OPERATOR) && name && strncmp(name, "ProfilerStep#", 13) == 0)
		return T_STEP;
	/* trace.py: a python_function with "Python module id" is a Module */
	if (t == T_PYFUNC && module_id)
		return T_MODULE;
	return t;
}

static int is_comm(const char *name)
{
	for (size_t i = 0; name && i < sizeof(comm_ops) / sizeof(*comm_ops); i++)
		if (strcmp(name, comm_ops[i]) == 0)
			return 1;
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* node.py's create_operator_node and the classes parse_nodes makes;
 * -1: not a node (an annotation, a Python frame) */
static int kind_of(enum type t, const char *name)
{
	if (t == T_STEP)
		return K_STEP;
	if (t == T_MODULE)
		return K_MODULE;
	if (t != T_OPERATOR && t != T_PYTHON && t != T_UA)
		return -1;
	if ((strncmp(name, "enumerate(DataLoader)#", 22) == 0 && ends_with(name, ".__next__")) ||
	    strncmp(name, "enumerate(DataPipe)#", 20) == 0)
		return K_DATALOADER;
	if (strncmp(name, "Optimizer.step", 14) == 0)
		return K_OPTIMIZER;
	if (t == T_UA && !is_comm(name))
		return -1;
	return K_OPERATOR;
}

/* An External id as a dict key, as Python compares them: an integer, or
 * a float equal to one, is that integer; another float, or a string, a
 * key of its own (placed just above TB_KEY_NONE, where no real id is);
 * absent is None. */
static int64_t key_of(struct state *s, sqlite3_stmt *st, int col)
{
	return tb_key(s->keys, st, col);
}

void tb_push(struct idx *l, size_t i)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4;
		l->v = ta_xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = i;
}

/* ---- parse_nodes ---- */

/* (start, -end), then event order: Python's stable sort */
int tb_dev_order(const void *x, const void *y, void *ctx)
{
	const struct state *st = ctx;

	const struct dev *a = &st->d[*(const size_t *)x];
	const struct dev *b = &st->d[*(const size_t *)y];

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

int tb_node_order(const void *x, const void *y, void *ctx)
{
	const struct state *st = ctx;

	const struct node *a = &st->o[*(const size_t *)x];
	const struct node *b = &st->o[*(const size_t *)y];

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* runtimes: (start, -end), the dummy (no times) last */
int tb_rt_order(const void *x, const void *y, void *ctx)
{
	const struct state *st = ctx;

	const struct rt *a = &st->r[*(const size_t *)x];
	const struct rt *b = &st->r[*(const size_t *)y];

	if (a->timed != b->timed)
		return a->timed ? -1 : 1;
	if (a->timed && a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->timed && a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

void tb_sort_idx(struct state *s, struct idx *l, tb_cmp cmp)
{
	if (l->n > 1)
		qsort_r(l->v, l->n, sizeof(*l->v), cmp, s);
}


/* The device events waiting for their runtime call, by correlation, in
 * the order the plugin's dict holds them. */
struct pending {
	struct idx *lists;
	int64_t *keys;
	char *gone;
	size_t n, cap;
	struct tb_map at;
};

static struct idx *pending_list(struct pending *p, int64_t key, int add)
{
	long *at = tb_map_at(&p->at, key);

	if (*at < 0) {
		if (!add)
			return NULL;
		if (p->n == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 64;
			p->lists = ta_xrealloc(p->lists, p->cap * sizeof(*p->lists));
			p->keys = ta_xrealloc(p->keys, p->cap * sizeof(*p->keys));
			p->gone = ta_xrealloc(p->gone, p->cap);
		}
		memset(&p->lists[p->n], 0, sizeof(struct idx));
		p->keys[p->n] = key;
		p->gone[p->n] = 0;
		*at = (long)p->n++;
	}
	return &p->lists[*at];
}

/* dict.pop: the list leaves (its key may come back, at the end) */
static void pending_pop(struct pending *p, int64_t key)
{
	long *at = tb_map_at(&p->at, key);

	if (*at >= 0) {
		p->gone[*at] = 1;
		*at = TB_TAKEN;
	}
}

static size_t new_dev(struct state *s)
{
	if (s->nd == s->dcap) {
		s->dcap = s->dcap ? 2 * s->dcap : 1024;
		s->d = ta_xrealloc(s->d, s->dcap * sizeof(*s->d));
	}
	memset(&s->d[s->nd], 0, sizeof(*s->d));
	return s->nd++;
}

static size_t new_rt(struct state *s)
{
	if (s->nr == s->rcap) {
		s->rcap = s->rcap ? 2 * s->rcap : 1024;
		s->r = ta_xrealloc(s->r, s->rcap * sizeof(*s->r));
	}
	memset(&s->r[s->nr], 0, sizeof(*s->r));
	return s->nr++;
}

size_t tb_new_node(struct state *s)
{
	if (s->no == s->ocap) {
		s->ocap = s->ocap ? 2 * s->ocap : 1024;
		s->o = ta_xrealloc(s->o, s->ocap * sizeof(*s->o));
	}
	memset(&s->o[s->no], 0, sizeof(*s->o));
	return s->no++;
}

/* The rows of one rank, into devices, runtime calls and nodes. */
struct intake {
	struct pending wait;          /* corr -> devices before their call */
	struct tb_map corr_rt;        /* corr -> the latest call */
	struct tb_map ext_at;         /* ext -> index into ext_rts */
	struct idx *ext_rts;
	size_t next, extcap;
	struct tb_map comm_ext;       /* External ids of nccl:/gloo: ops */
	int comm_none;
	struct idx kernels_ext;       /* kernels, for has_kernel */
};

static void take_device(struct state *s, struct intake *in, sqlite3_stmt *st, enum type t,
			const char *name, double ts, double end, size_t pos, struct tb_forest *f)
{
	size_t i = new_dev(s);
	struct dev *d = &s->d[i];
	int64_t corr = sqlite3_column_int64(st, 6) != -1 ? sqlite3_column_int64(st, 6) : TB_KEY_NONE;
	long *rt = tb_map_at(&in->corr_rt, corr);

	d->ts = ts, d->end = end, d->pos = pos;
	d->kernel = t == T_KERNEL;
	d->ext = key_of(s, st, 5);
	d->k.name = name;
	d->k.dur = end - ts;
	d->k.tc_used = tb_tc_kernel(name);
	if (d->kernel) {
		d->k.grid = keep(s, sqlite3_column_text(st, 9));
		d->k.block = keep(s, sqlite3_column_text(st, 10));
		d->k.regs = sqlite3_column_int64(st, 11);
		d->k.smem = sqlite3_column_int64(st, 12);
		d->k.bpsm = sqlite3_column_double(st, 13);
		d->k.occ = sqlite3_column_double(st, 14);
		d->k.has_device = sqlite3_column_type(st, 15) == SQLITE_INTEGER;
		d->k.device = sqlite3_column_int64(st, 15);
		d->bpsm_set = sqlite3_column_type(st, 13) != SQLITE_NULL;
		d->occ_set = sqlite3_column_type(st, 14) != SQLITE_NULL;
		f->has_bpsm |= d->k.has_device && d->bpsm_set && d->k.bpsm > 0;
		f->has_occ |= d->k.has_device && d->occ_set && d->k.occ >= 0;
		tb_push(&in->kernels_ext, i);
	} else {
		f->show_gpu = 1;   /* has_memcpy_or_memset */
	}
	if (*rt >= 0)
		tb_push(&s->r[*rt].devs, i);
	else
		tb_push(pending_list(&in->wait, corr, 1), i);
}

static void take_runtime(struct state *s, struct intake *in, sqlite3_stmt *st, double ts,
			 double end, size_t pos, int64_t tid)
{
	size_t i = new_rt(s);
	struct rt *r = &s->r[i];
	int64_t corr = sqlite3_column_int64(st, 6) != -1 ? sqlite3_column_int64(st, 6) : TB_KEY_NONE;
	int64_t ext = key_of(s, st, 5);
	struct idx *w = pending_list(&in->wait, corr, 0);
	long *at;

	r->ts = ts, r->end = end, r->timed = 1, r->pos = pos;
	if (w) {   /* RuntimeNode's constructor sorts the ones it is given */
		r->devs = *w;
		memset(w, 0, sizeof(*w));
		tb_sort_idx(s, &r->devs, tb_dev_order);
		pending_pop(&in->wait, corr);
	}
	*tb_map_at(&in->corr_rt, corr) = (long)i;
	at = tb_map_at(&in->ext_at, ext);
	if (*at < 0) {
		if (in->next == in->extcap) {
			in->extcap = in->extcap ? 2 * in->extcap : 256;
			in->ext_rts = ta_xrealloc(in->ext_rts, in->extcap * sizeof(*in->ext_rts));
		}
		memset(&in->ext_rts[in->next], 0, sizeof(struct idx));
		*at = (long)in->next++;
	}
	tb_push(&in->ext_rts[*at], i);
	if (ext == 0) {
		size_t th = thread_of(s, tid);   /* may move tid_zero */

		tb_push(&s->tid_zero[th], i);
	}
}

static void take_node(struct state *s, struct intake *in, sqlite3_stmt *st, enum type t,
		      int kind, const char *name, double ts, double end, size_t pos, int64_t tid)
{
	size_t i = tb_new_node(s);
	struct node *n = &s->o[i];
	const unsigned char *dims = sqlite3_column_text(st, 8);

	n->kind = (enum kind)kind;
	n->type = t;
	n->name = name;
	n->ts = ts, n->end = end, n->pos = pos;
	n->ts_ns = sqlite3_column_int64(st, 2);
	n->module_id = sqlite3_column_int64(st, 16);
	/* ModuleNode.create drops the External id */
	n->ext = kind == K_MODULE ? TB_KEY_NONE : key_of(s, st, 5);
	n->shape = dims ? keep(s, dims) : "[]";
	n->tc_eligible = tb_tc_op(name);
	if (is_comm(name)) {
		if (n->ext == TB_KEY_NONE)
			in->comm_none = 1;
		else
			*tb_map_at(&in->comm_ext, n->ext) = 1;
	}
	{
		size_t th = thread_of(s, tid);   /* may move tid_nodes */

		tb_push(&s->tid_nodes[th], i);
	}
}

/* column 7's tid */
static int64_t tid_key(struct state *s, sqlite3_stmt *st)
{
	int is_new;

	if (sqlite3_column_type(st, 7) == SQLITE_INTEGER)
		return sqlite3_column_int64(st, 7);
	if (sqlite3_column_type(st, 7) == SQLITE_NULL)
		return TB_KEY_NONE;
	{   /* the trees are keyed by int(tid): "123" is 123 */
		const char *t = (const char *)sqlite3_column_text(st, 7);
		char *end;
		long long v;

		errno = 0;
		v = strtoll(t, &end, 10);
		while (*end == ' ' || *end == '\t' || *end == '\n')
			end++;
		if (end != t && !*end && errno == 0 && v != TB_KEY_NONE)
			return v;
	}
	/* a tid of other text: one key per text, apart from the numbers */
	return TB_KEY_NONE + 1 + ta_intern(s->strings, (const char *)sqlite3_column_text(st, 7),
					   (size_t)sqlite3_column_bytes(st, 7), &is_new);
}

/* ---- the tree ---- */

/* _build_tree_internal's insertion: each node under the innermost open
 * one holding it; one crossing that one's end is dropped. */
static void insert_all(struct state *s, size_t root, const struct idx *list)
{
	struct idx stack = { NULL, 0, 0 };

	tb_push(&stack, root);
	for (size_t k = 0; k < list->n; k++) {
		struct node *n = &s->o[list->v[k]];

		for (;;) {
			struct node *tail = &s->o[stack.v[stack.n - 1]];

			if (n->ts < tail->end) {
				if (n->end <= tail->end) {
					tb_push(&tail->kids, list->v[k]);
					tb_push(&stack, list->v[k]);
				}
				break;
			}
			stack.n--;   /* the root's end is sys.maxsize: never popped */
		}
	}
	free(stack.v);
}

/* _remove_dup_nodes, with a work list instead of recursion */
static void remove_dups(struct state *s, size_t root)
{
	struct idx work = { NULL, 0, 0 };

	tb_push(&work, root);
	while (work.n) {
		size_t i = work.v[--work.n];
		struct node *n = &s->o[i];

		for (;;) {
			struct node *c;

			if (n->kids.n != 1)
				break;
			c = &s->o[n->kids.v[0]];
			if (strcmp(n->name, c->name) || n->type != T_OPERATOR || c->type != T_OPERATOR)
				break;
			free(n->kids.v);
			free(n->rts.v);
			n->kids = c->kids;
			n->rts = c->rts;
			memset(&c->kids, 0, sizeof(c->kids));
			memset(&c->rts, 0, sizeof(c->rts));
		}
		for (size_t k = n->kids.n; k-- > 0;)
			tb_push(&work, n->kids.v[k]);
	}
	free(work.v);
}

/* The nodes under root, parents first, children in order. */
static void preorder(struct state *s, size_t root, struct idx *out)
{
	struct idx work = { NULL, 0, 0 };

	tb_push(&work, root);
	while (work.n) {
		size_t i = work.v[--work.n];

		tb_push(out, i);
		for (size_t k = s->o[i].kids.n; k-- > 0;)
			tb_push(&work, s->o[i].kids.v[k]);
	}
	free(work.v);
}

int tb_is_operator(const struct node *n)
{
	return n->kind == K_OPERATOR && n->type == T_OPERATOR &&
	       strcmp(n->name, "DataParallel.forward") &&
	       strcmp(n->name, "DistributedDataParallel.forward") &&
	       strncmp(n->name, "Optimizer.", 10);
}

/* RuntimeNode.fill_stats(op) */
static void rt_fill(struct state *s, struct rt *r, const struct node *op)
{
	for (size_t k = 0; k < r->devs.n; k++) {
		struct dev *d = &s->d[r->devs.v[k]];

		if (op) {
			d->k.op = op->name;
			d->k.op_tc_eligible = op->tc_eligible;
		}
		r->dev_dur += d->end - d->ts;
		r->tc_dur += d->k.tc_used ? d->end - d->ts : 0;
	}
}

/* OperatorNode.fill_stats (and ModuleNode's), children before parents */
static void fill(struct state *s, size_t root)
{
	struct idx order = { NULL, 0, 0 };

	preorder(s, root, &order);
	for (size_t k = order.n; k-- > 0;) {
		struct node *n = &s->o[order.v[k]];
		int op = n->type == T_OPERATOR;

		tb_sort_idx(s, &n->rts, tb_rt_order);
		for (size_t j = 0; j < n->rts.n; j++)
			rt_fill(s, &s->r[n->rts.v[j]], n);
		n->self_host = n->end - n->ts;
		for (size_t j = 0; j < n->kids.n; j++) {
			const struct node *c = &s->o[n->kids.v[j]];

			n->device += c->device;
			n->self_host -= c->end - c->ts;
			n->tc_total += c->tc_total;
			if (op && !n->tc_eligible && c->tc_eligible)
				n->tc_eligible = 1;
		}
		for (size_t j = 0; j < n->rts.n; j++) {
			const struct rt *r = &s->r[n->rts.v[j]];

			if (r->timed)
				n->self_host -= r->end - r->ts;
			n->device += r->dev_dur;
			n->self_device += r->dev_dur;
			n->tc_self += r->tc_dur;
			n->tc_total += r->tc_dur;
			if (op && !n->tc_eligible && r->tc_dur > 0)
				n->tc_eligible = 1;
		}
		if (n->kind == K_MODULE)
			for (size_t j = 0; j < n->kids.n; j++)
				if (tb_is_operator(&s->o[n->kids.v[j]]))
					n->self_device += s->o[n->kids.v[j]].device;
	}
	free(order.v);
}

/* get_operator_and_kernels: operators after their children, kernels by
 * call after the children's */
/* A node's own calls' kernel time (the root's "dummy" call left out, as
 * tensor_cores_parser.py does); with is_op, into the per-GPU sums. */
static double self_kernels(const struct state *s, const struct node *n, struct tb_forest *f,
			   int is_op)
{
	double sum = 0;

	for (size_t j = 0; j < n->rts.n; j++) {
		const struct rt *r = &s->r[n->rts.v[j]];

		if (n->kind == K_ROOT && !r->timed)
			continue;
		for (size_t k = 0; k < r->devs.n; k++) {
			const struct dev *d = &s->d[r->devs.v[k]];
			double dur = d->end - d->ts;
			size_t g;

			if (!d->kernel)
				continue;
			sum += dur;
			if (!is_op)
				continue;
			f->ops_have_kernel = 1;
			if (!d->k.has_device)
				continue;   /* the plugin's tc_time[None] raises */
			for (g = 0; g < f->ngpu_tc && f->gpu_tc[g].device != d->k.device; g++)
				;
			if (g == f->ngpu_tc) {
				f->gpu_tc = ta_xrealloc(f->gpu_tc, (g + 1) * sizeof(*f->gpu_tc));
				f->gpu_tc[f->ngpu_tc++] = (struct tb_gpu_tc){ d->k.device, 0, 0 };
			}
			f->gpu_tc[g].tc += d->k.tc_used ? dur : 0;
			f->gpu_tc[g].total += dur;
		}
	}
	return sum;
}

static void walk(struct state *s, size_t root, struct tb_forest *f, size_t *ocap, size_t *kcap,
		 char *onpath)
{
	struct idx work = { NULL, 0, 0 }, state = { NULL, 0, 0 };
	struct idx below = { NULL, 0, 0 };   /* a bottom eligible node under it */

	/* an explicit post-order: (node, next child) pairs */
	tb_push(&work, root);
	tb_push(&state, 0);
	tb_push(&below, 0);
	onpath[root] = 1;
	while (work.n) {
		size_t i = work.v[work.n - 1], *next = &state.v[state.n - 1];
		const struct node *n = &s->o[i];

		if (*next < n->kids.n) {
			size_t c = n->kids.v[(*next)++];

			/* a node under itself (backward groups shared by two
			 * modules can make one): the plugin recurses for ever */
			if (onpath[c])
				continue;
			onpath[c] = 1;
			tb_push(&work, c);
			tb_push(&state, 0);
			tb_push(&below, 0);
			continue;
		}
		for (size_t j = 0; j < n->rts.n; j++) {
			const struct rt *r = &s->r[n->rts.v[j]];

			for (size_t k = 0; k < r->devs.n; k++) {
				const struct dev *d = &s->d[r->devs.v[k]];

				if (!d->kernel)
					continue;
				if (f->nkernels == *kcap) {
					*kcap = *kcap ? 2 * *kcap : 256;
					f->kernels = ta_xrealloc(f->kernels, *kcap * sizeof(*f->kernels));
				}
				f->kernels[f->nkernels] = d->k;
				if (!f->kernels[f->nkernels].op)
					f->kernels[f->nkernels].op = "N/A";
				f->nkernels++;
			}
		}
		/* _get_bottom_tc_eligible_operators: any node, eligible, with
		 * no such node under it */
		{
			int bottom = n->tc_eligible && !below.v[below.n - 1];

			if (bottom)
				f->bottom_eligible_us += self_kernels(s, n, f, 0);
			if (below.n > 1 && (bottom || below.v[below.n - 1]))
				below.v[below.n - 2] = 1;
		}
		if (tb_is_operator(n)) {
			f->ops_kernel_us += self_kernels(s, n, f, 1);
			if (f->nops == *ocap) {
				*ocap = *ocap ? 2 * *ocap : 256;
				f->ops = ta_xrealloc(f->ops, *ocap * sizeof(*f->ops));
			}
			f->ops[f->nops++] = (struct tb_op){ n->name, n->shape, n->end - n->ts,
				n->device, n->self_host, n->self_device, n->tc_self, n->tc_total,
				n->tc_eligible };
		}
		onpath[i] = 0;
		work.n--;
		state.n--;
		below.n--;
	}
	free(work.v);
	free(state.v);
	free(below.v);
}

/* _get_node_list(tid2tree, ModuleNode) then _aggregate_modules: from
 * each root's children, parents first, into steps, modules, operators
 * (of any event type), optimizer and data loader nodes only */
static void collect_modules(struct state *s, size_t root, struct tb_forest *f, char *onpath)
{
	struct idx work = { NULL, 0, 0 };

	for (size_t k = s->o[root].kids.n; k-- > 0;)
		tb_push(&work, s->o[root].kids.v[k]);
	while (work.n) {
		size_t i = work.v[--work.n];
		const struct node *n = &s->o[i];
		size_t m;

		if (i == (size_t)-1) {   /* the end of a node's children */
			onpath[work.v[--work.n]] = 0;
			continue;
		}
		if (n->kind == K_ROOT || n->kind == K_BACKWARD || onpath[i])
			continue;
		if (n->kind == K_MODULE) {
			for (m = 0; m < f->nmods && !(f->mods[m].module_id == n->module_id &&
						      strcmp(f->mods[m].name, n->name) == 0); m++)
				;
			if (m == f->nmods) {
				f->mods = ta_xrealloc(f->mods, (m + 1) * sizeof(*f->mods));
				f->mods[f->nmods++] = (struct tb_module_stats){ n->name,
					n->module_id, 0, 0, 0, 0, 0, 0 };
			}
			f->mods[m].occurrences++;
			for (size_t k = 0; k < n->kids.n; k++)
				f->mods[m].operators += tb_is_operator(&s->o[n->kids.v[k]]);
			f->mods[m].self_host += n->self_host;
			f->mods[m].host += n->end - n->ts;
			f->mods[m].self_device += n->self_device;
			f->mods[m].device += n->device;
		}
		onpath[i] = 1;
		tb_push(&work, i);
		tb_push(&work, (size_t)-1);
		for (size_t k = n->kids.n; k-- > 0;)
			tb_push(&work, n->kids.v[k]);
	}
	free(work.v);
}

static int starts_step(const struct state *s, const struct idx *l)
{
	for (size_t k = 0; k < l->n; k++)
		if (strncmp(s->o[l->v[k]].name, "ProfilerStep#", 13) == 0)
			return 1;
	return 0;
}

static void build(struct state *s, struct intake *in, struct tb_forest *f,
		  const struct tb_flow *flows, size_t nflows, int memory,
		  const struct tb_mem_rec *mem, size_t nmem)
{
	struct idx stale = { NULL, 0, 0 }, roots = { NULL, 0, 0 };
	size_t ocap = 0, kcap = 0;
	long main_root = -1;
	int regrouped;
	char *onpath;

	/* parse_nodes: each operator takes the calls of its External id */
	for (size_t t = 0; t < s->ntid; t++)
		for (size_t k = 0; k < s->tid_nodes[t].n; k++) {
			struct node *n = &s->o[s->tid_nodes[t].v[k]];
			long *at = tb_map_at(&in->ext_at, n->ext);

			if (*at < 0)
				continue;
			for (size_t j = 0; j < in->ext_rts[*at].n; j++)
				tb_push(&n->rts, in->ext_rts[*at].v[j]);
			*at = TB_TAKEN;
		}
	for (size_t g = 0; g < in->wait.n; g++)
		for (size_t k = 0; !in->wait.gone[g] && k < in->wait.lists[g].n; k++)
			if (s->d[in->wait.lists[g].v[k]].kernel)
				tb_push(&stale, in->wait.lists[g].v[k]);
	tb_sort_idx(s, &stale, tb_dev_order);
	for (size_t t = 0; t < s->ntid; t++) {
		struct idx *list = &s->tid_nodes[t];
		size_t root = tb_new_node(s);
		struct node *r = &s->o[root];

		r->kind = K_ROOT;
		r->type = T_PYTHON;
		r->name = "CallTreeRoot";
		r->ts = -9223372036854775808.0;
		r->end = 9223372036854775807.0;
		r->ext = TB_KEY_NONE;
		for (size_t k = 0; k < s->tid_zero[t].n; k++)
			tb_push(&r->rts, s->tid_zero[t].v[k]);
		if (stale.n && starts_step(s, list)) {
			size_t d = new_rt(s);

			s->r[d].pos = (size_t)-1;
			for (size_t k = 0; k < stale.n; k++)
				tb_push(&s->r[d].devs, stale.v[k]);
			rt_fill(s, &s->r[d], NULL);   /* at its creation, and again below */
			tb_push(&s->o[root].rts, d);
		}
		tb_sort_idx(s, list, tb_node_order);
		insert_all(s, root, list);
		remove_dups(s, root);
		fill(s, root);
		/* then its times are its first child's start and last one's end
		 * (None, here NaN, without children) */
		r = &s->o[root];
		r->ts = r->kids.n ? s->o[r->kids.v[0]].ts : NAN;
		r->end = r->kids.n ? s->o[r->kids.v[r->kids.n - 1]].end : NAN;
		if (starts_step(s, list))
			main_root = (long)root;
		tb_push(&roots, root);
	}
	free(stale.v);
	regrouped = tb_regroup_backward(s, &roots, main_root, flows, nflows);
	f->regrouped = regrouped;
	if (memory)
		tb_memory_stats(s, &roots, regrouped, mem, nmem, f);
	onpath = ta_xcalloc(s->no + 1, 1);
	for (size_t i = 0; i < roots.n; i++)
		if (!regrouped || s->o[roots.v[i]].kids.n) {   /* childless roots go */
			walk(s, roots.v[i], f, &ocap, &kcap, onpath);
			collect_modules(s, roots.v[i], f, onpath);
		}
	free(onpath);
	free(roots.v);
}

void tb_forest_free(struct tb_forest *f)
{
	free(f->mods);
	free(f->mem);
	free(f->gpu_tc);
	free(f->ops);
	free(f->kernels);
	if (f->strings)
		ta_intern_free((struct ta_intern *)f->strings);
	memset(f, 0, sizeof(*f));
}

static void state_free(struct state *s, struct intake *in)
{
	for (size_t i = 0; i < s->nr; i++)
		free(s->r[i].devs.v);
	for (size_t i = 0; i < s->no; i++) {
		free(s->o[i].kids.v);
		free(s->o[i].rts.v);
	}
	for (size_t i = 0; i < s->ntid; i++) {
		free(s->tid_nodes[i].v);
		free(s->tid_zero[i].v);
	}
	for (size_t i = 0; i < in->wait.n; i++)
		free(in->wait.lists[i].v);
	for (size_t i = 0; i < in->next; i++)
		free(in->ext_rts[i].v);
	free(in->wait.lists);
	free(in->wait.keys);
	free(in->wait.gone);
	tb_map_free(&in->wait.at);
	tb_map_free(&in->corr_rt);
	tb_map_free(&in->ext_at);
	tb_map_free(&in->comm_ext);
	free(in->ext_rts);
	free(in->kernels_ext.v);
	free(s->d);
	free(s->r);
	free(s->o);
	free(s->tids);
	free(s->tid_nodes);
	free(s->tid_zero);
	tb_map_free(&s->tid_at);
	ta_intern_free(s->keys);
}

/* trace.py's create_association_events: per flow id, its last "s" and
 * last "f" start, ids in order of their first "s"; then by forward start,
 * the first such place and the last value */
static int load_flows(sqlite3 *db, int64_t rank, struct tb_flow **out, size_t *n,
		      struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct tb_flow *v = NULL;
	struct tb_map id_at, fwd_at;
	int64_t rows = 0;
	size_t nids = 0, m = 0;
	int rc;
	struct fl { int64_t id, s, f; int has_f; } *ids = NULL;
	char sql[128];

	*out = NULL;
	*n = 0;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM trace_flow WHERE rank = %lld",
		 (long long)rank);
	if (ta_db_get_int(db, sql, 0, &rows, err) < 0)
		return -1;
	if (!rows)
		return 0;
	if (ta_db_prepare(db, "SELECT ph, id, ts FROM trace_flow WHERE rank = ?1"
			  " AND typeof(id) = 'integer' ORDER BY idx", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	ids = ta_xcalloc((size_t)rows + 1, sizeof(*ids));
	tb_map_init(&id_at, (size_t)rows);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *ph = (const char *)sqlite3_column_text(st, 0);
		int64_t id = sqlite3_column_int64(st, 1), ts = sqlite3_column_int64(st, 2);
		long *at = tb_map_at(&id_at, id);

		if (ph[0] == 's') {
			if (*at < 0) {
				*at = (long)nids;
				ids[nids++] = (struct fl){ id, ts, 0, 0 };
			}
			ids[*at].s = ts;
		}
	}
	sqlite3_reset(st);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *ph = (const char *)sqlite3_column_text(st, 0);
		long *at = tb_map_at(&id_at, sqlite3_column_int64(st, 1));

		if (ph[0] == 'f' && *at >= 0) {
			ids[*at].f = sqlite3_column_int64(st, 2);
			ids[*at].has_f = 1;
		}
	}
	sqlite3_finalize(st);
	tb_map_free(&id_at);
	if (rc != SQLITE_DONE) {
		free(ids);
		ta_db_failed(db, err);
		return -1;
	}
	v = ta_xcalloc(nids + 1, sizeof(*v));
	tb_map_init(&fwd_at, nids);
	for (size_t i = 0; i < nids; i++) {
		long *at;

		if (!ids[i].has_f)
			continue;
		at = tb_map_at(&fwd_at, ids[i].s);
		if (*at < 0)
			*at = (long)m++;
		v[*at] = (struct tb_flow){ ids[i].s, ids[i].f };
	}
	tb_map_free(&fwd_at);
	free(ids);
	*out = v;
	*n = m;
	return 0;
}

/* The rank's [memory] records by time (the plugin's stable sort). */
static int load_memory(sqlite3 *db, int64_t rank, struct state *s, struct tb_mem_rec **out,
		       size_t *n, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	*n = 0;
	*out = NULL;
	/* tid in column 7, as tid_key reads it */
	if (ta_db_prepare(db, "SELECT ts, dev_type_raw, dev_raw, COALESCE(bytes, 0), 0, 0, 0,"
			  " tid FROM mem WHERE rank = ?1 ORDER BY ts, idx", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			*out = ta_xrealloc(*out, cap * sizeof(**out));
		}
		struct tb_mem_rec *m = &(*out)[(*n)++];

		m->tid = tid_key(s, st);
		m->ts = (double)sqlite3_column_int64(st, 0) / 1000.0;
		if (!tb_mem_dev(st, 1, 2, m->dev, sizeof(m->dev)))
			m->dev[0] = 0;
		m->bytes = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		ta_db_failed(db, err);
		return -1;
	}
	return 0;
}

static int forest_build(sqlite3 *db, int64_t rank, struct tb_forest *f, int memory,
			struct ta_error *err);

int tb_forest_build(sqlite3 *db, int64_t rank, struct tb_forest *f, struct ta_error *err)
{
	return forest_build(db, rank, f, 0, err);
}

int tb_forest_build_memory(sqlite3 *db, int64_t rank, struct tb_forest *f,
			   struct ta_error *err)
{
	return forest_build(db, rank, f, 1, err);
}

static int forest_build(sqlite3 *db, int64_t rank, struct tb_forest *f, int memory,
			struct ta_error *err)
{
	struct tb_mem_rec *mem = NULL;
	size_t nmem = 0;
	struct tb_flow *flows = NULL;
	size_t nflows = 0;
	struct state s;
	struct intake in;
	sqlite3_stmt *st = NULL;
	int64_t n = 0;
	size_t pos = 0;
	int rc;

	memset(f, 0, sizeof(*f));
	memset(&s, 0, sizeof(s));
	memset(&in, 0, sizeof(in));
	{
		char sql[128];

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM trace_x WHERE rank = %lld",
			 (long long)rank);
		if (ta_db_get_int(db, sql, 0, &n, err) < 0)
			return -1;
	}
	s.strings = ta_intern_new();
	s.keys = ta_intern_new();
	f->strings = (struct tb_strings *)s.strings;
	tb_map_init(&s.tid_at, (size_t)n);
	tb_map_init(&in.wait.at, (size_t)n);
	tb_map_init(&in.corr_rt, (size_t)n);
	tb_map_init(&in.ext_at, (size_t)n);
	tb_map_init(&in.comm_ext, (size_t)n);
	if (ta_db_prepare(db, "SELECT cat, name, ts, dur, idx, external_id, correlation, tid,"
			  " input_dims, grid, block, registers, shared_mem, blocks_per_sm,"
			  " occupancy, device, python_module_id FROM trace_x WHERE rank = ?1"
			  " ORDER BY ts, idx",
			  &st, err) < 0) {
		state_free(&s, &in);
		return -1;
	}
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *cat = (const char *)sqlite3_column_text(st, 0);
		const char *name = keep(&s, sqlite3_column_text(st, 1));
		enum type t = type_of(cat, name, sqlite3_column_type(st, 16) != SQLITE_NULL);
		double ts = (double)sqlite3_column_int64(st, 2) / 1000.0;
		double end = ts + (double)sqlite3_column_int64(st, 3) / 1000.0;
		int kind;

		if (!name)
			name = "";
		if (t == T_KERNEL || t == T_MEMCPY || t == T_MEMSET)
			take_device(&s, &in, st, t, name, ts, end, pos, f);
		else if (t == T_RUNTIME)
			take_runtime(&s, &in, st, ts, end, pos, tid_key(&s, st));
		else if ((kind = kind_of(t, name)) >= 0)
			take_node(&s, &in, st, t, kind, name, ts, end, pos, tid_key(&s, st));
		f->modules |= t == T_MODULE;
		pos++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		state_free(&s, &in);
		tb_forest_free(f);
		ta_db_failed(db, err);
		return -1;
	}
	/* has_kernel: a kernel whose External id is no nccl:/gloo: op's
	 * (the step parser counts those as communication) */
	for (size_t k = 0; k < in.kernels_ext.n && !f->has_kernel; k++) {
		int64_t ext = s.d[in.kernels_ext.v[k]].ext;

		f->has_kernel = ext == TB_KEY_NONE ? !in.comm_none : *tb_map_at(&in.comm_ext, ext) < 0;
	}
	f->show_gpu |= f->has_kernel;
	if (load_flows(db, rank, &flows, &nflows, err) < 0) {
		state_free(&s, &in);
		tb_forest_free(f);
		return -1;
	}
	if (memory && load_memory(db, rank, &s, &mem, &nmem, err) < 0) {
		free(flows);
		state_free(&s, &in);
		tb_forest_free(f);
		return -1;
	}
	f->has_memory = nmem > 0;
	build(&s, &in, f, flows, nflows, memory, mem, nmem);
	free(mem);
	free(flows);
	state_free(&s, &in);
	return 0;
}

int tb_each_rank(sqlite3 *db, const struct ta_query *q, struct ta_table *t, tb_rank_fn fn,
		 void *ctx, struct ta_table **out, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_FLOW, err) < 0 ||
	    ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank", &st, err) < 0) {
		ta_table_free(t);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (fn(db, t, sqlite3_column_int64(st, 0), ctx, err) < 0) {
			sqlite3_finalize(st);
			ta_table_free(t);
			return -1;
		}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ta_table_free(t);
		ta_db_failed(db, err);
		return -1;
	}
	*out = t;
	return 0;
}
