/* The critical path of each step: the chain of work that the step's end
 * waited for, found by walking back from the end along the dependency that
 * was satisfied last. With realised times every dependency edge weighs
 * the time it took, so the longest path through the step's dependency
 * graph is the step itself, and the chain of binding dependencies is that
 * path; what lies on it is what bounds the step.
 *
 * Dependencies, as HTA's critical path analysis draws them:
 *   - a kernel's start waits for whichever of these came last: the
 *     previous kernel on its stream (the time between is gap), its launch
 *     call (launch delay, then the call itself on the CPU), or the last
 *     kernel to end on another stream (cudaStreamWaitEvent: torch 2.11's
 *     traces carry no event ids, so the cross-stream dependency is the
 *     work that ended last before the kernel could start);
 *   - a kernel's end waits for its start (compute, communication or copy
 *     time); a collective's end waits for its last member's arrival
 *     (peers.c): the path goes on on that rank, on its clock;
 *   - the host: a thread's time is serial, back to the last blocking sync
 *     on it; a sync's return waits for the kernel that ended during it;
 *     a thread with nothing running, or whose run of work began while
 *     the main thread finished an op (the autograd engine's, handed the
 *     backward), waits for the main thread; the main thread, paused in
 *     its ops while another thread ran and finished (loss.backward()
 *     blocked on the engine's thread), waits for that thread.
 * Each step of the walk goes back in time, so it ends. */
#include "critical_int.h"
#include "analyses/host/host.h"
#include "analyses/common/ids.h"
#include "analyses/ranks/peers.h"
#include "ta_db.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller. */
const struct ta_critical_opts ta_critical_defaults = { -1, 0, NULL, NULL, 1, NULL,
						     "ProfilerStep", 0, 0, NULL };

#define cat_names ta_critical_parts

/* A collective's last member is followed when it came this much later. */
#define PEER_NS 50000
/* CPU time under no range is named by sampling the ops under it. */
#define CPU_SAMPLE_NS 50000
#define CPU_SAMPLES 1024
/* How far back a search for the span over a point looks. */
#define SPAN_SCAN 4096

struct cp_kernel {
	int64_t ts, end, call_ts, call_end, call_tid, stream, name;
	int kind, has_call;
	long prev;                  /* the previous kernel on its stream */
	int64_t reach;              /* the latest end of it and those before */
	int64_t idx, pid, tid;      /* the event, for --trace */
	int ids;                    /* pid and tid are integers */
};

struct cp_call {                    /* runtime calls, by thread then start */
	int64_t tid, ts, end, idx;
	int sync;                   /* a blocking call: not launch time */
	int copy;                   /* a copy or memset call: a pageable copy
				     * holds the host for the whole copy */
	int64_t gts, gend;          /* an async copy call's copy on the GPU
				     * (gend < gts: not known) */
	int64_t gsum;               /* its GPU time: several activities of
				     * one call (a damaged trace) are not
				     * the time between them */
};

struct cp_span {                    /* host ops and ranges, by thread, start */
	int64_t tid, ts, end, name;
	int range;                  /* a record_function range (not a step) */
	int step;                   /* a ProfilerStep */
	int op;                     /* an op (not a range or Python frame) */
	int64_t idx, pid;           /* the event, for --trace */
	int ids;                    /* pid and tid are integers */
	long parent;                /* the innermost span of its thread open
				     * when it began, -1: none (span_at) */
	long root;                  /* the outermost (itself: none) */
	int64_t over_end;           /* the latest end of the ops over it
				     * (INT64_MIN: none) */
};

struct cp_rank {
	int64_t rank, offset, main_tid;
	int64_t first_ts;           /* its trace's first event: nothing before */
	struct cp_kernel *k;        /* by start */
	size_t nk;
	long *by_end;               /* kernel indices by end */
	struct cp_call *calls;
	size_t ncalls;
	struct cp_span *spans;
	size_t nspans;
	int64_t *tids;              /* the threads with spans */
	size_t ntids;
	struct ta_host host;        /* blocking syncs and spins */
	int loaded;
};

struct walk {
	sqlite3 *db;
	int hta_rows;               /* the model's HTA rules (its launch view) */
	struct cp_rank *ranks;
	size_t nranks, home;
	int64_t home_rank;          /* whose path (others' time: also C_ON_PEERS) */
	/* on a shard: the walk stops at a late peer of another shard, and
	 * says where it would go on (exit_rank, exit_ts: that peer's kernel) */
	int pieces, exited;
	int64_t exit_rank, exit_ts;
	const struct ta_peers *peers;
	const struct ta_peer_wait **cpu_waits;  /* gloo's, by rank and end */
	size_t ncpu;
	int64_t start_job;          /* the step's start, on the job's clock */
	struct acc acc;
	int names;                  /* collect named items */
	const struct ta_critical_opts *o;
	int64_t matched;            /* path time of the --what-if items */
	int64_t busy;               /* the home step's GPU busy time (the
				     * union of its kernels in the window) */
	int failed;
	const char *why;            /* what failed, if not the database */
	int64_t step;               /* the step walked */
	int stuck;                  /* walks stopped by contradicting times */
	sqlite3_stmt *name_st;      /* names by id, */
	struct ta_intern *seen;     /* the ids read, */
	char **cache;               /* and their names, by ta_intern's id - 1 */
	size_t ncache;
	size_t nloaded;             /* ranks loaded now */
	size_t bound;               /* steps a walk may take: 64 + 4 x (the
				     * loaded ranks' kernels, syncs and calls +
				     * 16 a rank) */
};

/* The home rank's trace entries on the path, for --trace (in the order walked:
 * from the step's end back). */
static void node(struct walk *w, size_t ri, int64_t idx, int64_t ts,
		 int64_t pid, int64_t tid, int ids)
{
	struct ta_path_nodes *n = w->o ? w->o->nodes : NULL;

	if (!n || w->ranks[ri].rank != w->home_rank || w->ranks[ri].rank != n->rank)
		return;
	if (n->n && n->v[n->n - 1].idx == idx && n->v[n->n - 1].step == w->step)
		return;
	if (n->n == n->cap) {
		n->cap = n->cap ? 2 * n->cap : 256;
		n->v = ta_xrealloc(n->v, n->cap * sizeof(*n->v));
	}
	n->v[n->n++] = (struct ta_path_node){ w->step, idx, ts, pid, tid, ids };
}

/* A kernel waiting for its launch call: its correlation, its index. */
struct kernel_corr {
	int64_t correlation;
	size_t k;
};

static int cmp_kernel_corr(const void *x, const void *y)
{
	const struct kernel_corr *a = x, *b = y;

	return a->correlation < b->correlation ? -1 : a->correlation > b->correlation;
}

static void add_kernel(struct cp_rank *r, size_t *cap, sqlite3_stmt *st, int64_t call_ts,
		       int64_t call_end, int64_t call_tid, int has_call)
{
	if (r->nk == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		r->k = ta_xrealloc(r->k, *cap * sizeof(*r->k));
	}
	r->k[r->nk++] = (struct cp_kernel){ sqlite3_column_int64(st, 0),
		sqlite3_column_int64(st, 1), call_ts, call_end, call_tid,
		sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 4),
		sqlite3_column_int(st, 3), has_call, -1, 0,
		sqlite3_column_int64(st, 8), sqlite3_column_int64(st, 9),
		sqlite3_column_int64(st, 10),
		sqlite3_column_type(st, 9) == SQLITE_INTEGER &&
		sqlite3_column_type(st, 10) == SQLITE_INTEGER };
}

#define KERNEL_KINDS "d.kind IN (" TA_SQL(TA_KIND_COMPUTE) ", " TA_SQL(TA_KIND_COMM) ", " \
	TA_SQL(TA_KIND_MEMORY) ")"

/* The rank's kernels in start order. HTA's rules have a launch view of
 * their own: joined in SQL. Ours: each kernel's launch is its
 * correlation's last runtime call, found as load_calls reads them (a join
 * of every kernel with the launch view was a third of the path's
 * loading), from the kernels by correlation (*wait, *nwait). */
static int load_kernels(sqlite3 *db, struct cp_rank *r, int hta,
			struct kernel_corr **wait, size_t *nwait, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0, wcap = 0;
	int rc;

	*wait = NULL;
	*nwait = 0;
	if (hta ? ta_db_prepare(db, "SELECT d.ts, d.ts + d.dur, d.stream, d.kind, d.name,"
				" l.ts, l.ts + l.dur, l.tid, d.idx, d.pid, d.tid FROM dev d"
				" LEFT JOIN launch l"
				" ON l.rank = d.rank AND l.correlation = d.correlation"
				" AND d.correlation != -1 WHERE d.rank = ? AND " KERNEL_KINDS
				" ORDER BY d.ts", &st, err) < 0 :
	    ta_db_prepare(db, "SELECT d.ts, d.ts + d.dur, d.stream, d.kind, d.name,"
			  " d.correlation, typeof(d.correlation) = 'integer', NULL, d.idx,"
			  " d.pid, d.tid FROM dev d WHERE d.rank = ? AND " KERNEL_KINDS
			  " ORDER BY d.ts", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, r->rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (hta) {
			add_kernel(r, &cap, st, sqlite3_column_int64(st, 5),
				   sqlite3_column_int64(st, 6), sqlite3_column_int64(st, 7),
				   sqlite3_column_type(st, 5) != SQLITE_NULL);
			continue;
		}
		add_kernel(r, &cap, st, 0, 0, 0, 0);
		if (!sqlite3_column_int(st, 6) || sqlite3_column_int64(st, 5) == -1)
			continue;
		if (*nwait == wcap) {
			wcap = wcap ? 2 * wcap : 1024;
			*wait = ta_xrealloc(*wait, wcap * sizeof(**wait));
		}
		(*wait)[(*nwait)++] = (struct kernel_corr){ sqlite3_column_int64(st, 5),
			r->nk - 1 };
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0) {
		free(*wait);
		*wait = NULL;
		return -1;
	}
	ta_qsort(*wait, *nwait, sizeof(**wait), cmp_kernel_corr);
	return 0;
}

static const struct cp_rank *sort_rank;

static int cmp_stream(const void *x, const void *y)
{
	const struct cp_kernel *a = &sort_rank->k[*(const long *)x];
	const struct cp_kernel *b = &sort_rank->k[*(const long *)y];

	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int cmp_end(const void *x, const void *y)
{
	const struct cp_kernel *a = &sort_rank->k[*(const long *)x];
	const struct cp_kernel *b = &sort_rank->k[*(const long *)y];

	return a->end < b->end ? -1 : a->end > b->end;
}

/* Each kernel's predecessor on its stream, and the kernels by end. */
static void link_kernels(struct cp_rank *r)
{
	long *by = ta_xcalloc(r->nk + 1, sizeof(*by));
	size_t i;

	for (i = 0; i < r->nk; i++)
		by[i] = (long)i;
	sort_rank = r;
	ta_qsort(by, r->nk, sizeof(*by), cmp_stream);
	for (i = 1; i < r->nk; i++)
		if (r->k[by[i]].stream == r->k[by[i - 1]].stream)
			r->k[by[i]].prev = by[i - 1];
	ta_qsort(by, r->nk, sizeof(*by), cmp_end);
	r->by_end = by;
	for (i = 0; i < r->nk; i++)
		r->k[i].reach = i && r->k[i - 1].reach > r->k[i].end ?
				r->k[i - 1].reach : r->k[i].end;
}

static int is_blocking(const char *name)
{
	return strstr(name, "Synchronize") || strcmp(name, "cudaMemcpy") == 0 ||
	       strcmp(name, "cudaMemcpy2D") == 0 || strcmp(name, "cudaMemset") == 0 ||
	       strstr(name, "Query");
}

static int is_copy(const char *name)
{
	return strncmp(name, "cudaMemcpy", 10) == 0 ||
	       strncmp(name, "cudaMemset", 10) == 0 ||
	       strncmp(name, "cuMemcpy", 8) == 0 || strncmp(name, "cuMemset", 8) == 0 ||
	       strncmp(name, "hipMemcpy", 9) == 0 || strncmp(name, "hipMemset", 9) == 0;
}

/* By thread and start; at one start the shorter first, then by event. */
static int cmp_span(const void *x, const void *y)
{
	const struct cp_span *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Each span's parent: the innermost span of its thread still open when
 * it began (spans by thread and start), by a stack of the open ones. */
static void span_parents(struct cp_span *s, size_t n)
{
	long *open = ta_xcalloc(n + 1, sizeof(*open));
	size_t i, depth = 0;

	for (i = 0; i < n; i++) {
		if (i && s[i].tid != s[i - 1].tid)
			depth = 0;
		while (depth && s[open[depth - 1]].end < s[i].ts)
			depth--;
		s[i].parent = depth ? open[depth - 1] : -1;
		s[i].root = (long)i;
		s[i].over_end = INT64_MIN;
		if (depth) {
			const struct cp_span *up = &s[open[depth - 1]];

			s[i].root = up->root;
			s[i].over_end = up->op && up->end > up->over_end ? up->end :
					up->over_end;
		}
		open[depth++] = (long)i;
	}
	free(open);
}

/* r's threads with spans (spans by thread). */
static void span_threads(struct cp_rank *r)
{
	size_t i;

	r->tids = ta_xcalloc(r->nspans + 1, sizeof(*r->tids));
	r->ntids = 0;
	for (i = 0; i < r->nspans; i++)
		if (!i || r->spans[i].tid != r->spans[i - 1].tid)
			r->tids[r->ntids++] = r->spans[i].tid;
}

/* By thread and start; at one start, file order. */
static int cmp_call(const void *x, const void *y)
{
	const struct cp_call *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* What a runtime call's name says (is_blocking, is_copy), once a name:
 * a rank's calls have a few dozen names. */
struct call_kind {
	int64_t id;
	int sync, copy;
};

static const struct call_kind *call_kind(sqlite3_stmt *name, struct call_kind **v,
					 size_t *n, int64_t id)
{
	const char *s;
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*v)[i].id == id)
			return &(*v)[i];
	*v = ta_xrealloc(*v, (*n + 1) * sizeof(**v));
	sqlite3_bind_int64(name, 1, id);
	s = sqlite3_step(name) == SQLITE_ROW ? (const char *)sqlite3_column_text(name, 0) : NULL;
	(*v)[*n] = (struct call_kind){ id, s && is_blocking(s), s && is_copy(s) };
	sqlite3_reset(name);
	return &(*v)[(*n)++];
}

/* Rows read in an order that is cmp's within each thread (a thread's
 * calls come in correlation order, which is their time order; spans in
 * events_cpu's (ts, dur, idx)) put in cmp's order, which is by thread
 * first: the threads are dealt out in turn, keeping the order within
 * each, rather than sorted (sorting a rank's 260 k spans and 250 k calls
 * was 460 M instructions of a cached diagnose). tid_at: a row's thread.
 * A rank has a few dozen threads; past 64, or where a thread's rows are
 * not in cmp's order after all, a sort. */
static void by_thread(void *rows, size_t n, size_t size,
		      int64_t (*tid_at)(const void *row),
		      int (*cmp)(const void *, const void *))
{
	int64_t tids[64];
	size_t ntids = 0, start[65] = { 0 }, i, k;
	char *v = rows, *out;

	if (n < 2)      /* (none: rows may be NULL, which memcpy may not take) */
		return;
	for (i = 0; i < n && ntids <= 64; i++) {
		int64_t t = tid_at(v + i * size);

		for (k = 0; k < ntids && tids[k] != t; k++)
			;
		if (k == ntids && ntids < 64)
			tids[ntids] = t;
		ntids += k == ntids;
	}
	if (ntids > 64) {
		ta_qsort(rows, n, size, cmp);
		return;
	}
	ta_qsort(tids, ntids, sizeof(*tids), ta_cmp_i64);
	for (i = 0; i < n; i++) {
		for (k = 0; tids[k] != tid_at(v + i * size); k++)
			;
		start[k + 1]++;
	}
	for (k = 0; k < ntids; k++)
		start[k + 1] += start[k];
	out = ta_xcalloc(n + 1, size);
	for (i = 0; i < n; i++) {
		for (k = 0; tids[k] != tid_at(v + i * size); k++)
			;
		memcpy(out + start[k]++ * size, v + i * size, size);
	}
	memcpy(v, out, n * size);
	free(out);
	for (i = 1; i < n; i++)
		if (cmp(v + (i - 1) * size, v + i * size) > 0) {
			ta_qsort(rows, n, size, cmp);
			return;
		}
}

static int64_t span_tid(const void *row)
{
	return ((const struct cp_span *)row)->tid;
}

static int64_t call_tid(const void *row)
{
	return ((const struct cp_call *)row)->tid;
}

/* The rank's runtime calls whose name is a label's (named), sorted here
 * (SQL's sort of every call with its name's text was a sixth of the path
 * on a DDP rank), and the launch of each kernel in wait (load_kernels),
 * from one scan of its calls in (correlation, event) order: two were a
 * twentieth of diagnose. */
static int load_calls(sqlite3 *db, struct cp_rank *r, const struct ta_ids *named,
		      const struct ta_ids *pageable, const struct kernel_corr *wait,
		      size_t nwait, struct ta_error *err)
{
	sqlite3_stmt *st = NULL, *name = NULL;
	struct call_kind *kinds = NULL;
	size_t cap = 0, nkinds = 0, w = 0;
	int rc;

	if (ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?", &name, err) < 0 ||
	    ta_db_prepare(db, "SELECT c.tid, c.ts, c.ts + c.dur, c.name, c.idx,"
			  " c.correlation, c.dur IS NOT NULL FROM calls c"
			  " WHERE c.rank = ? ORDER BY c.correlation, c.idx", &st, err) < 0) {
		sqlite3_finalize(name);
		return -1;
	}
	sqlite3_bind_int64(st, 1, r->rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct call_kind *k;
		int has_ts = sqlite3_column_type(st, 1) != SQLITE_NULL;
		int64_t gts = 0, gend = -1, gsum = 0;
		int staged = 0;   /* a pageable copy: the host stages it */

		/* the kernels of its correlation take it, the last call of
		 * one overwriting the earlier (text: no kernel's integer
		 * matches it) */
		if (sqlite3_column_type(st, 5) == SQLITE_INTEGER) {
			int64_t c = sqlite3_column_int64(st, 5);
			size_t v;

			while (w < nwait && wait[w].correlation < c)
				w++;
			for (v = w; v < nwait && wait[v].correlation == c; v++) {
				struct cp_kernel *kk = &r->k[wait[v].k];

				kk->call_ts = sqlite3_column_int64(st, 1);
				kk->call_end = sqlite3_column_int64(st, 2);
				kk->call_tid = sqlite3_column_int64(st, 0);
				kk->has_call = has_ts;
				if (gend < gts || kk->ts < gts)
					gts = kk->ts;
				if (kk->end > gend)
					gend = kk->end;
				gsum = ta_add_sat(gsum, kk->end - kk->ts);
				staged |= ta_ids_has(pageable, kk->name);
			}
			if (staged)
				gts = 0, gend = -1;
		}
		/* a name that is no label's was left out (a join) */
		if (!has_ts || !sqlite3_column_int(st, 6) ||
		    sqlite3_column_type(st, 3) != SQLITE_INTEGER ||
		    !ta_ids_has(named, sqlite3_column_int64(st, 3)))
			continue;
		k = call_kind(name, &kinds, &nkinds, sqlite3_column_int64(st, 3));
		if (r->ncalls == cap) {
			cap = cap ? 2 * cap : 16;
			r->calls = ta_xrealloc(r->calls, cap * sizeof(*r->calls));
		}
		r->calls[r->ncalls++] = (struct cp_call){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			sqlite3_column_int64(st, 4), k->sync, k->copy, gts, gend, gsum };
	}
	sqlite3_finalize(st);
	sqlite3_finalize(name);
	free(kinds);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	by_thread(r->calls, r->ncalls, sizeof(*r->calls), call_tid, cmp_call);
	return 0;
}

/* named: the names that are a label's (load_calls read the calls). */
static int load_host(sqlite3 *db, struct cp_rank *r, const struct ta_ids *named,
		     const struct ta_host *pre, struct ta_error *err)
{
	struct ta_ids steps;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, have_main;

	/* which names are steps: a set read once and tested here (a name
	 * and two GLOBs a row, then two IN tests a row, were most of the
	 * walk's loading) */
	if (ta_ids_read(db, "SELECT name_id FROM label WHERE name GLOB"
			" 'ProfilerStep#*'", &steps, err) < 0)
		return -1;
	if (ta_db_prepare(db, "SELECT h.tid, h.ts, h.ts + h.dur, h.name, h.role,"
			  " h.idx, h.pid, typeof(h.pid) = 'integer' AND"
			  " typeof(h.tid) = 'integer', h.cat IS (" TA_CAT_PYTHON ")"
			  " FROM host h WHERE h.rank = ?"
			  " AND h.dur IS NOT NULL AND h.tid IS NOT NULL"
			  " ORDER BY h.ts, h.dur, h.idx", &st, err) < 0) {
		free(steps.v);
		return -1;
	}
	sqlite3_bind_int64(st, 1, r->rank);
	r->main_tid = INT64_MIN;
	have_main = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* a name that is no label's was left out (a join) */
		int id = sqlite3_column_type(st, 3) == SQLITE_INTEGER, step;

		if (!id || !ta_ids_has(named, sqlite3_column_int64(st, 3)))
			continue;
		step = ta_ids_has(&steps, sqlite3_column_int64(st, 3));

		if (r->nspans == cap) {
			cap = cap ? 2 * cap : 16;
			r->spans = ta_xrealloc(r->spans, cap * sizeof(*r->spans));
		}
		/* a range: a record_function range that is not a step (a
		 * range without a name is none: SQL's NOT IN said NULL) */
		r->spans[r->nspans++] = (struct cp_span){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			sqlite3_column_int64(st, 3),
			sqlite3_column_int(st, 4) == TA_ROLE_CPU_ANN && !step, step,
			sqlite3_column_int(st, 4) == TA_ROLE_CPU_OP &&
			!sqlite3_column_int(st, 8),
			sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 6),
			sqlite3_column_int(st, 7), -1, -1, INT64_MIN };
		/* the main thread: the steps' (the last of them by thread, as
		 * the rows came when SQL sorted them) */
		if (step && (!have_main || sqlite3_column_int64(st, 0) > r->main_tid))
			r->main_tid = sqlite3_column_int64(st, 0), have_main = 1;
	}
	sqlite3_finalize(st);
	free(steps.v);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	by_thread(r->spans, r->nspans, sizeof(*r->spans), span_tid, cmp_span);
	span_parents(r->spans, r->nspans);
	span_threads(r);
	if (!have_main) { /* no steps: the thread of most calls */
		size_t i, best = 0, run = 0;

		r->main_tid = r->ncalls ? r->calls[0].tid : 0;
		for (i = 0; i < r->ncalls; i++) {
			run = i && r->calls[i].tid == r->calls[i - 1].tid ? run + 1 : 1;
			if (run > best)
				best = run, r->main_tid = r->calls[i].tid;
		}
	}
	return ta_host_adopt(pre, db, r->rank, &r->host) ? 0 :
	       ta_host_load(db, r->rank, &r->host, err);
}

/* pre: a rank's syncs loaded already, or NULL */
static int load_rank(sqlite3 *db, struct cp_rank *r, int hta,
		     const struct ta_host *pre, struct ta_error *err)
{
	struct kernel_corr *wait = NULL;
	struct ta_ids named = { NULL, 0 }, pageable = { NULL, 0 };
	size_t nwait = 0;
	char sql[128];
	int rc;

	if (r->loaded)
		return 0;
	r->loaded = 1;
	snprintf(sql, sizeof(sql), "SELECT min(first_ts) FROM rank_span WHERE rank = %lld",
		 (long long)r->rank);
	rc = ta_ids_read(db, "SELECT name_id FROM label", &named, err) < 0 ||
	     ta_ids_read(db, "SELECT name_id FROM label WHERE name GLOB"
			 " '*Pageable*'", &pageable, err) < 0 ||
	     load_kernels(db, r, hta, &wait, &nwait, err) < 0 ||
	     load_calls(db, r, &named, &pageable, wait, nwait, err) < 0 ? -1 : 0;
	free(wait);  /* before the host's rows come: memory */
	free(pageable.v);
	rc = rc < 0 || load_host(db, r, &named, pre, err) < 0 ||
	     ta_db_get_int(db, sql, INT64_MIN, &r->first_ts, err) < 0 ? -1 : 0;
	free(named.v);
	if (rc == 0)
		link_kernels(r);
	return rc;
}

static void free_rank(struct cp_rank *r)
{
	free(r->k);
	free(r->by_end);
	free(r->calls);
	free(r->spans);
	free(r->tids);
	ta_host_free(&r->host);
}

/* The last kernel that ended at or before t (and after lo), of another
 * stream than skip (-2: any); -1 if none. */
static long ended_before(const struct cp_rank *r, int64_t t, int64_t lo,
			 int64_t skip)
{
	size_t a = 0, b = r->nk, seen = 0;
	long i;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (r->k[r->by_end[m]].end <= t)
			a = m + 1;
		else
			b = m;
	}
	for (i = (long)a - 1; i >= 0 && seen++ < 64; i--) {
		const struct cp_kernel *k = &r->k[r->by_end[i]];

		if (k->end < lo)
			return -1;
		if (k->stream != skip)
			return r->by_end[i];
	}
	return -1;
}

/* The first span of thread tid begun at t or later (of another
 * thread, or nspans: none). */
static size_t span_from(const struct cp_rank *r, int64_t tid, int64_t t)
{
	size_t a = 0, b = r->nspans;

	while (a < b) {
		size_t m = a + (b - a) / 2;
		const struct cp_span *s = &r->spans[m];

		if (s->tid < tid || (s->tid == tid && s->ts < t))
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* The innermost span of thread tid over t, or NULL. */
static const struct cp_span *span_at(const struct cp_rank *r, int64_t tid,
				     int64_t t)
{
	size_t a = span_from(r, tid, t), seen = 0;
	long i;

	/* up from the last span begun: what covers t was open when it
	 * began (a Python loop's 9,164 calls of perf_counter in one frame
	 * put the frame past any scan back, and its 3.3 ms read "(no op or
	 * range)") */
	for (i = (long)a - 1; i >= 0 && r->spans[i].tid == tid && seen++ < SPAN_SCAN;
	     i = r->spans[i].parent)
		if (r->spans[i].end >= t)
			return &r->spans[i];
	seen = 0;
	for (i = (long)a - 1; i >= 0 && seen++ < SPAN_SCAN; i--) {
		const struct cp_span *s = &r->spans[i];

		if (s->tid != tid)
			return NULL;
		if (s->end >= t)
			return s;
	}
	return NULL;
}

/* The outermost span of its thread over span i (i, if none is). */
static long span_root(const struct cp_rank *r, long i)
{
	return r->spans[i].root;
}

/* The latest end within [e, s] of a span of thread tid that took time
 * (INT64_MIN: none). */
static int64_t last_end_in(const struct cp_rank *r, int64_t tid, int64_t e,
			   int64_t s)
{
	long i = (long)span_from(r, tid, s + 1) - 1;
	int64_t best = INT64_MIN;
	size_t seen = 0;

	/* begun in [e, s]: the last one not still open at s (those open at s
	 * nest: few) */
	for (; i >= 0 && r->spans[i].tid == tid && r->spans[i].ts >= e &&
	       seen++ < SPAN_SCAN; i--)
		if (r->spans[i].end <= s)
			break;
	/* it (or the last begun before e) and the spans over it: any other
	 * ended before it began */
	for (; i >= 0 && r->spans[i].tid == tid && seen++ < SPAN_SCAN;
	     i = r->spans[i].parent)
		if (r->spans[i].end >= e && r->spans[i].end <= s &&
		    r->spans[i].end > r->spans[i].ts && r->spans[i].end > best)
			best = r->spans[i].end;
	return best;
}

/* The time within [e, f] that thread tid spent in its spans. */
static int64_t covered(const struct cp_rank *r, int64_t tid, int64_t e, int64_t f)
{
	size_t i = span_from(r, tid, e), seen = 0;
	int64_t sum = 0, upto = e;

	if (i > 0 && r->spans[i - 1].tid == tid) {
		int64_t end = r->spans[span_root(r, (long)i - 1)].end;

		upto = end < e ? e : end > f ? f : end;
		sum = upto - e;
	}
	for (; i < r->nspans && r->spans[i].tid == tid && r->spans[i].ts < f &&
	       seen++ < 16 * SPAN_SCAN; i++) {
		int64_t a = r->spans[i].ts > upto ? r->spans[i].ts : upto;
		int64_t b = r->spans[i].end < f ? r->spans[i].end : f;

		if (b > a)
			sum += b - a, upto = b;
	}
	return sum;
}

/* The latest end of an op over span i: its own, or an op's around it. */
static int64_t op_end(const struct cp_rank *r, long i)
{
	return r->spans[i].over_end > r->spans[i].end ? r->spans[i].over_end :
	       r->spans[i].end;
}

/* On the main thread at t, after a: the latest pause in its ops that it
 * spent waiting for other threads, which together ran through at least
 * half of the pause, the last of them to finish a span in it the one it
 * waited for: the autograd engine's thread, which runs the backward ops
 * while loss.backward() blocks (or the threads of several devices, in
 * turn). The main thread ran on from the pause's end (returned), *f when
 * the other finished, *who the other; INT64_MIN: none. (Ranges and
 * Python frames are no ops: a range or frame around loss.backward() is
 * over the pause.) */
static int64_t main_waited(const struct cp_rank *r, int64_t a, int64_t t,
			   int64_t *f, int64_t *who)
{
	int64_t tid = r->main_tid, edge = t;    /* its ops cover [edge, t] */
	long i = (long)span_from(r, tid, t) - 1;
	size_t seen = 0, y;

	for (;; i--) {
		int64_t e = a, best = INT64_MIN, ran = 0;

		if (i >= 0 && (r->spans[i].tid != tid || seen++ > 16 * SPAN_SCAN))
			return INT64_MIN;
		if (i >= 0 && !r->spans[i].op)
			continue;
		if (i >= 0 && (e = op_end(r, i)) < a)
			e = a;
		for (y = 0; e < edge && y < r->ntids; y++) {
			int64_t fy;

			if (r->tids[y] == tid ||
			    (fy = last_end_in(r, r->tids[y], e, edge)) == INT64_MIN)
				continue;
			ran += covered(r, r->tids[y], e, edge);
			if (fy > best)
				best = fy, *who = r->tids[y];
		}
		/* half of the pause, not of the time up to the last end: a
		 * side thread's op that outlasts one of the main thread's by
		 * a little held nothing (a pin_memory) */
		if (best != INT64_MIN && 2 * ran >= edge - e) {
			*f = best;
			return edge;
		}
		if (i < 0 || e <= a)
			return INT64_MIN;
		if (r->spans[i].ts < edge)
			edge = r->spans[i].ts;
		if (edge <= a)
			return INT64_MIN;
	}
}

/* Who handed thread tid (not the main one) its work in the pause [e, s]
 * of its spans: the thread that finished a span there last, the main
 * thread, or another that ran through at least half of the pause (one
 * device's autograd thread handing the next to another's); *at: where
 * the walk goes on there (the main thread: at s, its time up to the
 * hand-off its own; another: where it finished). -1: none. */
static int64_t handed_by(const struct cp_rank *r, int64_t tid, int64_t e,
			 int64_t s, int64_t *at)
{
	int64_t who = -1, last = last_end_in(r, r->main_tid, e, s), f;
	size_t y;

	if (last != INT64_MIN)
		who = r->main_tid, *at = s;
	for (y = 0; y < r->ntids; y++)
		if (r->tids[y] != tid && r->tids[y] != r->main_tid &&
		    (f = last_end_in(r, r->tids[y], e, s)) > last &&
		    2 * covered(r, r->tids[y], e, s) >= s - e)
			last = f, who = r->tids[y], *at = f;
	return who;
}

/* Where the run of work of thread tid (not the main one) over t began,
 * after a: the end of a pause in its spans during which another thread
 * handed it work (handed_by: *who, and where the walk goes on, returned).
 * The worker sat idle then: the autograd engine's thread before
 * loss.backward() runs the backward ops while the main thread blocks
 * (its pauses between tasks come with nothing finished elsewhere).
 * from_a: the time from a to its first span may be such a pause (a is
 * the step's start, not the end of a sync on it). INT64_MIN: none. */
static int64_t worker_woke(const struct cp_rank *r, int64_t tid, int64_t a,
			   int64_t t, int from_a, int64_t *who)
{
	long i = (long)span_from(r, tid, t) - 1, prev;
	size_t seen = 0;
	int64_t at;

	if (i < 0 || r->spans[i].tid != tid)
		return INT64_MIN;
	for (i = span_root(r, i); seen++ < 16 * SPAN_SCAN; i = prev) {
		int64_t s = r->spans[i].ts, e;

		if (s <= a)
			return INT64_MIN;
		prev = i > 0 && r->spans[i - 1].tid == tid ? span_root(r, i - 1) : -1;
		e = prev >= 0 ? r->spans[prev].end : a;
		if (e <= a) {
			if (!from_a)
				return INT64_MIN;
			e = a;
		}
		if (e < s && (*who = handed_by(r, tid, e, s, &at)) != -1)
			return at;
		if (prev < 0 || e == a)
			return INT64_MIN;
	}
	return INT64_MIN;
}

/* Whether an item is one --what-if rescales. */
static int what_if(const struct walk *w, enum cat c, const char *name)
{
	const char *k = w->o ? w->o->what_kind : NULL;

	if (!k)
		return 0;
	if (strcmp(k, "kernel") == 0 ? c != C_COMPUTE && c != C_COMM && c != C_MEMORY :
	    strcmp(k, cat_names[c]) != 0)
		return 0;
	return fnmatch(w->o->what_glob, name, 0) == 0;
}

static void add_n(struct walk *w, size_t ri, enum cat c, int64_t ns,
		  const char *name, int64_t count);
static void add_on(struct walk *w, int64_t rank, enum cat c, int64_t ns,
		   const char *name, int64_t count);

static void add(struct walk *w, size_t ri, enum cat c, int64_t ns,
		const char *name)
{
	add_n(w, ri, c, ns, name, 1);
}

/* ns of the path in an item, met count times more. */
static void add_n(struct walk *w, size_t ri, enum cat c, int64_t ns,
		  const char *name, int64_t count)
{
	add_on(w, w->ranks[ri].rank, c, ns, name, count);
}

/* The same, by the rank's number: a rank a shard has not loaded. */
static void add_on(struct walk *w, int64_t rank, enum cat c, int64_t ns,
		   const char *name, int64_t count)
{
	struct ta_buf key = { 0 };
	int home = rank == w->home_rank;

	if (ns <= 0)
		return;
	w->acc.cat[c] += ns;
	if (!home)
		w->acc.cat[C_ON_PEERS] += ns;
	if (what_if(w, c, name))
		w->matched += ns;
	if (!w->names)
		return;
	if (home) {
		cp_acc_item(&w->acc, (int)c, name, ns, count);
		return;
	}
	ta_buf_addf(&key, "rank %lld: %s", (long long)rank, name);
	cp_acc_item(&w->acc, (int)c, key.s, ns, count);
	ta_buf_free(&key);
}

/* A name by its id, cut to 511 bytes, read once: every kernel on a path
 * is named, and a statement for each cost a tenth of the instructions. */
static const char *name_of(struct walk *w, int64_t name_id)
{
	char buf[512], key[24];
	int rc, is_new;
	int64_t k;

	if (!w->names || name_id < 0)
		return "(unnamed)";
	snprintf(key, sizeof(key), "%lld", (long long)name_id);
	k = ta_intern(w->seen, key, strlen(key), &is_new);
	if (!is_new)
		return w->cache[k - 1];
	if (!w->name_st && sqlite3_prepare_v2(w->db, "SELECT name FROM label"
					      " WHERE name_id = ?", -1, &w->name_st,
					      NULL) != SQLITE_OK) {
		w->failed = 1;
		return "(unnamed)";
	}
	sqlite3_reset(w->name_st);
	sqlite3_bind_int64(w->name_st, 1, name_id);
	rc = sqlite3_step(w->name_st);
	if (rc == SQLITE_ROW)
		snprintf(buf, sizeof(buf), "%s", (const char *)sqlite3_column_text(w->name_st, 0));
	else
		snprintf(buf, sizeof(buf), "(unnamed)");
	w->failed |= rc != SQLITE_ROW && rc != SQLITE_DONE;
	w->cache = ta_xrealloc(w->cache, (size_t)k * sizeof(*w->cache));
	w->ncache = (size_t)k;
	return w->cache[k - 1] = ta_xstrdup(buf);
}

/* The launch and copy time of thread tid's runtime calls in [a, b]. A
 * thread is in one call at a time: calls that overlap (a damaged trace)
 * count once, the earlier's, so the two never exceed b - a. An async
 * copy call is copy time only while its copy ran on the GPU (a pageable
 * copy holds the host until it is done); the rest of it, all of a pinned
 * or device-to-device copy's call that returns before its copy runs, is
 * launch time, as any call's. A pageable copy's call is copy time whole
 * (the host copies into a staging buffer before the GPU's copy starts),
 * as is a blocking one's or one whose copy is not known. */
static void call_time(const struct cp_rank *r, int64_t tid, int64_t a, int64_t b,
		      int64_t *launch, int64_t *copy)
{
	size_t lo = 0, hi = r->ncalls;
	int64_t covered = a;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (r->calls[m].tid < tid || (r->calls[m].tid == tid && r->calls[m].end <= a))
			lo = m + 1;
		else
			hi = m;
	}
	for (; lo < r->ncalls && r->calls[lo].tid == tid && r->calls[lo].ts < b; lo++) {
		int64_t x = r->calls[lo].ts > covered ? r->calls[lo].ts : covered;
		int64_t y = r->calls[lo].end < b ? r->calls[lo].end : b;

		if (y <= x)
			continue;
		if (r->calls[lo].copy && !r->calls[lo].sync &&
		    r->calls[lo].gend >= r->calls[lo].gts) {
			int64_t g0 = r->calls[lo].gts > x ? r->calls[lo].gts : x;
			int64_t g1 = r->calls[lo].gend < y ? r->calls[lo].gend : y;
			int64_t held = g1 > g0 ? g1 - g0 : 0;

			if (held > r->calls[lo].gsum)
				held = r->calls[lo].gsum;

			*copy += held;
			*launch += y - x - held;
		} else if (r->calls[lo].copy)
			*copy += y - x;
		else if (!r->calls[lo].sync)
			*launch += y - x;
		covered = y;
	}
}

/* The record_function ranges of tid that reach into [a, b), at most
 * MAX_RANGES, found back from b (spans are by thread and start). */
#define MAX_RANGES 64
static size_t ranges_over(const struct cp_rank *r, int64_t tid, int64_t a,
			  int64_t b, const struct cp_span **rg)
{
	size_t lo = 0, hi = r->nspans, nr = 0, seen = 0;
	long x;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (r->spans[m].tid < tid || (r->spans[m].tid == tid && r->spans[m].ts < b))
			lo = m + 1;
		else
			hi = m;
	}
	for (x = (long)lo - 1; x >= 0 && seen++ < SPAN_SCAN && nr < MAX_RANGES; x--) {
		const struct cp_span *s = &r->spans[x];

		if (s->tid != tid)
			break;
		if (s->range && s->end > a)
			rg[nr++] = s;
	}
	/* and those begun before the scan reached, open over it: up the
	 * parents (a range over thousands of calls) */
	for (x = x >= 0 && r->spans[x].tid == tid ? x : -1, seen = 0;
	     x >= 0 && seen++ < SPAN_SCAN && nr < MAX_RANGES; x = r->spans[x].parent)
		if (r->spans[x].range && r->spans[x].end > a)
			rg[nr++] = &r->spans[x];
	return nr;
}

/* [p, q] with no range over it: the ops (or Python frames) under it,
 * sampled every 50 us at most 1024 times, share part; the op over its
 * middle alone took a 40 ms stall's name for what ran beside it, or 6 ms
 * of dispatch for one aten::empty_strided, and 16 samples gave a 49 us
 * op a sixteenth of a 5.6 ms stretch (353 us). */
static void sampled_ops(struct walk *w, size_t ri, int64_t tid, int64_t p,
			int64_t q, int64_t part)
{
	const struct cp_rank *r = &w->ranks[ri];
	const struct cp_span *last = NULL;
	int64_t k, nk = (q - p) / CPU_SAMPLE_NS;

	nk = nk < 1 ? 1 : nk > CPU_SAMPLES ? CPU_SAMPLES : nk;
	for (k = 0; k < nk; k++) {
		/* in double: (2k + 1) (q - p) passes int64 on a stretch of
		 * 52 days (a damaged trace's times) */
		int64_t at = p + (int64_t)((double)(q - p) * (double)(2 * k + 1) /
					   (double)(2 * nk));
		int64_t share = k + 1 == nk ? part - part / nk * (nk - 1) : part / nk;
		const struct cp_span *op;

		/* the last one again, when it still covers at and no span
		 * began since (spans by start): the search backwards is what
		 * costs */
		if (last && last->ts <= at && last->end >= at &&
		    (last + 1 == r->spans + r->nspans || last[1].tid != tid ||
		     last[1].ts > at))
			op = last;
		else
			op = span_at(r, tid, at);
		/* the step is no op: the time between its ops is the host's
		 * own (Python), not the step's */
		if (op && op->step)
			op = NULL;

		if (op && op != last)
			node(w, ri, op->idx, op->ts, op->pid, op->tid, op->ids);
		/* an op sampled again is met once */
		add_n(w, ri, C_CPU, share, op ? name_of(w, op->name) :
		      "(no op or range)", k == 0 || op != last);
		last = op;
	}
}

/* cpu ns of thread tid over [a, b], by the innermost record_function
 * range over each part (else the ops under it), scaled to leave out
 * launch time. */
static void named_cpu(struct walk *w, size_t ri, int64_t tid, int64_t a,
		      int64_t b, int64_t cpu)
{
	const struct cp_span *rg[MAX_RANGES];
	int64_t pts[2 * MAX_RANGES + 2], given = 0;
	size_t nr = ranges_over(&w->ranks[ri], tid, a, b, rg), np = 0, i, j;

	pts[np++] = a;
	pts[np++] = b;
	for (i = 0; i < nr; i++) {
		if (rg[i]->ts > a)
			pts[np++] = rg[i]->ts;
		if (rg[i]->end < b)
			pts[np++] = rg[i]->end;
	}
	for (i = 1; i < np; i++) /* insertion sort: few points */
		for (j = i; j > 0 && pts[j] < pts[j - 1]; j--) {
			int64_t v = pts[j];

			pts[j] = pts[j - 1], pts[j - 1] = v;
		}
	for (i = 0; i + 1 < np; i++) {
		int64_t p = pts[i], q = pts[i + 1], mid = p + (q - p) / 2, part;
		const struct cp_span *in = NULL;

		if (q <= p)
			continue;
		for (j = 0; j < nr; j++)
			if (rg[j]->ts <= mid && rg[j]->end >= mid &&
			    (!in || rg[j]->ts > in->ts))
				in = rg[j];
		part = i + 2 == np ? cpu - given :
		       (int64_t)((double)(q - p) * (double)cpu / (double)(b - a));
		given += part;
		if (in) {
			node(w, ri, in->idx, in->ts, in->pid, in->tid, in->ids);
			add(w, ri, C_CPU, part, name_of(w, in->name));
		} else {
			sampled_ops(w, ri, tid, p, q, part);
		}
	}
}

/* CPU time of thread tid over [a, b]: the runtime calls in it are launch
 * time, the rest is named by what ran (named_cpu). */
static void cpu_time(struct walk *w, size_t ri, int64_t tid, int64_t a, int64_t b)
{
	int64_t launch = 0, copy = 0;

	if (b <= a)
		return;
	call_time(&w->ranks[ri], tid, a, b, &launch, &copy);
	add(w, ri, C_LAUNCH, launch, "runtime calls");
	add(w, ri, C_MEMORY, copy, "copy calls");
	if (!w->names)
		add(w, ri, C_CPU, b - a - launch - copy, "");
	else
		named_cpu(w, ri, tid, a, b, b - a - launch - copy);
}

/* The first of the rank's syncs (by start) that starts at t or later. */
static size_t sync_from(const struct cp_rank *r, int64_t t)
{
	size_t a = 0, b = r->host.nsyncs;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (r->host.syncs[m].ts < t)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* The latest blocking sync on tid that returned in (lo, t]; NULL if none.
 * Syncs are by start: back from t, until none could end late enough (a
 * scan from the first made the walk quadratic in syncs). */
static const struct ta_sync *sync_before(const struct cp_rank *r, int64_t tid,
					 int64_t lo, int64_t t)
{
	const struct ta_sync *best = NULL;
	size_t a = sync_from(r, t);
	int64_t md = r->host.max_sync_dur;

	while (a-- > 0) {
		const struct ta_sync *s = &r->host.syncs[a];
		int64_t floor = best && best->end > lo ? best->end : lo;

		if (s->ts < INT64_MAX - md && s->ts + md <= floor)
			break; /* it and every earlier one end by floor */
		/* of equal ends, the earliest started (as a scan forward) */
		if (s->tid == tid && s->end <= t && s->end > lo && s->end > s->ts &&
		    (!best || s->end >= best->end))
			best = s;
	}
	return best;
}

/* The wait of collective k (of rank index ri) for its last member, if
 * another rank arrived after k started; NULL if none. */
static const struct ta_peer_wait *wait_of(const struct walk *w, size_t ri,
					  const struct cp_kernel *k)
{
	const struct ta_peers *p = w->peers;
	size_t lo = 0, hi = p->nwaits;
	int64_t rank = w->ranks[ri].rank;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (p->waits[m].rank < rank ||
		    (p->waits[m].rank == rank && p->waits[m].ts < k->ts))
			lo = m + 1;
		else
			hi = m;
	}
	if (lo >= p->nwaits || p->waits[lo].rank != rank || p->waits[lo].ts != k->ts)
		return NULL;
	return &p->waits[lo];
}

/* The first kernel of r that starts at ts or later (nk: none). */
static size_t kernel_from(const struct cp_rank *r, int64_t ts)
{
	size_t a = 0, b = r->nk;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (r->k[m].ts < ts)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* The first kernel of r that starts at ts, -1 if none. */
static long kernel_at(const struct cp_rank *r, int64_t ts)
{
	size_t a = kernel_from(r, ts);

	return a < r->nk && r->k[a].ts == ts ? (long)a : -1;
}

/* ranks[] is in rank order (walk_open): a binary search, as a scan per
 * lookup made 10^4 ranks quadratic. */
static int rank_index(const struct walk *w, int64_t rank)
{
	size_t lo = 0, hi = w->nranks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->ranks[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < w->nranks && w->ranks[lo].rank == rank ? (int)lo : -1;
}

/* Loads rank ri, its work counted in the walk's bound. */
static int load_walked(struct walk *w, size_t ri, struct ta_error *err)
{
	struct cp_rank *r = &w->ranks[ri];
	int rc;

	if (r->loaded)
		return 0;
	rc = load_rank(w->db, r, w->hta_rows, w->o ? w->o->host : NULL, err);
	w->bound += 4 * (r->nk + r->host.nsyncs + r->ncalls);
	w->nloaded++;
	return rc;
}

/* Between home ranks, with more than MAX_LOADED loaded, all are let go
 * (to be loaded again if a path reaches them): memory stays bounded by
 * the ranks one rank's walks reach, whatever the job's size. */
#define MAX_LOADED 256

static void unload_all(struct walk *w)
{
	size_t i;

	if (w->nloaded <= MAX_LOADED)
		return;
	for (i = 0; i < w->nranks; i++) {
		struct cp_rank *r = &w->ranks[i];
		int64_t rank = r->rank, offset = r->offset;

		if (!r->loaded)
			continue;
		free_rank(r);
		memset(r, 0, sizeof(*r));
		r->rank = rank;
		r->offset = offset;
	}
	w->nloaded = 0;
	/* the bound keeps what it counted: it only ever grows */
}

/* Rank index ri, loaded; 0 if it cannot be. */
static int loaded(struct walk *w, size_t ri)
{
	struct ta_error e = { 0, "", 0 };

	if (w->ranks[ri].loaded)
		return 1;
	if (load_walked(w, ri, &e) < 0)
		w->failed = 1;
	return !w->failed;
}

/* The late member that collective k waited for, when the path goes on
 * there: its rank index and kernel, with the time it arrived (on k's
 * clock). On a shard, a member of another shard: w->exited, 0. */
static int peer_of(struct walk *w, size_t ri, const struct cp_kernel *k,
		   size_t *pri, long *pk, int64_t *arrival)
{
	const struct ta_peer_wait *pw = wait_of(w, ri, k);
	int j;

	if (!pw)
		return 0;
	*arrival = pw->end;
	if ((j = rank_index(w, pw->peer)) < 0) {
		if (!w->pieces)
			return 0;
		w->exited = 1;
		w->exit_rank = pw->peer;
		w->exit_ts = pw->peer_ts;
		return 0;
	}
	if (!loaded(w, (size_t)j) || (*pk = kernel_at(&w->ranks[j], pw->peer_ts)) < 0)
		return 0;
	*pri = (size_t)j;
	return 1;
}

/* The latest of rank ri's gloo collectives that waited PEER_NS or more
 * for a late peer and ended in (a, t] while thread tid ran no op: the
 * thread waited for it (DDP's reducer waits for its buckets at the end of
 * backward, in no op of its own). NULL if none. */
static const struct ta_peer_wait *cpu_wait_in(const struct walk *w, size_t ri,
					      int64_t tid, int64_t a, int64_t t)
{
	const struct cp_rank *r = &w->ranks[ri];
	size_t lo = 0, hi = w->ncpu, seen;

	while (lo < hi) {   /* the first ending after t */
		size_t m = lo + (hi - lo) / 2;

		if (w->cpu_waits[m]->rank < r->rank ||
		    (w->cpu_waits[m]->rank == r->rank && w->cpu_waits[m]->done <= t))
			lo = m + 1;
		else
			hi = m;
	}
	/* a few back at most: a thread busy in ops as many collectives end
	 * waited for none of them (and a scan of all made walks quadratic) */
	for (seen = 0; lo-- > 0 && seen++ < 64;) {
		const struct ta_peer_wait *g = w->cpu_waits[lo];
		const struct cp_span *op;

		if (g->rank != r->rank || g->done <= a)
			return NULL;
		op = span_at(r, tid, g->done - 1);
		if (g->end - g->ts >= PEER_NS && (!op || op->range))
			return g;
	}
	return NULL;
}

static int cmp_cpu_wait(const void *x, const void *y)
{
	const struct ta_peer_wait *a = *(const struct ta_peer_wait *const *)x;
	const struct ta_peer_wait *b = *(const struct ta_peer_wait *const *)y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->done < b->done ? -1 : a->done > b->done;
}

static enum cat kernel_cat(int kind)
{
	return kind == TA_KIND_COMM ? C_COMM : kind == TA_KIND_MEMORY ? C_MEMORY :
	       C_COMPUTE;
}

/* Where a walk stands: rank index ri, time t, on a kernel (ki >= 0) or
 * on the host thread tid. */
struct pos {
	size_t ri;
	long ki;
	int64_t tid, t;
};

/* Collective g's transfer here, from its last member's arrival to
 * end_here: every member's work. Where the last member is the path's own
 * rank, the part until that member's own end is its own (a straggler
 * that came here through a member late only because this rank's previous
 * collective ended later: its path was not 7 ms on this rank's copy of
 * the collective both ran); what this member ran on after is this
 * rank's. */
static void add_transfer(struct walk *w, size_t ri, const struct ta_peer_wait *g,
			 int64_t end_here, enum cat c, const char *name)
{
	int64_t rank = w->ranks[ri].rank, all = end_here - g->end, mine = all;

	if (g->peer == w->home_rank && rank != w->home_rank && g->peer_done > g->peer_ts) {
		int64_t there = g->peer_done - ta_peers_offset(w->peers, g->peer) +
				ta_peers_offset(w->peers, rank);

		mine = end_here - there;
		mine = mine < 0 ? 0 : mine > all ? all : mine;
		add_on(w, g->peer, c, all - mine, name, 1);
	}
	add(w, ri, c, mine, name);
}

/* On the host at p->t, after the thread's last sync (a): a gloo
 * collective it waited for, ended since, whose last member came late:
 * the host time after it, its transfer (CPU time: gloo reduces on the
 * CPU), then the late member's host when it arrived, on its clock (1);
 * the walk ends in another shard (0); none (-1). A member not analysed:
 * the wait for it, then on here from the collective's start (1). */
static int follow_cpu_peer(struct walk *w, struct pos *p, int64_t a)
{
	const struct ta_peer_wait *g = cpu_wait_in(w, p->ri, p->tid, a, p->t);
	const struct cp_rank *r = &w->ranks[p->ri];
	char name[128], who[48];
	int j;

	if (!g)
		return -1;
	j = rank_index(w, g->peer);
	/* a member that arrived, on the job's clock, after the collective
	 * ended here (clocks or lengths that disagree) is not followed:
	 * time goes back; the matching's offsets, so that a shard, which
	 * holds one rank, decides as one database does */
	if (g->peer_ts - ta_peers_offset(w->peers, g->peer) >
	    g->done - ta_peers_offset(w->peers, r->rank))
		return -1;
	cpu_time(w, p->ri, p->tid, g->done, p->t);
	ta_peers_cpu_name(w->db, r->rank, g->ts, name, sizeof(name));
	add_transfer(w, p->ri, g, g->done, C_CPU, name);
	if (j < 0 && w->pieces) {
		w->exited = 1;
		w->exit_rank = g->peer;
		w->exit_ts = g->peer_ts;
		return 0;
	}
	if (j < 0 || !loaded(w, (size_t)j)) {
		if (w->failed)
			return 0;
		snprintf(who, sizeof(who), "rank %lld (not analysed)", (long long)g->peer);
		add(w, p->ri, C_PEER, g->end - g->ts, who);
		p->t = g->ts;
		return 1;
	}
	p->ri = (size_t)j;
	p->ki = -1;
	p->tid = w->ranks[j].main_tid;
	p->t = g->peer_ts;
	return 1;
}

/* On collective k: the transfer after its last member came, then that
 * member on its own clock (1); the walk ends in another shard (0); no
 * member to follow (-1, *arrival: when the last came, or INT64_MIN). A
 * member later by less than PEER_NS is no straggler: the path stays here
 * (balanced ranks would make it hop). */
static int follow_peer(struct walk *w, struct pos *p, const struct cp_kernel *k,
		       int64_t from, int64_t *arrival)
{
	const struct cp_rank *r = &w->ranks[p->ri];
	size_t pri = 0;
	long pk = -1;

	w->exited = 0;
	*arrival = INT64_MIN;
	if (k->kind != TA_KIND_COMM ||
	    !(peer_of(w, p->ri, k, &pri, &pk, arrival) || w->exited) ||
	    *arrival - from < PEER_NS || *arrival > p->t)
		return -1;
	/* a member that started, on the job's clock, after this point
	 * (collectives paired wrongly in a damaged trace) is not followed:
	 * time goes back (on a shard, the peer's start as the matching
	 * saw it: the same decision as one database's) */
	if (w->exited ? wait_of(w, p->ri, k)->peer_ts -
			ta_peers_offset(w->peers, wait_of(w, p->ri, k)->peer) >
			p->t - ta_peers_offset(w->peers, r->rank) :
	    w->ranks[pri].k[pk].ts - w->ranks[pri].offset > p->t - r->offset)
		return -1;
	add_transfer(w, p->ri, wait_of(w, p->ri, k), p->t, C_COMM, name_of(w, k->name));
	if (w->exited)
		return 0;
	p->ri = pri;
	p->ki = pk;
	p->t = w->ranks[pri].k[pk].ts;
	return 1;
}

/* Whether k's call is one the host waited in (ta_host's syncs: a
 * blocking copy's call among them). */
static int call_waited(const struct cp_rank *r, const struct cp_kernel *k)
{
	size_t a;

	for (a = sync_from(r, k->call_ts);
	     a < r->host.nsyncs && r->host.syncs[a].ts == k->call_ts; a++)
		if (r->host.syncs[a].tid == k->call_tid && !r->host.syncs[a].spin &&
		    r->host.syncs[a].end == k->call_end)
			return 1;
	return 0;
}

/* Before kernel k (p->t at its start): what it waited for, the latest of
 * its stream's previous kernel, its launch and any other kernel; 0 when
 * the step's start (lo) comes first. */
static int before_kernel(struct walk *w, struct pos *p, const struct cp_kernel *k,
			 int64_t lo)
{
	const struct cp_rank *r = &w->ranks[p->ri];
	int64_t t = p->t, ready = INT64_MIN;
	long other, best = -1;
	enum { NONE, STREAM, LAUNCH, OTHER } by = NONE;

	/* the stream's previous kernel, even when it ended after this one
	 * began: Hopper's programmatic dependent launch overlaps them by a
	 * few hundred ns, and a launch made long before is then no reason
	 * to leave the stream */
	if (k->prev >= 0 && r->k[k->prev].ts < t)
		ready = r->k[k->prev].end < t ? r->k[k->prev].end : t,
		by = STREAM, best = k->prev;
	/* a call that waited in itself for the stream (a copy into pageable
	 * memory, a sync: ta_host's) did not hold its work back: the stream
	 * did (the GEMMs ahead of a .cpu(), 22 ms, read as its call's copy
	 * time); a launch still running when its kernel began did */
	if (k->has_call && (k->call_end < t ? k->call_end : t) > ready &&
	    !(by == STREAM && k->call_end > t && k->call_ts < ready &&
	      call_waited(r, k)))
		ready = k->call_end < t ? k->call_end : t, by = LAUNCH;
	other = ended_before(r, t, INT64_MIN, k->stream);
	/* a zero-length kernel at t itself would not move the walk */
	if (other >= 0 && r->k[other].end > ready && r->k[other].ts < t)
		ready = r->k[other].end, by = OTHER, best = other;
	if (by == NONE) {
		add(w, p->ri, C_GAP, t - lo, "before the first kernel");
		return 0;
	}
	/* nothing before the step's start is its path */
	if (ready < lo) {
		add(w, p->ri, by == LAUNCH ? C_LAUNCH : C_GAP, t - lo,
		    by == LAUNCH ? "launch delay" : "between kernels");
		return 0;
	}
	if (by == LAUNCH) {
		add(w, p->ri, C_LAUNCH, t - ready, "launch delay");
		t = ready;
		cpu_time(w, p->ri, k->call_tid, k->call_ts > lo ? k->call_ts : lo, t);
		p->tid = k->call_tid;
		/* a call stamped after its kernel began (a damaged trace) must
		 * not move the walk forward */
		p->t = k->call_ts < t ? k->call_ts : t;
		p->ki = -1;
		return 1;
	}
	add(w, p->ri, C_GAP, t - ready, "between kernels");
	p->t = ready;
	p->ki = best;
	return 1;
}

/* On a kernel, at p->t <= its end: a late peer, else the kernel and what
 * it waited for; 0 when the walk ends. */
static int on_kernel(struct walk *w, struct pos *p, int64_t lo)
{
	const struct cp_kernel *k = &w->ranks[p->ri].k[p->ki];
	int64_t from = k->ts > lo ? k->ts : lo, arrival;
	int followed = follow_peer(w, p, k, from, &arrival);

	if (followed >= 0)
		return followed;
	w->exited = 0;
	if (k->kind == TA_KIND_COMM && arrival != INT64_MIN &&
	    arrival - from >= PEER_NS && arrival <= p->t) {
		/* a late member the walk cannot follow (its rank not
		 * analysed): the wait for it, then the kernel */
		char who[32];

		snprintf(who, sizeof(who), "rank %lld (not analysed)",
			 (long long)wait_of(w, p->ri, k)->peer);
		add(w, p->ri, C_COMM, p->t - arrival, name_of(w, k->name));
		add(w, p->ri, C_PEER, arrival - from, who);
		p->t = from;
	}
	add(w, p->ri, kernel_cat(k->kind), p->t - from, name_of(w, k->name));
	node(w, p->ri, k->idx, k->ts, k->pid, k->tid, k->ids);
	if (from == lo)
		return 0;
	p->t = k->ts;
	return before_kernel(w, p, k, lo);
}

/* On the host: serial back to the last sync that returned, then the
 * kernel it waited for; 0 when the walk ends. */
static int on_host(struct walk *w, struct pos *p, int64_t lo)
{
	const struct cp_rank *r = &w->ranks[p->ri];
	const struct ta_sync *s;
	int64_t a, woke, done = 0, other = r->main_tid;
	long k;
	int followed;

	if (p->tid != r->main_tid && !span_at(r, p->tid, p->t - 1))
		p->tid = r->main_tid; /* an idle worker waits for the main thread */
	s = sync_before(r, p->tid, lo, p->t);
	a = s ? s->end : lo;
	if (p->tid != r->main_tid)
		woke = worker_woke(r, p->tid, a, p->t, !s, &other);
	else if ((woke = main_waited(r, a, p->t, &done, &other)) != INT64_MIN)
		woke = done; /* from when the other finished: the main thread's */
	if (w->ncpu && (followed = follow_cpu_peer(w, p, woke > a ? woke : a)) >= 0)
		return followed;
	if (woke > a) {
		/* a worker waited for the thread that handed it work; the
		 * main thread for the worker it handed work to */
		cpu_time(w, p->ri, p->tid, woke, p->t);
		p->tid = other;
		p->t = woke;
		return 1;
	}
	if (a < r->first_ts) {
		cpu_time(w, p->ri, p->tid, r->first_ts, p->t);
		add(w, p->ri, C_GAP, r->first_ts - a, "before the trace began");
		return 0;
	}
	cpu_time(w, p->ri, p->tid, a, p->t);
	if (!s)
		return 0;
	p->t = s->end;
	k = ended_before(r, s->end, s->ts, -2);
	if (k >= 0) {
		const struct cp_span *op = span_at(r, p->tid, s->ts + (s->end - s->ts) / 2);

		add(w, p->ri, C_SYNC, s->end - (r->k[k].end > lo ? r->k[k].end : lo),
		    op ? name_of(w, op->name) : "(sync)");
		if (r->k[k].end <= lo)
			return 0;
		p->t = r->k[k].end;
		p->ki = k;
		return 1;
	}
	/* it returned at once: host time like any other */
	cpu_time(w, p->ri, p->tid, s->ts > lo ? s->ts : lo, s->end);
	p->t = s->ts;
	return 1;
}

/* Walks back from (rank ri, time t): on a kernel (ki >= 0) or on the host
 * thread tid. */
static void walk_back(struct walk *w, size_t ri, long ki, int64_t tid, int64_t t)
{
	struct pos p = { ri, ki, tid, t };
	size_t guard = 0, limit = 0;

	for (;;) {
		/* each step moves back in time or to an earlier kernel: a bound on
		 * the steps (ranks load as the walk reaches them), so that no input
		 * can make it spin */
		if (++guard > limit) {
			limit = w->bound;
			if (guard > limit)
				break;
		}
		struct cp_rank *r = &w->ranks[p.ri];
		int64_t lo = w->start_job + r->offset;   /* the step's start here */

		if (!loaded(w, p.ri) || p.t <= lo)
			return;
		/* another rank's trace may begin inside this step: what its host
		 * did before is not recorded, not its CPU time */
		if (p.t <= r->first_ts) {
			add(w, p.ri, C_GAP, p.t - lo, "before the trace began");
			return;
		}
		if (!(p.ki >= 0 ? on_kernel(w, &p, lo) : on_host(w, &p, lo)))
			return;
	}
	/* no progress: times that contradict each other (a damaged trace);
	 * the rest of the step is a gap, and the run says so */
	if (p.t > w->start_job + w->ranks[p.ri].offset)
		add(w, p.ri, C_GAP, p.t - (w->start_job + w->ranks[p.ri].offset),
		    "walk stopped: inconsistent times");
	w->stuck++;
}

/* Where the walk starts: the kernel that ended at the window's end, else
 * the main thread there. */
static void walk_step(struct walk *w, int64_t e)
{
	struct cp_rank *r = &w->ranks[w->home];
	long k = ended_before(r, e, e - 1000, -2);

	if (k >= 0) {
		add(w, w->home, C_GAP, e - r->k[k].end, "after the last kernel");
		walk_back(w, w->home, k, -1, r->k[k].end);
	} else
		walk_back(w, w->home, -1, r->main_tid, e);
}

static int selected(const struct ta_query *q, int64_t rank)
{
	size_t i;

	for (i = 0; q->ranks && i < q->nranks; i++)
		if (q->ranks[i] == rank)
			return 1;
	return !q->ranks;
}

/* What each walked step gives: a row of the path table (one database),
 * or the rows of its piece (a shard). */
typedef void (*step_fn)(struct walk *w, int64_t walk_no, int64_t step, int64_t len,
			void *ctx);

/* The model, the collectives matched, and the ranks of q (on a shard:
 * its own) with their clock offsets. */
static int walk_open(sqlite3 *db, const struct ta_query *q,
		     const struct ta_critical_opts *o, int pieces, struct walk *w,
		     struct ta_peers *peers, struct ta_error *err)
{
	struct ta_query every = *q;
	sqlite3_stmt *st = NULL;
	size_t i, cap = 0;
	int rc;

	memset(w, 0, sizeof(*w));
	memset(peers, 0, sizeof(*peers));
	w->hta_rows = ta_rules(q)->trace_frame;
	/* the model of every rank: a path may run through one not selected
	 * (building the selected ones' first says if one is not there) */
	if (q->ranks && ta_model_prepare(db, q, TA_NEED_GPU, err) < 0)
		return -1;
	every.ranks = NULL;
	every.nranks = 0;
	if (ta_model_prepare(db, &every, TA_NEED_GPU | TA_NEED_DEV | TA_NEED_HOST, err) < 0 ||
	    ta_peers_match(db, &every, peers, err) < 0)
		return -1;
	w->db = db;
	w->peers = peers;
	w->pieces = pieces;
	w->cpu_waits = ta_xcalloc(peers->nwaits + 1, sizeof(*w->cpu_waits));
	for (i = 0; i < peers->nwaits; i++)
		if (peers->waits[i].cpu)
			w->cpu_waits[w->ncpu++] = &peers->waits[i];
	ta_qsort(w->cpu_waits, w->ncpu, sizeof(*w->cpu_waits), cmp_cpu_wait);
	/* names cost a third of the walk: only --top, prose and --trace need them */
	w->names = o->top > 0 || o->nodes;
	w->o = o;
	w->seen = ta_intern_new();
	w->acc.keys = ta_intern_new();
	/* every rank (a path may run through a peer); on a shard, its own */
	if (ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY 1", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (w->nranks == cap) {
			cap = cap ? 2 * cap : 16;
			w->ranks = ta_xrealloc(w->ranks, cap * sizeof(*w->ranks));
		}
		memset(&w->ranks[w->nranks], 0, sizeof(*w->ranks));
		w->ranks[w->nranks++].rank = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	w->bound = 64 + 64 * w->nranks;
	for (i = 0; i < peers->nranks; i++) {
		int j = rank_index(w, peers->ranks[i]);

		if (j >= 0)
			w->ranks[j].offset = peers->offset_ns[i];
	}
	return 0;
}

static void walk_close(struct walk *w, struct ta_peers *peers)
{
	size_t i;

	for (i = 0; i < w->nranks; i++)
		free_rank(&w->ranks[i]);
	free(w->ranks);
	for (i = 0; i < w->ncache; i++)
		free(w->cache[i]);
	free(w->cache);
	free(w->cpu_waits);
	ta_intern_free(w->seen);
	sqlite3_finalize(w->name_st);
	cp_acc_free(&w->acc);
	ta_peers_free(peers);
}

/* A failed walk's error, if the database did not say one. */
static int walk_failed(struct walk *w, struct ta_error *err)
{
	if (!w->failed)
		return 0;
	if (!err->msg[0] && w->why)
		ta_error_set(err, TA_EXIT_SYSTEM, "%s", w->why);
	else if (!err->msg[0])
		ta_db_failed(w->db, err);
	return -1;
}

/* The time in [lo, hi] some kernel of r ran (kernels by start: those
 * begun before lo cover it up to the latest end among them). */
static int64_t gpu_busy(const struct cp_rank *r, int64_t lo, int64_t hi)
{
	size_t a = kernel_from(r, lo);
	int64_t upto = lo, sum = 0;

	if (a > 0 && r->k[a - 1].reach > lo)
		upto = r->k[a - 1].reach < hi ? r->k[a - 1].reach : hi, sum = upto - lo;
	for (; a < r->nk && r->k[a].ts < hi; a++) {
		int64_t x = r->k[a].ts > upto ? r->k[a].ts : upto;
		int64_t y = r->k[a].end < hi ? r->k[a].end : hi;

		if (y > x)
			sum += y - x, upto = y;
	}
	return sum;
}

/* Walks each selected rank's steps (--step: that one), each from its end
 * back, and hands each to fn. */
static int walk_steps(struct walk *w, const struct ta_query *q, step_fn fn,
		      void *ctx, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int64_t walk_no = 0, last = INT64_MIN;
	int rc;

	if (ta_db_prepare(w->db, "SELECT w.rank, w.step, w.ts, w.end_ts FROM step_win w"
			  " JOIN sel_ranks s ON s.rank = w.rank WHERE ?1 < 0 OR w.step = ?1"
			  " UNION ALL SELECT p.rank, -1, p.ts, p.end_ts FROM span p"
			  " JOIN sel_ranks s ON s.rank = p.rank WHERE ?1 < 0 AND NOT EXISTS"
			  " (SELECT 1 FROM step_win x WHERE x.rank = p.rank) ORDER BY 1, 3",
			  &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, w->o->step);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !w->failed) {
		int64_t rank = sqlite3_column_int64(st, 0);
		int home = rank_index(w, rank);
		int64_t s = sqlite3_column_int64(st, 2), e = sqlite3_column_int64(st, 3);

		if (!selected(q, rank))
			continue;
		if (rank != last)
			unload_all(w);
		if (home < 0 || load_walked(w, (size_t)home, err) < 0) {
			w->failed = 1;
			break;
		}
		walk_no = rank == last ? walk_no + 1 : 0;
		last = rank;
		w->home = (size_t)home;
		w->home_rank = rank;
		w->start_job = s - w->ranks[home].offset;
		w->step = sqlite3_column_int64(st, 1);
		w->matched = 0;
		w->exited = 0;
		w->busy = gpu_busy(&w->ranks[home], s, e);
		cp_acc_reset(&w->acc);
		walk_step(w, e);
		fn(w, walk_no, w->step, e - s, ctx);
	}
	sqlite3_finalize(st);
	if (walk_failed(w, err) < 0)
		return -1;
	return ta_db_done(w->db, rc, err);
}

struct tables {
	struct ta_table *path, *top;
	int matched;                /* some --what-if item was on a path */
};

static void emit_step(struct walk *w, int64_t walk_no, int64_t step, int64_t len,
		      void *ctx)
{
	struct tables *t = ctx;

	(void)walk_no;
	cp_emit(t->path, t->top, w->o, &w->acc, w->matched, w->home_rank, step,
		len, w->busy, w->o->top);
	t->matched |= w->matched > 0;
}

int ta_critical_run(sqlite3 *db, const struct ta_query *q,
		    const struct ta_critical_opts *o, struct ta_table **out,
		    struct ta_table **top, struct ta_error *err)
{
	struct ta_peers peers;
	struct walk w;
	struct tables t = { NULL, NULL, 0 };
	int rc = -1;

	if (cp_kept(db, q, o, out, top))
		return 0;
	if (walk_open(db, q, o, 0, &w, &peers, err) == 0 &&
	    (o->step < 0 || ta_model_steps_kept(db, o->step, o->step, err) == 0)) {
		t.path = cp_path_table(o->what_kind != NULL);
		t.top = cp_top_table();
		rc = walk_steps(&w, q, emit_step, &t, err);
		if (rc == 0)
			cp_what_if_check(t.path, o, t.matched);
		if (rc == 0 && w.stuck)
			ta_table_warn(t.path, "%d step%s: the critical path could not be "
				      "walked back through times that contradict each "
				      "other (a damaged trace?); the rest of the step is "
				      "counted as gap", w.stuck, w.stuck == 1 ? "" : "s");
		if (rc == 0) {
			ta_peers_warn_absent(t.path, &peers, ABSENT_WAIT);
			cp_absent_waits(t.path);
		}
	}
	walk_close(&w, &peers);
	if (rc < 0) {
		ta_table_free(t.path);
		ta_table_free(t.top);
		return -1;
	}
	*out = t.path;
	*top = t.top;
	cp_keep(db, q, o, t.path, t.top);
	return 0;
}

/* A piece's rows (critical_int.h, enum piece_col): its walk, then its
 * items in the order met. */
static void emit_piece(struct walk *w, int64_t walk_no, int64_t step, int64_t len,
		       void *ctx)
{
	struct ta_table *t = ctx;
	size_t r = ta_table_add_row(t), c, i;

	ta_table_set_int(t, r, P_HOME, w->home_rank);
	ta_table_set_int(t, r, P_WALK, walk_no);
	if (step >= 0)
		ta_table_set_int(t, r, P_STEP, step);
	if (len >= 0) {
		ta_table_set_int(t, r, P_LEN, len);
		ta_table_set_int(t, r, P_BUSY, w->busy);
	}
	ta_table_set_int(t, r, P_START, w->start_job);
	if (w->exited) {
		ta_table_set_int(t, r, P_EXIT_RANK, w->exit_rank);
		ta_table_set_int(t, r, P_EXIT_TS, w->exit_ts);
	}
	ta_table_set_int(t, r, P_MATCHED, w->matched);
	for (c = 0; c < NCAT; c++)
		ta_table_set_int(t, r, P_CAT + c, w->acc.cat[c]);
	for (i = 0; i < w->acc.n; i++) {
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, P_HOME, w->home_rank);
		ta_table_set_int(t, r, P_WALK, walk_no);
		ta_table_set_int(t, r, P_KIND, w->acc.items[i].kind);
		ta_table_set_text(t, r, P_NAME, w->acc.items[i].name);
		ta_table_set_int(t, r, P_NS, w->acc.items[i].ns);
		ta_table_set_int(t, r, P_COUNT, w->acc.items[i].count);
	}
}

/* The paths that came to this shard's rank from others: each goes on
 * from the late member's kernel (a gloo collective's: its host), for its
 * home's step. */
static int walk_requests(struct walk *w, const struct ta_critical_request *req,
			 size_t nreq, struct ta_table *t, struct ta_error *err)
{
	size_t i;

	for (i = 0; i < nreq && !w->failed; i++) {
		int ri = rank_index(w, req[i].rank);
		char name[128];
		long k;

		if (ri < 0)
			continue;
		if (!loaded(w, (size_t)ri))
			break;
		k = kernel_at(&w->ranks[ri], req[i].ts);
		/* a gloo collective's late member: on from its host then */
		if (k < 0 && !ta_peers_cpu_name(w->db, req[i].rank, req[i].ts, name,
						 sizeof(name))) {
			w->failed = 1;   /* the merged way says what it does */
			w->why = "a collective's late member has no kernel there";
			break;
		}
		w->home_rank = req[i].home;
		w->start_job = req[i].start_job;
		w->step = -1;
		w->matched = 0;
		w->exited = 0;
		cp_acc_reset(&w->acc);
		if (k < 0)
			walk_back(w, (size_t)ri, -1, w->ranks[ri].main_tid, req[i].ts);
		else
			walk_back(w, (size_t)ri, k, -1, w->ranks[ri].k[k].ts);
		emit_piece(w, req[i].walk, -1, -1, t);
	}
	return walk_failed(w, err);
}

int ta_critical_pieces(sqlite3 *db, const struct ta_query *q,
		       const struct ta_critical_opts *o,
		       const struct ta_critical_request *req, size_t nreq,
		       struct ta_table **out, struct ta_error *err)
{
	struct ta_peers peers;
	struct walk w;
	struct ta_table *t = NULL;
	int rc = -1;

	*out = NULL;
	if (walk_open(db, q, o, 1, &w, &peers, err) == 0) {
		t = cp_piece_table();
		rc = req ? walk_requests(&w, req, nreq, t, err) :
		     walk_steps(&w, q, emit_piece, t, err);
		if (rc == 0)  /* said by the join (cp_absent_waits) */
			t->ranks_absent = ta_peers_absent(&peers);
	}
	walk_close(&w, &peers);
	if (rc < 0) {
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}
