/* Communication/computation overlap (hta-semantics §9.5): the share of
 * communication time during which some computation kernel also ran. */
#include "intervals.h"
#include "ta_analyses.h"
#include "ta_db.h"

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "comm_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "compute_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "overlap_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "overlap_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
};

static void add_rank(struct ta_table *t, int64_t rank, struct ta_union *comm,
		     struct ta_union *comp)
{
	static const int bits[] = { 1, 2 };
	struct ta_union *u[] = { comm, comp };
	int64_t comm_len = ta_union_length(comm);
	struct ta_sweep sw;
	size_t r = ta_table_add_row(t);

	ta_sweep_run(u, bits, 2, 0, &sw);
	ta_table_set_int(t, r, 0, rank);
	ta_table_set_real(t, r, 1, (double)comm_len / 1000.0);
	ta_table_set_real(t, r, 2, (double)ta_union_length(comp) / 1000.0);
	ta_table_set_real(t, r, 3, (double)sw.dur[3] / 1000.0);
	if (comm->n)
		ta_table_set_real(t, r, 4, ta_round(100.0 * ((double)sw.dur[3] /
							     (double)comm_len), 2));
	else
		ta_table_note(t, "rank %lld: no communication kernels",
			      (long long)rank);
	ta_union_reset(comm);
	ta_union_reset(comp);
}

int ta_overlap_run(sqlite3 *db, const struct ta_query *q,
		   struct ta_table **out, struct ta_error *err)
{
	struct ta_union comm = { 0 }, comp = { 0 };
	sqlite3_stmt *st = NULL;
	struct ta_table *t;
	int64_t rank = 0;
	int have = 0, rc;

	*out = NULL;
	if (ta_rows_prepare(db, q, err) < 0 ||
	    ta_db_prepare(db, "SELECT s.rank, d.ts, d.dur, d.kind FROM sel_ranks s"
			  " LEFT JOIN dev d ON d.rank = s.rank AND d.kind IN (1, 2)"
			  " ORDER BY s.rank, d.ts", &st, err) < 0)
		return -1;
	t = ta_table_new("Communication hidden under computation", cols, 5);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t r = sqlite3_column_int64(st, 0);

		if (have && r != rank)
			add_rank(t, rank, &comm, &comp);
		rank = r;
		have = 1;
		if (sqlite3_column_type(st, 1) == SQLITE_NULL)
			continue;
		ta_union_add(sqlite3_column_int(st, 3) == TA_KIND_COMM ? &comm : &comp,
			     sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
	}
	if (have)
		add_rank(t, rank, &comm, &comp);
	sqlite3_finalize(st);
	ta_union_free(&comm);
	ta_union_free(&comp);
	if (rc != SQLITE_DONE) {
		ta_error_set(err, TA_EXIT_SYSTEM, "database: %s", sqlite3_errmsg(db));
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}
