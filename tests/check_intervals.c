/* Interval union (hta-semantics §9.1) and numpy rounding. */
#include "check_main.h"
#include "../src/analyses/common/intervals.h"

#include <stdlib.h>
#include <string.h>

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

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* The streaming sweeper must give ta_sweep_run's labels, times and union
 * lengths exactly: over several ranks, with ties in time everywhere,
 * zero-length and nested rows, truncation to whole µs, and (not
 * streaming) negative durations. Case _i picks 2 or 3 unions, trunc_us,
 * and the time scale. */
START_TEST(test_intervals_sweeper_matches)
{
	static const int bits[] = { 1, 2, 4 };
	size_t n = 2 + (size_t)(_i % 2), i, r;
	int trunc = _i / 2 % 2, negative = _i / 4 % 2;
	int64_t step = _i / 8 ? 1000 : 3;
	struct ta_sweeper s;
	struct ta_sweep want;
	int64_t want_len[3] = { 0, 0, 0 };
	int l;

	memset(&want, 0, sizeof(want));
	ta_sweeper_init(&s, bits, n, trunc, !negative);
	for (r = 0; r < 3; r++) {
		struct ta_union u[3] = { { 0 }, { 0 }, { 0 } };
		struct ta_union *list[3] = { &u[0], &u[1], &u[2] };
		struct ta_sweep one;
		int64_t ts = (int64_t)(rng() % 100);

		/* under valgrind (TA_CHECK_LIGHT) a sixth: memory is what it
		 * checks there */
		for (i = 0; i < (getenv("TA_CHECK_LIGHT") ? 1000u : 6000u); i++) {
			size_t which = rng() % n;
			int64_t dur = (int64_t)(rng() % 8) * step;

			if (rng() % 5 == 0)
				dur = 0;
			if (negative && rng() % 50 == 0)
				dur = -(int64_t)(rng() % 4) * step;
			ts += (int64_t)(rng() % 4) * step / 2; /* ties often */
			ta_union_add(&u[which], ts, dur);
			ta_sweeper_add(&s, which, ts, dur);
		}
		ta_sweep_run(list, bits, n, trunc, &one);
		for (l = 0; l < TA_SWEEP_LABELS; l++) {
			want.dur[l] += one.dur[l];
			want.seen[l] |= one.seen[l];
		}
		ta_sweeper_finish(&s);
		for (i = 0; i < n; i++) {
			ck_assert_int_eq(ta_sweeper_length(&s, i), ta_union_length(&u[i]));
			want_len[i] += ta_union_length(&u[i]);
			ta_union_free(&u[i]);
		}
		ta_sweeper_reset(&s);
	}
	for (l = 0; l < TA_SWEEP_LABELS; l++) {
		ck_assert_msg(s.out.dur[l] == want.dur[l], "label %d: %lld, want %lld",
			      l, (long long)s.out.dur[l], (long long)want.dur[l]);
		ck_assert_int_eq(s.out.seen[l], want.seen[l]);
	}
	if (!negative)  /* it did not keep everything */
		for (i = 0; i < n; i++)
			ck_assert_uint_lt(s.u[i].cap, 4096);
	ta_sweeper_free(&s);
}
END_TEST

/* Small inputs crowded with ties: here a label that only a zero-length
 * segment shows (seen, 0 µs) depends on the exact order of equal points,
 * which large random inputs hide. */
START_TEST(test_intervals_sweeper_ties)
{
	static const int bits[] = { 1, 2, 4 };
	int k, l;

	for (k = 0; k < (getenv("TA_CHECK_LIGHT") ? 1000 : 5000); k++) {
		size_t n = 2 + (size_t)(k % 2), i, rows = 3 + rng() % 10;
		struct ta_union u[3] = { { 0 }, { 0 }, { 0 } };
		struct ta_union *list[3] = { &u[0], &u[1], &u[2] };
		struct ta_sweeper s;
		struct ta_sweep want;
		int64_t ts = 0;

		ta_sweeper_init(&s, bits, n, 0, 1);
		for (i = 0; i < rows; i++) {
			size_t which = rng() % n;
			int64_t dur = (int64_t)(rng() % 3);

			ts += (int64_t)(rng() % 3);
			ta_union_add(&u[which], ts, dur);
			ta_sweeper_add(&s, which, ts, dur);
		}
		ta_sweep_run(list, bits, n, 0, &want);
		ta_sweeper_finish(&s);
		for (l = 0; l < TA_SWEEP_LABELS; l++)
			ck_assert_msg(s.out.dur[l] == want.dur[l] &&
				      s.out.seen[l] == want.seen[l],
				      "case %d label %d", k, l);
		for (i = 0; i < n; i++)
			ta_union_free(&u[i]);
		ta_sweeper_free(&s);
	}
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
	tcase_add_loop_test(tc, test_intervals_sweeper_matches, 0, 16);
	tcase_add_test(tc, test_intervals_sweeper_ties);
	suite_add_tcase(s, tc);
	return s;
}
