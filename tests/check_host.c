/* The host searches that name a stretch of time (host_spans.c), on spans
 * made by hand: what SQL's ORDER BY ... LIMIT 1 answered. */
#include "check_main.h"
#include "analyses/common/launches.h"
#include "analyses/host/host_spans.h"
#include "analyses/common/ids.h"
#include "ta_model.h"

#include <stdlib.h>
#include <string.h>

/* ts, end, idx; ranged and python as given; name = idx */
#define SP(ts, end, idx, ranged, py) { ts, end, (end) - (ts), idx, idx, -1, ranged, py, 0, 0, 1, 1, 0 }

static struct ta_host_spans make(struct ta_host_span *v, size_t n)
{
	struct ta_host_spans s = { v, n, n, 0, 0, 1, NULL, NULL, NULL, NULL, 0 };
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].end - v[i].ts > s.max_dur)
			s.max_dur = v[i].end - v[i].ts;
	ta_host_spans_link(&s);
	return s;
}

/* what the search made by thread (the spans are the test's) */
static void unthread(struct ta_host_spans *s)
{
	free(s->by_thread);
	free(s->place);
	free(s->tprev);
	free(s->segs);
}

START_TEST(test_host_covering_innermost)
{
	/* A over all; B and C nested; D, E siblings under A that end early */
	struct ta_host_span v[] = { SP(0, 1000, 1, 0, 0), SP(10, 500, 2, 0, 0),
		SP(20, 30, 3, 0, 0), SP(600, 620, 4, 0, 0), SP(700, 720, 5, 0, 0) };
	struct ta_host_spans s = make(v, 5);

	ck_assert_int_eq(ta_host_spans_covering(&s, 25, 28), 2);   /* C */
	ck_assert_int_eq(ta_host_spans_covering(&s, 25, 30), 2);   /* ends at b */
	ck_assert_int_eq(ta_host_spans_covering(&s, 25, 31), 1);   /* B */
	ck_assert_int_eq(ta_host_spans_covering(&s, 35, 400), 1);
	ck_assert_int_eq(ta_host_spans_covering(&s, 750, 800), 0); /* past E, D */
	ck_assert_int_eq(ta_host_spans_covering(&s, 710, 715), 4); /* E */
	ck_assert_int_eq(ta_host_spans_covering(&s, 0, 1000), 0);
	ck_assert_int_eq(ta_host_spans_covering(&s, 900, 1001), -1);
	ck_assert_int_eq(ta_host_spans_covering(&s, -5, 1), -1);   /* before all */
	/* no further back than the longest: A would be too long */
	s.max_dur = 100;
	ck_assert_int_eq(ta_host_spans_covering(&s, 750, 800), -1);
	ck_assert_int_eq(ta_host_spans_covering(&s, 710, 715), 4);
}
END_TEST

START_TEST(test_host_covering_ties)
{
	/* one start: the longer first (events_cpu's order), so the later,
	 * the longer, is what the search meets first backwards */
	struct ta_host_span v[] = { SP(100, 150, 7, 0, 0), SP(100, 300, 3, 0, 0) };
	struct ta_host_spans s = make(v, 2);

	ck_assert_int_eq(ta_host_spans_covering(&s, 120, 140), 1);
	ck_assert_int_eq(ta_host_spans_covering(&s, 100, 100), 1);
}
END_TEST

START_TEST(test_host_overlapping)
{
	/* [400, 500]: 100 long, so ranges of at most 400 from 0 on, over at
	 * least 50 of it */
	struct ta_host_span v[] = {
		SP(-10, 600, 1, 1, 0),   /* starts too early */
		SP(300, 700, 2, 1, 1),   /* a Python frame, 400 long */
		SP(390, 520, 3, 1, 0),   /* a range, 130 long */
		SP(420, 480, 4, 0, 0),   /* an op: never */
		SP(440, 560, 5, 1, 0),   /* over 60 of it, 120 long */
		SP(460, 600, 6, 1, 0),   /* over 40: too little */
		SP(499, 501, 8, 1, 0),   /* too little */
	};
	struct ta_host_spans s = make(v, 7);

	ck_assert_int_eq(ta_host_spans_overlapping(&s, 400, 500), 4);
	/* ties in length: the later event */
	v[2].end = 510;
	v[2].dur = 120;
	ck_assert_int_eq(ta_host_spans_overlapping(&s, 400, 500), 4);
	v[4].idx = 2;
	ck_assert_int_eq(ta_host_spans_overlapping(&s, 400, 500), 2);
	/* no range: the Python frame */
	v[2].ranged = v[4].ranged = 0;
	ck_assert_int_eq(ta_host_spans_overlapping(&s, 400, 500), 1);
	v[1].ranged = 0;
	ck_assert_int_eq(ta_host_spans_overlapping(&s, 400, 500), -1);
	/* lengths past int64 and a reversed stretch find nothing wrong */
	ck_assert_int_eq(ta_host_spans_overlapping(&s, INT64_MIN, INT64_MAX), -1);
	ck_assert_int_eq(ta_host_spans_overlapping(&s, 500, 400), -1);
	ck_assert_int_eq(ta_host_spans_covering(&s, INT64_MAX, INT64_MIN), -1);
	ck_assert_int_eq(ta_host_spans_covering(&s, INT64_MIN, INT64_MAX), -1);
	/* an end past int64 (a damaged length) still covers, as SQL's
	 * double did */
	v[6].end = INT64_MAX;
	v[6].dur = INT64_MAX;
	s.max_dur = INT64_MAX;
	ta_host_spans_link(&s);
	ck_assert_int_eq(ta_host_spans_covering(&s, 600, 1000000), 6);
}
END_TEST

static int judged;

static unsigned judge_len(const char *name)
{
	judged++;
	return name ? (unsigned)strlen(name) : 99;
}

static sqlite3_value *value_of(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(*st), SQLITE_ROW);
	return sqlite3_column_value(*st, 0);
}

/* What a JOIN with label gives: a label's judged text, once an id; no
 * label for an id no row has, for a NULL and for another type */
START_TEST(test_labels_like_join)
{
	struct ta_error err = { 0, "", 0 };
	struct ta_labels *l;
	sqlite3_stmt *st[5];
	sqlite3 *db;
	int i;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE label (name_id INTEGER PRIMARY KEY,"
				      " name); INSERT INTO label VALUES (1, 'abc'), (2, NULL),"
				      " (3, 'x')", NULL, NULL, NULL), SQLITE_OK);
	judged = 0;
	ck_assert_ptr_nonnull(l = ta_labels_new(db, judge_len, &err));
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(ta_labels_get(l, value_of(db, "SELECT 1", &st[0])), 3);
		ck_assert_uint_eq(ta_labels_get(l, value_of(db, "SELECT 2", &st[1])), 99);
		ck_assert_uint_eq(ta_labels_get(l, value_of(db, "SELECT 9", &st[2])),
				  TA_LABEL_NONE);
		ck_assert_uint_eq(ta_labels_get(l, value_of(db, "SELECT '1'", &st[3])),
				  TA_LABEL_NONE);
		ck_assert_uint_eq(ta_labels_get(l, value_of(db, "SELECT NULL", &st[4])),
				  TA_LABEL_NONE);
		for (int k = 0; k < 5; k++)
			sqlite3_finalize(st[k]);
	}
	ck_assert_int_eq(judged, 2); /* ids 1 and 2, each once */
	ck_assert_int_eq(ta_labels_failed(l, &err), 0);
	ta_labels_free(l);
	sqlite3_close(db);
}
END_TEST

/* The model's launch view: a correlation's call of the largest idx, on
 * the rank asked; no launch for -1, a call without a time, another type */
START_TEST(test_launches_last_call)
{
	struct ta_error err = { 0, "", 0 };
	struct ta_launches l = { NULL, 0, 0 };
	sqlite3_stmt *st[5];
	int64_t ts = 0;
	sqlite3 *db;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	sqlite3_stmt *more[2];
	int64_t end = 0;

	ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE calls (rank, correlation, ts, idx, dur);"
				      " INSERT INTO calls VALUES (0, 5, 100, 1, 9), (0, 5, 200, 3, 7),"
				      " (0, 5, 150, 2, 9), (0, 7, NULL, 4, 1), (0, -1, 50, 5, 1),"
				      " (1, 8, 300, 6, 1), (0, 2, 10, 0, NULL), (0, 'x', 1, 7, 1)",
				      NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(ta_launches_load(db, 0, &l, &err), 0);
	ck_assert_int_eq(ta_launches_ts(&l, value_of(db, "SELECT 5", &st[0]), &ts), 1);
	ck_assert_int_eq(ts, 200);
	/* when the call returned */
	ck_assert_int_eq(ta_launches_span(&l, value_of(db, "SELECT 5", &more[0]), &ts, &end), 1);
	ck_assert_int_eq(end, 207);
	ck_assert_int_eq(ta_launches_ts(&l, value_of(db, "SELECT 2", &st[1]), &ts), 1);
	ck_assert_int_eq(ts, 10);
	/* no duration: not known to have returned */
	ck_assert_int_eq(ta_launches_span(&l, value_of(db, "SELECT 2", &more[1]), &ts, &end), 1);
	ck_assert(end == INT64_MAX);
	sqlite3_finalize(more[0]);
	sqlite3_finalize(more[1]);
	ck_assert_int_eq(ta_launches_ts(&l, value_of(db, "SELECT 7", &st[2]), &ts), 0);
	ck_assert_int_eq(ta_launches_ts(&l, value_of(db, "SELECT 8", &st[3]), &ts), 0);
	ck_assert_int_eq(ta_launches_ts(&l, value_of(db, "SELECT '5'", &st[4]), &ts), 0);
	for (int k = 0; k < 5; k++)
		sqlite3_finalize(st[k]);
	ck_assert_int_eq(ta_launches_ts(&l, value_of(db, "SELECT -1", &st[0]), &ts), 0);
	sqlite3_finalize(st[0]);
	ta_launches_free(&l);
	sqlite3_close(db);
}
END_TEST

START_TEST(test_host_enclosing)
{
	/* a long range, a Python frame in it, two ranges of one start (the
	 * shorter first, events_cpu's order) and an op, all of thread (1, 1);
	 * the step [50, 9000] */
	struct ta_host_span v[] = {
		SP(0, 10000, 1, 1, 0),   /* "## backward ##" */
		SP(100, 5000, 2, 1, 1),  /* a Python frame */
		SP(200, 900, 3, 1, 0),
		SP(200, 2000, 4, 1, 0),
		SP(250, 260, 5, 0, 0),   /* an op: never */
		SP(3000, 9500, 6, 1, 0), /* another thread's, ending later */
	};
	struct ta_host_spans s = make(v, 6);
	int64_t t1[] = { 1 }, t12[] = { 1, 2 }, t3[] = { 3 };
	struct ta_ids one = { t1, 1 }, two = { t12, 2 }, other = { t3, 1 };

	v[5].tid = 2;
	/* every range over [300, 400] is over 4 times its length */
	ck_assert_int_eq(ta_host_spans_overlapping(&s, 300, 400), -1);
	/* the shortest that holds it, though the nesting meets the longer */
	ck_assert_int_eq(ta_host_spans_enclosing(&s, 300, 400, &one, 50, 9000), 2);
	ck_assert_int_eq(ta_host_spans_enclosing(&s, 1000, 1100, &one, 50, 9000), 3);
	/* a range before a Python frame, however long, but not one over
	 * the whole step; another thread's span over the hole, ending
	 * later, hides nothing (it sat between the hole and the range) */
	ck_assert_int_eq(ta_host_spans_enclosing(&s, 3000, 3100, &one, 0, 20000), 0);
	ck_assert_int_eq(ta_host_spans_enclosing(&s, 3000, 3100, &one, 50, 9000), 1);
	/* with its thread too: the shorter of the two threads' */
	ck_assert_int_eq(ta_host_spans_enclosing(&s, 3000, 3100, &two, 0, 20000), 5);
	ck_assert_int_eq(ta_host_spans_enclosing(&s, 6000, 7000, &one, 50, 9000), -1);
	/* over part of it only: not the range's */
	ck_assert_int_eq(ta_host_spans_enclosing(&s, 4000, 5100, &one, 50, 9000), -1);
	/* a thread that launches nothing, or none given */
	ck_assert_int_eq(ta_host_spans_enclosing(&s, 300, 400, &other, 50, 9000), -1);
	ck_assert_int_eq(ta_host_spans_enclosing(&s, 300, 400, NULL, 50, 9000), -1);
	unthread(&s);
}
END_TEST

START_TEST(test_host_enclosing_same_end)
{
	/* an outer range, a range in it, a Python frame ending with that
	 * range: the range, not the outer one (helper-47) */
	struct ta_host_span v[] = {
		SP(0, 20000, 1, 1, 0),   /* "## outer ##" */
		SP(50, 9000, 2, 1, 0),   /* "## forward ##" */
		SP(60, 9000, 3, 1, 1),   /* a frame ending with it */
	};
	struct ta_host_spans s = make(v, 3);
	int64_t t1[] = { 1 };
	struct ta_ids one = { t1, 1 };

	ck_assert_int_eq(ta_host_spans_enclosing(&s, 5000, 5100, &one, 10, 19000), 1);
	unthread(&s);
}
END_TEST

/* a span of thread tid: ENG an autograd engine task, AMP GradScaler's */
#define SPT(ts, end, name, ranged, eng, amp, tid) \
	{ ts, end, (end) - (ts), name, name, -1, ranged, 0, eng, amp, 1, tid, 0 }

START_TEST(test_host_op_time)
{
	/* ops [0, 100] and [200, 250] (one nested in a range), a range over
	 * [50, 300]: ops ran 150 of [0, 300], 50 of [100, 300] */
	struct ta_host_span v[] = { SPT(0, 100, 1, 0, 0, 0, 1), SPT(50, 300, 2, 1, 0, 0, 1),
		SPT(200, 250, 3, 0, 0, 0, 1) };
	struct ta_host_spans s = make(v, 3);

	ck_assert_int_eq(ta_host_spans_op_time(&s, 0, 300), 150);
	ck_assert_int_eq(ta_host_spans_op_time(&s, 100, 300), 50);
	ck_assert_int_eq(ta_host_spans_op_time(&s, 60, 80), 20);    /* inside the first */
	ck_assert_int_eq(ta_host_spans_op_time(&s, 260, 400), 0);
}
END_TEST

START_TEST(test_host_op_time_reach)
{
	/* an op begun long before (ranges between, as many as any) still
	 * covers the stretch; a Python frame counts, a range does not */
	struct ta_host_span v[] = { SPT(0, 1000, 1, 0, 0, 0, 2), SPT(10, 20, 2, 1, 0, 0, 1),
		SPT(30, 40, 2, 1, 0, 0, 1), SPT(50, 60, 2, 1, 0, 0, 1),
		SPT(1100, 1200, 3, 1, 0, 0, 1), SPT(1300, 1400, 4, 1, 0, 0, 1) };
	struct ta_host_spans s;

	v[4].python = 1;
	s = make(v, 6);
	ck_assert_int_eq(ta_host_spans_op_time(&s, 500, 700), 200);
	ck_assert_int_eq(ta_host_spans_op_time(&s, 900, 1500), 200);
}
END_TEST

START_TEST(test_host_in_backward)
{
	/* engine tasks [0, 60] and [70, 100] (one nested task counted once),
	 * an op of the main thread beside them */
	struct ta_host_span v[] = { SPT(0, 60, 1, 0, 1, 0, 2), SPT(5, 50, 2, 0, 1, 0, 2),
		SPT(10, 400, 3, 0, 0, 0, 1), SPT(70, 100, 4, 0, 1, 0, 2) };
	struct ta_host_spans s = make(v, 4);

	s.max_engine = 60;
	ck_assert(ta_host_spans_in_backward(&s, 0, 100));     /* 90 of 100 */
	ck_assert(ta_host_spans_in_backward(&s, 0, 180));     /* 90 of 180: half */
	ck_assert(!ta_host_spans_in_backward(&s, 0, 181));
	ck_assert(!ta_host_spans_in_backward(&s, 100, 400));  /* the op is none */
	s.max_engine = 0;                                    /* a trace without */
	ck_assert(!ta_host_spans_in_backward(&s, 0, 100));
}
END_TEST

START_TEST(test_host_after_unscale)
{
	/* thread 1: unscale [10, 20], update [50, 60], unscale [80, 90];
	 * thread 2 beside it */
	struct ta_host_span v[] = { SPT(10, 20, 1, 0, 0, AMP_UNSCALE, 1),
		SPT(30, 40, 2, 0, 0, AMP_UNSCALE, 2), SPT(50, 60, 3, 0, 0, AMP_UPDATE, 1),
		SPT(80, 90, 4, 0, 0, AMP_UNSCALE, 1) };
	struct ta_host_spans s = make(v, 4);

	ck_assert_int_eq(ta_host_spans_after_unscale(&s, 1, 30), 20);
	ck_assert_int_eq(ta_host_spans_after_unscale(&s, 1, 45), 20);  /* thread 2's is not its */
	ck_assert(ta_host_spans_after_unscale(&s, 1, 70) == INT64_MIN); /* updated since */
	ck_assert_int_eq(ta_host_spans_after_unscale(&s, 1, 95), 90);
	ck_assert(ta_host_spans_after_unscale(&s, 1, 85) == INT64_MIN); /* still running */
	ck_assert_int_eq(ta_host_spans_after_unscale(&s, 2, 95), 40);
	ck_assert(ta_host_spans_after_unscale(&s, 3, 95) == INT64_MIN);
}
END_TEST

START_TEST(test_host_overlapping_recurring)
{
	/* two ranges of one name, 40 each in a hole of 110 (neither over
	 * half, together they are): the one over most (the first of equals);
	 * as Python frames they name nothing */
	struct ta_host_span v[] = { SPT(10, 50, 7, 1, 0, 0, 1), SPT(60, 100, 7, 1, 0, 0, 1),
		SPT(101, 104, 8, 1, 0, 0, 1) };
	struct ta_host_spans s = make(v, 3);

	ck_assert_int_eq(ta_host_spans_overlapping(&s, 0, 110), 0);
	ck_assert_int_eq(ta_host_spans_overlapping(&s, 0, 170), -1);   /* 80 of 170 */
	v[0].python = v[1].python = 1;
	ck_assert_int_eq(ta_host_spans_overlapping(&s, 0, 110), -1);
}
END_TEST

Suite *suite_host(void)
{
	Suite *s = suite_create("host");
	TCase *tc = tcase_create("spans");

	tcase_add_test(tc, test_host_covering_innermost);
	tcase_add_test(tc, test_host_covering_ties);
	tcase_add_test(tc, test_host_overlapping);
	tcase_add_test(tc, test_host_op_time);
	tcase_add_test(tc, test_host_op_time_reach);
	tcase_add_test(tc, test_host_in_backward);
	tcase_add_test(tc, test_host_after_unscale);
	tcase_add_test(tc, test_host_overlapping_recurring);
	tcase_add_test(tc, test_host_enclosing);
	tcase_add_test(tc, test_host_enclosing_same_end);
	tcase_add_test(tc, test_labels_like_join);
	tcase_add_test(tc, test_launches_last_call);
	suite_add_tcase(s, tc);
	return s;
}
