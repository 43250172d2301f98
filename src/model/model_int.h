/* Private to src/model/. */
#ifndef TA_MODEL_INT_H
#define TA_MODEL_INT_H

#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_model.h"

/* TEMP TABLE sel_ranks from the query; an unknown rank is an error. */
int ta_model_select_ranks(sqlite3 *db, const struct ta_query *q,
			  struct ta_error *err);
/* dev and win (HTA: hrows too), by the query's rules. */
int ta_model_dev(sqlite3 *db, const struct ta_query *q, struct ta_error *err);
/* Whether a kept device row has a negative duration (dev.c): 0, 1, or -1
 * where dev is not a view of kept rows. */
int ta_model_dev_negative_kept(sqlite3 *db);
/* main.dev_rows and its info on a connection that may write, in its
 * transaction: the default rules' dev for every rank, kept (dev.c). In
 * the shape of ta_db_write's callback, which both its callers use. */
int ta_model_write_dev_rows(sqlite3 *rw, void *unused, struct ta_error *err);
/* The default rules' device rows of every rank in sel_ranks into table
 * (temp.dev, main.dev_rows; win made), rank by rank (dev_fill.c). */
/* repeats: the table made of each rank's GPU rows recorded twice and
 * counted once, and of those with a negative length, read as 0 (rank,
 * n, negative; ranks with neither left out). */
int ta_model_fill_dev(sqlite3 *db, const char *table, const char *repeats,
		      struct ta_error *err);
/* Warns of a thread whose kernel launches mostly have no GPU activity in
 * the trace (lost_launches.c): dev_all made. Once a connection. */
void ta_model_warn_lost_launches(sqlite3 *db);
/* step_win and span (window.c): by the steps, or first to last GPU work. */
int ta_model_windows(sqlite3 *db, int by_steps, struct ta_error *err);
/* The views of the model, by the default rules or HTA's. */
int ta_model_views(sqlite3 *db, int trace_frame, struct ta_error *err);
/* What need asks beyond dev: indexes, copies, tables. */
int ta_model_build(sqlite3 *db, int trace_frame, unsigned need,
		   struct ta_error *err);
/* A part's times within the parser's bounds (trace_parse.c: [-2^61,
 * 2^62] ns), which the arithmetic on them relies on: an edited part's
 * other rows are not read. */
#define TA_PART_LO "-2305843009213693952"
#define TA_PART_HI "4611686018427387904"
#define TA_PART_IN_BOUNDS(c) " AND (" c " IS NULL OR " c " BETWEEN " TA_PART_LO \
	" AND " TA_PART_HI ")"
#define TIMES_IN_BOUNDS TA_PART_IN_BOUNDS("issue_ts") TA_PART_IN_BOUNDS("ts") \
	TA_PART_IN_BOUNDS("end_ts")
/* Whether db is one rank's and keeps a part this build made (keep.c). */
int ta_model_part_kept(sqlite3 *db);
/* coll (coll.c): every rank's collectives, matchable across ranks. */
int ta_model_coll(sqlite3 *db, struct ta_error *err);
/* SQL function ta_kind(name, cat, by_name): ta_classify, remembered
 * in the user data that ta_model_kind_memo_new makes. */
void ta_model_sql_kind(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* The same by ids, for rows of many kernels with few names:
 * COALESCE(ta_kind_known(name_id, cat_id, hta), ta_kind_learn(name_id,
 * cat_id, hta, name, cat)) fetches the strings only for a pair it has not
 * seen (COALESCE evaluates its second argument only when needed). Both
 * share ta_kind's memo. */
void ta_model_sql_kind_known(sqlite3_context *ctx, int argc,
			     sqlite3_value **argv);
void ta_model_sql_kind_learn(sqlite3_context *ctx, int argc,
			     sqlite3_value **argv);
/* SQL: the correlation of rank's first launch call in the trace, NULL if
 * none. GPU work with a smaller correlation and no call of its own was
 * launched before the trace began (warm-up's): one rule for dev's cut,
 * the first window, coll's numbering and diagnose (view first_call). */
#define TA_FIRST_CALL_SQL(rank) \
	"(SELECT min(fc.correlation) FROM main.events fc WHERE fc.role = " \
	TA_SQL(TA_ROLE_RUNTIME) " AND fc.rank = " rank " AND fc.correlation >= 0)"
void *ta_model_kind_memo_new(void);
void ta_model_kind_memo_free(void *memo);

#endif
