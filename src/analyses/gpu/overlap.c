/* Communication/computation overlap (hta-semantics §9.5): the share of
 * communication time during which some computation kernel also ran. By
 * default also what computation waited for (exposed.c), and of that the
 * collectives' wait for a late peer (peers.c). */
#include "ta_command.h"
#include "exposed.h"
#include "analyses/common/intervals.h"
#include "analyses/host/host.h"
#include "analyses/ranks/peers.h"
#include "ta_analyses.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "comm_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "compute_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "overlap_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "overlap_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "exposed_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "wait_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "slowed_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

/* Computation resumes this soon after communication it waited for
 * (diagnose's --host-gap-us default). */
#define RESUME_NS 50000

/* Default mode: the unions exposed.c needs, and the peers' waits. */
struct exposure {
	struct ta_union comm, comp, waits;
	struct ta_queue queue;
	struct ta_comp_kernel *k;       /* computation, for the slowdown */
	size_t nk, capk;
	const struct ta_peers *peers;
	struct ta_sync_ops sync;        /* gradient sync's own ops, */
	int64_t sync_work;              /* the GPU time launched in them */
	sqlite3 *db;
	struct ta_host host;            /* the host's syncs (diagnose's) */
	sqlite3_stmt *untimed;          /* untimed_comm's */
	size_t nuntimed;                /* ranks with such kernels */
	int failed;
	struct ta_error err;            /* why, when it did */
};

static void add_exposed(struct ta_table *t, size_t r, int64_t rank,
			struct exposure *x)
{
	struct ta_exposed ex;
	int64_t slowed, comm = ta_union_length(&x->comm), cost;
	size_t i;

	ta_peers_wait_union(x->peers, rank, INT64_MIN, INT64_MAX, &x->waits);
	/* a host blocked on a collective waited for it (exposed.h), on a
	 * thread that launches work or issues collectives (diagnose's rule) */
	if (!x->failed && ta_host_load(x->db, rank, &x->host, &x->err) < 0)
		x->failed = 1;
	for (i = 0; i < x->host.nsyncs; i++)
		if (x->host.syncs[i].end > x->host.syncs[i].ts &&
		    (x->host.syncs[i].launcher ||
		     ta_peers_issued_on(x->peers, rank, x->host.syncs[i].tid)))
			ta_queue_add_host(&x->queue, x->host.syncs[i].end,
					  x->host.syncs[i].ts);
	ta_queue_finish(&x->queue);
	ta_exposed_comm(&x->comm, &x->comp, &x->queue, &x->waits,
			RESUME_NS, &ex, NULL, NULL);
	slowed = ta_comm_slowdown(x->k, x->nk, &x->comm) + x->sync_work;
	/* what communication cost: waited for, slowing computation down, or
	 * adding work to it */
	cost = ex.exposed + slowed < comm ? ex.exposed + slowed : comm;
	x->sync_work = 0;
	ta_table_set_real(t, r, 5, (double)cost / 1000.0);
	/* a collective of its with no length waited for it knows not how
	 * long (stragglers leaves its steps empty too) */
	if (!ta_peers_untimed(x->peers, rank) && !ta_peers_absent(x->peers))
		ta_table_set_real(t, r, 6, (double)ex.wait / 1000.0);
	ta_table_set_real(t, r, 7, (double)(cost - ex.exposed) / 1000.0);
	x->nk = 0;
	ta_union_reset(&x->comm);
	ta_union_reset(&x->comp);
	ta_queue_reset(&x->queue);
}

/* rank's collective kernels with no usable length in its analysis window
 * (one outside it blanked a rank whose window read right; helper-57) */
static int64_t untimed_comm(struct exposure *x, int64_t rank)
{
	int64_t n = ta_model_untimed_coll(x->db, &x->untimed, rank, -1);

	if (n < 0 && !x->failed) {
		ta_db_failed(x->db, &x->err);
		x->failed = 1;
	}
	return n > 0 ? n : 0;
}

static void add_rank(struct ta_table *t, int64_t rank, struct ta_sweeper *sw,
		     int any_comm, struct exposure *x)
{
	int64_t comm_len, comp_len, both, untimed = x ? untimed_comm(x, rank) : 0;
	size_t r = ta_table_add_row(t);

	ta_sweeper_finish(sw);
	comm_len = ta_sweeper_length(sw, 0);
	comp_len = ta_sweeper_length(sw, 1);
	both = sw->out.dur[3];
	ta_table_set_int(t, r, 0, rank);
	ta_table_set_real(t, r, 1, (double)comm_len / 1000.0);
	ta_table_set_real(t, r, 2, (double)comp_len / 1000.0);
	ta_table_set_real(t, r, 3, (double)both / 1000.0);
	if (any_comm)
		ta_table_set_real(t, r, 4, ta_round(100.0 * ((double)both /
							     (double)comm_len), 2));
	else if (!untimed)
		ta_table_note(t, "rank %lld: no communication kernels",
			      (long long)rank);
	if (x)
		add_exposed(t, r, rank, x);
	/* collective kernels with no usable length: the rank's communication
	 * is not measured, nor what hid or exposed it (helper-55: dur "x"
	 * read comm_us 0.0, exposed_us 0.0 for 56 ms, a gate passed) */
	if (untimed > 0) {
		static const size_t unknown[] = { 1, 3, 4, 5, 6, 7 };

		for (size_t i = 0; i < sizeof(unknown) / sizeof(*unknown); i++)
			ta_table_set_null(t, r, unknown[i]);
		x->nuntimed++;
	}
	/* the next rank starts from nothing */
	ta_sweeper_reset(sw);
	memset(&sw->out, 0, sizeof(sw->out));
}

/* A rank's GPU work in time order, asked a rank at a time as temporal
 * does: one join of every rank with the view made SQLite copy the view,
 * index the copy and sort it (a third of the time on a DDP rank). */
static const char rows_sql[] =
	"SELECT ts, dur, kind, stream, launch_ts, name FROM dev_win WHERE rank = ?"
	" AND kind IN (" TA_SQL(TA_KIND_COMPUTE) ", " TA_SQL(TA_KIND_COMM) ", "
	TA_SQL(TA_KIND_MEMORY) ") ORDER BY sort_ts";

/* One GPU row of rank r (rows_sql's) into the sweep and the exposure. */
static void add_row(sqlite3_stmt *st, int64_t r, struct ta_sweeper *sw,
		    struct exposure *x, int *any_comm)
{
	int kind = sqlite3_column_int(st, 2), comm = kind == TA_KIND_COMM;
	int64_t ts = sqlite3_column_int64(st, 0), dur = sqlite3_column_int64(st, 1);
	int launched = sqlite3_column_type(st, 4) != SQLITE_NULL;

	if (x)
		ta_queue_add(&x->queue, sqlite3_column_int64(st, 3), kind, ts, ts + dur,
			     launched ? sqlite3_column_int64(st, 4) : INT64_MAX);
	if (x && !comm && x->sync.n && launched &&
	    ta_sync_ops_launched(&x->sync, r, sqlite3_column_int64(st, 4)))
		x->sync_work += dur;
	if (kind == TA_KIND_MEMORY)
		return; /* only queued: overlap is compute and comm */
	if (x && !comm) {
		if (x->nk == x->capk) {
			x->capk = x->capk ? 2 * x->capk : 1024;
			x->k = ta_xrealloc(x->k, x->capk * sizeof(*x->k));
		}
		x->k[x->nk++] = (struct ta_comp_kernel){ sqlite3_column_int64(st, 5), ts, dur,
							 0, 0, 0 };
	}
	*any_comm |= comm;
	ta_sweeper_add(sw, comm ? 0 : 1, ts, dur);
	if (x)
		ta_union_add(comm ? &x->comm : &x->comp, ts, dur);
}

int ta_overlap_run(sqlite3 *db, const struct ta_query *q,
		   struct ta_table **out, struct ta_error *err)
{
	static const int bits[] = { 1, 2 };   /* communication, computation */
	struct ta_sweeper sw;
	sqlite3_stmt *st = NULL, *ranks = NULL;
	struct ta_table *t;
	struct ta_peers peers;
	struct exposure x = { .peers = &peers, .db = db }, *xp = NULL;
	int rc;

	*out = NULL;
	memset(&peers, 0, sizeof(peers));
	if (ta_rules(q)->peers) {
		if (ta_peers_match(db, q, &peers, err) < 0)
			return -1;
		xp = &x;
	}
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV, err) < 0 ||
	    ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank", &ranks, err) < 0 ||
	    ta_db_prepare(db, rows_sql, &st, err) < 0) {
		sqlite3_finalize(ranks);
		ta_peers_free(&peers);
		return -1;
	}
	if (xp && ta_sync_ops_load(db, &x.sync, err) < 0) {
		sqlite3_finalize(st);
		sqlite3_finalize(ranks);
		ta_peers_free(&peers);
		return -1;
	}
	ta_sweeper_init(&sw, bits, 2, 0, !ta_model_negative_dur(db));
	t = ta_table_new("Communication hidden under computation", cols,
			 ta_rules(q)->peers ? 8 : 5);
	while ((rc = sqlite3_step(ranks)) == SQLITE_ROW) {
		int64_t r = sqlite3_column_int64(ranks, 0);
		int any_comm = 0;

		sqlite3_bind_int64(st, 1, r);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			add_row(st, r, &sw, xp, &any_comm);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			break;
		add_rank(t, r, &sw, any_comm, xp);
	}
	sqlite3_finalize(st);
	sqlite3_finalize(ranks);
	if (xp) {
		ta_peers_warn_untimed(t, &peers);
		/* a late peer with no trace here waited for no one: its
		 * waits would read 0 (helper-55: 43.4 ms read 0.0) */
		ta_peers_warn_absent(t, &peers, "wait_us, the wait for a late "
				     "peer, is");
		if (x.nuntimed)
			ta_table_warn(t, "%zu rank%s collective kernels with no usable "
				      "length (a damaged trace): %s communication, and what "
				      "hid or exposed it, is not measured", x.nuntimed,
				      x.nuntimed == 1 ? " has" : "s have",
				      x.nuntimed == 1 ? "its" : "their");
	}
	ta_sweeper_free(&sw);
	ta_union_free(&x.comm);
	ta_union_free(&x.comp);
	ta_union_free(&x.waits);
	ta_queue_free(&x.queue);
	free(x.k);
	ta_sync_ops_free(&x.sync);
	sqlite3_finalize(x.untimed);
	ta_host_free(&x.host);
	ta_peers_free(&peers);
	if (rc == SQLITE_DONE && x.failed) {
		*err = x.err;   /* the host's load said why */
		ta_table_free(t);
		return -1;
	}
	if (rc != SQLITE_DONE) {
		ta_db_done(db, rc, err);
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}
