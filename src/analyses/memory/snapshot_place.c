/* An allocator snapshot's peak placed in the trace of the same run: the
 * recorder's time_us is Unix time, the trace's ts + base_ns (rank_clock)
 * is too, so the peak falls in a rank's ProfilerStep#N and inside the CPU
 * op that asked for the block that made it (the innermost op running then
 * on any of its threads: forward on the main thread, backward on
 * autograd's). */
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_model.h"

#include <string.h>

/* The first selected rank whose events span t (epoch ns); its trace time
 * in *ts. 0 if none. */
static int rank_at(sqlite3 *db, int64_t t, int64_t *rank, int64_t *ts, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc, found = 0;

	if (ta_db_prepare(db, "SELECT s.rank, ? - c.base_ns FROM rank_span s"
			  " JOIN rank_clock c ON c.rank = s.rank"
			  " WHERE s.rank IN (SELECT rank FROM sel_ranks)"
			  " AND ? - c.base_ns BETWEEN s.first_ts AND s.last_ts"
			  " ORDER BY s.rank LIMIT 1", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, t);
	sqlite3_bind_int64(st, 2, t);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*rank = sqlite3_column_int64(st, 0);
		*ts = sqlite3_column_int64(st, 1);
		found = 1;
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err) < 0 ? -1 : found;
}

static int place_one(sqlite3 *db, struct ta_table *sum, size_t row, size_t c_step,
		     size_t c_op, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int64_t rank = 0, ts = 0;
	int rc, found;

	found = rank_at(db, ta_table_cell(sum, row, 3)->i * 1000, &rank, &ts, err);
	if (found <= 0) {
		if (found == 0)
			ta_table_set_text(sum, row, c_op, "(outside the trace)");
		return found;
	}
	if (ta_db_prepare(db, "SELECT step FROM steps WHERE rank = ? AND ts <= ?"
			  " AND end_ts >= ? ORDER BY ts DESC LIMIT 1", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_int64(st, 2, ts);
	sqlite3_bind_int64(st, 3, ts);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ta_table_set_int(sum, row, c_step, sqlite3_column_int64(st, 0));
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	if (ta_db_prepare(db, "SELECT n.name FROM host h JOIN label n ON n.name_id = h.name"
			  " WHERE h.rank = ? AND h.role = " TA_SQL(TA_ROLE_CPU_OP)
			  " AND h.ts <= ? AND h.ts + h.dur >= ? ORDER BY h.dur, h.idx LIMIT 1",
			  &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_int64(st, 2, ts);
	sqlite3_bind_int64(st, 3, ts);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ta_table_set_text(sum, row, c_op, (const char *)sqlite3_column_text(st, 0));
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

int ta_snapshot_place(sqlite3 *trace, const struct ta_query *q, struct ta_table *sum,
		      struct ta_error *err)
{
	size_t row, c_step = sum->ncols, c_op = sum->ncols, i;

	for (i = 0; i < sum->ncols; i++) {
		if (strcmp(sum->cols[i].name, "peak_step") == 0)
			c_step = i;
		else if (strcmp(sum->cols[i].name, "peak_op") == 0)
			c_op = i;
	}
	if (c_step == sum->ncols || c_op == sum->ncols)
		return 0;
	if (ta_model_prepare(trace, q, TA_NEED_HOST, err) < 0)
		return -1;
	for (row = 0; row < sum->nrows; row++)
		if (!ta_table_cell(sum, row, 3)->null &&
		    place_one(trace, sum, row, c_step, c_op, err) < 0)
			return -1;
	/* in no step, though the trace was read: said by every caller
	 * (memory --trace, report --snapshot) */
	for (row = 0; row < sum->nrows; row++)
		if (ta_table_cell(sum, row, c_step)->null && !ta_table_cell(sum, row, c_op)->null)
			ta_table_warn(sum, "the snapshot's peak on %s is outside the "
				      "trace's time: not the same run?",
				      ta_table_cell(sum, row, 0)->s);
	return 0;
}
