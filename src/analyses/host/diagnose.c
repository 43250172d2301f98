/* Per step, what bounds it and what to fix: an engineer's reading of the
 * trace, made mechanical. Each GPU idle hole in a step is attributed to the
 * host work that left the GPU waiting: a synchronisation (and the op that
 * made it), a host region without launches (named by the innermost
 * record_function range or Python frame over it), or, for short holes
 * between launches, launch overhead. Exposed communication and copies are
 * losses too; the verdict is the largest loss, or compute-bound when the
 * GPU is busy enough and nothing else matters. What the host was doing
 * (syncs, spins, the names of its ops, ranges and call sites) is host.c's;
 * waits for late peers are peers.c's. */
#include "advice.h"
#include "analyses/gpu/exposed.h"
#include "host.h"
#include "analyses/common/intervals.h"
#include "analyses/common/launches.h"
#include "analyses/ranks/peers.h"
#include "ta_analyses.h"
#include "ta_intern.h"
#include "ta_model.h"
#include "ta_db.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_diagnose_opts ta_diagnose_defaults = { 90, 50000, 10000, 1, 1 };

struct gpu_row {
	int64_t ts, end;
	int kind;          /* enum ta_kind */
	int pageable, misaligned;   /* pageable: 1 from it, 2 into it */
	int64_t correlation;
	int64_t stream, launched;  /* launched: its call's start, INT64_MAX */
	int64_t returned;          /* its call's end, INT64_MAX */
	int later;                 /* not its launch's first to start (a
				    * CUDA graph's replay: one launch, many
				    * kernels) */
	int64_t name;
	int64_t comm_cost;         /* what communication added to it: slowed
				    * beside it, or launched by gradient sync */
};

struct finding {
	int64_t rank, step;
	enum finding_kind kind;
	int64_t cost, count;
	char where[256];
};

struct findings {
	struct finding *v;
	size_t n, cap;
	struct ta_intern *keys;  /* (rank, step, kind, where) -> id */
	size_t *at;              /* by id - 1: its index in v */
};

struct rank_data {
	struct gpu_row *gpu;
	size_t ngpu, capgpu;
	int64_t max_dur;             /* longest GPU row */
	int64_t first_corr;          /* the first launch call's correlation */
	struct ta_host host;         /* its syncs, and names for its times */
};

/* One finding per (rank, step, kind, where), found by hash: a scan of
 * every finding so far would be quadratic in ranks and steps. */
/* counted: one more time it happened (0: a piece of one already counted) */
static void add_finding_part(struct findings *f, int64_t rank, int64_t step,
			     enum finding_kind kind, int64_t cost, const char *raw,
			     int counted)
{
	struct ta_buf key = { 0 };
	char where[sizeof(f->v[0].where)];
	int is_new;
	int64_t id;

	/* an address could never match a baseline's finding */
	snprintf(where, sizeof(where), "%s", raw);
	ta_no_addresses(where);

	ta_buf_addf(&key, "%lld\x1f%lld\x1f%d\x1f%s", (long long)rank,
		    (long long)step, (int)kind, where);
	id = ta_intern(f->keys, key.s, key.len, &is_new);
	ta_buf_free(&key);
	if (!is_new) {
		f->v[f->at[id - 1]].cost += cost;
		f->v[f->at[id - 1]].count += counted;
		return;
	}
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 32;
		f->v = ta_xrealloc(f->v, f->cap * sizeof(*f->v));
		f->at = ta_xrealloc(f->at, f->cap * sizeof(*f->at));
	}
	f->at[id - 1] = f->n;
	f->v[f->n] = (struct finding){ rank, step, kind, cost, 1, "" };
	snprintf(f->v[f->n].where, sizeof(f->v[f->n].where), "%s", where);
	f->n++;
}

static void add_finding(struct findings *f, int64_t rank, int64_t step,
			enum finding_kind kind, int64_t cost, const char *raw)
{
	add_finding_part(f, rank, step, kind, cost, raw, 1);
}

/* What communication added to each computation row, as overlap counts
 * it (exposed.h): slowed beside a collective, or launched by gradient
 * sync's own ops. */
/* GPU rows by correlation, then start: the first of each is its launch's
 * first to start. */
struct corr_start {
	int64_t correlation, ts;
	size_t i;
};

static int cmp_corr_start(const void *x, const void *y)
{
	const struct corr_start *a = x, *b = y;

	if (a->correlation != b->correlation)
		return a->correlation < b->correlation ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static void mark_later(struct rank_data *d)
{
	struct corr_start *by = ta_xcalloc(d->ngpu + 1, sizeof(*by));
	size_t i;

	for (i = 0; i < d->ngpu; i++)
		by[i] = (struct corr_start){ d->gpu[i].correlation, d->gpu[i].ts, i };
	ta_qsort(by, d->ngpu, sizeof(*by), cmp_corr_start);
	for (i = 0; i < d->ngpu; i++)
		d->gpu[by[i].i].later = i > 0 && by[i].correlation >= 0 &&
					by[i - 1].correlation == by[i].correlation;
	free(by);
}

static void comm_costs(int64_t rank, struct rank_data *d, struct ta_sync_ops *sync,
		       struct ta_beside *beside, int64_t lo, int64_t hi)
{
	struct ta_union comm = { 0 };
	struct ta_comp_kernel *k = ta_xcalloc(d->ngpu + 1, sizeof(*k));
	size_t i, n = 0;

	/* the rank's analysis window [lo, hi), rows clipped to it, as
	 * overlap's slowed_us reads them: with every row, a kernel's time
	 * alone was read from the step the profiler cut (ddp_straggler rank
	 * 0: its GEMMs 994 us beside the waiting all-reduce, 555 us alone;
	 * 1.1 ms slowed here where overlap said 11.2) */
	for (i = 0; i < d->ngpu; i++) {
		const struct gpu_row *g = &d->gpu[i];
		int64_t a = g->ts > lo ? g->ts : lo, b = g->end < hi ? g->end : hi;

		if (b <= a)
			continue;
		if (g->kind == TA_KIND_COMM)
			ta_union_add(&comm, a, b - a);
		else if (g->kind == TA_KIND_COMPUTE)
			k[n++] = (struct ta_comp_kernel){ g->name, a, b - a, 0, 0, (int64_t)i };
	}
	ta_comm_slowdown(k, n, &comm);
	for (i = 0; i < n; i++) {
		d->gpu[k[i].at].comm_cost = k[i].slowed;
		ta_beside_add(beside, rank, k[i].name, k[i].dur, k[i].over);
	}
	for (i = 0; sync->n && i < d->ngpu; i++)
		if (d->gpu[i].kind != TA_KIND_COMM && d->gpu[i].launched != INT64_MAX &&
		    ta_sync_ops_launched(sync, rank, d->gpu[i].launched))
			d->gpu[i].comm_cost = d->gpu[i].end - d->gpu[i].ts;
	free(k);
	ta_union_free(&comm);
}

/* What a kernel's name says of its copies: pageable host memory, and
 * CUTLASS's align1/align2 kernels (operands not 16-byte aligned) that are
 * not SIMT's own */
#define NAME_PAGEABLE 1u
#define NAME_MISALIGNED 2u
#define NAME_TO_PAGEABLE 4u   /* a copy from the GPU into pageable memory */

static unsigned judge_name(const char *name)
{
	if (!name)
		return 0;
	return (sqlite3_strglob("*Pageable*", name) == 0 ? NAME_PAGEABLE : 0) |
	       (sqlite3_strglob("*Device -> Pageable*", name) == 0 ? NAME_TO_PAGEABLE : 0) |
	       ((sqlite3_strglob("*align1*", name) == 0 ||
		 sqlite3_strglob("*align2*", name) == 0) &&
		sqlite3_strglob("*simt*", name) != 0 ? NAME_MISALIGNED : 0);
}

static unsigned judge_none(const char *name)
{
	(void)name;
	return 0;
}

/* The rank's GPU rows in time order, with their launch; the rows a JOIN
 * with label would drop (a name or category no label has) left out. */
static int load_gpu(sqlite3 *db, int64_t rank, struct rank_data *d,
		    struct ta_labels *names, struct ta_labels *cats,
		    const struct ta_launches *calls, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_db_prepare(db, "SELECT g.ts, g.ts + g.dur, COALESCE(ta_kind_known(g.name,"
			  " g.cat, 0), ta_kind_learn(g.name, g.cat, 0, (SELECT name FROM"
			  " label WHERE name_id = g.name), (SELECT name FROM label"
			  " WHERE name_id = g.cat))), g.correlation, g.stream, g.name, g.cat"
			  " FROM gpu g WHERE g.rank = ? AND g.ts IS NOT NULL ORDER BY g.ts",
			  &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		unsigned facts = ta_labels_get(names, sqlite3_column_value(st, 5));
		int64_t launched = INT64_MAX, returned = INT64_MAX;
		struct gpu_row *g;

		if (facts == TA_LABEL_NONE ||
		    ta_labels_get(cats, sqlite3_column_value(st, 6)) == TA_LABEL_NONE)
			continue;
		if (d->ngpu == d->capgpu) {
			d->capgpu = d->capgpu ? d->capgpu * 2 : 1024;
			d->gpu = ta_xrealloc(d->gpu, d->capgpu * sizeof(*d->gpu));
		}
		ta_launches_span(calls, sqlite3_column_value(st, 3), &launched, &returned);
		g = &d->gpu[d->ngpu++];
		*g = (struct gpu_row){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int(st, 2),
			(facts & NAME_TO_PAGEABLE) ? 2 : (facts & NAME_PAGEABLE) != 0,
			(facts & NAME_MISALIGNED) != 0,
			sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4),
			launched, returned, 0, sqlite3_column_int64(st, 5), 0 };
		if (g->end - g->ts > d->max_dur)
			d->max_dur = g->end - g->ts;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err) < 0 || ta_labels_failed(names, err) < 0 ||
	       ta_labels_failed(cats, err) < 0 ? -1 : 0;
}

static int load_rank(sqlite3 *db, int64_t rank, struct rank_data *d,
		     struct ta_sync_ops *sync, struct ta_beside *beside,
		     struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct ta_launches calls = { NULL, 0, 0 };
	struct ta_labels *names = ta_labels_new(db, judge_name, err);
	struct ta_labels *cats = names ? ta_labels_new(db, judge_none, err) : NULL;
	int rc;

	d->ngpu = 0;
	d->max_dur = 0;
	rc = !cats || ta_launches_load(db, rank, &calls, err) < 0 ||
	     load_gpu(db, rank, d, names, cats, &calls, err) < 0 ? -1 : 0;
	ta_labels_free(names);
	ta_labels_free(cats);
	ta_launches_free(&calls);
	if (rc < 0)
		return -1;
	if (ta_db_prepare(db, "SELECT ts, end_ts FROM span WHERE rank = ?", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		comm_costs(rank, d, sync, beside, sqlite3_column_int64(st, 0),
			   sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_ROW && ta_db_done(db, rc, err) < 0)
		return -1;
	mark_later(d);
	if (ta_db_prepare(db, "SELECT COALESCE(correlation, -1) FROM first_call"
			  " WHERE rank = ?", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	rc = sqlite3_step(st);
	d->first_corr = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && ta_db_done(db, rc, err) < 0)
		return -1;
	return ta_host_load(db, rank, &d->host, err);
}

/* A step's length, GPU busy time and its losses. */
struct step_result {
	int64_t busy, span, host, launch, comm, copy, wait;
	int64_t early;  /* holes ended by work launched before the trace */
	int64_t queued; /* holes with work queued: the host was not late */
};

struct diag_ctx {
	sqlite3 *db;
	const struct ta_diagnose_opts *o;
	struct findings *f;
	struct rank_data *d;
	const struct ta_peers *peers;
	int64_t rank, step;
	int64_t win_ts, win_end;  /* the step's window */
	int failed;           /* a query failed: the results are not whole */
	struct ta_peer_shares *shares;  /* the step's waits, by peer */
	size_t ncpu_waits;    /* gloo's waits (hole_waited) */
};

/* The first GPU row that can reach into [s, ...): rows are sorted by
 * start, and none lasts longer than max_dur. */
static size_t first_row(const struct rank_data *d, int64_t s)
{
	size_t lo = 0, hi = d->ngpu;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->gpu[mid].ts < s - d->max_dur)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* What ended a hole [a, b) of the GPU, when the host did not: its next
 * work was queued before the hole began (or before the trace: warm-up's
 * work, whose correlation precedes every launch call in it). */
enum ended_by { BY_HOST, BY_COMM_QUEUE, BY_EARLY, BY_QUEUED, BY_QUEUED_INSIDE };

/* Queued behind a collective: a collective starts as the hole ends (one
 * that began before the profiler's window and waited there for a late
 * peer, in the first kept step of a straggler's job, leaves exactly
 * this). Launched before the trace: the GPU ran work the profiler did
 * not record (Kineto drops what started before its window), so the hole
 * is not known to be idle at all. */
static enum ended_by hole_end(const struct diag_ctx *c, int64_t a, int64_t b,
			      enum ended_by *otherwise)
{
	const struct rank_data *d = c->d;
	size_t i;
	int queued = 0, early = 0, comm = 0, late = 0, first = 0, inside = 1;

	for (i = first_row(d, b); i < d->ngpu && d->gpu[i].ts <= b + c->o->host_gap_ns;
	     i++) {
		const struct gpu_row *g = &d->gpu[i];
		int e;

		if (g->ts < b)
			continue;
		comm |= g->kind == TA_KIND_COMM;
		if (g->ts - b > 1000) /* what ended the hole: its first microsecond */
			continue;
		e = g->launched == INT64_MAX && g->correlation >= 0 &&
		    d->first_corr >= 0 && g->correlation < d->first_corr;
		early |= e;
		queued |= e || g->launched <= a;
		/* its launch call had returned when the hole began: the GPU
		 * idled with it queued (a stream waiting on an event, a CUDA
		 * graph's start, work the trace lacks), the host was not late;
		 * a call running through the hole (a pageable copy the host
		 * stages) is the host's */
		late |= g->returned > a;
		first = 1;
		/* a launch whose earlier work ran before the hole: a gap
		 * inside one launch's work (a graph's replay) */
		inside &= g->later;
	}
	/* what it is when no late peer held the collective */
	*otherwise = early ? BY_EARLY :
		     first && !late ? (inside ? BY_QUEUED_INSIDE : BY_QUEUED) : BY_HOST;
	return queued && comm ? BY_COMM_QUEUE : *otherwise;
}

/* A hole [a, b) the host held, each part named by the range that ran
 * then: a range names only what it covers (a 20 ms data_loading in a
 * 28 ms hole costs 20 ms; the rest is what ran after it), and what it
 * leaves is named the same way (a piece shorter than a hole is not
 * counted as one more time). The range covers half of what it names, so
 * this goes at most 63 deep. */
static void host_parts(struct diag_ctx *c, int64_t a, int64_t b, int counted)
{
	char where[256];
	int64_t lo, hi;

	c->failed |= ta_host_name_part(&c->d->host, a, b, c->win_ts, c->win_end,
				       where, sizeof(where), &lo, &hi) < 0;
	if (hi <= lo) {   /* a range that only touches it: the whole */
		lo = a;
		hi = b;
	}
	if (lo > a)
		host_parts(c, a, lo, counted && lo - a >= c->o->host_gap_ns);
	if (b > hi)
		host_parts(c, hi, b, counted && b - hi >= c->o->host_gap_ns);
	add_finding_part(c->f, c->rank, c->step, F_HOST_REGION, hi - lo, where, counted);
}

static void hole(struct diag_ctx *c, int64_t a, int64_t b, int queued,
		 struct step_result *r);
static void hole_sync(struct diag_ctx *c, const struct ta_sync *sync, int64_t a,
		      int64_t b, int whole, struct step_result *r);

/* The part of a stretch of the host's in which one of the rank's gloo
 * collectives waited for a late peer: the step lost it to that peer (a
 * collective kernel's wait is exposed_comm's: comm_stretch). Then
 * its transfer, the CPU's, named by it; the rest of the stretch, piece by
 * piece, is named as any. 1: it had some. */
static int hole_waited(struct diag_ctx *c, int64_t a, int64_t b, int queued,
		       struct step_result *r)
{
	struct ta_union u = { 0 };
	int64_t from = a, waited;
	size_t i;

	ta_peers_cpu_wait_union(c->peers, c->rank, a, b, &u);
	if (!(waited = ta_union_length(&u))) {
		ta_union_free(&u);
		return 0;
	}
	r->wait += waited;
	ta_peers_cpu_share_waits(c->peers, c->rank, a, b, c->shares);
	for (i = 0; i < u.n; i++) {
		int64_t next = i + 1 < u.n ? u.v[i + 1].start : b, ts = 0, t;
		char name[128];

		hole(c, from, u.v[i].start, 1, r);
		from = u.v[i].end;
		t = ta_peers_cpu_done(c->peers, c->rank, u.v[i].start, u.v[i].end, &ts);
		if (t > next)
			t = next;
		if (t > from) {
			ta_peers_cpu_name(c->db, c->rank, ts, name, sizeof(name));
			add_finding(c->f, c->rank, c->step, F_HOST_REGION, t - from, name);
			r->host += t - from;
			from = t;
		}
	}
	hole(c, from, b, queued, r);
	ta_union_free(&u);
	return 1;
}

/* Whether sync s is on a thread that launches GPU work or issues
 * collectives (DDP issues them on the autograd thread, its .item() is the
 * main thread's): the host waited for the GPU. A sync on a side thread
 * (a logger's .item()) says nothing of the threads that launch the work. */
static int on_launching_thread(const struct ta_sync *s, const void *ctx)
{
	const struct diag_ctx *c = ctx;

	return s->launcher || ta_peers_issued_on(c->peers, c->rank, s->tid);
}

/* A hole [a, b) of the GPU: whose is it? queued: whether work may have
 * been queued before it (a hole between kernels). */
static void hole(struct diag_ctx *c, int64_t a, int64_t b, int queued,
		 struct step_result *r)
{
	const struct ta_sync *sync;
	int64_t len = b - a;

	if (len <= 0)
		return;
	if (len < c->o->host_gap_ns) {
		r->launch += len;
		return;
	}
	if (c->ncpu_waits && hole_waited(c, a, b, queued, r))
		return;
	if (queued) {
		enum ended_by otherwise, by = hole_end(c, a, b, &otherwise);
		const struct ta_peer_step *x = ta_peers_find(c->peers, c->rank, c->step);

		/* the step's wait_for_peer finding (analyse_step) holds it:
		 * one finding, not this hole twice */
		if (by == BY_COMM_QUEUE && x && x->peer >= 0) {
			r->wait += len;
			ta_peer_shares_add(c->shares, x->peer, len);
			return;
		}
		/* no late peer: a collective queued mid-trace is queued work
		 * like any (not work launched before the trace) */
		if (by == BY_COMM_QUEUE)
			by = otherwise;
		if (by == BY_QUEUED || by == BY_QUEUED_INSIDE) {
			add_finding(c->f, c->rank, c->step, F_QUEUED, len,
				    by == BY_QUEUED ? TA_QUEUED_BEFORE : TA_QUEUED_INSIDE);
			r->queued += len;
			return;
		}
		if (by != BY_HOST) {
			r->early += len;
			return;
		}
	}
	/* a hole after a sync is the sync's as far as the host ran ahead:
	 * without the sync, the Python after it would have run that much
	 * earlier, while the GPU worked (the host waited in it that long).
	 * The rest of the hole is the host's own time after it, named as any
	 * (an .item() that waited 15 us for its own copy, then 1 ms of
	 * postprocessing, read "sync 23 ms"; critical-path said 0.2 ms) */
	sync = ta_host_sync_in(&c->d->host, a, b, on_launching_thread, c);
	if (sync && sync->end - sync->ts < len &&
	    len - (sync->end - sync->ts) >= c->o->host_gap_ns) {
		int64_t ahead = sync->end - sync->ts;

		hole_sync(c, sync, a, a + ahead, 0, r);
		host_parts(c, a + ahead, b, 1);
		r->host += len - ahead;
	} else if (sync) {
		hole_sync(c, sync, a, b, 1, r);
	} else {
		host_parts(c, a, b, 1);
		r->host += len;
	}
}

/* [a, b) of a hole, the sync's: named by its op and call site, and, when
 * it is the whole hole, what the host did after it returned where the
 * hole went on (else that has a finding of its own: host_stall's busy
 * loop was named twice). */
static void hole_sync(struct diag_ctx *c, const struct ta_sync *sync, int64_t a,
		      int64_t b, int whole, struct step_result *r)
{
	char where[256], op[256], site[256], named[256];
	int scaler;

	c->failed |= ta_host_name(&c->d->host, sync->ts, sync->end, 1,
				 op, sizeof(op)) < 0;
	if (!sync->spin &&
	    (scaler = ta_host_scaler_sync(&c->d->host, sync->tid, c->win_ts,
					  sync->ts)) != 0) {
		c->failed |= scaler < 0;
		snprintf(named, sizeof(named), TA_HOST_SCALER " (%.200s)", op);
		memcpy(op, named, sizeof(op));
	}
	c->failed |= ta_host_call_site(&c->d->host, sync->ts, sync->end,
				       site, sizeof(site)) < 0;
	if (sync->spin)
		snprintf(where, sizeof(where), "spin on GPU queries in %.200s",
			 site[0] ? site : op);
	else if (site[0] && strcmp(site, op) != 0)
		snprintf(where, sizeof(where), "%.120s at %.120s", op, site);
	else
		snprintf(where, sizeof(where), "%s", op);
	/* the hole went on after the sync returned: say what the host did
	 * then (a Python stall that, without the sync, would have run while
	 * the GPU worked) */
	if (whole && b - sync->end >= c->o->host_gap_ns) {
		char then[256], both[256];

		c->failed |= ta_host_name(&c->d->host, sync->end > a ? sync->end : a,
					 b, 0, then, sizeof(then)) < 0;
		if (strcmp(then, "(no annotation)") != 0) {
			snprintf(both, sizeof(both), "%.120s, then %.120s", where, then);
			memcpy(where, both, sizeof(where));
		}
	}
	add_finding(c->f, c->rank, c->step, F_SYNC, b - a, where);
	r->host += b - a;
}

/* GPU work of one kind, clipped to [s, e], as a union. */
static void clipped_union(const struct rank_data *d, int kinds, int64_t s,
			  int64_t e, struct ta_union *u)
{
	size_t i;

	ta_union_reset(u);
	for (i = first_row(d, s); i < d->ngpu && d->gpu[i].ts < e; i++) {
		int64_t a = d->gpu[i].ts > s ? d->gpu[i].ts : s;
		int64_t b = d->gpu[i].end < e ? d->gpu[i].end : e;

		if ((d->gpu[i].kind & kinds) && b > a)
			ta_union_add(u, a, b - a);
	}
}

struct comm_host {
	struct diag_ctx *c;
	struct step_result *r;
};

/* Communication that computation did not wait for: its time is the
 * host's (hole decides how to name it). What it waited for: the peers it
 * waited for, each its own share (a step may wait for several). */
static void comm_stretch(void *ctx, int64_t a, int64_t b, int exposed)
{
	struct comm_host *h = ctx;

	if (exposed)
		ta_peers_share_waits(h->c->peers, h->c->rank, a, b, h->c->shares);
	else
		hole(h->c, a, b, 0, h->r);
}

/* The rank's syncs that returned in [s, e] on_launching_thread. */
static void queue_syncs(const struct diag_ctx *c, int64_t s, int64_t e,
			struct ta_queue *q)
{
	const struct ta_host *h = &c->d->host;
	size_t lo;

	for (lo = ta_host_first_sync(h, s); lo < h->nsyncs && h->syncs[lo].ts <= e; lo++)
		if (h->syncs[lo].end >= s && h->syncs[lo].end <= e &&
		    h->syncs[lo].end > h->syncs[lo].ts &&
		    on_launching_thread(&h->syncs[lo], c))
			ta_queue_add_host(q, h->syncs[lo].end, h->syncs[lo].ts);
}

/* The part of [a, b) that no group of work covers (its groups disjoint
 * and ascending). */
static int64_t uncovered(const struct ta_union *work, int64_t a, int64_t b)
{
	size_t lo = 0, hi = work->n;
	int64_t left = b - a;

	while (lo < hi) {   /* the first group ending after a */
		size_t mid = lo + (hi - lo) / 2;

		if (work->v[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < work->n && work->v[lo].start < b; lo++) {
		int64_t x = work->v[lo].start > a ? work->v[lo].start : a;
		int64_t y = work->v[lo].end < b ? work->v[lo].end : b;

		if (y > x)
			left -= y - x;
	}
	return left > 0 ? left : 0;
}

#define COPY_FLOOR_NS 10000

/* The step's copies with nothing computing or communicating under them,
 * a finding per kind of copy (its name: Memcpy HtoD (Pinned -> Device)),
 * but those from pageable memory, which have theirs, and a kind's under
 * COPY_FLOOR_NS in the step. Copies of two kinds
 * at once are each exposed: their shares are scaled to the step's copy
 * loss (total), so that the findings add up to it. */
static void exposed_copies(struct diag_ctx *c, int64_t s, int64_t e,
			   const struct ta_union *work, int64_t total)
{
	struct { int64_t name, ns; } kinds[16];
	size_t n = 0, i, k;
	int64_t sum = 0;

	for (i = first_row(c->d, s); i < c->d->ngpu && c->d->gpu[i].ts < e; i++) {
		const struct gpu_row *g = &c->d->gpu[i];
		int64_t a = g->ts > s ? g->ts : s, b = g->end < e ? g->end : e, x;

		if (g->kind != TA_KIND_MEMORY || g->pageable || b <= a ||
		    (x = uncovered(work, a, b)) <= 0)
			continue;
		for (k = 0; k < n && kinds[k].name != g->name; k++)
			;
		if (k == n && n == sizeof(kinds) / sizeof(*kinds))
			continue;   /* past 16 kinds in a step: the rest left out */
		if (k == n)
			kinds[n++].name = g->name, kinds[k].ns = 0;
		kinds[k].ns = ta_add_sat(kinds[k].ns, x);
		sum = ta_add_sat(sum, x);
	}
	for (k = 0; k < n; k++) {
		char name[200];
		int64_t ns = sum > total ?
			(int64_t)((double)kinds[k].ns * (double)total / (double)sum) :
			kinds[k].ns;

		/* a few microseconds of a memset a step are no finding */
		if (ns < COPY_FLOOR_NS)
			continue;
		name[0] = 0;
		c->failed |= ta_host_label(&c->d->host, kinds[k].name, name,
					   sizeof(name)) < 0;
		if (name[0])
			add_finding(c->f, c->rank, c->step, F_COPY, ns, name);
	}
}

static void analyse_step(struct diag_ctx *c, int64_t s, int64_t e,
			 struct step_result *r)
{
	struct ta_union all = { 0 }, comm = { 0 }, comp = { 0 }, work = { 0 };
	struct ta_union waits = { 0 };
	struct ta_queue queue = { 0 };
	struct comm_host h = { c, r };
	struct ta_exposed ex;
	int64_t prev = s, small = 0, nsmall = 0, page = 0, page_out = 0, added = 0;
	size_t i;

	memset(r, 0, sizeof(*r));
	c->win_ts = s;
	c->win_end = e;
	c->shares->n = 0;
	r->span = e - s;
	clipped_union(c->d, TA_KIND_COMPUTE | TA_KIND_COMM | TA_KIND_MEMORY, s, e, &all);
	for (i = 0; i < all.n; i++) {
		hole(c, prev, all.v[i].start, 1, r);
		prev = all.v[i].end;
	}
	hole(c, prev, e, 0, r);
	r->busy = ta_union_length(&all);
	clipped_union(c->d, TA_KIND_COMM, s, e, &comm);
	clipped_union(c->d, TA_KIND_COMPUTE, s, e, &comp);
	clipped_union(c->d, TA_KIND_COMPUTE | TA_KIND_COMM, s, e, &work);
	ta_peers_wait_union(c->peers, c->rank, s, e, &waits);
	for (i = first_row(c->d, s); i < c->d->ngpu &&
	     c->d->gpu[i].ts <= ta_add_sat(e, c->o->host_gap_ns); i++)
		if (c->d->gpu[i].ts >= s)
			ta_queue_add(&queue, c->d->gpu[i].stream, c->d->gpu[i].kind,
				     c->d->gpu[i].ts, c->d->gpu[i].end,
				     c->d->gpu[i].launched);
	queue_syncs(c, s, ta_add_sat(e, c->o->host_gap_ns), &queue);
	ta_queue_finish(&queue);
	ta_exposed_comm(&comm, &comp, &queue, &waits, c->o->host_gap_ns,
			&ex, comm_stretch, &h);
	ta_queue_free(&queue);
	r->wait += ex.wait;
	r->comm = ex.exposed - ex.wait;
	/* and what it added to computation, as overlap's exposed_us: at
	 * most the step's communication */
	for (i = first_row(c->d, s); i < c->d->ngpu && c->d->gpu[i].ts < e; i++)
		if (c->d->gpu[i].ts >= s)
			added += c->d->gpu[i].comm_cost;
	if (ex.exposed + added > ta_union_length(&comm))
		added = ta_union_length(&comm) > ex.exposed ?
			ta_union_length(&comm) - ex.exposed : 0;
	r->comm += added;
	/* copy time with no computation or communication under it */
	r->copy = r->busy - ta_union_length(&work);
	if (r->copy > 0)
		exposed_copies(c, s, e, &work, r->copy);
	for (i = first_row(c->d, s); i < c->d->ngpu && c->d->gpu[i].ts < e; i++) {
		const struct gpu_row *g = &c->d->gpu[i];

		if (g->ts < s)
			continue;
		if (g->pageable == 1)
			page += g->end - g->ts;
		else if (g->pageable == 2)
			page_out += g->end - g->ts;
		if (g->misaligned && g->kind == TA_KIND_COMPUTE) {
			char where[256];

			c->failed |= ta_host_launching_op(&c->d->host,
							  g->correlation, where,
							  sizeof(where)) < 0;
			/* the estimated saving, not the kernel's time (advice.h) */
			add_finding(c->f, c->rank, c->step, F_ALIGN,
				    (int64_t)((double)(g->end - g->ts) * TA_ALIGN_SAVING),
				    where);
		}
		if (g->kind == TA_KIND_COMPUTE && g->end - g->ts < c->o->small_kernel_ns)
			small += g->end - g->ts, nsmall++;
	}
	if (r->comm > 0)
		add_finding(c->f, c->rank, c->step, F_COMM, r->comm, "communication kernels");
	/* one finding per peer waited for: stragglers credits each peer
	 * with what the step lost to it, not the step's whole wait */
	for (i = 0; r->wait > 0 && i < c->shares->n; i++) {
		char who[48];

		snprintf(who, sizeof(who), "rank %lld", (long long)c->shares->v[i].peer);
		if (c->shares->v[i].ns > 0)
			add_finding(c->f, c->rank, c->step, F_WAIT_PEER,
				    c->shares->v[i].ns, who);
	}
	/* each way by its own name (a .cpu() into pageable memory read as
	 * a copy to the GPU, and was told to pin its source) */
	if (page > 0)
		add_finding(c->f, c->rank, c->step, F_PAGEABLE, page,
			    "Memcpy HtoD (Pageable -> Device)");
	if (page_out > 0)
		add_finding(c->f, c->rank, c->step, F_PAGEABLE, page_out,
			    "Memcpy DtoH (Device -> Pageable)");
	if (r->launch > 0)
		add_finding(c->f, c->rank, c->step, F_LAUNCH, r->launch,
			    "short gaps between kernels");
	if (nsmall > 0 && r->launch > r->busy / 4) {
		char what[64];

		snprintf(what, sizeof(what), "kernels shorter than %g us",
			 (double)c->o->small_kernel_ns / 1000.0);
		add_finding(c->f, c->rank, c->step, F_SMALL, small, what);
		c->f->v[c->f->n - 1].count = nsmall;
	}
	ta_union_free(&all);
	ta_union_free(&comm);
	ta_union_free(&comp);
	ta_union_free(&work);
	ta_union_free(&waits);
}

/* Every verdict: compute-bound, then the loss that decides it, in the
 * order of struct step_result's losses. */
static const char *const verdict_names[] = { "compute-bound", "host-stalled",
	"launch-bound", "communication-bound", "copy-bound", "waiting-for-peer",
	"unrecorded", "queued-idle", NULL };

static const struct ta_col verdict_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "gpu_busy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "verdict", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "main_cause", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "cause_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "path_bound", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "path_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "verdict_path_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};

/* The parts of the critical path (ta_critical_parts, bits in its order)
 * that each verdict blames: the path confirms a verdict when they hold a
 * fair share of it. */
static const unsigned verdict_parts[] = {
	1u << 2,                        /* compute-bound: kernel_compute */
	1u << 0 | 1u << 6,              /* host-stalled: cpu, sync */
	1u << 0 | 1u << 1 | 1u << 5,    /* launch-bound: cpu, launch, gap */
	1u << 3 | 1u << 7,              /* communication-bound: comm, peer wait */
	1u << 4,                        /* copy-bound: kernel_memory */
	1u << 7 | 1u << 8,              /* waiting-for-peer: peer wait, the
					 * path on other ranks (not a part) */
	1u << 5,                        /* unrecorded: the gap before the
					 * first recorded kernel */
	1u << 5,                        /* queued-idle: gaps */
};

static const struct ta_col finding_cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "kind", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "cost_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "count", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "where", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "advice", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	/* what varies from run to run, out of the key: memory's amounts */
	{ "detail", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};
#define NFINDING_COLS (sizeof(finding_cols) / sizeof(*finding_cols))

/* The costliest finding of some kinds in this step. */
static const struct finding *top_finding(const struct findings *f, int64_t rank,
					 int64_t step, unsigned kinds)
{
	const struct finding *best = NULL;
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct finding *x = &f->v[i];

		if (x->rank == rank && x->step == step && (kinds & (1u << x->kind)) &&
		    (!best || x->cost > best->cost))
			best = x;
	}
	return best;
}

/* The verdict of the rank's last step with a window, and its number. */
struct before {
	const char *verdict;    /* NULL: none yet */
	int64_t step;
};

/* Whether the step ran on the host for no time (its CPU range). */
static int no_length(const struct diag_ctx *c)
{
	sqlite3_stmt *st = NULL;
	int none = 0;

	if (sqlite3_prepare_v2(c->db, "SELECT dur FROM steps WHERE rank = ? AND step = ?",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, c->rank);
		sqlite3_bind_int64(st, 2, c->step);
		none = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) <= 0;
	}
	sqlite3_finalize(st);
	return none;
}

/* A step with no window of its own: its host work ran while the GPU
 * still ran the steps' before it (its window is contiguous with theirs
 * and ends where it starts). It lost nothing; what held the GPU then is
 * what held the last step with a window (b), or work launched before the
 * trace began where none came before. Not host-stalled: nothing waited.
 * A step of no length (its CPU range) lost nothing either. */
static const char *empty_row(struct ta_table *t, size_t row, const struct diag_ctx *c,
			     const struct before *b)
{
	const char *verdict = b->verdict ? b->verdict : "unrecorded";
	char cause[64];

	if (no_length(c))
		snprintf(cause, sizeof(cause), "a step of no length");
	else if (b->verdict)
		snprintf(cause, sizeof(cause), "under step %lld's GPU work",
			 (long long)b->step);
	else
		snprintf(cause, sizeof(cause), "under GPU work launched before the trace");
	ta_table_set_text(t, row, 4, verdict);
	ta_table_set_text(t, row, 5, cause);
	ta_table_set_real(t, row, 6, 0);
	return verdict;
}

/* The step's row; its verdict (a static name). */
static const char *verdict_row(struct ta_table *t, const struct diag_ctx *c,
			       const struct step_result *r, const struct before *b)
{
	int64_t loss[7] = { r->host, r->launch, r->comm, r->copy, r->wait, r->early,
			    r->queued };
	static const char *const *verdicts = verdict_names + 1;
	static const unsigned kinds[7] = { 1u << F_HOST_REGION | 1u << F_SYNC,
		1u << F_LAUNCH, 1u << F_COMM, 1u << F_PAGEABLE | 1u << F_COPY,
		1u << F_WAIT_PEER, 0, 1u << F_QUEUED };
	double busy = r->span > 0 ? 100.0 * (double)r->busy / (double)r->span : 0;
	const struct finding *f;
	char cause[300];
	size_t row = ta_table_add_row(t);
	int v = 0, i;

	for (i = 1; i < 7; i++)
		if (loss[i] > loss[v])
			v = i;
	ta_table_set_int(t, row, 0, c->rank);
	if (c->step >= 0)
		ta_table_set_int(t, row, 1, c->step);
	ta_table_set_real(t, row, 2, (double)r->span / 1000.0);
	if (r->span <= 0)       /* no window: no share of one */
		return empty_row(t, row, c, b);
	ta_table_set_real(t, row, 3, ta_round(busy, 2));
	if (busy >= c->o->busy_pct && (double)loss[v] < 0.1 * (double)r->span) {
		ta_table_set_text(t, row, 4, verdict_names[0]);
		ta_table_set_text(t, row, 5, "gpu_busy");
		ta_table_set_real(t, row, 6, (double)r->busy / 1000.0);
		return verdict_names[0];
	}
	ta_table_set_text(t, row, 4, verdicts[v]);
	f = top_finding(c->f, c->rank, c->step, kinds[v]);
	if (f)
		snprintf(cause, sizeof(cause), "%s: %s", ta_finding_names[f->kind], f->where);
	else
		snprintf(cause, sizeof(cause), "%s", v == 3 ? "copies" : v == 5 ?
			 "GPU work launched before the trace began (warm-up)" :
			 verdicts[v]);
	ta_table_set_text(t, row, 5, cause);
	ta_table_set_real(t, row, 6, (double)loss[v] / 1000.0);
	return verdicts[v];
}

static int steps_of(sqlite3 *db, int64_t rank,
		    int64_t **steps, size_t *n, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	*n = 0;
	/* the model's windows: temporal's idle is the sum of these steps' */
	if (ta_db_prepare(db, "SELECT step, ts, end_ts FROM step_win WHERE rank = ?"
			  " ORDER BY ts", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*steps = ta_xrealloc(*steps, cap * 3 * sizeof(**steps));
		}
		(*steps)[*n * 3] = sqlite3_column_int64(st, 0);
		(*steps)[*n * 3 + 1] = sqlite3_column_int64(st, 1);
		(*steps)[*n * 3 + 2] = sqlite3_column_int64(st, 2);
		(*n)++;
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	if (*n == 0) { /* no steps: the whole window */
		/* a rank without steps: its window, first to last GPU work */
		if (ta_db_prepare(db, "SELECT -1, ts, end_ts FROM span"
				  " WHERE rank = ?", &st, err) < 0)
			return -1;
		sqlite3_bind_int64(st, 1, rank);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 1) != SQLITE_NULL) {
			*steps = ta_xrealloc(*steps, 3 * sizeof(**steps));
			(*steps)[0] = -1;
			(*steps)[1] = sqlite3_column_int64(st, 1);
			(*steps)[2] = sqlite3_column_int64(st, 2);
			*n = 1;
		}
		sqlite3_finalize(st);
	}
	return 0;
}

static int cmp_finding(const void *x, const void *y)
{
	const struct finding *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	return a->cost > b->cost ? -1 : a->cost < b->cost;
}

static struct ta_table *findings_table(struct findings *f,
				       const struct ta_traits *run)
{
	struct ta_table *t = ta_table_new("Findings, by cost", finding_cols, NFINDING_COLS);

	ta_table_set_values(t, 2, ta_finding_names);
	size_t i;

	ta_qsort(f->v, f->n, sizeof(*f->v), cmp_finding);
	for (i = 0; i < f->n; i++) {
		size_t r = ta_table_add_row(t);

		ta_table_set_int(t, r, 0, f->v[i].rank);
		if (f->v[i].step >= 0)
			ta_table_set_int(t, r, 1, f->v[i].step);
		ta_table_set_text(t, r, 2, ta_finding_names[f->v[i].kind]);
		ta_table_set_real(t, r, 3, (double)f->v[i].cost / 1000.0);
		ta_table_set_int(t, r, 4, f->v[i].count);
		ta_table_set_text(t, r, 5, f->v[i].where);
		ta_table_set_text(t, r, 6, ta_advice(f->v[i].kind, f->v[i].where, run));
	}
	return t;
}

/* Whether peak bytes are under half of rank's GPU memory (its
 * deviceProperties; not known: no). */
static int roomy(sqlite3 *db, int64_t rank, int64_t peak)
{
	sqlite3_stmt *st = NULL;
	int r = 0;

	if (sqlite3_prepare_v2(db, "SELECT mem_bytes FROM gpu_device WHERE rank = ?1",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, rank);
		if (sqlite3_step(st) == SQLITE_ROW &&
		    sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
		    sqlite3_column_int64(st, 0) > 0)
			r = peak >= 0 && peak < sqlite3_column_int64(st, 0) / 2;
	}
	sqlite3_finalize(st);
	return r;
}

/* memory's findings, when the trace has [memory] events: they cost
 * memory, not time (cost_us 0); where says how much. */
static int memory_findings(sqlite3 *db, const struct ta_query *q,
			   struct ta_table *t, const struct ta_traits *run,
			   struct ta_error *err)
{
	struct ta_memory_opts o = { 0, TA_MEM_BY_ANNOTATION, 0, 0, 0, 0 };
	struct ta_table *steps, *mf;
	char where[300], detail[600];
	size_t r;

	if (ta_db_int(db, "SELECT count(*) FROM label WHERE name = '[memory]'", 0) == 0)
		return 0;
	if (ta_memory_run(db, q, &o, &steps, &mf, err) < 0)
		return -1;
	for (r = 0; r < mf->nrows; r++) {
		const char *kind = ta_table_cell(mf, r, 2)->s;
		int growth = strcmp(kind, "memory_growth") == 0;
		double mib = (double)ta_table_cell(mf, r, 3)->i / (1 << 20);
		size_t row;

		if (!growth && strcmp(kind, "memory_peak") != 0)
			continue;
		/* where: the device (and the leaking range), the same from run
		 * to run (a baseline's key); detail: the amounts */
		if (growth) {
			snprintf(where, sizeof(where), "%s: %s", ta_table_cell(mf, r, 1)->s,
				 ta_table_cell(mf, r, 4)->s);
			snprintf(detail, sizeof(detail), "%+.1f MiB a step", mib);
		} else {
			snprintf(where, sizeof(where), "%s", ta_table_cell(mf, r, 1)->s);
			snprintf(detail, sizeof(detail), "%.1f MiB: %s", mib,
				 ta_table_cell(mf, r, 4)->s);
		}
		row = ta_table_add_row(t);
		ta_table_set_int(t, row, 0, ta_table_cell(mf, r, 0)->i);
		ta_table_set_text(t, row, 2, ta_finding_names[growth ? F_MEM_GROWTH : F_MEM_PEAK]);
		ta_table_set_real(t, row, 3, 0);
		ta_table_set_int(t, row, 4, 1);
		ta_table_set_text(t, row, 5, where);
		ta_table_set_text(t, row, 6, growth ? ta_advice(F_MEM_GROWTH, where, run) :
				  ta_advice_peak(roomy(db, ta_table_cell(mf, r, 0)->i,
						       ta_table_cell(mf, r, 3)->i)));
		ta_table_set_text(t, row, 7, detail);
	}
	ta_table_free(steps);
	ta_table_free(mf);
	return 0;
}

/* The main cause of rank's step in t's rows (columns: see
 * ta_name_late_peers), unless that is itself a wait for a peer (a chain
 * names the first late rank only); NULL if the rank was not diagnosed. */
/* Rows of a table found by (rank, step) in log time: with 10^4 ranks a
 * scan per row was quadratic. Rows with no step sort first. */
struct step_index {
	const struct ta_table *t;
	size_t rank_col, step_col;
	size_t *rows, n;
};

static int cmp_key(const struct step_index *x, size_t r, int64_t rank, int has_step,
		   int64_t step)
{
	const struct ta_cell *a = ta_table_cell(x->t, r, x->rank_col);
	const struct ta_cell *s = ta_table_cell(x->t, r, x->step_col);

	if (a->i != rank)
		return a->i < rank ? -1 : 1;
	if (s->null != !has_step)
		return s->null ? -1 : 1;
	if (!s->null && s->i != step)
		return s->i < step ? -1 : 1;
	return 0;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct step_index *sorting = ctx;
	size_t y = *(const size_t *)b;
	const struct ta_cell *s = ta_table_cell(sorting->t, y, sorting->step_col);
	int c = cmp_key(sorting, *(const size_t *)a,
			ta_table_cell(sorting->t, y, sorting->rank_col)->i, !s->null,
			s->null ? 0 : s->i);

	return c ? c : (*(const size_t *)a > y) - (*(const size_t *)a < y);
}

static void index_steps(struct step_index *x, const struct ta_table *t, size_t rank_col,
			size_t step_col)
{
	size_t i;

	x->t = t;
	x->rank_col = rank_col;
	x->step_col = step_col;
	x->n = t ? t->nrows : 0;
	x->rows = ta_xcalloc(x->n + 1, sizeof(*x->rows));
	for (i = 0; i < x->n; i++)
		x->rows[i] = i;
	if (x->n)
		qsort_r(x->rows, x->n, sizeof(*x->rows), cmp_rows, x);
}

/* The first row of (rank, step) in table order, or (size_t)-1. */
static size_t find_step(const struct step_index *x, int64_t rank, int has_step, int64_t step)
{
	size_t lo = 0, hi = x->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_key(x, x->rows[mid], rank, has_step, step) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->n && cmp_key(x, x->rows[lo], rank, has_step, step) == 0 ?
	       x->rows[lo] : (size_t)-1;
}

static const char *own_cause(const struct step_index *x, size_t cause_col, int64_t rank,
			     int64_t step)
{
	size_t i = find_step(x, rank, 1, step);
	const char *s;

	if (i == (size_t)-1)
		return NULL;
	s = ta_table_cell(x->t, i, cause_col)->s;
	return strncmp(s, "wait_for_peer", 13) == 0 ? NULL : s;
}

void ta_name_late_peers(struct ta_table *t, size_t rank_col, size_t step_col,
			size_t cause_col)
{
	static const char prefix[] = "wait_for_peer: ";
	struct step_index x;
	size_t i;

	index_steps(&x, t, rank_col, step_col);
	for (i = 0; i < t->nrows; i++) {
		const char *s = ta_table_cell(t, i, cause_col)->s;
		long long peer;
		const char *cause;
		char named[300];

		if (!s || strncmp(s, prefix, sizeof(prefix) - 1) != 0 ||
		    ta_table_cell(t, i, step_col)->null ||
		    sscanf(s + sizeof(prefix) - 1, "rank %lld", &peer) != 1 ||
		    strchr(s, '(') ||
		    !(cause = own_cause(&x, cause_col, peer, ta_table_cell(t, i, step_col)->i)))
			continue;
		/* the cause is the peer's cell, which this write does not move */
		snprintf(named, sizeof(named), "%srank %lld (%.200s)", prefix, peer, cause);
		ta_table_set_text(t, i, cause_col, named);
	}
	free(x.rows);
}

/* Memory's findings come after the others, whose order is by rank. */
static int memory_last(const struct ta_table *t, size_t a, size_t b)
{
	const char *x = ta_table_cell(t, a, 2)->s, *y = ta_table_cell(t, b, 2)->s;
	int mx = strncmp(x, "memory_", 7) == 0, my = strncmp(y, "memory_", 7) == 0;

	return mx - my;
}

/* By rank (each rank's rows in their order), memory's findings last. */
static int by_rank_memory_last(const struct ta_table *t, size_t a, size_t b)
{
	int64_t x = ta_table_cell(t, a, 0)->i, y = ta_table_cell(t, b, 0)->i;
	int m = memory_last(t, a, b);

	if (m || strncmp(ta_table_cell(t, a, 2)->s, "memory_", 7) == 0)
		return m;
	return x < y ? -1 : x > y;
}

void ta_diagnose_join(struct ta_table *verdicts, struct ta_table *findings)
{
	char where[sizeof(((struct finding *)0)->where)];
	struct step_index x;
	size_t i;

	index_steps(&x, verdicts, 0, 1);
	for (i = 0; findings && i < findings->nrows; i++) {
		const struct ta_cell *step = ta_table_cell(findings, i, 1);
		const char *w = ta_table_cell(findings, i, 5)->s, *cause;
		long long peer;

		if (strcmp(ta_table_cell(findings, i, 2)->s, ta_finding_names[F_WAIT_PEER]) != 0 ||
		    sscanf(w, "rank %lld", &peer) != 1 ||
		    !(cause = own_cause(&x, 5, peer, step->null ? -1 : step->i)))
			continue;
		snprintf(where, sizeof(where), "rank %lld (%.200s)", peer, cause);
		ta_table_set_text(findings, i, 5, where);
	}
	free(x.rows);
	if (findings)
		ta_table_sort(findings, memory_last);
	ta_name_late_peers(verdicts, 0, 1, 5);
}

/* "rank 1" becomes "rank 1 (host_region: data_loading)": the late rank's
 * own cause, known once every rank is diagnosed. */
static void name_late_peers(struct ta_table *t, struct findings *f)
{
	struct step_index ix;
	size_t i;

	index_steps(&ix, t, 0, 1);
	for (i = 0; i < f->n; i++) {
		struct finding *x = &f->v[i];
		long long peer;
		const char *cause;

		if (x->kind != F_WAIT_PEER || sscanf(x->where, "rank %lld", &peer) != 1 ||
		    !(cause = own_cause(&ix, 5, peer, x->step)))
			continue;
		snprintf(x->where, sizeof(x->where), "rank %lld (%.200s)", peer, cause);
	}
	free(ix.rows);
	ta_name_late_peers(t, 0, 1, 5);
}

const struct ta_critical_opts ta_diagnose_path_opts = { -1, 0, NULL, NULL, 1, NULL,
							 NULL, 0, 0, NULL };

void ta_diagnose_confirm(struct ta_table *t, const struct ta_table *path)
{
	struct step_index x;
	size_t r;

	index_steps(&x, path, 0, 1);
	for (r = 0; r < t->nrows; r++) {
		const struct ta_cell *step = ta_table_cell(t, r, 1);
		size_t p = find_step(&x, ta_table_cell(t, r, 0)->i, !step->null,
				     step->null ? 0 : step->i);
		const char *verdict = ta_table_cell(t, r, 4)->s;
		double len, best = -1, blamed = 0;
		size_t c, bc = 0, v;

		if (p == (size_t)-1)
			continue;
		len = ta_table_cell(path, p, 2)->d;
		if (len <= 0)   /* no window: no path to have a part */
			continue;
		for (v = 0; strcmp(verdict_names[v], verdict) != 0; v++)
			;
		for (c = 3; c < 3 + TA_PATH_COLS && c < path->ncols; c++) {
			double d = ta_table_cell(path, p, c)->d;

			if (d > best && c < 3 + TA_PATH_PARTS)
				best = d, bc = c - 3;
			if (verdict_parts[v] & 1u << (c - 3))
				blamed += d;
		}
		ta_table_set_text(t, r, 7, ta_critical_parts[bc]);
		ta_table_set_real(t, r, 8, ta_round(100 * best / len, 2));
		ta_table_set_real(t, r, 9, ta_round(100 * blamed / len, 2));
	}
	free(x.rows);
}

/* The critical path's largest part in each step (critical.c): the
 * verdict's second opinion, by another method. */
static int confirm_with_path(sqlite3 *db, const struct ta_query *q,
			     const struct ta_host *host, struct ta_table *t,
			     struct ta_error *err)
{
	struct ta_critical_opts o = ta_diagnose_path_opts;
	struct ta_table *path, *top;

	o.host = host;
	if (ta_critical_run(db, q, &o, &path, &top, err) < 0)
		return -1;
	ta_diagnose_confirm(t, path);
	ta_table_free(path);
	ta_table_free(top);
	return 0;
}

/* Text: after the verdicts, the costliest findings over all steps. */
int ta_diagnose_run(sqlite3 *db, const struct ta_query *q,
		    const struct ta_diagnose_opts *o, struct ta_table **out,
		    struct ta_table **findings, struct ta_error *err)
{
	struct findings f = { NULL, 0, 0, ta_intern_new(), NULL };
	struct rank_data d;
	struct ta_table *t = ta_table_new("Diagnosis per step", verdict_cols, 10);

	ta_table_set_values(t, 4, verdict_names);
	ta_table_set_values(t, 7, ta_critical_parts);
	memset(&d, 0, sizeof(d));
	sqlite3_stmt *ranks = NULL;
	struct ta_traits run;
	struct ta_peers peers;
	struct ta_sync_ops sync = { 0 };
	struct ta_peer_shares shares = { 0 };
	struct ta_beside beside = { NULL, 0, 0 };
	int64_t *steps = NULL, nranks, done = 0;
	size_t nsteps, i, ncpu;
	int rc = 0, step_rc = SQLITE_DONE;

	*out = *findings = NULL;
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV | TA_NEED_HOST, err) < 0 ||
	    ta_model_traits(db, &run, err) < 0 ||
	    (nranks = ta_db_int(db, "SELECT count(*) FROM sel_ranks", -1)) < 0) {
		ta_table_free(t);
		ta_intern_free(f.keys);
		return -1;
	}
	/* waits for late peers: every rank's collectives, matched */
	if (ta_peers_match(db, q, &peers, err) < 0) {
		ta_table_free(t);
		ta_intern_free(f.keys);
		return -1;
	}
	for (i = 0, ncpu = 0; i < peers.nwaits; i++)
		ncpu += peers.waits[i].cpu != 0;
	/* a peer with no trace waits in no collective of ours: its lateness
	 * reads as our communication */
	ta_peers_warn_untimed(t, &peers);
	if (peers.absent)
		ta_table_warn(t, "the job's process groups name %zu rank%s with no trace "
			      "here: a wait for %s shows as exposed_comm, not wait_for_peer "
			      "(traceanalyze stragglers)", peers.absent,
			      peers.absent == 1 ? "" : "s", peers.absent == 1 ? "it" : "them");
	if (ta_sync_ops_load(db, &sync, err) < 0 ||
	    ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank", &ranks, err) < 0) {
		ta_sync_ops_free(&sync);
		ta_peers_free(&peers);
		ta_table_free(t);
		ta_intern_free(f.keys);
		return -1;
	}
	while (rc == 0 && (step_rc = sqlite3_step(ranks)) == SQLITE_ROW) {
		struct diag_ctx c = { db, o, &f, &d, &peers,
				      sqlite3_column_int64(ranks, 0), -1, 0, 0, 0, &shares,
				      ncpu };
		struct before b = { NULL, -1 };

		rc = load_rank(db, c.rank, &d, &sync, &beside, err);
		if (rc == 0)
			rc = steps_of(db, c.rank, &steps, &nsteps, err);
		for (i = 0, b.verdict = NULL; rc == 0 && i < nsteps; i++) {
			struct step_result r;
			const char *v;

			c.step = steps[i * 3];
			analyse_step(&c, steps[i * 3 + 1], steps[i * 3 + 2], &r);
			v = verdict_row(t, &c, &r, &b);
			if (r.span > 0) /* the last step with a window */
				b.verdict = v, b.step = c.step;
		}
		if (rc == 0 && c.failed)
			rc = ta_db_done(db, SQLITE_ERROR, err);
		if (q->progress)
			q->progress("diagnose", (size_t)++done, (size_t)nranks);
	}
	sqlite3_finalize(ranks);
	/* the names' spans go before the path walk loads its own */
	ta_host_spans_free(&d.host.spans);
	if (rc == 0)
		rc = ta_db_done(db, step_rc, err);
	if (rc == 0 && o->path)
		rc = confirm_with_path(db, q, &d.host, t, err);
	if (rc == 0) {
		name_late_peers(t, &f);
		*findings = findings_table(&f, &run);
		if (o->findings)
			rc = memory_findings(db, q, *findings, &run, err);
	}
	if (rc == 0 && o->findings)
		rc = ta_roofline_findings(db, q, *findings, &run, &beside, err);
	if (rc == 0)   /* the order shards joined give (ta_diagnose_join) */
		ta_table_sort(*findings, by_rank_memory_last);
	ta_peers_free(&peers);
	ta_sync_ops_free(&sync);
	free(shares.v);
	free(beside.v);
	free(steps);
	free(d.gpu);
	ta_host_free(&d.host);
	free(f.v);
	free(f.at);
	ta_intern_free(f.keys);
	if (rc < 0) {
		ta_table_free(t);
		ta_table_free(*findings);
		*findings = NULL;
		return -1;
	}
	*out = t;
	return 0;
}
