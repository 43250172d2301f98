/* overview --tb-compat: the TensorBoard profiler plugin's step-time
 * breakdown (event_parser.py's StepParser, overall_parser.py,
 * range_utils.py, run_generator.py:81-189; kineto 790be856), quirks
 * included. Per rank (the plugin's worker), every "X" event of a known
 * category, sorted by time: kernels (Communication when their External id
 * is an nccl:/gloo: op's), copies, sets, runtime calls (not cuda_driver:
 * unmapped), DataLoader ranges, nccl:/gloo: ops, every other CPU op or
 * annotation (gpu_user_annotation too); each role's ranges merged. Steps:
 * every ProfilerStep# op or annotation, the GPU's copy included (so a step
 * can show twice), stretched to the end of the device work its runtime
 * calls launched, the trailing steps without device work dropped and the
 * last one too when it matched under 80 % of the one before. The roles
 * then take the steps' time in order, each what the ones before left (a
 * role met when nothing is left is taken whole, and the steps again left
 * for the next: as the plugin does). Rows: each step, the average, and the
 * Performance Summary's rounded µs and % (the columns the page hides
 * empty). Times are the trace's µs as doubles, summed in the plugin's
 * order. */
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_intern.h"
#include "tb_map.h"
#include "overview_tb.h"
#include "optree_tb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum type { T_NONE, T_TRACE, T_OPERATOR, T_RUNTIME, T_KERNEL, T_MEMCPY, T_MEMSET,
	    T_PYTHON, T_MEMORY, T_PYFUNC, T_UA, T_STEP };
enum role { R_KERNEL, R_MEMCPY, R_MEMSET, R_COMM, R_RUNTIME, R_DATALOADER, R_CPUOP,
	    R_OTHER, R_TOTAL, NROLES = R_TOTAL + 1 };

static const char *const role_names[] = { "Kernel", "Memcpy", "Memset", "Communication",
	"Runtime", "DataLoader", "CPU Exec", "Other" };

static const struct { const char *cat; enum type t; } type_map[] = {
	{ "trace", T_TRACE }, { "cpu_op", T_OPERATOR }, { "operator", T_OPERATOR },
	{ "runtime", T_RUNTIME }, { "cuda_runtime", T_RUNTIME }, { "mtia_runtime", T_RUNTIME },
	{ "glow_runtime", T_RUNTIME }, { "xpu_runtime", T_RUNTIME },
	{ "privateuse1_runtime", T_RUNTIME }, { "kernel", T_KERNEL }, { "memcpy", T_MEMCPY },
	{ "gpu_memcpy", T_MEMCPY }, { "memset", T_MEMSET }, { "gpu_memset", T_MEMSET },
	{ "python", T_PYTHON }, { "memory", T_MEMORY }, { "python_function", T_PYFUNC },
	{ "user_annotation", T_UA }, { "gpu_user_annotation", T_UA },
};

/* trace.py's NcclOpNameSet and GlooOpNameSet */
static const char *const comm_ops[] = { "nccl:broadcast", "nccl:reduce", "nccl:all_reduce",
	"nccl:all_gather", "nccl:reduce_scatter", "gloo:broadcast", "gloo:reduce",
	"gloo:all_reduce", "gloo:all_gather", "gloo:reduce_scatter" };

struct ev {
	double ts, end;
	enum type type;
	int has_ext, has_corr, comm_name, dataloader;
	int64_t ext, corr, step;
	long op;             /* an nccl:/gloo: op: its entry in rank_data's ops; else -1 */
};

struct ranges { struct tb_range *v; size_t n, cap; };

static void put(struct ranges *r, double a, double b)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->v = ta_xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	r->v[r->n++] = (struct tb_range){ a, b };
}

static int by_start(const void *x, const void *y)
{
	const struct tb_range *a = x, *b = y;

	return a->a < b->a ? -1 : a->a > b->a;
}

/* range_utils.merge_ranges: sorted by start (Python's sort is stable: a
 * merge sort keeps equal starts in order), each range past the last one's
 * end extends it or starts a new one. */
static void merge(struct ranges *r)
{
	size_t i, n = 0;

	if (!r->n)
		return;
	ta_qsort(r->v, r->n, sizeof(*r->v), by_start);   /* the union: order among equal starts does not matter */
	for (i = 1; i < r->n; i++)
		if (r->v[i].b > r->v[n].b) {
			if (r->v[i].a <= r->v[n].b)
				r->v[n].b = r->v[i].b;
			else
				r->v[++n] = r->v[i];
		}
	r->n = n + 1;
}

/* range_utils.intersection_ranges_lists */
static struct ranges intersect(const struct ranges *l1, const struct ranges *l2)
{
	struct ranges d = { NULL, 0, 0 };
	size_t i1 = 0, i2 = 0;
	struct tb_range r1, r2;

	if (!l1->n || !l2->n)
		return d;
	r1 = l1->v[0], r2 = l2->v[0];
	while (i1 < l1->n && i2 < l2->n) {
		if (r2.b <= r1.a) {
			if (++i2 < l2->n)
				r2 = l2->v[i2];
		} else if (r2.a <= r1.a && r2.b < r1.b) {
			put(&d, r1.a, r2.b);
			r1.a = r2.b;
			if (++i2 < l2->n)
				r2 = l2->v[i2];
		} else if (r2.a <= r1.a) {
			put(&d, r1.a, r1.b);
			r2.a = r1.b;
			if (++i1 < l1->n)
				r1 = l1->v[i1];
		} else if (r2.b < r1.b) {
			put(&d, r2.a, r2.b);
			r1.a = r2.b;
			if (++i2 < l2->n)
				r2 = l2->v[i2];
		} else if (r2.a < r1.b) {
			put(&d, r2.a, r1.b);
			r2.a = r1.b;
			if (++i1 < l1->n)
				r1 = l1->v[i1];
		} else if (++i1 < l1->n) {
			r1 = l1->v[i1];
		}
	}
	return d;
}

/* range_utils.subtract_ranges_lists */
static struct ranges subtract(const struct ranges *l1, const struct ranges *l2)
{
	struct ranges d = { NULL, 0, 0 };
	size_t i1 = 0, i2 = 0;
	struct tb_range r1, r2;

	if (!l1->n)
		return d;
	r1 = l1->v[0];
	r2 = l2->n ? l2->v[0] : r1;
	while (i1 < l1->n) {
		if (i2 == l2->n) {
			put(&d, r1.a, r1.b);
			if (++i1 < l1->n)
				r1 = l1->v[i1];
		} else if (r2.b <= r1.a) {
			if (++i2 < l2->n)
				r2 = l2->v[i2];
		} else if (r2.a <= r1.a && r2.b < r1.b) {
			r1.a = r2.b;
			if (++i2 < l2->n)
				r2 = l2->v[i2];
		} else if (r2.a <= r1.a) {
			r2.a = r1.b;
			if (++i1 < l1->n)
				r1 = l1->v[i1];
		} else if (r2.a < r1.b) {
			put(&d, r1.a, r2.a);
			r1.a = r2.a;
		} else {
			put(&d, r1.a, r1.b);
			if (++i1 < l1->n)
				r1 = l1->v[i1];
		}
	}
	return d;
}

/* sum_of(intersect([a, b], x)) in one pass from *from, the first range
 * that can reach [a, b] (the steps come by start: their pointer only
 * moves on): the same pieces, summed in the same order. */
static double sum_in(const struct ranges *x, double a, double b, size_t *from)
{
	double s = 0, lo = a;
	size_t i;

	while (*from < x->n && x->v[*from].b <= a)
		(*from)++;
	for (i = *from; i < x->n; i++) {
		const struct tb_range *r = &x->v[i];

		if (r->b <= lo) {
			continue;
		} else if (r->a <= lo && r->b < b) {
			s += r->b - lo;
			lo = r->b;
		} else if (r->a <= lo) {
			s += b - lo;
			break;
		} else if (r->b < b) {
			s += r->b - r->a;
			lo = r->b;
		} else if (r->a < b) {
			s += b - r->a;
			break;
		} else {
			break;
		}
	}
	return s;
}

static double sum_of(const struct ranges *r)
{
	double s = 0;
	size_t i;

	for (i = 0; i < r->n; i++)
		s += r->v[i].b - r->v[i].a;
	return s;
}

/* ---- one rank ---- */

/* a communication op's name and inputs, as written */
struct comm_op { char *name, *dims, *types; };

struct rank_data {
	struct ev *e;
	size_t n, cap;
	struct comm_op *ops;
	size_t nops, capops;
	struct ta_intern *keys;   /* External ids that are not integers */
};

static void rank_data_reset(struct rank_data *r)
{
	size_t i;

	for (i = 0; i < r->nops; i++) {
		free(r->ops[i].name);
		free(r->ops[i].dims);
		free(r->ops[i].types);
	}
	r->n = r->nops = 0;
}

struct step { double a, b; int64_t name; };

struct result {
	struct step *steps;
	size_t nsteps;
	double (*costs)[NROLES];
	double avg[NROLES];
	int shown[R_OTHER];
	double (*overlap)[4];   /* per step: OverallParser.communication_overlap */
	int has_comm;
	int no_cpu;             /* no step and no CPU op: the -2^64 µs step */
};

/* event_parser.py: the device nodes (kernels, copies, sets) each runtime
 * call launched (same correlation, before or after it), then
 * _find_device_steps and _update_steps_duration. */
static void device_steps(const struct rank_data *r, struct step *steps, size_t nsteps,
			 size_t *keep)
{
	long *owner = ta_xmalloc((r->n + 1) * sizeof(*owner));
	long *next_dev = ta_xmalloc((r->n + 1) * sizeof(*next_dev));
	size_t *rts = ta_xmalloc((r->n + 1) * sizeof(*rts)), nrt = 0, i;
	struct tb_map by_corr_rt, by_corr_dev;   /* corr -> runtime; -> pending devices */
	double *dmin = ta_xmalloc(nsteps * sizeof(*dmin)), *dmax = ta_xmalloc(nsteps * sizeof(*dmax));
	int *dhas = ta_xcalloc(nsteps + 1, sizeof(*dhas));
	long *matched_n = ta_xcalloc(nsteps + 1, sizeof(*matched_n));
	char *matched = ta_xcalloc(r->n + 1, 1);
	size_t is = 0, ir = 0;
	double smin = 0, smax = 0, prev = 0;
	int shas = 0, any = 0;

	tb_map_init(&by_corr_rt, r->n);
	tb_map_init(&by_corr_dev, r->n);
	for (i = 0; i < r->n; i++) {
		const struct ev *e = &r->e[i];
		/* an absent correlation is Python's None: a key like any other */
		int64_t key = e->has_corr ? e->corr : TB_KEY_NONE;

		owner[i] = -1;
		next_dev[i] = -1;
		if (e->type == T_KERNEL || e->type == T_MEMCPY || e->type == T_MEMSET) {
			long *rt = tb_map_at(&by_corr_rt, key);

			if (*rt >= 0) {
				owner[i] = *rt;
			} else {   /* waits for its runtime: a list, newest first */
				long *head = tb_map_at(&by_corr_dev, key);

				next_dev[i] = *head;
				*head = (long)i;
			}
		} else if (e->type == T_RUNTIME) {
			long *head = tb_map_at(&by_corr_dev, key), d;

			for (d = *head; d >= 0; d = next_dev[d])
				owner[d] = (long)i;
			*head = TB_TAKEN;   /* popped */
			*tb_map_at(&by_corr_rt, key) = (long)i;
			rts[nrt++] = i;
		}
	}
	/* per runtime: its devices' count, first start, last end */
	{
		long *cnt = ta_xcalloc(r->n + 1, sizeof(*cnt));
		double *lo = ta_xmalloc((r->n + 1) * sizeof(*lo));
		double *hi = ta_xmalloc((r->n + 1) * sizeof(*hi));

		for (i = 0; i < r->n; i++)
			if (owner[i] >= 0) {
				long o = owner[i];

				lo[o] = cnt[o] ? fmin(lo[o], r->e[i].ts) : r->e[i].ts;
				hi[o] = cnt[o] ? fmax(hi[o], r->e[i].end) : r->e[i].end;
				cnt[o]++;
			}
		/* the two-way merge of runtimes (sorted by start: they are, in
		 * event order) and host steps */
		while (is < nsteps && ir < nrt) {
			const struct ev *rt = &r->e[rts[ir]];

			if (rt->ts < steps[is].a) {
				ir++;
			} else if (rt->end <= steps[is].b) {
				if (cnt[rts[ir]]) {
					smin = shas ? fmin(smin, lo[rts[ir]]) : lo[rts[ir]];
					smax = shas ? fmax(smax, hi[rts[ir]]) : hi[rts[ir]];
					shas = 1;
					matched_n[is] += cnt[rts[ir]];
					matched[rts[ir]] = 1;
					any = 1;
				}
				ir++;
			} else if (rt->ts < steps[is].b) {
				ir++;
			} else {
				dhas[is] = shas, dmin[is] = smin, dmax[is] = smax;
				shas = 0;
				is++;
			}
		}
		for (; is < nsteps; is++) {
			dhas[is] = shas, dmin[is] = smin, dmax[is] = smax;
			shas = 0;
		}
		if (any) {
			prev = steps[0].a;
			if (dhas[0])
				for (i = 0; i < r->n; i++)
					if (owner[i] >= 0 ? !matched[owner[i]] :
					    (r->e[i].type == T_KERNEL || r->e[i].type == T_MEMCPY ||
					     r->e[i].type == T_MEMSET))
						if (r->e[i].end < dmin[0])
							prev = fmax(prev, r->e[i].end);
		}
		free(cnt);
		free(lo);
		free(hi);
	}
	*keep = nsteps;
	if (any) {
		long s;

		for (i = 0; i < nsteps; i++) {
			double a = fmax(prev, steps[i].a), b = steps[i].b;

			b = dhas[i] ? fmax(b, dmax[i]) : fmax(b, a);
			if (b < a)
				b = a;
			steps[i].a = a, steps[i].b = b;
			prev = b;
		}
		if (nsteps > 1) {
			for (s = (long)nsteps - 1; s >= 0 && matched_n[s] == 0; s--)
				;
			if (s >= 0) {
				size_t k = (size_t)s + 1;

				if (s > 0 && (double)matched_n[s - 1] * 0.8 > (double)matched_n[s])
					k = (size_t)s;
				if (k < nsteps)
					*keep = k;
			}
		}
	}
	free(owner);
	free(next_dev);
	free(rts);
	free(dmin);
	free(dmax);
	free(dhas);
	free(matched_n);
	free(matched);
	tb_map_free(&by_corr_rt);
	tb_map_free(&by_corr_dev);
}

/* The comm ops' external ids (the plugin's communication_data keys; an
 * absent one is Python's None, a key too). */
struct comm_ids { struct tb_map m; int none; };

static int is_comm_kernel(struct comm_ids *c, const struct ev *e)
{
	return e->has_ext ? *tb_map_at(&c->m, e->ext) >= 0 : c->none;
}

/* OverallParser.aggregate's communication_overlap: per step, the time
 * of kernels (CPU ops when no kernel ran), of communication, of both,
 * and the rest. */
static void comm_overlap(const struct ranges *roles, const struct step *steps, size_t nsteps,
			 struct result *res)
{
	const struct ranges *comp = roles[R_KERNEL].n ? &roles[R_KERNEL] : &roles[R_CPUOP];
	struct ranges both = intersect(comp, &roles[R_COMM]);
	size_t i, at[3] = { 0, 0, 0 };

	res->has_comm = roles[R_COMM].n > 0;
	res->overlap = ta_xcalloc(nsteps + 1, sizeof(*res->overlap));
	for (i = 0; i < nsteps; i++) {
		double *o = res->overlap[i];

		if (i && steps[i].a < steps[i - 1].a)
			at[0] = at[1] = at[2] = 0;
		o[1] = sum_in(&both, steps[i].a, steps[i].b, &at[0]);
		o[0] = sum_in(comp, steps[i].a, steps[i].b, &at[1]);
		o[2] = sum_in(&roles[R_COMM], steps[i].a, steps[i].b, &at[2]);
		o[3] = (steps[i].b - steps[i].a) + o[1] - o[0] - o[2];
	}
	free(both.v);
}

static void analyse(const struct rank_data *r, struct result *res)
{
	struct ranges roles[R_OTHER];
	struct comm_ids comm;
	struct step *steps = NULL;
	size_t nsteps = 0, cap = 0, i, k, keep;
	double cpu_min = 0, cpu_max = 0;
	int cpu_has = 0;
	struct ranges slots = { NULL, 0, 0 }, cost[R_OTHER + 1];
	size_t at[R_OTHER + 1];   /* sum_in's place in each cost list */

	memset(roles, 0, sizeof(roles));
	memset(res, 0, sizeof(*res));
	tb_map_init(&comm.m, r->n);
	comm.none = 0;
	for (i = 0; i < r->n; i++) {
		const struct ev *e = &r->e[i];

		if (e->comm_name && (e->type == T_OPERATOR || e->type == T_PYTHON || e->type == T_UA)) {
			if (e->has_ext)
				*tb_map_at(&comm.m, e->ext) = 1;
			else
				comm.none = 1;
		}
	}
	for (i = 0; i < r->n; i++) {
		const struct ev *e = &r->e[i];

		switch (e->type) {
		case T_KERNEL:
			put(&roles[is_comm_kernel(&comm, e) ? R_COMM : R_KERNEL], e->ts, e->end);
			break;
		case T_MEMCPY: put(&roles[R_MEMCPY], e->ts, e->end); break;
		case T_MEMSET: put(&roles[R_MEMSET], e->ts, e->end); break;
		case T_RUNTIME: put(&roles[R_RUNTIME], e->ts, e->end); break;
		case T_STEP:
			if (nsteps == cap) {
				cap = cap ? cap * 2 : 16;
				steps = ta_xrealloc(steps, cap * sizeof(*steps));
			}
			steps[nsteps++] = (struct step){ e->ts, e->end, e->step };
			break;
		case T_OPERATOR: case T_UA: case T_PYTHON:
			if (e->dataloader && e->type != T_PYTHON)
				put(&roles[R_DATALOADER], e->ts, e->end);
			else
				put(&roles[e->comm_name ? R_COMM : R_CPUOP], e->ts, e->end);
			break;
		default:
			break;
		}
		if (e->type == T_PYTHON || e->type == T_OPERATOR || e->type == T_STEP) {
			cpu_min = cpu_has ? fmin(cpu_min, e->ts) : e->ts;
			cpu_max = cpu_has ? fmax(cpu_max, e->end) : e->end;
			cpu_has = 1;
		}
	}
	tb_map_free(&comm.m);
	if (!nsteps) {   /* one step "0": the first to the last CPU op, or
			  * sys.maxsize to -sys.maxsize - 1 without one (a
			  * step of -2^64 µs: as the plugin shows it) */
		steps = ta_xmalloc(sizeof(*steps));
		res->no_cpu = !cpu_has;
		steps[nsteps++] = (struct step){ cpu_has ? cpu_min : 9223372036854775807.0,
						 cpu_has ? cpu_max : -9223372036854775808.0, 0 };
	}
	for (k = 0; k < R_OTHER; k++)
		merge(&roles[k]);
	res->shown[R_KERNEL] = res->shown[R_MEMCPY] = res->shown[R_MEMSET] =
		res->shown[R_RUNTIME] = roles[R_RUNTIME].n || roles[R_KERNEL].n ||
					roles[R_MEMCPY].n || roles[R_MEMSET].n;
	res->shown[R_COMM] = roles[R_COMM].n > 0;
	res->shown[R_DATALOADER] = res->shown[R_CPUOP] = 1;
	device_steps(r, steps, nsteps, &keep);
	nsteps = keep;
	/* OverallParser.Statistics.create_from_range */
	for (k = 0; k < R_OTHER; k++) {
		if (slots.n) {
			cost[k] = intersect(&slots, &roles[k]);
		} else {
			cost[k] = (struct ranges){ NULL, 0, 0 };
			for (i = 0; i < roles[k].n; i++)
				put(&cost[k], roles[k].v[i].a, roles[k].v[i].b);
			free(slots.v);
			slots = (struct ranges){ NULL, 0, 0 };
			for (i = 0; i < nsteps; i++)
				put(&slots, steps[i].a, steps[i].b);
			merge(&slots);
		}
		{
			struct ranges left = subtract(&slots, &cost[k]);

			free(slots.v);
			slots = left;
		}
	}
	cost[R_OTHER] = slots;
	res->costs = ta_xcalloc(nsteps + 1, sizeof(*res->costs));
	memset(at, 0, sizeof(at));
	for (i = 0; i < nsteps; i++) {
		if (i && steps[i].a < steps[i - 1].a)
			memset(at, 0, sizeof(at));
		for (k = 0; k <= R_OTHER; k++)
			res->costs[i][k] = sum_in(&cost[k], steps[i].a, steps[i].b, &at[k]);
		res->costs[i][R_TOTAL] = steps[i].b - steps[i].a;
		for (k = 0; k < NROLES; k++)
			res->avg[k] += res->costs[i][k];
	}
	for (k = 0; k < NROLES; k++)
		res->avg[k] /= (double)nsteps;
	comm_overlap(roles, steps, nsteps, res);
	for (k = 0; k <= R_OTHER; k++)
		free(cost[k].v);
	for (k = 0; k < R_OTHER; k++)
		free(roles[k].v);
	res->steps = steps;
	res->nsteps = nsteps;
}

/* ---- the table ---- */

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "row", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	/* µs, but in the average_ui_percent row: % (the plugin's own rows) */
	{ "kernel_us", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "memcpy_us", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "memset_us", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "communication_us", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "runtime_us", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "dataloader_us", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "cpu_exec_us", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "other_us", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "total_us", TA_COL_REAL, TA_UNIT_NONE, 0 },
	{ "shown_columns", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};
#define NCOLS (sizeof(cols) / sizeof(*cols))

static void emit(struct ta_table *t, int64_t rank, const struct result *res)
{
	char shown[128] = "";
	size_t i, k, row;

	for (k = 0; k < R_OTHER; k++)
		if (k == R_OTHER - 1 || res->shown[k] || k == R_DATALOADER || k == R_CPUOP) {
			if (*shown)
				strcat(shown, "|");
			strcat(shown, role_names[k]);
		}
	strcat(shown, "|Other");
	for (i = 0; i < res->nsteps + 1; i++) {
		const double *c = i < res->nsteps ? res->costs[i] : res->avg;
		char step[32] = "";

		row = ta_table_add_row(t);
		ta_table_set_int(t, row, 0, rank);
		ta_table_set_text(t, row, 1, i < res->nsteps ? "step" : "average");
		if (i < res->nsteps)
			snprintf(step, sizeof(step), "%lld", (long long)res->steps[i].name);
		ta_table_set_text(t, row, 2, step);
		for (k = 0; k < NROLES; k++)
			ta_table_set_real(t, row, 3 + k, c[k]);
		ta_table_set_text(t, row, 12, shown);
	}
	/* the Performance Summary: round(avg) µs, round(100 avg / total, 2) % */
	for (i = 0; i < 2; i++) {
		row = ta_table_add_row(t);
		ta_table_set_int(t, row, 0, rank);
		ta_table_set_text(t, row, 1, i ? "average_ui_percent" : "average_ui_us");
		ta_table_set_text(t, row, 2, "");
		for (k = 0; k <= R_OTHER; k++) {
			if (!(k == R_OTHER || res->shown[k]))
				continue;
			if (!i)
				ta_table_set_real(t, row, 3 + k, nearbyint(res->avg[k]));
			else if (res->avg[R_TOTAL] != 0)
				ta_table_set_real(t, row, 3 + k,
						  tb_round2(100 * res->avg[k] / res->avg[R_TOTAL]));
		}
		ta_table_set_real(t, row, 3 + R_TOTAL, i ? 100 : nearbyint(res->avg[R_TOTAL]));
		ta_table_set_text(t, row, 12, "");
	}
}

static enum type type_of(const char *cat, const char *name)
{
	size_t i;
	enum type t = T_NONE;

	for (i = 0; cat && i < sizeof(type_map) / sizeof(*type_map); i++)
		if (strcasecmp(cat, type_map[i].cat) == 0) {
			t = type_map[i].t;
			break;
		}
	if ((t == T_UA || t == T_OPERATOR) && name && strncmp(name, "ProfilerStep#", 13) == 0)
		return T_STEP;
	return t;
}

/* Python's int() of s[0..n): blanks around, a sign, digits with single
 * underscores between them; 0 if it refuses (or past int64). */
static int py_int(const char *s, size_t n, int64_t *out)
{
	const char *e = s + n;
	int neg = 0, digits = 0;
	uint64_t v = 0;

	while (s < e && strchr(" \t\n\r\f\v", *s))
		s++;
	while (e > s && strchr(" \t\n\r\f\v", e[-1]))
		e--;
	if (s < e && (*s == '+' || *s == '-'))
		neg = *s++ == '-';
	for (; s < e; s++) {
		if (*s == '_' && digits && s + 1 < e && s[1] >= '0' && s[1] <= '9')
			continue;
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
		digits++;
	}
	if (!digits || v > (uint64_t)INT64_MAX + neg)
		return 0;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 1;
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const char *v = (const char *)sqlite3_column_text(st, i);

	return v ? ta_xstrdup(v) : NULL;
}

/* The columns every query here reads, after rank. */
#define EV_COLS "cat, name, ts, dur, external_id, correlation, input_dims, input_types"

static void add_event(struct rank_data *r, sqlite3_stmt *st)
{
	const char *cat = (const char *)sqlite3_column_text(st, 1);
	const char *name = (const char *)sqlite3_column_text(st, 2);
	enum type t = type_of(cat, name);
	struct ev *e;
	size_t i;

	if (t == T_NONE || t == T_MEMORY)
		return;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 4096;
		r->e = ta_xrealloc(r->e, r->cap * sizeof(*r->e));
	}
	e = &r->e[r->n];
	memset(e, 0, sizeof(*e));
	e->type = t;
	e->op = -1;
	e->ts = (double)sqlite3_column_int64(st, 3) / 1000.0;
	e->end = e->ts + (double)sqlite3_column_int64(st, 4) / 1000.0;
	if (!r->keys)
		r->keys = ta_intern_new();
	e->has_ext = sqlite3_column_type(st, 5) != SQLITE_NULL;
	e->ext = tb_key(r->keys, st, 5);   /* "a" and "b" are two ids to the plugin */
	e->has_corr = sqlite3_column_int64(st, 6) != -1;
	e->corr = sqlite3_column_int64(st, 6);
	/* int(name.split('#')[1]); one int() refuses: the plugin fails */
	if (t == T_STEP && !py_int(name + 13, strcspn(name + 13, "#"), &e->step))
		return;
	for (i = 0; name && i < sizeof(comm_ops) / sizeof(*comm_ops); i++)
		e->comm_name |= strcmp(name, comm_ops[i]) == 0;
	if (e->comm_name && (t == T_OPERATOR || t == T_PYTHON || t == T_UA)) {
		if (r->nops == r->capops) {
			r->capops = r->capops ? r->capops * 2 : 64;
			r->ops = ta_xrealloc(r->ops, r->capops * sizeof(*r->ops));
		}
		r->ops[r->nops] = (struct comm_op){ ta_xstrdup(name), col_dup(st, 7),
						    col_dup(st, 8) };
		e->op = (long)r->nops++;
	}
	e->dataloader = name && ((strncmp(name, "enumerate(DataLoader)#", 22) == 0 &&
				  strlen(name) >= 9 &&
				  strcmp(name + strlen(name) - 9, ".__next__") == 0) ||
				 strncmp(name, "enumerate(DataPipe)#", 20) == 0);
	r->n++;
}

static void result_free(struct result *res)
{
	free(res->steps);
	free(res->costs);
	free(res->overlap);
}

static void flush(struct ta_table *t, int64_t rank, struct rank_data *r)
{
	struct result res;

	analyse(r, &res);
	if (res.no_cpu)
		ta_table_warn(t, "rank %lld: no step and no CPU op: the plugin's one step runs "
			      "from sys.maxsize to -sys.maxsize - 1 µs, a total of -2^64 µs, "
			      "shown as it shows it", (long long)rank);
	emit(t, rank, &res);
	result_free(&res);
	rank_data_reset(r);
}

static void rank_data_free(struct rank_data *r)
{
	rank_data_reset(r);
	free(r->e);
	free(r->ops);
	if (r->keys)
		ta_intern_free(r->keys);
	r->keys = NULL;
}

/* One rank's events, in the plugin's order (by ts, stably). */
static int load_rank(sqlite3 *db, int64_t rank, struct rank_data *r, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	if (ta_db_prepare(db, "SELECT rank, " EV_COLS " FROM trace_x WHERE rank = ?1"
			  " ORDER BY ts, idx", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		add_event(r, st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		rank_data_free(r);
		ta_db_failed(db, err);
		return -1;
	}
	return 0;
}

int tb_steps_window(sqlite3 *db, int64_t rank, double *start, double *end,
		    struct ta_error *err)
{
	struct rank_data r;
	struct result res;
	int has;

	if (load_rank(db, rank, &r, err) < 0)
		return -1;
	analyse(&r, &res);
	has = res.nsteps > 0;
	if (has) {
		*start = res.steps[0].a;
		*end = res.steps[res.nsteps - 1].b;
	}
	result_free(&res);
	rank_data_free(&r);
	return has;
}

double tb_ranges_union(struct tb_range *v, size_t n)
{
	struct ranges r = { v, n, n };

	merge(&r);
	return sum_of(&r);
}

static int by_start_end(const void *x, const void *y)
{
	const struct tb_range *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b > b->b ? -1 : a->b < b->b;
}

static int node_order(const void *x, const void *y)
{
	const struct tb_comm_node *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end > b->end ? -1 : a->end < b->end;
}

/* event_parser.py's communication_data and communication.py's
 * generate_communication_nodes: nodes by External id (a later op of the
 * same id takes the earlier one's place), NCCL's kernels added to them,
 * none when both libraries are in the trace; sorted, and each given the
 * step that holds it (the walk stops at the first that fits none). */
static void comm_nodes(const struct rank_data *r, const struct result *res,
		       struct tb_comm_rank *c)
{
	struct tb_map by_ext;
	long none = -1;   /* the node of the ops without an External id */
	size_t i, n = 0, index = 0;
	size_t *cap;
	int nccl = 0, gloo = 0;

	c->nodes = ta_xcalloc(r->nops + 1, sizeof(*c->nodes));
	cap = ta_xcalloc(r->nops + 1, sizeof(*cap));
	tb_map_init(&by_ext, r->n + 1);   /* the kernels look their ids up too */
	for (i = 0; i < r->n; i++) {
		const struct ev *e = &r->e[i];
		const struct comm_op *op;
		struct tb_comm_node *d;
		long *at;

		if (e->op < 0)
			continue;
		op = &r->ops[e->op];
		at = e->has_ext ? tb_map_at(&by_ext, e->ext) : &none;
		if (*at < 0) {
			*at = (long)n++;
		} else {   /* replaced: a new node in the old one's place */
			free(c->nodes[*at].k);
			c->nodes[*at].k = NULL;
			c->nodes[*at].nk = 0;
			cap[*at] = 0;
		}
		d = &c->nodes[*at];
		d->name = op->name;
		d->dims = op->dims;
		d->types = op->types;
		d->start = e->ts;
		d->end = e->end;
		if (!cap[*at]) {
			cap[*at] = 4;
			d->k = ta_xmalloc(cap[*at] * sizeof(*d->k));
		}
		d->k[d->nk++] = (struct tb_range){ e->ts, e->end };
		nccl |= strncmp(op->name, "nccl:", 5) == 0;
		gloo |= strncmp(op->name, "gloo:", 5) == 0;
	}
	for (i = 0; nccl && i < r->n; i++) {
		const struct ev *e = &r->e[i];
		long at;
		struct tb_comm_node *d;

		if (e->type != T_KERNEL)
			continue;
		at = e->has_ext ? *tb_map_at(&by_ext, e->ext) : none;
		if (at < 0)
			continue;
		d = &c->nodes[at];
		if (d->nk == cap[at]) {
			cap[at] *= 2;
			d->k = ta_xrealloc(d->k, cap[at] * sizeof(*d->k));
		}
		d->k[d->nk++] = (struct tb_range){ e->ts, e->end };
	}
	tb_map_free(&by_ext);
	free(cap);
	/* the names belong to the rank's ops: the caller keeps them */
	for (i = 0; i < n; i++) {
		c->nodes[i].name = ta_xstrdup(c->nodes[i].name);
		c->nodes[i].dims = c->nodes[i].dims ? ta_xstrdup(c->nodes[i].dims) : NULL;
		c->nodes[i].types = c->nodes[i].types ? ta_xstrdup(c->nodes[i].types) : NULL;
	}
	c->nnodes = n;
	if (nccl && gloo) {   /* "Multiple communication libs": no view */
		c->nnodes = 0;
		for (i = 0; i < n; i++) {
			free(c->nodes[i].name);
			free(c->nodes[i].dims);
			free(c->nodes[i].types);
			free(c->nodes[i].k);
		}
	}
	for (i = 0; i < c->nnodes; i++)
		ta_qsort(c->nodes[i].k, c->nodes[i].nk, sizeof(*c->nodes[i].k), by_start_end);
	ta_qsort(c->nodes, c->nnodes, sizeof(*c->nodes), node_order);
	for (i = 0; i < c->nnodes; i++) {
		struct tb_comm_node *d = &c->nodes[i];

		while (index < res->nsteps) {
			if (d->start >= res->steps[index].a && d->end <= res->steps[index].b) {
				d->has_step = 1;
				d->step = res->steps[index].name;
				break;
			} else if (d->start >= res->steps[index].b) {
				index++;
			} else {
				break;
			}
		}
		if (index >= res->nsteps)
			break;
	}
}

int tb_comm_rank_load(sqlite3 *db, int64_t rank, struct tb_comm_rank *c,
		      struct ta_error *err)
{
	struct rank_data r;
	struct result res;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (load_rank(db, rank, &r, err) < 0)
		return -1;
	analyse(&r, &res);
	c->nsteps = res.nsteps;
	c->step_names = ta_xmalloc((res.nsteps + 1) * sizeof(*c->step_names));
	for (i = 0; i < res.nsteps; i++)
		c->step_names[i] = res.steps[i].name;
	c->overlap = res.overlap;
	res.overlap = NULL;
	c->has_comm = res.has_comm;
	comm_nodes(&r, &res, c);
	result_free(&res);
	rank_data_free(&r);
	return 0;
}

void tb_comm_rank_free(struct tb_comm_rank *c)
{
	size_t i;

	for (i = 0; i < c->nnodes; i++) {
		free(c->nodes[i].name);
		free(c->nodes[i].dims);
		free(c->nodes[i].types);
		free(c->nodes[i].k);
		free(c->nodes[i].real);
	}
	free(c->nodes);
	free(c->step_names);
	free(c->overlap);
	memset(c, 0, sizeof(*c));
}

int ta_overview_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		       struct ta_error *err)
{
	struct rank_data r;
	sqlite3_stmt *st = NULL;
	struct ta_table *t;
	int64_t rank = 0;
	int rc, first = 1;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	if (ta_model_prepare(db, q, 0, err) < 0 ||
	    ta_db_prepare(db, "SELECT s.rank, t.cat, t.name, t.ts, t.dur, t.external_id,"
			  " t.correlation, t.input_dims, t.input_types FROM sel_ranks s"
			  " LEFT JOIN trace_x t ON t.rank = s.rank"
			  " ORDER BY s.rank, t.ts, t.idx", &st, err) < 0)
		return -1;
	t = ta_table_new("Step time breakdown (the TensorBoard plugin's Overview)", cols, NCOLS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!first && sqlite3_column_int64(st, 0) != rank)
			flush(t, rank, &r);
		first = 0;
		rank = sqlite3_column_int64(st, 0);
		add_event(&r, st);
	}
	if (!first)
		flush(t, rank, &r);
	rank_data_free(&r);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ta_table_free(t);
		ta_db_failed(db, err);
		return -1;
	}
	*out = t;
	return 0;
}
