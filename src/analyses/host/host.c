/* What a rank's host was doing (host.h): the calls that made it wait
 * for the GPU, and names for stretches of its time. Read from the model's
 * calls, host and ranges views. */
#include "host.h"
#include "analyses/common/ids.h"
#include "ta_model.h"

#include <stdlib.h>
#include <string.h>

struct host_frame {    /* a Python frame of the user's own code */
	int64_t ts, end;
	char *name;
};

/* Calls that block the host until the GPU gets somewhere. Not
 * cudaStreamWaitEvent: it makes a stream wait, and the host goes on (a
 * cross-stream dependency, not a sync); not the Async copies. */
#define SYNC_NAMES "'cudaStreamSynchronize', 'cudaDeviceSynchronize'," \
	" 'cudaEventSynchronize', 'cudaMemcpy', 'cudaMemcpy2D', 'cudaMemset'," \
	" 'hipDeviceSynchronize', 'hipStreamSynchronize', 'hipEventSynchronize'," \
	" 'hipMemcpy', 'hipMemcpy2D', 'hipMemset'"
/* the calls that launch kernels (cudaLaunchHostFunc queues a host
 * function: a thread that makes only those launches nothing) */
#define TA_KERNEL_LAUNCH_SQL "(name GLOB '*Launch*' AND name NOT GLOB '*LaunchHostFunc*')"
/* the calls that launch GPU work (a thread that makes none launches
 * nothing) */
#define TA_LAUNCH_NAMES_SQL TA_KERNEL_LAUNCH_SQL " OR name GLOB '*MemcpyAsync*'" \
	" OR name GLOB '*MemsetAsync*'"
#define QUERY_NAMES "'cudaEventQuery', 'cudaStreamQuery', 'hipEventQuery'," \
	" 'hipStreamQuery'"

static int is_sync(const char *name)
{
	/* SYNC_NAMES, which selects them */
	static const char *const names[] = { "cudaStreamSynchronize",
		"cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy",
		"cudaMemcpy2D", "cudaMemset", "hipDeviceSynchronize",
		"hipStreamSynchronize", "hipEventSynchronize", "hipMemcpy",
		"hipMemcpy2D", "hipMemset", NULL };
	size_t i;

	for (i = 0; names[i]; i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return 0;
}

/* Calls that ask whether the GPU is done without waiting: a sync only
 * when the host spins on them (QUERY_NAMES). */
static int is_query(const char *name)
{
	return strcmp(name, "cudaEventQuery") == 0 ||
	       strcmp(name, "cudaStreamQuery") == 0 ||
	       strcmp(name, "hipEventQuery") == 0 ||
	       strcmp(name, "hipStreamQuery") == 0;
}

/* A spin: at least SPIN_CALLS queries on one thread, each starting within
 * SPIN_GAP_NS of the previous one's end (a Python loop on Event.query()
 * makes one every few µs). An allocator's or a watchdog thread's
 * occasional query is no spin. */
#define SPIN_CALLS 3
#define SPIN_GAP_NS 100000

static void push_call(struct ta_host *d, struct ta_sync c)
{
	if (d->nsyncs == d->capsyncs) {
		d->capsyncs = d->capsyncs ? d->capsyncs * 2 : 16;
		d->syncs = ta_xrealloc(d->syncs, d->capsyncs * sizeof(*d->syncs));
	}
	d->syncs[d->nsyncs++] = c;
}

static int cmp_call_tid(const void *x, const void *y)
{
	const struct ta_sync *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int cmp_call_ts(const void *x, const void *y)
{
	const struct ta_sync *a = x, *b = y;

	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* Queries (spin = 0) become spins: each run of them on one thread that
 * is dense enough is one call from its first start to its last end. */
static void find_spins(struct ta_host *d, struct ta_sync *q, size_t nq)
{
	size_t i = 0, j;

	ta_qsort(q, nq, sizeof(*q), cmp_call_tid);
	while (i < nq) {
		for (j = i + 1; j < nq && q[j].tid == q[i].tid &&
		     q[j].ts - q[j - 1].end <= SPIN_GAP_NS; j++)
			;
		if (j - i >= SPIN_CALLS)
			push_call(d, (struct ta_sync){ q[i].ts, q[j - 1].end, 1,
							q[i].tid, 0 });
		i = j;
	}
	ta_qsort(d->syncs, d->nsyncs, sizeof(*d->syncs), cmp_call_ts);
}

static void free_frames(struct ta_host *d)
{
	size_t i;

	for (i = 0; i < d->nframes; i++)
		free(d->frames[i].name);
	d->nframes = 0;
	d->frames_loaded = 0;
}

/* Where in the user's code a sync was made: the innermost Python frame
 * of the user's own files (not torch's) over it, else the innermost
 * record_function range. The rank's user frames are read once, when its
 * first sync needs them (a search per sync through every op and frame
 * before it took half of diagnose's time on a 200 MB trace). */
#define USER_FRAME_NAMES \
	"SELECT name_id FROM label WHERE name GLOB '*.py(*' AND name NOT GLOB" \
	" 'torch/*' AND name NOT GLOB '*/torch/*' AND name NOT GLOB" \
	" '*site-packages*' AND name NOT GLOB '<*'"
static const char frames_sql[] =
	"SELECT e.ts, e.ts + e.dur, n.name FROM host e JOIN label n"
	" ON n.name_id = e.name WHERE e.rank = ? AND e.name IN ("
	USER_FRAME_NAMES ") AND e.dur IS NOT NULL ORDER BY e.ts";
/* a trace captured without stacks has none: no scan of every op for them
 * (a third of the call sites' cost in a cached diagnose) */
static const char any_frames_sql[] =
	"SELECT EXISTS (" USER_FRAME_NAMES ")";

/* ?4: no range that starts earlier lasts long enough to cover ?3 (the
 * rank's longest): without it a moment no range covers read back through
 * every earlier range (50 call sites were 7 % of a cached diagnose) */
static const char range_sql[] =
	"SELECT n.name FROM ranges r JOIN label n ON n.name_id = r.name"
	" WHERE r.rank = ?1 AND r.ts <= ?2 AND r.ts >= ?4 AND r.ts + r.dur >= ?3"
	" ORDER BY r.ts DESC LIMIT 1";

/* A rank's longest event of those sql selects (?1: the rank), into *into
 * (-1: not asked yet): how far back one that covers a moment can start.
 * Asked once per rank, when first needed. */
static int max_dur(struct ta_host *d, const char *sql, int64_t *into)
{
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_ERROR;

	if (*into >= 0)
		return 0;
	if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, d->rank);
		rc = sqlite3_step(st);
		*into = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* A range's name into buf: one a user named as our placeholders are is
 * quoted, not taken for "no range here" (advice, "then ..."). */
static void put_label(char *buf, size_t len, const char *name)
{
	if (name && (strcmp(name, "(no annotation)") == 0 ||
		     strcmp(name, "(outside any op)") == 0 ||
		     strcmp(name, TA_HOST_BACKWARD) == 0 ||
		     strcmp(name, TA_HOST_IDLE) == 0))
		snprintf(buf, len, "\"%s\"", name);
	else
		snprintf(buf, len, "%s", name ? name : "");
}

/* The name sql (?1 rank, ?2 a, ?3 b, ?4 from) finds first, into buf; buf
 * is left as it is if none. -1 on a database error. The statement is kept
 * in h->named[slot] for the next lookup. */
static int first_name(struct ta_host *h, size_t slot, const char *sql, int64_t a,
		      int64_t b, int64_t from, char *buf, size_t len)
{
	sqlite3_stmt *st = h->named[slot];
	int rc = SQLITE_ERROR;

	if (!st && sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return -1;
	}
	h->named[slot] = st;
	sqlite3_bind_int64(st, 1, h->rank);
	sqlite3_bind_int64(st, 2, a);
	sqlite3_bind_int64(st, 3, b);
	sqlite3_bind_int64(st, 4, from);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		put_label(buf, len, (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static void finalize_named(struct ta_host *h)
{
	size_t i;

	for (i = 0; i < sizeof(h->named) / sizeof(h->named[0]); i++) {
		sqlite3_finalize(h->named[i]);
		h->named[i] = NULL;
	}
}

static int load_frames(struct ta_host *d)
{
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_ERROR, any;

	d->frames_loaded = 1;
	if ((any = ta_db_int(d->db, any_frames_sql, -1)) <= 0)
		return any;   /* none, or a database error */
	if (sqlite3_prepare_v2(d->db, frames_sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, d->rank);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (d->nframes == d->capframes) {
				d->capframes = d->capframes ? 2 * d->capframes : 64;
				d->frames = ta_xrealloc(d->frames, d->capframes * sizeof(*d->frames));
			}
			d->frames[d->nframes++] = (struct host_frame){ sqlite3_column_int64(st, 0),
				sqlite3_column_int64(st, 1),
				ta_xstrdup((const char *)sqlite3_column_text(st, 2)) };
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Frames nest: of those covering [a, b], the latest to start is the
 * innermost. Searched back from the last start before a, past at most
 * FRAME_SCAN siblings that ended earlier. */
#define FRAME_SCAN 4096

static const char *innermost_frame(const struct ta_host *d, int64_t a, int64_t b)
{
	size_t lo = 0, hi = d->nframes, i, seen = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->frames[mid].ts <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0 && seen++ < FRAME_SCAN;)
		if (d->frames[i].end >= b)
			return d->frames[i].name;
	return NULL;
}

int ta_host_call_site(struct ta_host *d, int64_t a, int64_t b, char *buf,
		      size_t len)
{
	const char *frame;

	buf[0] = '\0';
	if (!d->frames_loaded && load_frames(d) < 0)
		return -1;
	if ((frame = innermost_frame(d, a, b))) {
		snprintf(buf, len, "%s", frame);
		return 0;
	}
	if (max_dur(d, "SELECT max(r.dur) FROM ranges r WHERE r.rank = ?1",
		    &d->max_range_dur) < 0)
		return -1;
	return first_name(d, 0, range_sql, a, b, a - d->max_range_dur, buf, len);
}

/* A name by its id, into buf (left as it is if there is none); the
 * statement is kept in h->named[1]. */
int ta_host_label(struct ta_host *h, int64_t id, char *buf, size_t len)
{
	sqlite3_stmt *st = h->named[1];
	int rc;

	if (!st && sqlite3_prepare_v2(h->db, "SELECT name FROM label WHERE"
				      " name_id = ?", -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return -1;
	}
	h->named[1] = st;
	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		put_label(buf, len, (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static void free_launchers(struct ta_host *h)
{
	if (h->launchers)
		free(h->launchers->v);
	free(h->launchers);
	h->launchers = NULL;
}

/* "within backward": the range far longer than [a, b] that holds it
 * (ta_host_spans_enclosing), where none of about its length does; the
 * word says the range is not all the host ran then. Else left as is. */
static int enclosing_name(struct ta_host *h, int64_t a, int64_t b, int64_t sa,
			  int64_t sb, char *buf, size_t len)
{
	char name[256];
	long i;

	/* a range on a thread that launches no kernel (gloo's worker, which
	 * copies; a loader's) ran beside the hole, not in the way of the
	 * next launch */
	if (!h->launchers) {
		struct ta_error err = { 0, "", 0 };
		char sql[256];

		/* the calls' index by name holds the tid: no row is read */
		snprintf(sql, sizeof(sql), "SELECT DISTINCT tid FROM calls WHERE"
			 " rank = %lld AND typeof(tid) = 'integer' AND name IN (SELECT name_id"
			 " FROM label WHERE " TA_KERNEL_LAUNCH_SQL ") ORDER BY 1",
			 (long long)h->rank);
		h->launchers = ta_xcalloc(1, sizeof(*h->launchers));
		if (ta_ids_read(h->db, sql, h->launchers, &err) < 0)
			return -1;
	}
	if ((i = ta_host_spans_enclosing(&h->spans, a, b, h->launchers, sa, sb)) < 0)
		return 0;
	name[0] = 0;
	if (ta_host_label(h, h->spans.v[i].name, name, sizeof(name)) < 0)
		return -1;
	if (name[0])
		snprintf(buf, len, "within %s", name);
	return 0;
}

/* Names [a, b]: with ops_too, the innermost CPU op or range covering it
 * (the op that synchronised: the latest start among those covering it);
 * else the shortest record_function range (or, failing one, Python frame)
 * over at least half of it and at most 4 times as long (host_spans.c). */
int ta_host_name(struct ta_host *h, int64_t a, int64_t b, int ops_too,
		 char *buf, size_t len)
{
	struct ta_error err = { 0, "", 0 };
	long i;

	snprintf(buf, len, ops_too ? "(outside any op)" : "(no annotation)");
	if (!h->spans.loaded && ta_host_spans_load(h->db, h->rank, &h->spans, &err) < 0)
		return -1;
	i = ops_too ? ta_host_spans_covering(&h->spans, a, b) :
		      ta_host_spans_overlapping(&h->spans, a, b);
	return i < 0 ? 0 : ta_host_label(h, h->spans.v[i].name, buf, len);
}

int ta_host_scaler_sync(struct ta_host *h, int64_t tid, int64_t lo, int64_t ts)
{
	struct ta_error err = { 0, "", 0 };
	int64_t unscaled;
	size_t i;

	if (tid == TA_SYNC_NO_TID)
		return 0;   /* a thread named by no number is not told apart */
	if (!h->spans.loaded && ta_host_spans_load(h->db, h->rank, &h->spans, &err) < 0)
		return -1;
	if ((unscaled = ta_host_spans_after_unscale(&h->spans, tid, ts)) < lo)
		return 0;
	/* the first sync after it: any later one is the user's */
	for (i = ta_host_first_sync(h, unscaled); i < h->nsyncs && h->syncs[i].ts < ts; i++)
		if (h->syncs[i].tid == tid && h->syncs[i].ts >= unscaled)
			return 0;
	return 1;
}

int ta_host_name_part(struct ta_host *h, int64_t a, int64_t b, int64_t sa,
		      int64_t sb, char *buf, size_t len, int64_t *lo, int64_t *hi)
{
	struct ta_error err = { 0, "", 0 };
	const struct ta_host_span *x;
	long i;

	snprintf(buf, len, "(no annotation)");
	*lo = a;
	*hi = b;
	if (!h->spans.loaded && ta_host_spans_load(h->db, h->rank, &h->spans, &err) < 0)
		return -1;
	if ((i = ta_host_spans_overlapping(&h->spans, a, b)) < 0) {
		if (enclosing_name(h, a, b, sa, sb, buf, len) < 0)
			return -1;
		/* nothing names it, but the backward's ops ran then: the GPU
		 * waited for them (with_stack names none: they have no Python) */
		if (strcmp(buf, "(no annotation)") == 0 &&
		    ta_host_spans_in_backward(&h->spans, a, b))
			snprintf(buf, len, TA_HOST_BACKWARD);
		/* a long stretch with no op at all is no dispatch overhead:
		 * one 20.8 ms wait on a future read as 61 short holes' worth
		 * of it (helper-61) */
		else if (strcmp(buf, "(no annotation)") == 0 && h->spans.n &&
			 b - a >= TA_HOST_IDLE_NS &&
			 10 * ta_host_spans_op_time(&h->spans, a, b) <= b - a)
			snprintf(buf, len, TA_HOST_IDLE);
		return 0;
	}
	x = &h->spans.v[i];
	*lo = x->ts > a ? x->ts : a;
	*hi = x->end < b ? x->end : b;
	return ta_host_label(h, x->name, buf, len);
}

/* the longest cpu_op: how far back the op that launched a call can start */
static int max_op_dur(struct ta_host *d)
{
	return max_dur(d, "SELECT max(o.dur) FROM host o WHERE o.rank = ?1"
		       " AND o.role = " TA_SQL(TA_ROLE_CPU_OP) " AND o.cat = "
		       TA_CAT_CPU_OP, &d->max_op_dur);
}

/* "aten::mm [[50257, 768], [768, 4]]": the op that launched a kernel
 * (through its launch call's correlation), with its input shapes. The
 * search runs back from the call no further than the longest op, so it
 * reads a few rows, not every earlier one. */
int ta_host_launching_op(struct ta_host *d, int64_t corr, char *buf, size_t len)
{
	sqlite3_stmt *st = NULL;
	int64_t ts = 0, end = 0, tid = 0;
	int rc = SQLITE_ERROR, tid_null = 1;

	snprintf(buf, len, "(launch not recorded)");
	if (max_op_dur(d) < 0)
		return -1;
	/* the call first, then the ops before it: one query joining the two
	 * was planned from the ops' side, every op of the rank for each call
	 * (diagnose on a 30-step capture: 110 s) */
	if (sqlite3_prepare_v2(d->db, "SELECT ts, ts + dur, tid FROM calls"
			       " WHERE rank = ?1 AND correlation = ?2 ORDER BY ts DESC LIMIT 1", -1, &st,
			       NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, d->rank);
	sqlite3_bind_int64(st, 2, corr);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		ts = sqlite3_column_int64(st, 0);
		end = sqlite3_column_int64(st, 1);
		tid_null = sqlite3_column_type(st, 2) == SQLITE_NULL;
		tid = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? 0 : -1;
	/* the innermost op around the call on its thread: backwards from it
	 * in time, no further than the longest op */
	if (sqlite3_prepare_v2(d->db,
			"SELECT n.name, COALESCE(o.input_dims, '') FROM host o"
			" JOIN label n ON n.name_id = o.name"
			" WHERE o.cat = " TA_CAT_CPU_OP " AND o.rank = ?1 AND o.ts <= ?2 AND o.ts >= ?2 - ?3"
			"  AND o.ts + o.dur >= ?4 AND o.role = " TA_SQL(TA_ROLE_CPU_OP)
			"  AND o.tid IS ?5"
			" ORDER BY o.ts DESC LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, d->rank);
		sqlite3_bind_int64(st, 2, ts);
		sqlite3_bind_int64(st, 3, d->max_op_dur);
		sqlite3_bind_int64(st, 4, end);
		if (!tid_null)
			sqlite3_bind_int64(st, 5, tid);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW)
			snprintf(buf, len, "%s %s", (const char *)sqlite3_column_text(st, 0),
				 (const char *)sqlite3_column_text(st, 1));
	} else {
		rc = SQLITE_ERROR;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* The sync call (if any) that ends inside the hole [a, b]. A spin counts
 * only if it was polling while the GPU was busy and stopped as soon as the
 * GPU went idle: a burst of queries by the caching allocator inside a
 * hole waited for nothing. */
size_t ta_host_first_sync(const struct ta_host *h, int64_t a)
{
	size_t lo = 0, hi = h->nsyncs;
	int64_t from = a < INT64_MIN + h->max_sync_dur ? INT64_MIN : a - h->max_sync_dur;

	/* only a sync that began at most max_sync_dur before a can end at a
	 * or later: a search, not a scan of every sync for every hole */
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (h->syncs[m].ts < from)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

const struct ta_sync *ta_host_sync_in(const struct ta_host *d, int64_t a,
				      int64_t b,
				      int (*keep)(const struct ta_sync *, const void *),
				      const void *ctx)
{
	size_t i;

	for (i = ta_host_first_sync(d, a); i < d->nsyncs && d->syncs[i].ts <= a; i++) {
		const struct ta_sync *c = &d->syncs[i];

		if (c->end < a || c->end > b || c->end - c->ts <= 0 ||
		    (keep && !keep(c, ctx)))
			continue;
		/* a blocking call drains the queue only if it began while the
		 * GPU still had work: one that starts in the hole returns at
		 * once, and what the host did before it made the hole (DDP's
		 * forward queries its events after the data step's sleep) */
		if (!c->spin && c->ts <= a)
			return c;
		if (c->spin && c->ts < a && c->end - a <= SPIN_GAP_NS)
			return c;
	}
	return NULL;
}

/* Which syncs' threads launch GPU work: a sync there held back what
 * that thread launches next (exposed.h); one on a thread that launches
 * nothing says nothing of the GPU's work. A query per thread that syncs
 * (a few), the first launch ending it. */
static int launchers(struct ta_host *h, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int64_t *seen = NULL;   /* tid, launcher: the threads asked about */
	size_t i, j, nseen = 0;
	int rc = 0;

	if (h->nsyncs && ta_db_prepare(h->db, "SELECT EXISTS (SELECT 1 FROM calls c"
				       " WHERE c.rank = ?1 AND c.tid = ?2 AND c.name IN"
				       " (SELECT name_id FROM label WHERE "
				       TA_LAUNCH_NAMES_SQL "))", &st, err) < 0)
		return -1;
	for (i = 0; rc == 0 && i < h->nsyncs; i++) {
		for (j = 0; j < nseen && seen[2 * j] != h->syncs[i].tid; j++)
			;
		if (j == nseen) {
			seen = ta_xrealloc(seen, 2 * (nseen + 1) * sizeof(*seen));
			seen[2 * j] = h->syncs[i].tid;
			seen[2 * j + 1] = 1;
			nseen++;
			/* a thread named by no number: its calls cannot be
			 * told apart, so it is taken to launch */
			if (h->syncs[i].tid != TA_SYNC_NO_TID) {
				sqlite3_bind_int64(st, 1, h->rank);
				sqlite3_bind_int64(st, 2, h->syncs[i].tid);
				if (sqlite3_step(st) == SQLITE_ROW)
					seen[2 * j + 1] = sqlite3_column_int(st, 0);
				else
					rc = ta_db_done(h->db, SQLITE_ERROR, err);
				sqlite3_reset(st);
			}
		}
		h->syncs[i].launcher = (int)seen[2 * j + 1];
	}
	sqlite3_finalize(st);
	free(seen);
	return rc;
}


/* h, for rank of db, with nothing loaded */
static void reset(struct ta_host *h, sqlite3 *db, int64_t rank)
{
	free_frames(h);
	free_launchers(h);
	if (h->db != db)
		finalize_named(h);
	h->db = db;
	h->rank = rank;
	h->nsyncs = 0;
	h->max_op_dur = -1;
	h->max_range_dur = -1;
	h->spans.n = 0;
	h->spans.loaded = 0;
}

int ta_host_adopt(const struct ta_host *from, sqlite3 *db, int64_t rank,
		  struct ta_host *h)
{
	if (!from || from->db != db || from->rank != rank)
		return 0;
	reset(h, db, rank);
	for (size_t i = 0; i < from->nsyncs; i++)
		push_call(h, from->syncs[i]);
	h->max_sync_dur = from->max_sync_dur;
	return 1;
}

/* An async copy from the GPU to pageable memory that returned only once
 * its copy on the GPU had ended: the host waited in it for the stream's
 * earlier work, as in a sync (.cpu() and .item() copy so, then sync: the
 * copy held 22 ms of an inference step's GEMMs, the sync after it 7 us,
 * and the step read "97 % in copies"). A pinned copy returns at once; a
 * pageable one to the GPU is the host's staging, not a wait. */
static int pageable_copies(sqlite3 *db, struct ta_host *h, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	/* queued: its stream's work before it ran past the call's start,
	 * and the copy began within 50 us of its end (else the host copied
	 * out of staging on its own: two_ranks' 2 MB copies ran 70 us of a
	 * 2 ms call, the GPU idle) */
	if (ta_db_prepare(db, "SELECT c.ts, c.ts + c.dur, c.tid FROM calls c"
			  " WHERE c.rank = ?1 AND c.name IN (SELECT name_id FROM label"
			  "  WHERE name GLOB '*Memcpy*Async*') AND c.ts IS NOT NULL"
			  " AND c.dur > 0 AND c.correlation >= 0 AND EXISTS (SELECT 1"
			  "  FROM dev g WHERE g.rank = ?1 AND g.correlation = c.correlation"
			  "  AND g.ts + g.dur <= c.ts + c.dur AND g.name IN (SELECT name_id"
			  "   FROM label WHERE name GLOB '*Device -> Pageable*')"
			  "  AND (SELECT p.ts + p.dur FROM dev p WHERE p.rank = ?1"
			  "   AND p.stream = g.stream AND p.ts < g.ts ORDER BY p.ts DESC LIMIT 1)"
			  "   BETWEEN max(c.ts + 1, g.ts - 50000) AND g.ts + 1000)"
			  " ORDER BY c.ts", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, h->rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		push_call(h, (struct ta_sync){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), 0,
			sqlite3_column_type(st, 2) == SQLITE_INTEGER ?
			sqlite3_column_int64(st, 2) : TA_SYNC_NO_TID, 0 });
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

int ta_host_load(sqlite3 *db, int64_t rank, struct ta_host *h,
		 struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct ta_sync *q = NULL;   /* the rank's query calls */
	size_t nq = 0, capq = 0;
	int rc;

	reset(h, db, rank);
	/* the names first: a few hundred calls of a rank's 10^5, not every
	 * one read and compared (overlap asks this of every rank) */
	if (ta_db_prepare(db, "SELECT c.ts, c.ts + max(c.dur, 0), n.name, c.tid"
			  " FROM calls c JOIN label n ON n.name_id = c.name WHERE c.rank = ?"
			  " AND c.name IN (SELECT name_id FROM label WHERE name IN ("
			  SYNC_NAMES ", " QUERY_NAMES "))"
			  " AND c.ts IS NOT NULL AND c.dur IS NOT NULL ORDER BY c.ts",
			  &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 2);
		struct ta_sync c = { sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), 0,
			sqlite3_column_type(st, 3) == SQLITE_INTEGER ?
			sqlite3_column_int64(st, 3) : TA_SYNC_NO_TID, 0 };

		if (is_sync(name)) {
			push_call(h, c);
		} else if (is_query(name)) {
			if (nq == capq) {
				capq = capq ? capq * 2 : 256;
				q = ta_xrealloc(q, capq * sizeof(*q));
			}
			q[nq++] = c;
		}
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0 || pageable_copies(db, h, err) < 0) {
		free(q);
		return -1;
	}
	find_spins(h, q, nq);
	free(q);
	h->max_sync_dur = 0;
	for (size_t i = 0; i < h->nsyncs; i++)
		if (h->syncs[i].end - h->syncs[i].ts > h->max_sync_dur)
			h->max_sync_dur = h->syncs[i].end - h->syncs[i].ts;
	return launchers(h, err);
}

void ta_host_free(struct ta_host *h)
{
	finalize_named(h);
	free_launchers(h);
	ta_host_spans_free(&h->spans);
	free_frames(h);
	free(h->frames);
	free(h->syncs);
	memset(h, 0, sizeof(*h));
}
