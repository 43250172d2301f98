/* Exact µs -> ns parsing and int64 parsing. */
#include "check_main.h"
#include "ta_parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *text;
	int ok;
	int64_t ns;
	int is_float;
} us_cases[] = {
	{ "0", 1, 0, 0 },
	{ "12", 1, 12000, 0 },
	{ "12.5", 1, 12500, 1 },
	{ "12.345", 1, 12345, 1 },
	{ "1712195495519689.047", 1, 1712195495519689047LL, 1 },
	{ "-3.25", 1, -3250, 1 },
	{ "1.5e3", 1, 1500000, 1 },
	{ "1.0", 1, 1000, 1 },
	{ "0.0004", 1, 0, 1 },      /* below 1 ns: rounds */
	{ "0.0006", 1, 1, 1 },
	{ "1e999", 0, 0, 1 },       /* does not fit */
	{ "99999999999999999999", 0, 0, 0 },
	{ "", 0, 0, 0 },
	{ "abc", 0, 0, 0 },
	{ "1.2.3", 0, 0, 1 },
};

START_TEST(test_number_us_to_ns)
{
	int64_t ns = -1;
	int f = -1;
	int rc = ta_parse_us_to_ns(us_cases[_i].text, strlen(us_cases[_i].text),
				   &ns, &f);

	ck_assert_msg((rc == 0) == us_cases[_i].ok, "'%s' ok=%d",
		      us_cases[_i].text, rc == 0);
	if (us_cases[_i].ok) {
		ck_assert_int_eq(ns, us_cases[_i].ns);
		ck_assert_int_eq(f, us_cases[_i].is_float);
	}
}
END_TEST

START_TEST(test_number_int64)
{
	int64_t v;

	ck_assert_int_eq(ta_parse_int64("42", 2, &v), 0);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(ta_parse_int64("-9223372036854775808", 20, &v), 0);
	ck_assert_int_eq(v, INT64_MIN);
	ck_assert_int_eq(ta_parse_int64("9223372036854775807", 19, &v), 0);
	ck_assert_int_eq(v, INT64_MAX);
	ck_assert_int_eq(ta_parse_int64("9223372036854775808", 19, &v), -1);
	ck_assert_int_eq(ta_parse_int64("18446744073709551616", 20, &v), -1);
	ck_assert_int_eq(ta_parse_int64("1.5", 3, &v), -1);
	ck_assert_int_eq(ta_parse_int64("", 0, &v), -1);
}
END_TEST

/* The reference: Python's float arithmetic on correctly rounded doubles. */
static void hta_reference(const char *ts, const char *dur, int64_t *hts,
			  int64_t *hdur)
{
	double t = strtod(ts, NULL), start = ceil(t);

	*hts = (int64_t)start * 1000;
	*hdur = ((int64_t)floor(t + strtod(dur, NULL)) - (int64_t)start) * 1000;
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* The integer shortcut in ta_hta_times must agree with the doubles
 * everywhere, above all near whole µs and near its 2^44 µs limit. */
START_TEST(test_number_hta_times)
{
	static const int64_t scales[] = { 2000000000LL, 5086126292259039LL,
		17592186044416000LL, 17592186044415000LL, 40000000000000000LL };
	char ts[48], dur[48];
	/* under valgrind (TA_CHECK_LIGHT) a tenth: memory, not arithmetic,
	 * is what it checks, and the whole loop took it 48 s */
	int i, n = getenv("TA_CHECK_LIGHT") ? 30000 : 300000;

	for (i = 0; i < n; i++) {
		int64_t base = scales[i % 5], t_ns, d_ns, h1 = -7, h2 = -7, r1, r2;
		int64_t near = (int64_t)(rng() % 7) - 3;
		int tdec = (int)(rng() % 4), ddec = (int)(rng() % 4), f;
		static const int64_t pow10[] = { 1000, 100, 10, 1 };

		t_ns = base - (int64_t)(rng() % 2000000) * 1000 +
		       (int64_t)(rng() % 1000);
		d_ns = (int64_t)(rng() % 3000000);
		if (i % 3 == 0) /* make ts + dur land within 3 ns of a whole µs */
			d_ns += (1000 - (t_ns + d_ns) % 1000) % 1000 + near;
		t_ns -= t_ns % pow10[tdec];
		d_ns -= d_ns % pow10[ddec];
		if (d_ns < 0)
			d_ns = 0;
		snprintf(ts, sizeof(ts), "%lld.%03lld", (long long)(t_ns / 1000),
			 (long long)(t_ns % 1000));
		snprintf(dur, sizeof(dur), "%lld.%03lld", (long long)(d_ns / 1000),
			 (long long)(d_ns % 1000));
		ts[strlen(ts) - (size_t)(3 - tdec)] = '\0';
		dur[strlen(dur) - (size_t)(3 - ddec)] = '\0';
		if (tdec == 0)
			ts[strlen(ts) - 1] = '\0'; /* no trailing '.' */
		if (ddec == 0)
			dur[strlen(dur) - 1] = '\0';
		ck_assert_int_eq(ta_parse_us_to_ns(ts, strlen(ts), &t_ns, &f), 0);
		ck_assert_int_eq(ta_parse_us_to_ns(dur, strlen(dur), &d_ns, &f), 0);
		ta_hta_times(ts, dur, t_ns, d_ns, &h1, &h2);
		hta_reference(ts, dur, &r1, &r2);
		ck_assert_msg(h1 == r1 && h2 == r2, "ts %s dur %s: %lld %lld, "
			      "doubles give %lld %lld", ts, dur, (long long)h1,
			      (long long)h2, (long long)r1, (long long)r2);
	}
}
END_TEST

Suite *suite_number(void)
{
	Suite *s = suite_create("number");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_number_us_to_ns, 0,
			    sizeof(us_cases) / sizeof(us_cases[0]));
	tcase_add_test(tc, test_number_int64);
	tcase_add_test(tc, test_number_hta_times);
	suite_add_tcase(s, tc);
	return s;
}
