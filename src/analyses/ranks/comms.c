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
 * kernel start (peers.c keeps those above 0). */
static int64_t wait_of(const struct ta_peers *p, int64_t rank, int64_t ts)
{
	size_t lo = 0, hi = p->nwaits;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ta_peer_wait *w = &p->waits[mid];

		if (w->rank < rank || (w->rank == rank && w->ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nwaits && p->waits[lo].rank == rank && p->waits[lo].ts == ts)
		return p->waits[lo].end - p->waits[lo].ts;
	return 0;
}

struct sum {
	int64_t calls, in, out, total, wait;
	int in_known, out_known;
	char *group, *name, *dtype;
};

static void emit(struct ta_table *t, int64_t rank, const struct sum *s)
{
	size_t r = ta_table_add_row(t);
	int64_t size = dtype_size(s->dtype);

	ta_table_set_int(t, r, 0, rank);
	ta_table_set_text(t, r, 1, s->group);
	ta_table_set_text(t, r, 2, s->name);
	ta_table_set_int(t, r, 3, s->calls);
	/* a size only when every call said it, in one dtype */
	if (size > 0 && s->dtype[0] && s->in_known)
		ta_table_set_int(t, r, 4, s->in * size);
	if (size > 0 && s->dtype[0] && s->out_known)
		ta_table_set_int(t, r, 5, s->out * size);
	ta_table_set_real(t, r, 6, (double)s->total / 1000.0);
	ta_table_set_real(t, r, 7, (double)s->wait / 1000.0);
	ta_table_set_real(t, r, 8, (double)(s->total - s->wait) / 1000.0);
}

static void sum_free(struct sum *s)
{
	free(s->group);
	free(s->name);
	free(s->dtype);
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

/* One pass over the selected ranks' collectives, grouped by rank, group
 * and name; each call's wait looked up by its start. */
static int sums(sqlite3 *db, const struct ta_peers *p, struct ta_table *t,
		struct ta_error *err)
{
	struct sum s = { 0 };
	sqlite3_stmt *st = NULL;
	int64_t rank = 0;
	int rc;

	/* in the analysis window: issued in a kept step (a rank without
	 * steps, or --window span: all), as stragglers counts them */
	if (ta_db_prepare(db, "SELECT c.rank, c.pg, c.name, c.in_nelems, c.out_nelems, c.dtype,"
			  " c.ts, max(c.end_ts - c.ts, 0) FROM coll c"
			  " WHERE c.rank IN (SELECT rank FROM sel_ranks)"
			  " AND (c.step IN (SELECT w.step FROM step_win w WHERE w.rank = c.rank)"
			  " OR NOT EXISTS (SELECT 1 FROM step_win w WHERE w.rank = c.rank))"
			  " ORDER BY c.rank, c.pg, c.name", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *dtype = sqlite3_column_text(st, 5);

		if (s.calls && (sqlite3_column_int64(st, 0) != rank ||
				!text_eq(s.group, sqlite3_column_text(st, 1)) ||
				!text_eq(s.name, sqlite3_column_text(st, 2)))) {
			emit(t, rank, &s);
			sum_free(&s);
		}
		if (!s.calls) {
			rank = sqlite3_column_int64(st, 0);
			s.group = text_dup(sqlite3_column_text(st, 1));
			s.name = text_dup(sqlite3_column_text(st, 2));
			s.dtype = text_dup(dtype);
			s.in_known = s.out_known = 1;
		}
		if (!dtype || !text_eq(s.dtype, dtype))
			s.dtype[0] = '\0';   /* none, or mixed: no size */
		s.calls++;
		s.in_known &= sqlite3_column_type(st, 3) == SQLITE_INTEGER;
		s.out_known &= sqlite3_column_type(st, 4) == SQLITE_INTEGER;
		s.in += sqlite3_column_int64(st, 3);
		s.out += sqlite3_column_int64(st, 4);
		s.total += sqlite3_column_int64(st, 7);
		s.wait += wait_of(p, rank, sqlite3_column_int64(st, 6));
	}
	if (s.calls)
		emit(t, rank, &s);
	sum_free(&s);
	sqlite3_finalize(st);
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
	if (ta_model_prepare(db, q, TA_NEED_COLL | TA_NEED_DEV, err) < 0 ||
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
	if (p.absent)
		ta_table_warn(t, "the job's process groups name %zu rank%s with no trace here: "
			      "the waits for %s are not measured", p.absent,
			      p.absent == 1 ? "" : "s", p.absent == 1 ? "it" : "them");
	t->ranks_absent = p.absent;
	if (!t->nrows)
		ta_table_note(t, "no collective kernel (NCCL, RCCL, HCCL) in the analysis "
			      "window: gloo's collectives run on the CPU (overview counts them)");
	ta_peers_free(&p);
	*out = t;
	return 0;
}

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_comms_run(db, q, out, err);
}

static const struct ta_cmd_info info = {
	"comms", "[options] PATH",
	"Per rank, process group and collective (all_reduce, all_gather, ...):\n"
	"calls, bytes in and out (elements times the dtype's size, as the op that\n"
	"issued it says), the kernels' time, and of that the time spent waiting for\n"
	"the last member to arrive (wait_us: matched across ranks) and the rest\n"
	"(transfer_us).",
	NULL, NULL, NULL, NULL,
	run, { NULL }
};

const struct ta_command ta_command_comms = {
	"comms", NULL, "collectives per rank: calls, bytes, time waiting and transferring",
	TA_SPREAD_PEERS, NULL, 1, { 0 }, &info
};
