/* counters: the hardware counters of a trace taken in the CUPTI range
 * profiler mode, per kernel, with the op that launched it (HTA's
 * get_cupti_counter_data_with_operators). The counter events carry no
 * correlation: as HTA, the Nth of them by time is the kernel of the Nth
 * cudaLaunchKernel, and a rank where the two counts differ is left out
 * with a warning. op is the innermost CPU op over the launch on its
 * thread, top_op the outermost. */
#include "ta_command.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_model.h"

#include <stdlib.h>
#include <string.h>

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "nth", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "kernel", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "op", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "top_op", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "counter", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "value", TA_COL_REAL, TA_UNIT_NONE, 0 },
};

struct launch_ops {
	int64_t op, top;            /* name ids, -1: none */
	int64_t ts, order;
};

static int cmp_launch(const void *a, const void *b)
{
	const struct launch_ops *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* For each cudaLaunchKernel by time: the CPU ops over it on its thread. */
static int launch_ops(sqlite3 *db, int64_t rank, struct launch_ops **out,
		      size_t *n, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct { int64_t end, name; } *stack = NULL;
	size_t depth = 0, cap = 0;
	int64_t tid = 0;
	int rc, first = 1;

	*n = 0;
	/* by thread and start, outer first; launches after ops at one time */
	if (ta_db_prepare(db, "SELECT h.tid, h.ts, h.ts + h.dur, h.name,"
			  " h.cat = " TA_CAT_CPU_OP ","
			  " h.role = " TA_SQL(TA_ROLE_RUNTIME) " AND n.name GLOB 'cudaLaunchKernel*'"
			  " AND h.cat = " TA_CAT_RUNTIME
			  " FROM host_thread h JOIN label n ON n.name_id = h.name"
			  " WHERE h.rank = ? ORDER BY h.tid, h.ts, h.dur DESC", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t ts = sqlite3_column_int64(st, 1), end = sqlite3_column_int64(st, 2);

		if (first || sqlite3_column_int64(st, 0) != tid)
			depth = 0;
		first = 0;
		tid = sqlite3_column_int64(st, 0);
		while (depth && stack[depth - 1].end <= ts)
			depth--;
		if (sqlite3_column_int(st, 5)) {
			size_t k;

			*out = ta_xrealloc(*out, (*n + 1) * sizeof(**out));
			(*out)[*n].op = (*out)[*n].top = -1;
			(*out)[*n].ts = ts;
			(*out)[*n].order = (int64_t)*n;
			for (k = 0; k < depth; k++)
				if (stack[k].name >= 0) {
					if ((*out)[*n].top < 0)
						(*out)[*n].top = stack[k].name;
					(*out)[*n].op = stack[k].name;
				}
			(*n)++;
		}
		if (depth == cap) {
			cap = cap ? 2 * cap : 64;
			stack = ta_xrealloc(stack, cap * sizeof(*stack));
		}
		stack[depth].end = end;
		stack[depth++].name = sqlite3_column_int(st, 4) ? sqlite3_column_int64(st, 3) : -1;
	}
	sqlite3_finalize(st);
	free(stack);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	ta_qsort(*out, *n, sizeof(**out), cmp_launch);  /* as HTA numbers them */
	return 0;
}

static const char *text_of(sqlite3_stmt *st, int64_t id)
{
	const char *t = NULL;

	if (id < 0)
		return "";
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		t = (const char *)sqlite3_column_text(st, 0);
	return t ? t : "";
}

static int rank_rows(sqlite3 *db, int64_t rank, struct ta_table *t,
		     sqlite3_stmt *name_st, struct ta_error *err)
{
	struct launch_ops *ops = NULL;
	sqlite3_stmt *st = NULL;
	size_t nops, nth = 0;
	int64_t ranges, last = -1;
	int rc;

	if (launch_ops(db, rank, &ops, &nops, err) < 0)
		return -1;
	if (ta_db_prepare(db, "SELECT count(*) FROM counter_ranges WHERE rank = ?",
			  &st, err) < 0) {
		free(ops);
		return -1;
	}
	sqlite3_bind_int64(st, 1, rank);
	ranges = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	if (ranges == 0) {
		free(ops);
		return 0;
	}
	if ((size_t)ranges != nops) {
		ta_table_warn(t, "rank %lld: %lld counter ranges but %zu "
			      "cudaLaunchKernel calls: they cannot be paired, the "
			      "rank is left out", (long long)rank, (long long)ranges, nops);
		free(ops);
		return 0;
	}
	if (ta_db_prepare(db, "SELECT r.idx, r.name, v.key, v.value FROM counter_ranges r"
			  " JOIN counter_vals v ON v.rank = r.rank AND v.idx = r.idx"
			  " WHERE r.rank = ? ORDER BY r.ts, r.idx", &st, err) < 0) {
		free(ops);
		return -1;
	}
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t idx = sqlite3_column_int64(st, 0);
		size_t r = ta_table_add_row(t), k;
		const char *txt = (const char *)sqlite3_column_text(st, 2);
		char *key = ta_xstrdup(txt ? txt : "");
		double value = sqlite3_column_double(st, 3);
		int64_t kernel = sqlite3_column_int64(st, 1);

		if (last >= 0 && idx != last)
			nth++;
		last = idx;
		k = nth < nops ? nth : nops - 1;
		ta_table_set_int(t, r, 0, rank);
		ta_table_set_int(t, r, 1, (int64_t)nth);
		ta_table_set_text(t, r, 2, text_of(name_st, kernel));
		ta_table_set_text(t, r, 3, text_of(name_st, ops[k].op));
		ta_table_set_text(t, r, 4, text_of(name_st, ops[k].top));
		ta_table_set_text(t, r, 5, key);
		ta_table_set_real(t, r, 6, value);
		free(key);
	}
	sqlite3_finalize(st);
	free(ops);
	return ta_db_done(db, rc, err);
}

int ta_counters_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		    struct ta_error *err)
{
	struct ta_table *t = ta_table_new("CUPTI counters per kernel", cols, 7);
	sqlite3_stmt *st = NULL, *name_st = NULL;
	int rc = 0, step_rc = SQLITE_DONE, ranges = 0;
	int64_t any;

	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_THREAD, err) < 0 ||
	    ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?", &name_st, err) < 0 ||
	    ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY 1", &st, err) < 0)
		rc = -1;
	/* one look over every row first: a rank's own look is a scan too,
	 * and 1024 of them took 18 s to find nothing */
	if (rc == 0)
		ranges = ta_db_int(db, "SELECT EXISTS (SELECT 1 FROM counter_ranges)", 0) != 0;
	while (rc == 0 && ranges && (step_rc = sqlite3_step(st)) == SQLITE_ROW)
		rc = rank_rows(db, sqlite3_column_int64(st, 0), t, name_st, err);
	sqlite3_finalize(st);
	sqlite3_finalize(name_st);
	if (rc == 0)
		rc = ta_db_done(db, step_rc, err);
	any = ta_db_int(db, "SELECT count(*) FROM inputs", 0);
	if (rc == 0 && any > 0 && !ranges) {
		char *paths = ta_db_text(db, "SELECT CASE WHEN count(*) <= 4 THEN"
					 " group_concat(path, ', ') ELSE min(path) || ' and '"
					 " || (count(*) - 1) || ' more' END FROM inputs"
					 " WHERE rank IN (SELECT rank FROM sel_ranks)");

		ta_error_set(err, TA_EXIT_INPUT, "'%s': no cuda_profiler_range events: "
			     "profile in the CUPTI range profiler mode "
			     "(experimental_config with profiler_metrics)", paths ? paths : "?");
		free(paths);
		rc = -1;
	}
	if (rc < 0) {
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
	return ta_counters_run(db, q, out, err);
}

static const struct ta_cmd_info info = {
	"counters", "[options] PATH",
	"The hardware counters of a trace taken in the CUPTI range profiler "
	"mode\n(cuda_profiler_range events), per kernel and counter, with the "
	"innermost and\noutermost CPU op over its launch: rank,nth,kernel,op,"
	"top_op,counter,value.",
	NULL, NULL, NULL, NULL,
	run, { NULL }
};

const struct ta_command ta_command_counters = {
	"counters", NULL, "CUPTI hardware counters per kernel, with the op that launched it",
	TA_SPREAD_PER_RANK, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_REFUSED }, &info
};
