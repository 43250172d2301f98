/* The TensorBoard profiler plugin's Overview (tb-semantics.md), right on
 * today's traces: each moment of each kept step goes to exactly one
 * category, the first of kernel, memcpy, memset, communication, runtime,
 * data loader, CPU exec that is running then, else other; and per rank
 * the GPU summary over its kept steps: utilization, est. SM efficiency,
 * est. achieved occupancy and the tensor-core share of kernel time.
 * Where it differs from the plugin, and why: DIFFERENCES FROM THE
 * TENSORBOARD PLUGIN in the man page (communication is the collectives'
 * kernels, driver-API launches are runtime and their kernels counted,
 * ProfilerStep's GPU copies are not steps, occupancy a kernel's profiler
 * could not compute is left out). */
#include "ta_command.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_model.h"
#include "ta_people.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum part { R_KERNEL, R_MEMCPY, R_MEMSET, R_COMM, R_RUNTIME, R_DATALOADER,
	    R_CPU, R_OTHER, NPARTS };

static const struct ta_col step_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "kernel_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "memcpy_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "memset_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "communication_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "runtime_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "dataloader_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "cpu_exec_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "other_us", TA_COL_REAL, TA_UNIT_US, 0 },
};
#define NSTEP_COLS (sizeof(step_cols) / sizeof(*step_cols))

/* per rank: the steps' average breakdown and the GPU summary */
static const struct ta_col sum_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "steps", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "step_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "kernel_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "memcpy_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "memset_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "communication_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "runtime_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "dataloader_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "cpu_exec_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "other_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "gpu_util_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "sm_efficiency_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "occupancy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "occupancy_unknown", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "tensor_core_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "matmul_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	/* what the rank's steps already use, 0 or 1 (a graph launch call,
	 * a Triton kernel in them): advice does not recommend it */
	{ "cuda_graphs", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "compiled", TA_COL_INT, TA_UNIT_NONE, 0 },
	/* (and DataLoader worker processes: the main process's range over
	 * each batch names its iterator) */
	{ "loader_workers", TA_COL_INT, TA_UNIT_NONE, 0 },
	/* how far the GPU runs behind the host: the median time from a
	 * kernel's launch call to its start, over the steps' kernels (the
	 * host's runtime time is then waiting, not work: advice) */
	{ "launch_lag_us", TA_COL_REAL, TA_UNIT_US, 0 },
};
#define NSUM_COLS (sizeof(sum_cols) / sizeof(*sum_cols))
enum { S_UTIL = 11, S_SM, S_OCC, S_OCC_UNKNOWN, S_TC, S_MATMUL, S_GRAPHS,
	S_COMPILED, S_WORKERS, S_LAG };

const struct ta_overview_opts ta_overview_defaults = { 0 };

/* A row's end, pending in the sweep: part, and for kernels what the GPU
 * summary sums. */
struct point {
	int64_t t;
	int part;
	int kernel;         /* a kernel (not a copy or set) */
	double bpsm;        /* kernels: blocks per SM (0: not known) */
};

struct window {
	int64_t step, ts, end;   /* step -1: no steps, the rank's span */
	int64_t parts[NPARTS];
};

/* The sweep runs as rows come, in time order: it holds the rows running
 * at a moment (a heap of their ends), not the rank's rows (6M events
 * once took 720 MB). */
struct rank_work {
	struct point *heap;      /* min-heap of pending ends */
	size_t n, cap;
	struct window *w;
	size_t nw, capw, at;
	int64_t w0, w1;          /* every window: [first start, last end) */
	int64_t prev;            /* the sweep's time */
	int count[NPARTS];       /* rows of each part running */
	int64_t kernels;         /* kernels running */
	double bpsm;             /* their blocks per SM, summed */
	int64_t kernel_ns, tc_ns, mm_ns, occ_ns, util_ns;
	double occ_sum, sm_sum;
	int64_t occ_unknown;
	int graphs, triton;      /* the steps replay CUDA graphs, run compiled
				  * (Triton) kernels, load in DataLoader */
	int workers;             /* workers: advice does not recommend them */
	struct ta_labels *names, *cats, *hosts;  /* by name id: judge_gpu's,
						  * none, judge_host's */
};

/* The kept steps' windows (none: the rank's span, as one). */
static int load_windows(sqlite3 *db, int64_t rank, struct rank_work *r,
			struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_db_prepare(db, TA_WINDOWS_SQL, &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct window w;

		memset(&w, 0, sizeof(w));
		w.step = sqlite3_column_int64(st, 0);
		w.ts = sqlite3_column_int64(st, 1);
		w.end = sqlite3_column_int64(st, 2);
		if (sqlite3_column_type(st, 1) == SQLITE_NULL || w.end < w.ts)
			continue;
		if (r->nw == r->capw) {
			r->capw = r->capw ? 2 * r->capw : 16;
			r->w = ta_xrealloc(r->w, r->capw * sizeof(*r->w));
		}
		r->w[r->nw++] = w;
	}
	sqlite3_finalize(st);
	if (r->nw) {
		r->w0 = r->w[0].ts;
		r->w1 = r->w[r->nw - 1].end;
	}
	r->prev = r->w0;
	return ta_db_done(db, rc, err);
}

/* The part of [ts, ts + dur) inside [w0, w1). */
static int64_t clipped(const struct rank_work *r, int64_t ts, int64_t dur)
{
	int64_t end = ta_add_sat(ts, dur);
	int64_t a = ts > r->w0 ? ts : r->w0, b = end < r->w1 ? end : r->w1;

	return b > a ? b - a : 0;
}

/* seg [a, b) goes to part: each window's share of it */
static void credit(struct rank_work *r, int64_t a, int64_t b, int part)
{
	size_t i;

	while (r->at < r->nw && r->w[r->at].end <= a)
		r->at++;
	for (i = r->at; i < r->nw && r->w[i].ts < b; i++) {
		int64_t x = a > r->w[i].ts ? a : r->w[i].ts;
		int64_t y = b < r->w[i].end ? b : r->w[i].end;

		if (y > x)
			r->w[i].parts[part] = ta_add_sat(r->w[i].parts[part], y - x);
	}
}

/* The sweep to t: [prev, t) to the first part running; the GPU summary's
 * busy time and blocks per SM on the way. */
static void advance(struct rank_work *r, int64_t t)
{
	int part;

	if (t > r->w1)
		t = r->w1;
	if (t <= r->prev)
		return;
	for (part = 0; part < R_OTHER && !r->count[part]; part++)
		;
	credit(r, r->prev, t, part);
	if (r->kernels > 0) {
		r->util_ns = ta_add_sat(r->util_ns, t - r->prev);
		r->sm_sum += (r->bpsm < 1 ? (r->bpsm > 0 ? r->bpsm : 0) : 1) *
			     (double)(t - r->prev);
	}
	r->prev = t;
}

static void running(struct rank_work *r, const struct point *p, int d)
{
	r->count[p->part] += d;
	if (p->kernel) {
		r->kernels = ta_add_sat(r->kernels, d);
		r->bpsm += d * p->bpsm;
	}
}

static void heap_push(struct rank_work *r, struct point p)
{
	size_t i;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->heap = ta_xrealloc(r->heap, r->cap * sizeof(*r->heap));
	}
	for (i = r->n++; i > 0 && r->heap[(i - 1) / 2].t > p.t; i = (i - 1) / 2)
		r->heap[i] = r->heap[(i - 1) / 2];
	r->heap[i] = p;
}

static struct point heap_pop(struct rank_work *r)
{
	struct point top = r->heap[0], last = r->heap[--r->n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < r->n) {
		if (c + 1 < r->n && r->heap[c + 1].t < r->heap[c].t)
			c++;
		if (r->heap[c].t >= last.t)
			break;
		r->heap[i] = r->heap[c];
		i = c;
	}
	if (r->n)
		r->heap[i] = last;
	return top;
}

/* The rows that ended by t leave the sweep. */
static void end_until(struct rank_work *r, int64_t t)
{
	while (r->n && r->heap[0].t <= t) {
		struct point p = heap_pop(r);

		advance(r, p.t);
		running(r, &p, -1);
	}
}

/* A row, in time order: it runs from ts to ts + dur (the model's: a
 * negative duration in the file is 0, as in every command). */
static void add_row(struct rank_work *r, int64_t ts, int64_t dur, int part,
		    double bpsm, int kernel)
{
	struct point p = { ta_add_sat(ts, dur), part, kernel, bpsm };

	if (dur <= 0 || ts >= r->w1 || p.t <= r->w0)
		return;
	end_until(r, ts);
	advance(r, ts);
	running(r, &p, 1);
	heap_push(r, p);
}

/* GPU work (kernels, communication's by kind, copies, sets, with what the
 * GPU summary reads) and host work (runtime and driver calls, gloo's
 * collectives (on the CPU: their ranges are the communication; NCCL's
 * nccl:* ranges only enqueue its kernels), data loading (the DataLoader's
 * and DataPipe's ranges, and a record_function range the user named so,
 * such as "data_loading": the plugin called those CPU exec), every other
 * CPU op and record_function range (Python frames and the steps
 * themselves are in no category)), each in time order, merged here. */
static const char gpu_sql[] =
"SELECT g.ts, g.dur, COALESCE(ta_kind_known(g.name, g.cat, 0), ta_kind_learn(g.name,"
"  g.cat, 0, (SELECT name FROM label WHERE name_id = g.name), (SELECT name FROM"
"  label WHERE name_id = g.cat))), g.cat = " TA_CAT_MEMCPY ","
" g.cat = " TA_CAT_MEMSET ", g.blocks_per_sm, g.occupancy, g.name, g.shared_mem, g.cat"
" FROM gpu g WHERE g.rank = ?1 AND g.ts < ?3 AND g.ts + g.dur > ?2 ORDER BY g.ts";
/* (column 2: NULL for a call, else the host row's role) */
static const char host_sql[] =
"SELECT ts, dur, NULL, name FROM calls WHERE rank = ?1 AND ts < ?3 AND ts + dur > ?2"
" UNION ALL SELECT h.ts, h.dur, h.role, h.name FROM host h"
" WHERE h.rank = ?1 AND h.ts < ?3 AND h.ts + h.dur > ?2"
" AND h.cat IS NOT " TA_CAT_PYTHON " AND h.name NOT IN (SELECT name_id FROM label"
"  WHERE name GLOB 'ProfilerStep#*') ORDER BY 1";

/* What a name says, read once a name (labels.c): the kernels' shares, and
 * the host rows' parts; a JOIN with label and these tests per row were
 * most of what the rows cost. */
#define NAME_TC TA_NAME_TENSOR_CORE
#define NAME_MATMUL TA_NAME_MATMUL
#define NAME_GLOO 4u          /* gloo's collectives */
#define NAME_LOADER 8u        /* the DataLoader's or a DataPipe's */
#define NAME_LOAD_WORDS 16u   /* "data ... load" in any case */
#define NAME_NULL 32u         /* no text: no category (a GLOB of NULL) */
#define NAME_GRAPH 64u        /* a CUDA (HIP) graph launch call */
#define NAME_WORKERS 128u     /* a batch from DataLoader worker processes */
#define NAME_TRITON 64u       /* (a GPU row's) a compiled (Triton) kernel */

static unsigned judge_gpu(const char *name)
{
	return name ? (ta_is_tensor_core(name) ? NAME_TC : 0) |
		      (ta_is_matmul(name) ? NAME_MATMUL : 0) |
		      (strncmp(name, "triton_", 7) == 0 ? NAME_TRITON : 0) : 0;
}

static unsigned judge_host(const char *name)
{
	if (!name)
		return NAME_NULL;
	return (sqlite3_strglob("gloo:*", name) == 0 ? NAME_GLOO : 0) |
	       (sqlite3_strglob("enumerate(DataLoader)#*", name) == 0 ||
		sqlite3_strglob("enumerate(DataPipe)#*", name) == 0 ? NAME_LOADER : 0) |
	       (sqlite3_strlike("%data%load%", name, 0) == 0 ? NAME_LOAD_WORDS : 0) |
	       (sqlite3_strglob("cudaGraphLaunch*", name) == 0 ||
		sqlite3_strglob("cuGraphLaunch*", name) == 0 ||
		sqlite3_strglob("hipGraphLaunch*", name) == 0 ? NAME_GRAPH : 0) |
	       (sqlite3_strglob("*_MultiProcessingDataLoaderIter*", name) == 0 ?
		NAME_WORKERS : 0);
}

/* A GPU row: into the sweep, and into the GPU summary. */
static void gpu_row(struct rank_work *r, sqlite3_stmt *st)
{
	int64_t ts = sqlite3_column_int64(st, 0), dur = sqlite3_column_int64(st, 1);
	int kind = sqlite3_column_int(st, 2), kernel, part;
	double bpsm = sqlite3_column_double(st, 5);
	int64_t in = clipped(r, ts, dur);
	unsigned traits = ta_labels_get(r->names, sqlite3_column_value(st, 7));

	/* (the rows a JOIN with label drops) */
	if (traits == TA_LABEL_NONE ||
	    ta_labels_get(r->cats, sqlite3_column_value(st, 9)) == TA_LABEL_NONE)
		return;
	part = sqlite3_column_int(st, 3) ? R_MEMCPY :
	       sqlite3_column_int(st, 4) ? R_MEMSET :
	       kind == TA_KIND_COMM ? R_COMM : kind == TA_KIND_MEMORY ?
	       R_MEMCPY : R_KERNEL;
	kernel = part == R_KERNEL || part == R_COMM;
	add_row(r, ts, dur, part, bpsm > 0 && isfinite(bpsm) ? bpsm : 0, kernel);
	if (in > 0 && (traits & NAME_TRITON))
		r->triton = 1;
	if (!kernel || in == 0)
		return;
	/* the tensor-core and matrix-work shares are of compute kernels: a
	 * collective waiting for a late peer is neither */
	if (part == R_KERNEL) {
		r->kernel_ns = ta_add_sat(r->kernel_ns, in);
		if (traits & TA_NAME_TENSOR_CORE)
			r->tc_ns = ta_add_sat(r->tc_ns, in);
		if (traits & TA_NAME_MATMUL)
			r->mm_ns = ta_add_sat(r->mm_ns, in);
	}
	if (sqlite3_column_type(st, 6) != SQLITE_NULL) {
		double occ = sqlite3_column_double(st, 6);

		if (ta_occupancy_unknown(occ, sqlite3_column_int64(st, 8))) {
			r->occ_unknown++;
		} else if (occ >= 0 && occ <= 100) {
			r->occ_sum += occ * (double)in;
			r->occ_ns = ta_add_sat(r->occ_ns, in);
		}
	}
}

static void host_row(struct rank_work *r, sqlite3_stmt *st)
{
	int role = sqlite3_column_int(st, 2), part = R_RUNTIME;

	if (sqlite3_column_type(st, 2) == SQLITE_NULL) { /* a call */
		unsigned name = ta_labels_get(r->hosts, sqlite3_column_value(st, 3));

		if (name != TA_LABEL_NONE && (name & NAME_GRAPH) &&
		    clipped(r, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)) > 0)
			r->graphs = 1;
	} else {
		unsigned name = ta_labels_get(r->hosts, sqlite3_column_value(st, 3));

		if (name == TA_LABEL_NONE || (name & NAME_NULL))
			return; /* (the JOIN's and the GLOB's) */
		if ((name & NAME_WORKERS) &&
		    clipped(r, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)) > 0)
			r->workers = 1;
		part = name & NAME_GLOO ? R_COMM : name & NAME_LOADER ||
		       (role == TA_ROLE_CPU_ANN && name & NAME_LOAD_WORDS) ?
		       R_DATALOADER : R_CPU;
	}
	add_row(r, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), part, 0, 0);
}

static int sweep(sqlite3 *db, int64_t rank, struct rank_work *r,
		 struct ta_error *err)
{
	sqlite3_stmt *g = NULL, *h = NULL;
	int rg, rh, k;

	if (ta_db_prepare(db, gpu_sql, &g, err) < 0 ||
	    ta_db_prepare(db, host_sql, &h, err) < 0) {
		sqlite3_finalize(g);
		return -1;
	}
	for (k = 0; k < 2; k++) {
		sqlite3_bind_int64(k ? h : g, 1, rank);
		sqlite3_bind_int64(k ? h : g, 2, r->w0);
		sqlite3_bind_int64(k ? h : g, 3, r->w1);
	}
	rg = sqlite3_step(g);
	rh = sqlite3_step(h);
	while (rg == SQLITE_ROW || rh == SQLITE_ROW) {
		if (rh != SQLITE_ROW || (rg == SQLITE_ROW &&
		    sqlite3_column_int64(g, 0) <= sqlite3_column_int64(h, 0))) {
			gpu_row(r, g);
			rg = sqlite3_step(g);
		} else {
			host_row(r, h);
			rh = sqlite3_step(h);
		}
	}
	/* the failed step's error before anything resets it */
	if (rg != SQLITE_DONE || rh != SQLITE_DONE) {
		ta_db_done(db, rg != SQLITE_DONE ? rg : rh, err);
		sqlite3_finalize(g);
		sqlite3_finalize(h);
		return -1;
	}
	end_until(r, INT64_MAX);
	advance(r, r->w1);
	sqlite3_finalize(g);
	sqlite3_finalize(h);
	return ta_labels_failed(r->names, err) < 0 || ta_labels_failed(r->cats, err) < 0 ||
	       ta_labels_failed(r->hosts, err) < 0 ? -1 : 0;
}

static double us(int64_t ns)
{
	return (double)ns / 1000.0;
}

static void add_rows(struct ta_table *t, struct ta_table *sum, int64_t rank,
		     const struct rank_work *r)
{
	int64_t total[NPARTS] = { 0 }, steps_ns = 0, span = r->w1 - r->w0;
	size_t i, s, c;
	int part;

	for (i = 0; i < r->nw; i++) {
		size_t row = ta_table_add_row(t);
		int64_t len = r->w[i].end - r->w[i].ts;

		ta_table_set_int(t, row, 0, rank);
		if (r->w[i].step >= 0)
			ta_table_set_int(t, row, 1, r->w[i].step);
		ta_table_set_real(t, row, 2, us(len));
		steps_ns = ta_add_sat(steps_ns, len);
		for (part = 0; part < NPARTS; part++) {
			ta_table_set_real(t, row, 3 + (size_t)part, us(r->w[i].parts[part]));
			total[part] = ta_add_sat(total[part], r->w[i].parts[part]);
		}
	}
	s = ta_table_add_row(sum);
	ta_table_set_int(sum, s, 0, rank);
	ta_table_set_int(sum, s, 1, (int64_t)r->nw);
	ta_table_set_int(sum, s, S_GRAPHS, r->graphs);
	ta_table_set_int(sum, s, S_COMPILED, r->triton);
	ta_table_set_int(sum, s, S_WORKERS, r->workers);
	if (!r->nw)
		return;
	ta_table_set_real(sum, s, 2, us(steps_ns) / (double)r->nw);
	for (c = 0; c < NPARTS; c++)
		ta_table_set_real(sum, s, 3 + c, us(total[c]) / (double)r->nw);
	if (span > 0) {
		ta_table_set_real(sum, s, S_UTIL, 100.0 * (double)r->util_ns / (double)span);
		ta_table_set_real(sum, s, S_SM, 100.0 * r->sm_sum / (double)span);
	}
	if (r->occ_ns > 0)
		ta_table_set_real(sum, s, S_OCC, r->occ_sum / (double)r->occ_ns);
	ta_table_set_int(sum, s, S_OCC_UNKNOWN, r->occ_unknown);
	if (r->kernel_ns > 0) {
		ta_table_set_real(sum, s, S_TC, 100.0 * (double)r->tc_ns / (double)r->kernel_ns);
		ta_table_set_real(sum, s, S_MATMUL, 100.0 * (double)r->mm_ns / (double)r->kernel_ns);
	}
}

/* The median time from the launch call to the start of the rank's
 * kernels in [w0, w1): into the summary's row s (none: empty). */
static int launch_lag(sqlite3 *db, int64_t rank, const struct rank_work *r,
		      struct ta_table *sum, size_t s, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int64_t *v = NULL;
	size_t n = 0, cap = 0;
	int rc;

	if (ta_db_prepare(db, "SELECT ts - launch_ts FROM dev WHERE rank = ?1 AND ts >= ?2"
			  " AND ts < ?3 AND launch_ts IS NOT NULL AND kind = "
			  TA_SQL(TA_KIND_COMPUTE), &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_int64(st, 2, r->w0);
	sqlite3_bind_int64(st, 3, r->w1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			v = ta_xrealloc(v, cap * sizeof(*v));
		}
		v[n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE && n) {
		ta_qsort(v, n, sizeof(*v), ta_cmp_i64);
		ta_table_set_real(sum, s, S_LAG, (double)v[n / 2] / 1000.0);
	}
	free(v);
	return ta_db_done(db, rc, err);
}

static int one_rank(sqlite3 *db, int64_t rank, struct ta_table *t,
		    struct ta_table *sum, struct ta_error *err)
{
	struct rank_work r;
	int rc;

	memset(&r, 0, sizeof(r));
	if (!(r.names = ta_labels_new(db, judge_gpu, err)) ||
	    !(r.cats = ta_labels_new(db, NULL, err)) ||
	    !(r.hosts = ta_labels_new(db, judge_host, err))) {
		ta_labels_free(r.names);
		ta_labels_free(r.cats);
		return -1;
	}
	rc = load_windows(db, rank, &r, err);
	if (rc == 0 && r.nw)
		rc = sweep(db, rank, &r, err);
	if (rc == 0) {
		if (!r.nw)
			ta_table_warn(t, "rank %lld: no step and no GPU work: nothing to "
				      "break down", (long long)rank);
		add_rows(t, sum, rank, &r);
		if (r.nw)
			rc = launch_lag(db, rank, &r, sum, sum->nrows - 1, err);
	}
	free(r.heap);
	free(r.w);
	ta_labels_free(r.names);
	ta_labels_free(r.cats);
	ta_labels_free(r.hosts);
	return rc;
}

int ta_overview_run(sqlite3 *db, const struct ta_query *q,
		    const struct ta_overview_opts *o, struct ta_table **out,
		    struct ta_error *err)
{
	struct ta_table *t = ta_table_new("Step time breakdown", step_cols, NSTEP_COLS);
	struct ta_table *sum = ta_table_new("GPU summary", sum_cols, NSUM_COLS);
	sqlite3_stmt *st = NULL;
	int rc = 0, step;

	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV | TA_NEED_HOST, err) < 0 ||
	    ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank", &st, err) < 0)
		goto fail;
	while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
		rc = one_rank(db, sqlite3_column_int64(st, 0), t, sum, err);
	sqlite3_finalize(st);
	if (rc < 0)
		goto fail;
	if (o->summary) {
		ta_buf_add(&sum->warnings, t->warnings.s ? t->warnings.s : "",
			   t->warnings.len);
		ta_buf_reset(&t->warnings);
		/* the steps, for the text: which ranks had none (their window
		 * the whole trace, not "its step"); no format prints it */
		sum->also = t;
		*out = sum;
	} else {
		t->also = sum;
		*out = t;
	}
	return 0;
fail:
	ta_table_free(t);
	ta_table_free(sum);
	return -1;
}
