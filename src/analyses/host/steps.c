/* steps: each ProfilerStep#N of each rank, its range on the host, the
 * window every analysis measures it by (window.c), and whether it was
 * kept (the last step is not: it is cut short by the profiler's stop).
 * With --hta-compat, kept follows HTA's step filter (§7). */
#include "ta_command.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_model.h"

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "cpu_start_us", TA_COL_REAL, TA_UNIT_CLOCK, 0 },
	{ "cpu_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "window_start_us", TA_COL_REAL, TA_UNIT_CLOCK, 0 },
	{ "window_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "kept", TA_COL_INT, TA_UNIT_NONE, 0 },
};

/* a step's range on the host, its window if kept; by rank and start */
static const char sql[] =
	"SELECT s.rank, s.step, s.ts, s.dur, w.ts, w.end_ts - w.ts,"
	" w.step IS NOT NULL FROM steps s JOIN sel_ranks r ON r.rank = s.rank"
	" LEFT JOIN step_win w ON w.rank = s.rank AND w.step = s.step"
	" ORDER BY s.rank, s.ts, s.step";
/* HTA: kept when its row survived the step filter */
static const char hta_sql[] =
	"SELECT s.rank, s.step, s.ts, s.dur, NULL, NULL,"
	" EXISTS (SELECT 1 FROM hta_trace h WHERE h.rank = s.rank AND h.idx = s.idx)"
	" FROM steps s JOIN sel_ranks r ON r.rank = s.rank ORDER BY s.rank, s.ts, s.step";

/* Each selected rank with no row, said (its window is its whole trace). */
static int stepless(sqlite3 *db, struct ta_table *t, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t r = 0;
	int rc;

	if (ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);

		while (r < t->nrows && ta_table_cell(t, r, 0)->i < rank)   /* by rank */
			r++;
		if (r == t->nrows || ta_table_cell(t, r, 0)->i != rank)
			ta_table_warn(t, "rank %lld: no ProfilerStep#N range: the other "
				      "commands read its whole trace as one window",
				      (long long)rank);
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

int ta_steps_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		 struct ta_error *err)
{
	struct ta_table *t;
	sqlite3_stmt *st = NULL;
	int rc, c;

	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_DEV, err) < 0 ||
	    ta_db_prepare(db, ta_rules(q)->trace_frame ? hta_sql : sql, &st, err) < 0)
		return -1;
	t = ta_table_new("Steps", cols, 7);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t r = ta_table_add_row(t);

		for (c = 0; c < 7; c++) {
			if (sqlite3_column_type(st, c) == SQLITE_NULL)
				continue;
			if (c < 2 || c == 6)
				ta_table_set_int(t, r, (size_t)c, sqlite3_column_int64(st, c));
			else
				ta_table_set_real(t, r, (size_t)c,
						  (double)sqlite3_column_int64(st, c) / 1000.0);
		}
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0) {
		ta_table_free(t);
		return -1;
	}
	/* no step at all reads as a table that forgot its rows (helper-54:
	 * without schedule=, PyTorch 2.11 records no ProfilerStep# though
	 * prof.step() is called); nor does a rank without one among ranks
	 * with steps (helper-57) */
	if (t->nrows == 0)
		ta_table_warn(t, "no ProfilerStep#N range in the trace%s: the other "
			      "commands read each rank's whole trace as one window (a "
			      "profile with schedule= and prof.step() each step records them)",
			      q->ranks ? " for the ranks selected" : "");
	else if (!ta_rules(q)->trace_frame && stepless(db, t, err) < 0) {
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

/* The command: this analysis alone. */
static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_steps_run(db, q, out, err);
}

static const struct ta_cmd_info info = {
	"steps", "[options] PATH",
	"Per rank, each ProfilerStep#N: its range on the host (cpu_start_us, "
	"cpu_us), the\nwindow the other commands measure it by (window_start_us, "
	"window_us: from\nthe end of the previous step's window to the later "
	"of its host end and the end\nof the GPU work it launched, see "
	"ANALYSIS WINDOW) and whether it was kept\n(the last step is not; "
	"--hta-compat: HTA's step filter).",
	NULL, NULL, NULL, NULL,
	run, { NULL }
};

const struct ta_command ta_command_steps = {
	"steps", NULL, "the profiler steps: their ranges, windows, and which are kept",
	TA_SPREAD_PER_RANK, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_RULES }, &info
};
