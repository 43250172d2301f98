/* Fault injection: every analysis, interrupted by SQLite at every point
 * in turn (a progress handler that stops the running statement), either
 * fails with a message or returns the whole table; never -1 without a
 * message, never a table cut short. */
#include "check_main.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_ingest.h"
#include "ta_report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*run_fn)(sqlite3 *db, const struct ta_query *q,
		      struct ta_table **out, struct ta_error *err);

static int temporal(sqlite3 *db, const struct ta_query *q, struct ta_table **t,
		    struct ta_error *e)
{
	return ta_temporal_run(db, q, t, e);
}

static int overlap(sqlite3 *db, const struct ta_query *q, struct ta_table **t,
		   struct ta_error *e)
{
	return ta_overlap_run(db, q, t, e);
}

static int kernels(sqlite3 *db, const struct ta_query *q, struct ta_table **t,
		   struct ta_error *e)
{
	struct ta_kernels_opts o = { 1, 10, 0.8, 1 };

	return ta_kernels_run(db, q, &o, t, e);
}

static int idle(sqlite3 *db, const struct ta_query *q, struct ta_table **t,
		struct ta_error *e)
{
	struct ta_idle_opts o = { 50000, NULL, 0, 0 };

	return ta_idle_run(db, q, &o, t, e);
}

static int launch(sqlite3 *db, const struct ta_query *q, struct ta_table **t,
		  struct ta_error *e)
{
	struct ta_launch_opts o = { 1, 0, 50000, 100000 };

	return ta_launch_run(db, q, &o, t, e);
}

static int queue(sqlite3 *db, const struct ta_query *q, struct ta_table **t,
		 struct ta_error *e)
{
	struct ta_queue_opts o = { 0, 3 };

	return ta_queue_run(db, q, &o, t, e);
}

static int membw(sqlite3 *db, const struct ta_query *q, struct ta_table **t,
		 struct ta_error *e)
{
	struct ta_membw_opts o = { 0 };

	return ta_membw_run(db, q, &o, t, e);
}

static int annotations(sqlite3 *db, const struct ta_query *q,
		       struct ta_table **t, struct ta_error *e)
{
	struct ta_annotations_opts o = { 0, 0, 1000, 0.8 };

	return ta_annotations_run(db, q, &o, t, e);
}

static int ops(sqlite3 *db, const struct ta_query *q, struct ta_table **t,
	       struct ta_error *e)
{
	struct ta_ops_opts o = { TA_OPS_SORT_SELF_DEVICE, 0, 0, 0, 1, -1 };

	return ta_ops_run(db, q, &o, t, e);
}

static int diagnose(sqlite3 *db, const struct ta_query *q, struct ta_table **t,
		    struct ta_error *e)
{
	struct ta_diagnose_opts o = ta_diagnose_defaults;
	struct ta_table *verdicts;
	int rc = ta_diagnose_run(db, q, &o, &verdicts, t, e);

	ta_table_free(verdicts);
	return rc;
}

static int stragglers(sqlite3 *db, const struct ta_query *q,
		      struct ta_table **t, struct ta_error *e)
{
	struct ta_stragglers_opts o = ta_stragglers_defaults;

	return ta_stragglers_run(db, q, &o, t, e);
}

static int critical(sqlite3 *db, const struct ta_query *q,
		    struct ta_table **t, struct ta_error *e)
{
	struct ta_critical_opts o = { -1, 3, NULL, NULL, 1, NULL, "ProfilerStep", 0, 0, NULL };
	struct ta_table *top;
	int rc = ta_critical_run(db, q, &o, t, &top, e);

	ta_table_free(top);
	return rc;
}

static const struct {
	const char *name;
	run_fn fn;
} analyses[] = {
	{ "temporal", temporal }, { "overlap", overlap }, { "kernels", kernels },
	{ "idle", idle }, { "launch", launch }, { "queue", queue },
	{ "membw", membw }, { "annotations", annotations }, { "ops", ops },
	{ "diagnose", diagnose }, { "stragglers", stragglers },
	{ "critical-path", critical },
};

static char *db_path;

static void make_db(void)
{
	struct ta_ingest_opts o = { .jobs = 1 };
	struct ta_error err = { 0, "", 0 };
	char *files[] = { "testdata/two_ranks/rank-0.pt.trace.json.gz" };

	db_path = strdup("/tmp/ta-errors-XXXXXX");
	close(mkstemp(db_path));
	unlink(db_path);
	o.lazy_indexes = ~0u;
	ck_assert_msg(ta_ingest(files, 1, db_path, &o, &err) == 0, "%s", err.msg);
}

static int stop_now(void *ctx)
{
	int *left = ctx;

	return --*left < 0;
}

static char *as_csv(const struct ta_table *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ta_report_csv(f, t);
	fclose(f);
	return buf;
}

/* Runs the analysis on a connection of its own, stopped after `left`
 * progress callbacks (-1: never). */
static int run_once(run_fn fn, int hta, int left, char **csv,
		    struct ta_error *err)
{
	struct ta_query q = { hta, NULL, 0, 0, NULL, NULL };
	struct ta_table *t = NULL;
	sqlite3 *db;
	int rc;

	ck_assert_int_eq(ta_db_open(db_path, &db, err), 0);
	if (left >= 0)
		sqlite3_progress_handler(db, 20, stop_now, &left);
	err->msg[0] = '\0';
	rc = fn(db, &q, &t, err);
	*csv = rc == 0 ? as_csv(t) : NULL;
	ta_table_free(t);
	sqlite3_close(db);
	return rc;
}

START_TEST(test_interrupted_analyses)
{
	size_t a = (size_t)_i / 2;
	int hta = _i % 2, left, failures = 0;
	struct ta_error err = { 0, "", 0 };
	char *want, *got;

	/* under valgrind (TA_CHECK_LIGHT) our rules only: the same paths
	 * stop (ASan's leak check runs both in CI's sanitizer pass) */
	if (hta && getenv("TA_CHECK_LIGHT"))
		return;
	make_db();
	ck_assert_msg(run_once(analyses[a].fn, hta, -1, &want, &err) == 0,
		      "%s: %s", analyses[a].name, err.msg);
	for (left = 0; left < 100000; left = left < 16 ? left + 1 : left * 3 / 2) {
		int rc = run_once(analyses[a].fn, hta, left, &got, &err);

		if (rc < 0) {
			ck_assert_msg(err.msg[0], "%s (hta %d) stopped after %d: -1 "
				      "without a message", analyses[a].name, hta, left);
			failures++;
			continue;
		}
		ck_assert_msg(strcmp(got, want) == 0, "%s (hta %d) stopped after "
			      "%d: a table that is not the whole one:\n%.600s\nwant:\n%.600s",
			      analyses[a].name, hta, left, got, want);
		free(got);
		break;
	}
	ck_assert_int_gt(failures, 0); /* the handler did stop something */
	free(want);
	unlink(db_path);
	free(db_path);
}
END_TEST

/* One integer from sql on db. */
static int64_t one(sqlite3 *db, const char *sql, int *null)
{
	sqlite3_stmt *st = NULL;
	int64_t v;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	*null = sqlite3_column_type(st, 0) == SQLITE_NULL;
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* ta_sum: sum()'s answers, held at the int64 limits instead of "integer
 * overflow", and exact again in a window once the big values leave it */
START_TEST(test_ta_sum)
{
	sqlite3 *db = NULL;
	int null;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE t (i INTEGER, x);"
				      "INSERT INTO t VALUES (1, 4611686018427387904),"
				      " (2, 4611686018427387904), (3, NULL),"
				      " (4, -4611686018427387904), (5, -4611686018427387904),"
				      " (6, -4611686018427387904), (7, 5)", NULL, NULL, NULL),
			 SQLITE_OK);
	one(db, "SELECT ta_sum(x) FROM t WHERE 0", &null);
	ck_assert(null);
	one(db, "SELECT ta_sum(x) FROM t WHERE x IS NULL", &null);
	ck_assert(null);
	ck_assert_int_eq(one(db, "SELECT ta_sum(x) FROM t WHERE i <= 3", &null), INT64_MAX);
	ck_assert_int_eq(one(db, "SELECT ta_sum(x) FROM t WHERE i >= 4 AND i <= 6", &null),
			 INT64_MIN);
	ck_assert_int_eq(one(db, "SELECT ta_sum(x) FROM t", &null), -4611686018427387899);
	/* a window: rows 5-7, -2^63 + 5 exactly, after rows 1-2 (past
	 * INT64_MAX together) left it; rows 2-4, INT64_MAX's neighbour 0 */
	ck_assert_int_eq(one(db, "SELECT s FROM (SELECT i, ta_sum(x) OVER (ORDER BY i ROWS"
			     " BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM t) WHERE i = 7",
			     &null), INT64_MIN + 5);
	ck_assert_int_eq(one(db, "SELECT s FROM (SELECT i, ta_sum(x) OVER (ORDER BY i ROWS"
			     " BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM t) WHERE i = 2",
			     &null), INT64_MAX);
	ck_assert_int_eq(one(db, "SELECT s FROM (SELECT i, ta_sum(x) OVER (ORDER BY i ROWS"
			     " BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM t) WHERE i = 4",
			     &null), 0);
	ck_assert_int_eq(one(db, "SELECT ta_sum(2.5) + ta_sum(1e300)", &null), INT64_MAX);
	sqlite3_close(db);
}
END_TEST

/* A step's error after another statement was finalized (the connection's
 * code reset to "not an error"): the step's own code decides the exit and
 * whether the database is damaged (a cached one is then rebuilt). */
START_TEST(test_db_error_code_kept)
{
	struct ta_error err = { 0, "", 0 };
	sqlite3 *db = NULL;

	ta_db_damage_clear();   /* an earlier test's, without CK_FORK */
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(ta_db_done(db, SQLITE_CORRUPT, &err), -1);
	ck_assert_int_eq(err.code, TA_EXIT_INPUT);
	ck_assert(err.damaged);
	ck_assert_msg(strstr(err.msg, "malformed"), "%s", err.msg);
	ck_assert_int_eq(ta_db_done(db, SQLITE_IOERR, &err), -1);
	ck_assert_int_eq(err.code, TA_EXIT_SYSTEM);
	ck_assert(!err.damaged);
	ck_assert_msg(!strstr(err.msg, "not an error"), "%s", err.msg);
	ck_assert_int_eq(ta_db_done(db, SQLITE_DONE, &err), 0);
	sqlite3_close(db);
}
END_TEST

/* A Python object's address taken out of a name (diagnose, diff and
 * critical-path name frames without it), and nothing else: " at 0x"
 * without a hex digit after it stays. */
START_TEST(test_no_addresses)
{
	char a[] = "<built-in method wait of Event object at 0x7f3cb353e180>";
	char b[] = "f at 0x1 and g at 0xAbC9 at 0xz";
	char c[] = "";

	ck_assert_str_eq(ta_no_addresses(a), "<built-in method wait of Event object>");
	ck_assert_str_eq(ta_no_addresses(b), "f and g at 0xz");
	ck_assert_str_eq(ta_no_addresses(c), "");
}
END_TEST

Suite *suite_errors(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_ta_sum);
	tcase_add_test(tc, test_db_error_code_kept);
	tcase_add_test(tc, test_no_addresses);
	tcase_add_loop_test(tc, test_interrupted_analyses, 0,
			    2 * (int)(sizeof(analyses) / sizeof(analyses[0])));
	suite_add_tcase(s, tc);
	return s;
}
