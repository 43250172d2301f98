/* traceanalyze comms: the collectives, per rank, process group and name,
 * as the TensorBoard plugin's distributed view listed its communication
 * ops, right on today's traces: every collective kernel (NCCL, RCCL,
 * HCCL, gloo), named and sized by the record_param_comms op that issued
 * it (FSDP2's all_gather_into_tensor and reduce_scatter_tensor too: the
 * plugin knew nccl:* ops only, which on PyTorch 2.11 traces launch no
 * kernel), its kernel time, and of that the time it waited for the last
 * member to arrive (collectives matched across ranks, peers.c) and the
 * rest, the transfer. Those issued in the kept steps (ANALYSIS WINDOW),
 * so that a rank's waits add up to stragglers' wait_us. */
#include "ta_command.h"
#include "commands/cli.h"
#include "analyses/ranks/peers.h"
#include "ta_analyses.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "group", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "calls", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "in_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "out_bytes", TA_COL_INT, TA_UNIT_BYTES, 0 },
	{ "total_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "wait_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "transfer_us", TA_COL_REAL, TA_UNIT_US, 0 },
};
#define NCOLS (sizeof(cols) / sizeof(*cols))

/* torch's dtype names (record_param_comms' "dtype") and their sizes; 0:
 * not known, the bytes left empty */
static int64_t dtype_size(const char *d)
{
	static const struct { const char *name; int64_t size; } sizes[] = {
		{ "Float", 4 }, { "BFloat16", 2 }, { "Half", 2 }, { "Double", 8 },
		{ "Long", 8 }, { "Int", 4 }, { "Short", 2 }, { "Char", 1 },
		{ "Byte", 1 }, { "Bool", 1 }, { "ComplexFloat", 8 },
		{ "ComplexDouble", 16 }, { "ComplexHalf", 4 }, { "UInt16", 2 },
		{ "UInt32", 4 }, { "UInt64", 8 },
	};
	size_t i;

	if (!d)
		return 0;
	if (strncmp(d, "Float8_", 7) == 0)
		return 1;
	for (i = 0; i < sizeof(sizes) / sizeof(*sizes); i++)
		if (strcmp(d, sizes[i].name) == 0)
			return sizes[i].size;
	return 0;
}

/* A collective's wait for its last member: the waits are by rank and
 * kernel start (peers.c keeps those above 0); two that start together
 * take one record each (used marks them), and no wait is longer than
 * the kernel ran. */
static int64_t wait_of(const struct ta_peers *p, char *used, int64_t rank, int64_t ts,
		       int64_t dur)
{
	size_t lo = 0, hi = p->nwaits;
	int64_t ns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ta_peer_wait *w = &p->waits[mid];

		if (w->rank < rank || (w->rank == rank && w->ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo < p->nwaits && p->waits[lo].rank == rank && p->waits[lo].ts == ts && used[lo])
		lo++;
	if (lo >= p->nwaits || p->waits[lo].rank != rank || p->waits[lo].ts != ts)
		return 0;
	used[lo] = 1;
	ns = p->waits[lo].end - p->waits[lo].ts;
	return ns < 0 ? 0 : ns > dur ? dur : ns;
}

/* One call's bytes: its elements times its dtype's size; -1 when either
 * is not a usable number (absent, negative, past int64). */
static int64_t call_bytes(sqlite3_stmt *st, int col, int64_t size)
{
	int64_t n = sqlite3_column_int64(st, col), b;

	if (sqlite3_column_type(st, col) != SQLITE_INTEGER || n < 0 || size <= 0 ||
	    __builtin_mul_overflow(n, size, &b))
		return -1;
	return b;
}

/* a += b, or -1 (not known) for good once either is */
static void add_bytes(int64_t *a, int64_t b)
{
	if (*a >= 0 && (b < 0 || __builtin_add_overflow(*a, b, a)))
		*a = -1;
}

struct sum {
	int64_t calls, in, out, total, wait;   /* in, out: bytes, -1 not known */
	char *group, *name;
	int measured;   /* some collective matched across ranks, and each
			 * call of the row has a length */
	int untimed;    /* a call of the row has none: its total not known */
};

static void emit(struct ta_table *t, int64_t rank, const struct sum *s)
{
	size_t r = ta_table_add_row(t);

	ta_table_set_int(t, r, 0, rank);
	ta_table_set_text(t, r, 1, s->group);
	ta_table_set_text(t, r, 2, s->name);
	ta_table_set_int(t, r, 3, s->calls);
	/* a size only when every call said it */
	if (s->in >= 0)
		ta_table_set_int(t, r, 4, s->in);
	if (s->out >= 0)
		ta_table_set_int(t, r, 5, s->out);
	/* helper-55: 19 calls with no length read total_us 0.0 */
	if (!s->untimed)
		ta_table_set_real(t, r, 6, (double)s->total / 1000.0);
	if (!s->measured)   /* not measured: not 0, unknown (a gate trips) */
		return;
	ta_table_set_real(t, r, 7, (double)s->wait / 1000.0);
	ta_table_set_real(t, r, 8, (double)(s->total - s->wait) / 1000.0);
}

static void sum_free(struct sum *s)
{
	free(s->group);
	free(s->name);
	memset(s, 0, sizeof(*s));
}

static int text_eq(const char *a, const unsigned char *b)
{
	return strcmp(a, b ? (const char *)b : "") == 0;
}

static char *text_dup(const unsigned char *s)
{
	return ta_xstrdup(s ? (const char *)s : "");
}

/* by rank, the costliest first */
static int by_total(const struct ta_table *t, size_t a, size_t b)
{
	int64_t ra = ta_table_cell(t, a, 0)->i, rb = ta_table_cell(t, b, 0)->i;
	double ta = ta_table_cell(t, a, 6)->d, tb = ta_table_cell(t, b, 6)->d;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return ta > tb ? -1 : ta < tb;
}

/* A rank's calls whose size could not be used, said by rank: on shards
 * each says its own, and one line said twice is said once (a count over
 * every rank read 12 with -j 1, 6 with -j 2). */
static void say_bad(struct ta_table *t, int64_t rank, size_t *bad)
{
	if (*bad)
		ta_table_warn(t, "rank %lld: %zu message size%s not used (negative, past "
			      "2^63 bytes, or of a dtype not known): those rows' bytes are "
			      "left empty", (long long)rank, *bad, *bad == 1 ? "" : "s");
	*bad = 0;
}

/* One pass over the selected ranks' collectives, grouped by rank, group
 * and name; each call's wait looked up by its start. */
static int sums(sqlite3 *db, const struct ta_peers *p, struct ta_table *t,
		struct ta_error *err)
{
	struct sum s = { 0 };
	sqlite3_stmt *st = NULL;
	char *used = ta_xcalloc(p->nwaits + 1, 1);
	size_t bad = 0;   /* calls that gave a size we could not use */
	int64_t rank = 0;
	int rc;

	/* in the analysis window: issued in a kept step (a rank without
	 * steps, or --window span: all), as stragglers counts them */
	if (ta_db_prepare(db, "SELECT c.rank, c.pg, c.name, c.in_nelems, c.out_nelems, c.dtype,"
			  " c.ts, max(c.end_ts - c.ts, 0) FROM coll c"
			  " WHERE c.rank IN (SELECT rank FROM sel_ranks)"
			  " AND (c.step IN (SELECT w.step FROM step_win w WHERE w.rank = c.rank)"
			  " OR NOT EXISTS (SELECT 1 FROM step_win w WHERE w.rank = c.rank))"
			  " ORDER BY c.rank, c.pg, c.name", &st, err) < 0) {
		free(used);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t size = dtype_size((const char *)sqlite3_column_text(st, 5));
		int64_t dur = sqlite3_column_int64(st, 7);

		if (s.calls && (sqlite3_column_int64(st, 0) != rank ||
				!text_eq(s.group, sqlite3_column_text(st, 1)) ||
				!text_eq(s.name, sqlite3_column_text(st, 2)))) {
			emit(t, rank, &s);
			sum_free(&s);
		}
		if (!s.calls) {
			s.measured = p->matched > 0;
			if (rank != sqlite3_column_int64(st, 0))
				say_bad(t, rank, &bad);
			rank = sqlite3_column_int64(st, 0);
			s.group = text_dup(sqlite3_column_text(st, 1));
			s.name = text_dup(sqlite3_column_text(st, 2));
		}
		s.calls++;
		/* each call by its own dtype (a row may mix them) */
		for (int c = 3; c <= 4; c++) {
			int64_t b = call_bytes(st, c, size);

			add_bytes(c == 3 ? &s.in : &s.out, b);
			bad += b < 0 && sqlite3_column_type(st, c) != SQLITE_NULL;
		}
		/* a call with no length (damaged) bounds no wait: the row's
		 * wait is not known (peers.c leaves it out too) */
		if (dur <= 0)
			s.measured = 0, s.untimed = 1;
		/* matched with none (a send with no receive, a step's pairs
		 * that disagree): its wait is not known, not 0 (helper-66) */
		if (ta_peers_unmatched(p, rank, sqlite3_column_int64(st, 6)))
			s.measured = 0;
		s.total = ta_add_sat(s.total, dur);
		s.wait = ta_add_sat(s.wait, wait_of(p, used, rank, sqlite3_column_int64(st, 6), dur));
	}
	if (s.calls)
		emit(t, rank, &s);
	sum_free(&s);
	free(used);
	sqlite3_finalize(st);
	say_bad(t, rank, &bad);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	ta_table_sort(t, by_total);
	return 0;
}

int ta_comms_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		 struct ta_error *err)
{
	struct ta_peers p;
	struct ta_table *t;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	if (ta_model_prepare(db, q, TA_NEED_COLL | TA_NEED_DEV | TA_NEED_GPU, err) < 0 ||
	    ta_peers_match(db, q, &p, err) < 0) {
		ta_peers_free(&p);
		return -1;
	}
	t = ta_table_new("Collectives", cols, NCOLS);
	if (sums(db, &p, t, err) < 0) {
		ta_table_free(t);
		ta_peers_free(&p);
		return -1;
	}
	if (t->nrows) /* else the note below says it */
		ta_peers_say(t, &p);
	/* gloo's ops run on the CPU: said only where the trace has some (a
	 * gate on the empty table trips); with rows, ta_peers_say says it */
	if (!t->nrows && p.gloo) {
		ta_table_warn(t, "no collective in the analysis window: gloo's "
			      "collectives (CPU ranges) are listed only where the traces' "
			      "distributedInfo.pg_config names a single gloo group "
			      "(overview and overlap --by step count them; comms --tb-compat "
			      "lists the gloo: ops)");   /* no row: a gate trips */
	} else if (!t->nrows) {
		ta_table_note(t, "no collective kernel (NCCL, RCCL, HCCL) in the analysis window");
	}
	ta_peers_free(&p);
	*out = t;
	return 0;
}
