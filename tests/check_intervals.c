/* Interval union (hta-semantics §9.1) and numpy rounding. */
#include "check_main.h"
#include "../src/analyses/intervals.h"

START_TEST(test_intervals_union)
{
	struct ta_union u = { 0 };

	/* [0,10) and [5,12) overlap; [12,15) touches and merges; [20,21) apart */
	ta_union_add(&u, 0, 10);
	ta_union_add(&u, 5, 7);
	ta_union_add(&u, 12, 3);
	ta_union_add(&u, 20, 1);
	ck_assert_int_eq(u.n, 2);
	ck_assert_int_eq(u.v[0].start, 0);
	ck_assert_int_eq(u.v[0].end, 15);
	ck_assert_int_eq(u.v[1].start, 20);
	ck_assert_int_eq(ta_union_length(&u), 16);
	ta_union_free(&u);
}
END_TEST

START_TEST(test_intervals_contained)
{
	struct ta_union u = { 0 };

	ta_union_add(&u, 0, 100);
	ta_union_add(&u, 10, 5);   /* inside: must not shorten the group */
	ta_union_add(&u, 50, 10);
	ck_assert_int_eq(u.n, 1);
	ck_assert_int_eq(ta_union_length(&u), 100);
	ta_union_free(&u);
}
END_TEST

/* A negative duration (HTA's µs rounding) makes a group with end < start,
 * counted as it is, as HTA does. */
START_TEST(test_intervals_negative)
{
	struct ta_union u = { 0 };

	ta_union_add(&u, 0, 10);
	ta_union_add(&u, 11, -1);  /* end 10: new group [11, 10] */
	ta_union_add(&u, 11, 5);   /* 11 > cummax 10: new group again */
	ck_assert_int_eq(u.n, 3);
	ck_assert_int_eq(ta_union_length(&u), 10 - 1 + 5);
	ta_union_free(&u);
}
END_TEST

START_TEST(test_intervals_round)
{
	ck_assert(ta_round(53.555, 2) == 53.55 || ta_round(53.555, 2) == 53.56);
	ck_assert(ta_round(0.125, 2) == 0.12);   /* half to even */
	ck_assert(ta_round(0.375, 2) == 0.38);
	ck_assert(ta_round(2.5, 0) == 2.0);
	ck_assert(ta_round(100.0, 2) == 100.0);
}
END_TEST

Suite *suite_intervals(void)
{
	Suite *s = suite_create("intervals");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_intervals_union);
	tcase_add_test(tc, test_intervals_contained);
	tcase_add_test(tc, test_intervals_negative);
	tcase_add_test(tc, test_intervals_round);
	suite_add_tcase(s, tc);
	return s;
}
